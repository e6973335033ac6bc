// The edit dialog for one or many tracks. A field whose values differ across the tracks shows as
// mixed and is left alone unless typed in; only fields typed in are sent (POST /api/edit), and
// the server's report (updated, skipped, failed with reasons) is shown in the dialog. A picture
// chosen from a file replaces every edited track's (sent as base64), or "Remove picture" drops it.
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
    // The picture: a file input (JPEG or PNG) and a switch to remove it instead.
    const pictureLabel = document.createElement('label');
    pictureLabel.textContent = 'New picture';
    this.picture = document.createElement('input');
    this.picture.type = 'file';
    this.picture.name = 'picture';
    this.picture.accept = 'image/jpeg,image/png';
    pictureLabel.append(this.picture);
    const removeLabel = document.createElement('label');
    removeLabel.className = 'inline';
    this.removePicture = document.createElement('input');
    this.removePicture.type = 'checkbox';
    this.removePicture.name = 'removePicture';
    removeLabel.append(this.removePicture, ' Remove picture');
    this.picture.addEventListener('change', () => { if (this.picture.files.length) this.removePicture.checked = false; });
    this.removePicture.addEventListener('change', () => { if (this.removePicture.checked) this.picture.value = ''; });
    fields.append(pictureLabel, removeLabel);
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
    this.picture.value = '';
    this.removePicture.checked = false;
    this.dialog.showModal();
    this.inputs.get('title').focus();
  }

  async save() {
    const set = {};
    for (const [name, input] of this.inputs) if (input.dataset.dirty) set[name] = input.value.trim() === '' ? null : input.value;
    const body = { ids: this.ids, set };
    const file = this.picture.files[0];
    if (file) body.picture = await base64(file);
    if (this.removePicture.checked) body.removePicture = true;
    if (!Object.keys(set).length && !file && !body.removePicture) {
      this.report.textContent = 'Nothing changed.';
      return;
    }
    this.report.textContent = 'Saving…';
    try {
      const result = await api('/api/edit', { method: 'POST', body });
      const lines = [`Updated ${result.updated.length}`];
      if (result.skipped.length) lines.push(`skipped ${result.skipped.length}: ${result.skipped.map((s) => `${s.id}: ${s.reason}`).join('; ')}`);
      if (result.failed.length) lines.push(`failed ${result.failed.length}: ${result.failed.map((f) => `${f.id}: ${f.error} (${f.path})`).join('; ')}`);
      this.report.textContent = `${lines.join(', ')}.`;
      for (const input of this.inputs.values()) delete input.dataset.dirty;
      this.picture.value = '';
      this.removePicture.checked = false;
      this.onSaved(result);
    } catch (error) {
      this.report.textContent = error.message;
    }
  }
}

/** A file's bytes as base64 (the edit's JSON body carries the picture so). */
async function base64(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let start = 0; start < bytes.length; start += 0x8000) binary += String.fromCharCode(...bytes.subarray(start, start + 0x8000));
  return btoa(binary);
}
