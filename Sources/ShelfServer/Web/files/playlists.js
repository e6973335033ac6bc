// The sidebar's playlists: folders, playlists and smart playlists from /api/playlists; open one
// in the table; create, delete; add the selected tracks; create a smart playlist from a rule with
// its limit and selection, the server's error shown in the dialog.
import { api } from './api.js';
import { t, tn, errorText, showErrorIn } from './i18n.js';

/** The playlist list in `element`. */
export class Playlists {
  constructor(element, { onOpen, selectedIDs, onChanged }) {
    Object.assign(this, { element, onOpen, selectedIDs, onChanged });
    this.playlists = [];
    this.current = null;
    document.getElementById('new-playlist').addEventListener('click', () => this.create());
    const smartDialog = document.getElementById('smart-dialog');
    const smartForm = document.getElementById('smart-form');
    document.getElementById('new-smart').addEventListener('click', () => {
      document.getElementById('smart-error').textContent = '';
      smartDialog.showModal();
    });
    document.getElementById('smart-cancel').addEventListener('click', () => smartDialog.close());
    smartForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      const form = smartForm.elements;
      const body = { name: form.name.value, rule: form.rule.value };
      if (form.limit.value) body.limit = form.limit.value;
      if (form.by.value) body.by = form.by.value;
      try {
        const created = await api('api/smart', { method: 'POST', body });
        smartDialog.close();
        smartForm.reset();
        await this.load();
        this.onOpen({ id: created.id, name: created.name, kind: 'smart' });
        this.markCurrent(created.id);
      } catch (error) {
        showErrorIn(document.getElementById('smart-error'), error);
      }
    });
  }

  async load() {
    const { playlists } = await api('api/playlists');
    this.playlists = playlists;
    this.render();
  }

  render() {
    this.element.textContent = '';
    const children = new Map();
    for (const playlist of this.playlists) {
      const parent = playlist.parentID ?? 0;
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(playlist);
    }
    const build = (list, parent) => {
      for (const playlist of children.get(parent) ?? []) {
        const item = document.createElement('li');
        if (playlist.kind === 'folder') {
          item.className = 'folder';
          const name = document.createElement('span');
          name.setAttribute('translate', 'no');
          name.textContent = playlist.name;
          const sub = document.createElement('ul');
          item.append(name, sub);
          build(sub, playlist.id);
        } else {
          const button = document.createElement('button');
          button.type = 'button';
          button.dataset.playlist = String(playlist.id);
          button.setAttribute('translate', 'no');
          button.textContent = `${playlist.kind === 'smart' ? '⚙ ' : ''}${playlist.name}`;
          if (playlist.kind === 'regular') button.title = tn('list.count', playlist.itemCount ?? 0);
          if (playlist.comment) button.title = `${button.title ? `${button.title}\n` : ''}${playlist.comment}`;
          if (playlist.id === this.current) button.setAttribute('aria-current', 'page');
          button.addEventListener('click', () => {
            this.markCurrent(playlist.id);
            this.onOpen(playlist);
          });
          button.addEventListener('keydown', (event) => {
            if (event.key === 'Delete') this.remove(playlist);
            if (event.key === 'F2') this.rename(playlist);
          });
          const actions = [
            ['✎', 'rename', t('playlists.rename', { name: playlist.name }), () => this.rename(playlist)],
            ['❝', 'comment', t('playlists.comment', { name: playlist.name }), () => this.comment(playlist)],
            ['✕', 'delete', t('playlists.delete', { name: playlist.name }), () => this.remove(playlist)],
          ].map(([text, name, label, action]) => {
            const control = document.createElement('button');
            control.type = 'button';
            control.className = 'pl-action';
            control.textContent = text;
            control.setAttribute('aria-label', label);
            control.setAttribute('translate', 'no'); // the label carries the playlist's name
            control.dataset.action = name;
            control.addEventListener('click', action);
            return control;
          });
          item.className = 'playlist';
          item.append(button, ...actions);
        }
        list.append(item);
      }
    };
    build(this.element, 0);
  }

  markCurrent(id) {
    this.current = id;
    for (const button of document.querySelectorAll('[data-view][aria-current]')) if (id) button.removeAttribute('aria-current');
    for (const button of this.element.querySelectorAll('button[data-playlist]')) {
      if (Number(button.dataset.playlist) === id) button.setAttribute('aria-current', 'page');
      else button.removeAttribute('aria-current');
    }
  }

  async create() {
    const name = window.prompt(t('playlists.newName'));
    if (!name) return;
    const { id } = await api('api/playlists', { method: 'POST', body: { name } });
    const ids = this.selectedIDs();
    if (ids.length && window.confirm(tn('playlists.addSelected', ids.length, { name }))) {
      await api(`api/playlists/${id}/items`, { method: 'POST', body: { tracks: ids } });
    }
    await this.load();
  }

  async rename(playlist) {
    const name = window.prompt(t('playlists.renamePrompt'), playlist.name);
    if (!name || name === playlist.name) return;
    try {
      await api(`api/playlists/${playlist.id}/rename`, { method: 'POST', body: { name } });
    } catch (error) {
      window.alert(errorText(error));
    }
    await this.load();
    this.onChanged();
  }

  async comment(playlist) {
    const comment = window.prompt(t('playlists.commentPrompt'), playlist.comment ?? '');
    if (comment === null || comment === (playlist.comment ?? '')) return;
    try {
      await api(`api/playlists/${playlist.id}/comment`, { method: 'POST', body: { comment } });
    } catch (error) {
      window.alert(errorText(error));
    }
    await this.load();
  }

  async remove(playlist) {
    if (!window.confirm(t('playlists.confirmDelete', { name: playlist.name }))) return;
    await api(`api/playlists/${playlist.id}`, { method: 'DELETE' });
    await this.load();
  }

  /** Asks which playlist, then adds `ids` to it. */
  async chooseAndAdd(ids) {
    const regular = this.playlists.filter((p) => p.kind === 'regular');
    const names = regular.map((p, i) => `${i + 1}. ${p.name}`).join('\n');
    const answer = window.prompt(tn('playlists.choose', ids.length, { names }));
    if (!answer) return;
    let target = regular[Number(answer) - 1];
    if (!target) {
      const { id } = await api('api/playlists', { method: 'POST', body: { name: answer } });
      target = { id, name: answer };
    }
    await api(`api/playlists/${target.id}/items`, { method: 'POST', body: { tracks: ids } });
    await this.load();
    this.onChanged();
  }
}
