// The missing files page: the tracks whose files are gone, listed 500 at a time with where they
// were and since when.
import { api } from './api.js';
import { t, tn, formatNumber, formatDate, formatDateTime } from './i18n.js';
import { h, data, pageHeading, errorBox, statusBox, showError, scrollTable, button, Page } from './dom.js';

/** The tracks whose files are gone: kept with their plays and places until the file returns or a
 *  scan purges them. `show()` takes no arguments. */
export class MissingPage extends Page {

  async show() {
    const generation = ++this.generation;
    this.cursor = null;
    this.shown = 0;
    const heading = pageHeading(t('missing.title'));
    const intro = h('p', { class: 'page-intro', text: t('missing.intro') });
    this.count = statusBox();
    this.error = errorBox();
    const table = scrollTable(t('missing.tableLabel'), [
      t('missing.column.title'), t('missing.column.artist'), t('missing.column.album'), t('missing.column.path'), t('missing.column.since'),
    ], 'missing-table');
    this.region = table.region;
    this.tbody = table.tbody;
    this.region.hidden = true;
    this.empty = h('p', { class: 'page-empty', text: t('missing.none'), hidden: true });
    this.more = button(t('pages.showMore'), () => this.load(this.generation), { hidden: true, class: 'more-button' });
    this.container.replaceChildren(heading, intro, this.count, this.error, this.region, this.empty, this.more);
    this.count.textContent = t('pages.loading');
    await this.load(generation);
  }

  async load(generation) {
    this.more.disabled = true;
    try {
      const params = { filter: 'missing:yes', sort: 'artist', limit: 500 };
      if (this.cursor) params.after = this.cursor;
      const page = await api('api/tracks', { params });
      if (generation !== this.generation) return;
      for (const track of page.items ?? []) {
        this.tbody.append(h('tr', {},
          h('td', {}, data(track.title ?? t('pages.untitled'))),
          h('td', {}, data(track.artist ?? '')),
          h('td', {}, data(track.album ?? '')),
          h('td', { class: 'path' }, data(track.path)),
          h('td', { class: 'date', title: formatDateTime(track.missingSince), text: formatDate(track.missingSince) || '—' }),
        ));
      }
      this.shown += (page.items ?? []).length;
      this.cursor = page.nextCursor ?? null;
      this.region.hidden = this.shown === 0;
      this.empty.hidden = this.shown !== 0;
      this.more.hidden = !this.cursor;
      this.count.textContent = this.shown < page.total
        ? t('missing.countPartial', { shown: formatNumber(this.shown), total: formatNumber(page.total) })
        : tn('missing.count', page.total);
    } catch (error) {
      if (generation !== this.generation) return;
      this.count.textContent = '';
      showError(this.error, error);
    } finally {
      this.more.disabled = false;
    }
  }
}
