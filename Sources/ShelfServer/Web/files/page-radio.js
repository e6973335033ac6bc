// The internet radio page: the stations the server lists for players, and the dialog admins add
// and edit them with.
import { subsonic, list, isAdmin } from './api.js';
import { t } from './i18n.js';
import { h, data, pageHeading, errorBox, statusBox, showError, scrollTable, formDialog, button, field, externalLink, keepFocus, Page } from './dom.js';

/** The internet radio stations the server lists for players; admins add, edit and delete them.
 *  The page's CSP plays media from this server only, so a station opens in another player.
 *  `show()` takes no arguments. */
export class RadioPage extends Page {

  async show() {
    const generation = ++this.generation;
    const admin = isAdmin(this.deps.user);
    const heading = pageHeading(t('radio.title'));
    const note = h('p', { class: 'page-intro', text: t('radio.note') });
    this.error = errorBox();
    this.status = statusBox();
    this.body = h('div', { class: 'radio-list' });
    const parts = [heading, note];
    if (admin) {
      this.dialog = this.buildDialog();
      parts.push(h('div', { class: 'page-toolbar' }, button(t('radio.add'), () => this.edit(null), { class: 'primary', 'data-focus': 'radio-add' })));
    }
    parts.push(this.error, this.status, this.body);
    if (admin) parts.push(this.dialog.dialog);
    this.container.replaceChildren(...parts);
    this.status.textContent = t('pages.loading');
    await this.load(generation);
  }

  async load(generation = this.generation) {
    try {
      const answer = await subsonic('getInternetRadioStations');
      if (generation !== this.generation) return;
      this.status.textContent = '';
      keepFocus(this.container, () => this.render(list(answer.internetRadioStations?.internetRadioStation)));
    } catch (error) {
      if (generation !== this.generation) return;
      this.status.textContent = '';
      showError(this.error, error);
    }
  }

  render(stations) {
    const admin = isAdmin(this.deps.user);
    if (!stations.length) {
      this.body.replaceChildren(h('p', { class: 'page-empty', text: admin ? t('radio.noneAdmin') : t('radio.none') }));
      return;
    }
    const headers = [t('radio.column.name'), t('radio.column.stream'), t('radio.column.homePage')];
    if (admin) headers.push(t('pages.actions'));
    const { region, tbody } = scrollTable(t('radio.tableLabel'), headers, 'radio-table');
    for (const station of stations) {
      const row = h('tr', { 'data-focus-group': `station-${station.id}` },
        h('td', {}, data(station.name)),
        h('td', { class: 'url-cell' }, externalLink(station.streamUrl)),
        h('td', { class: 'url-cell' }, externalLink(station.homePageUrl)),
      );
      if (admin) {
        row.append(h('td', { class: 'actions' },
          button(t('pages.edit'), () => this.edit(station), { 'data-focus': `edit-${station.id}` }),
          button(t('pages.delete'), () => this.remove(station), { 'data-focus': `delete-${station.id}` }),
        ));
      }
      tbody.append(row);
    }
    this.body.replaceChildren(region);
  }

  /** The add and edit dialog (<dialog id="radio-dialog">), built once per show. */
  buildDialog() {
    const name = h('input', { name: 'name', required: true, autocomplete: 'off', translate: 'no' });
    const stream = h('input', { name: 'streamUrl', type: 'url', required: true, autocomplete: 'off', spellcheck: false, translate: 'no' });
    const home = h('input', { name: 'homepageUrl', type: 'url', autocomplete: 'off', spellcheck: false, translate: 'no' });
    const parts = formDialog('radio-dialog', t('radio.add'), {
      content: [
        field(t('radio.column.name'), name),
        field(t('radio.streamURL'), stream),
        field(t('radio.homePageURL'), home, t('radio.optional')),
      ],
      onSubmit: async ({ dialog }) => {
        const params = { name: name.value.trim(), streamUrl: stream.value.trim(), homepageUrl: home.value.trim() };
        if (this.editing) await subsonic('updateInternetRadioStation', { id: this.editing.id, ...params });
        else await subsonic('createInternetRadioStation', params);
        dialog.close();
        this.status.textContent = this.editing ? t('radio.saved') : t('radio.added');
        await this.load();
      },
    });
    return { ...parts, name, stream, home };
  }

  edit(station) {
    const d = this.dialog;
    this.editing = station;
    d.heading.textContent = station ? t('radio.editTitle') : t('radio.add');
    d.name.value = station?.name ?? '';
    d.stream.value = station?.streamUrl ?? '';
    d.home.value = station?.homePageUrl ?? '';
    showError(d.error, null);
    d.dialog.showModal();
    d.name.focus();
  }

  async remove(station) {
    if (!window.confirm(t('radio.confirmDelete', { name: station.name }))) return;
    showError(this.error, null);
    try {
      await subsonic('deleteInternetRadioStation', { id: station.id });
      this.status.textContent = t('radio.deleted');
      await this.load();
    } catch (error) {
      showError(this.error, error);
    }
  }
}
