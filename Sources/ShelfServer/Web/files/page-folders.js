// The folders page: the libraries' folders as they are on disk, from the roots down, with
// breadcrumbs, the child folders, the tracks in file-name order, and "play folder" and "queue".
import { api, clock } from './api.js';
import { t } from './i18n.js';
import { h, data, pageHeading, errorBox, statusBox, scrollTable, button, loadList, Page } from './dom.js';

/** The folders of the user's libraries. `show({ id, trail })` opens folder `id` (the roots
 *  without one); `trail` is the folders above it, for the breadcrumbs. */
export class FoldersPage extends Page {

  async show(args = {}) {
    this.generation += 1;
    this.id = args.id ?? null;
    this.trail = args.trail ?? [];
    const heading = pageHeading(t('folders.title'));
    this.crumbs = h('nav', { class: 'breadcrumbs', 'aria-label': t('folders.breadcrumbs') });
    this.error = errorBox();
    this.status = statusBox();
    this.body = h('div');
    this.container.replaceChildren(heading, this.crumbs, this.error, this.status, this.body);
    this.status.textContent = t('pages.loading');
    this.renderCrumbs();
    await this.load();
  }

  load() {
    return loadList(this, async () => (this.id === null ? api('api/folders') : api(`api/folders/${this.id}`)));
  }

  /** "Folders › Jazz › Miles Davis": each step opens that folder again. */
  renderCrumbs() {
    const steps = [button(t('folders.roots'), () => this.show({}), { class: 'link' })];
    this.trail.forEach((step, index) => {
      steps.push(' › ');
      const last = index === this.trail.length - 1;
      steps.push(last
        ? h('span', { 'aria-current': 'page' }, data(step.name))
        : button(step.name, () => this.show({ id: step.id, trail: this.trail.slice(0, index + 1) }), { class: 'link' }));
    });
    this.crumbs.replaceChildren(...steps);
  }

  /** Opens a child folder, one step below the current one. */
  open(folder) {
    return this.show({ id: folder.id, trail: [...this.trail, { id: folder.id, name: folder.name }] });
  }

  render(answer) {
    const folders = answer.folders ?? [];
    const tracks = answer.tracks ?? [];
    const parts = [];
    if (this.id !== null && tracks.length) {
      parts.push(h('div', { class: 'page-toolbar' },
        button(t('folders.play'), () => this.deps.player.playNow(tracks, 0), { class: 'primary' }),
        button(t('folders.queue'), () => this.deps.player.add(tracks)),
      ));
    }
    if (folders.length) {
      parts.push(h('ul', { class: 'folder-list', 'aria-label': t('folders.children') },
        folders.map((folder) => h('li', {},
          button(`${folder.name}/`, () => this.open(folder), { class: 'link', 'data-focus': `folder-${folder.id}` })))));
    }
    if (tracks.length) {
      const { region, tbody } = scrollTable(t('folders.tableLabel'), [
        t('folders.column.file'), t('folders.column.title'), t('folders.column.artist'), t('folders.column.album'), t('folders.column.duration'),
      ], 'folder-tracks');
      tracks.forEach((track, index) => {
        const file = (track.path ?? '').split('/').pop();
        tbody.append(h('tr', { 'data-focus-group': `track-${track.id}` },
          h('td', {}, button(file, () => this.deps.player.playNow(tracks, index), { class: 'link', 'data-focus': `play-${track.id}` })),
          h('td', {}, data(track.title ?? '')),
          h('td', {}, data(track.artist ?? '')),
          h('td', {}, data(track.album ?? '')),
          h('td', { class: 'num', text: track.duration ? clock(track.duration) : '' }),
        ));
      });
      parts.push(region);
    }
    if (!parts.length) parts.push(h('p', { class: 'page-empty', text: t('folders.empty') }));
    this.body.replaceChildren(...parts);
  }
}
