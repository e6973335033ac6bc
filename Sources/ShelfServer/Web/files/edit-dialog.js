// The edit dialog for one or many tracks. A field whose values differ across the tracks shows as
// mixed and is left alone unless typed in; only fields typed in are sent (POST /api/edit), and
// the server's report (updated, skipped, failed with reasons) is shown in the dialog.
import { api } from './api.js';

const FIELDS = [
  ['title', 'Title'], ['artist', 'Artist'], ['album', 'Album'], ['albumArtist', 'Album artist'],
  ['composer', 'Composer'], ['genre', 'Genre'], ['year', 'Year'], ['trackNumber', 'Track'],
  ['discNumber', 'Disc'], ['comment', 'Comment'],
];

/** The dialog; `open(ids, tracksByID)` fills it, `onSaved(report)` follows a save. */
export class EditDialog {
  constructor({ dialog, form, fields, report, cancel }, { onSaved }) {
    Object.assign(this, { dialog, form, fieldsElement: fields, report, onSaved });
    this.inputs = new Map();
    for (const [name, label] of FIELDS) {
      const wrapper = document.createElement('label');
      wrapper.textContent = label;
      const input = document.createElement('input');
      input.name = name;
      if (name === 'year' || name.endsWith('Number')) input.inputMode = 'numeric';
      input.addEventListener('input', () => { input.dataset.dirty = 'true'; input.classList.remove('mixed'); });
      wrapper.append(input);
      fields.append(wrapper);
      this.inputs.set(name, input);
    }
    cancel.addEventListener('click', () => dialog.close());
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.save();
    });
  }

  /** Opens for `ids`; `tracks` are their values (fields that differ show as mixed). */
  open(ids, tracks) {
    this.ids = ids;
    this.report.textContent = '';
    this.dialog.querySelector('h2').textContent = ids.length === 1 ? 'Edit track' : `Edit ${ids.length.toLocaleString()} tracks`;
    const complete = tracks.length === ids.length;
    for (const [name, input] of this.inputs) {
      const values = new Set(tracks.map((t) => (t[name] ?? '').toString()));
      delete input.dataset.dirty;
      if (complete && values.size === 1) {
        input.value = [...values][0];
        input.placeholder = '';
        input.classList.remove('mixed');
      } else {
        input.value = '';
        input.placeholder = 'Mixed — type to set for all';
        input.classList.add('mixed');
      }
    }
    this.dialog.showModal();
    this.inputs.get('title').focus();
  }

  async save() {
    const set = {};
    for (const [name, input] of this.inputs) if (input.dataset.dirty) set[name] = input.value.trim() === '' ? null : input.value;
    if (!Object.keys(set).length) {
      this.report.textContent = 'Nothing changed.';
      return;
    }
    this.report.textContent = 'Saving…';
    try {
      const result = await api('/api/edit', { method: 'POST', body: { ids: this.ids, set } });
      const lines = [`Updated ${result.updated.length}`];
      if (result.skipped.length) lines.push(`skipped ${result.skipped.length}: ${result.skipped.map((s) => `${s.id}: ${s.reason}`).join('; ')}`);
      if (result.failed.length) lines.push(`failed ${result.failed.length}: ${result.failed.map((f) => `${f.id}: ${f.error} (${f.path})`).join('; ')}`);
      this.report.textContent = `${lines.join(', ')}.`;
      for (const input of this.inputs.values()) delete input.dataset.dirty;
      this.onSaved(result);
    } catch (error) {
      this.report.textContent = error.message;
    }
  }
}
