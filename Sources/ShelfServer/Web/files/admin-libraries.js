// The admin page's libraries: each one's music folders (online or offline), tracks, albums and
// size, from GET /api/libraries (an admin's answer has them all).
import { api } from './api.js';
import { t, formatNumber } from './i18n.js';
import { h, data, errorBox, showError, scrollTable } from './dom.js';
import { adminSection, formatBytes } from './admin-common.js';

/** The libraries section of `page` (the AdminPage: its generation). */
export class LibrariesSection {
  constructor(page) {
    this.page = page;
  }

  build() {
    this.error = errorBox();
    this.body = h('div');
    return adminSection('admin-libraries-title', t('admin.libraries.title'),
      h('p', { class: 'page-intro', text: t('admin.libraries.intro') }), this.error, this.body);
  }

  async load() {
    const generation = this.page.generation;
    try {
      const { libraries } = await api('api/libraries');
      if (generation !== this.page.generation) return;
      showError(this.error, null);
      const { region, tbody } = scrollTable(t('admin.libraries.title'), [
        t('admin.libraries.column.name'), t('admin.libraries.column.tracks'), t('admin.libraries.column.albums'),
        t('admin.libraries.column.size'), t('admin.libraries.column.roots'),
      ], 'libraries-table');
      for (const library of libraries) {
        tbody.append(h('tr', {},
          h('td', {}, data(library.name)),
          h('td', { class: 'num', text: formatNumber(library.tracks ?? 0) }),
          h('td', { class: 'num', text: formatNumber(library.albums ?? 0) }),
          h('td', { class: 'num', text: formatBytes(library.bytes ?? 0) }),
          h('td', {}, ...(library.roots ?? []).flatMap((root, index) => [
            index ? h('br') : '', data(root.path, 'path'),
            root.state === 'online' ? '' : h('span', { class: 'muted', text: ` (${t('admin.libraries.offline')})` }),
          ])),
        ));
      }
      this.body.replaceChildren(region);
    } catch (error) {
      if (generation === this.page.generation) showError(this.error, error);
    }
  }
}
