// The edit dialog for one or many tracks. A field whose values differ across the tracks shows as
// mixed and is left alone unless typed in; only fields typed in are sent (POST /api/edit), and
// the server's report (updated, skipped, failed with reasons) is shown in the dialog. A picture
// chosen from a file replaces every edited track's (sent as base64), or "Remove picture" drops it.
import { api } from './api.js';
import { t, tn, formatNumber, showErrorIn } from './i18n.js';

/** The fields the dialog edits: the name sent to the server and the label shown. */
const FIELDS = [
  ['title', t('fields.title')], ['artist', t('fields.artist')], ['album', t('fields.album')], ['albumArtist', t('fields.albumArtist')],
  ['composer', t('fields.composer')], ['genre', t('fields.genre')], ['year', t('fields.year')], ['trackNumber', t('fields.trackNumber')],
  ['discNumber', t('fields.discNumber')], ['comment', t('fields.comment')],
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
    pictureLabel.textContent = t('edit.newPicture');
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
    removeLabel.append(this.removePicture, ` ${t('edit.removePicture')}`);
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
    this.report.removeAttribute('translate');
    this.dialog.querySelector('h2').textContent = tn('edit.heading', ids.length);
    const complete = tracks.length === ids.length;
    for (const [name, input] of this.inputs) {
      const values = new Set(tracks.map((track) => (track[name] ?? '').toString()));
      delete input.dataset.dirty;
      if (complete && values.size === 1) {
        input.value = [...values][0];
        input.placeholder = '';
        input.classList.remove('mixed');
      } else {
        input.value = '';
        input.placeholder = t('edit.mixed');
        input.classList.add('mixed');
      }
    }
    this.picture.value = '';
    this.removePicture.checked = false;
    this.dialog.showModal();
    this.inputs.get('title').focus();
  }

  async save() {
    this.report.removeAttribute('translate');
    const set = {};
    for (const [name, input] of this.inputs) if (input.dataset.dirty) set[name] = input.value.trim() === '' ? null : input.value;
    const body = { ids: this.ids, set };
    const file = this.picture.files[0];
    if (file) body.picture = await base64(file);
    if (this.removePicture.checked) body.removePicture = true;
    if (!Object.keys(set).length && !file && !body.removePicture) {
      this.report.textContent = t('edit.nothingChanged');
      return;
    }
    this.report.textContent = t('edit.saving');
    try {
      const result = await api('api/edit', { method: 'POST', body });
      // The reasons and errors are the server's words (and paths), shown as they are.
      const lines = [t('edit.report.updated', { count: formatNumber(result.updated.length) })];
      if (result.skipped.length) {
        const details = result.skipped.map((s) => `${s.id}: ${s.reason}`).join('; ');
        lines.push(t('edit.report.skipped', { count: formatNumber(result.skipped.length), details }));
      }
      if (result.failed.length) {
        const details = result.failed.map((f) => `${f.id}: ${f.error} (${f.path})`).join('; ');
        lines.push(t('edit.report.failed', { count: formatNumber(result.failed.length), details }));
      }
      this.report.textContent = t('edit.report.sentence', { parts: lines.join(t('common.listSeparator')) });
      if (lines.length > 1) this.report.setAttribute('translate', 'no');
      for (const input of this.inputs.values()) delete input.dataset.dirty;
      this.picture.value = '';
      this.removePicture.checked = false;
      this.onSaved(result);
    } catch (error) {
      showErrorIn(this.report, error);
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
