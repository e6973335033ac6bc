// The bookmarks page: the places in tracks the user's players saved, resumed or deleted here.
import { api, subsonic, clock, list, trackNumber } from './api.js';
import { t, formatDate, formatDateTime } from './i18n.js';
import { h, data, pageHeading, errorBox, statusBox, showError, scrollTable, button, loadList, Page } from './dom.js';

/** Seeks the player to `seconds` once its new track can seek (a seek before the metadata would
 *  be lost on some browsers). */
function seekWhenReady(player, seconds) {
  const audio = document.getElementById('audio');
  if (!audio || audio.readyState >= 1) {
    player.seekTo(seconds);
    return;
  }
  audio.addEventListener('loadedmetadata', () => player.seekTo(seconds), { once: true });
}

/** The user's bookmarks (a place in a track, saved by a player): resume one, or delete it.
 *  `show()` takes no arguments. */
export class BookmarksPage extends Page {

  async show() {
    this.generation += 1;
    const heading = pageHeading(t('bookmarks.title'));
    const intro = h('p', { class: 'page-intro', text: t('bookmarks.intro') });
    this.error = errorBox();
    this.status = statusBox();
    this.body = h('div');
    this.container.replaceChildren(heading, intro, this.error, this.status, this.body);
    this.status.textContent = t('pages.loading');
    await this.load();
  }

  load() {
    return loadList(this, async () => list((await subsonic('getBookmarks')).bookmarks?.bookmark));
  }

  render(bookmarks) {
    if (!bookmarks.length) {
      this.body.replaceChildren(h('p', { class: 'page-empty', text: t('bookmarks.none') }));
      return;
    }
    const { region, tbody } = scrollTable(t('bookmarks.tableLabel'), [
      t('bookmarks.column.title'), t('bookmarks.column.artist'), t('bookmarks.column.album'), t('bookmarks.column.position'),
      t('bookmarks.column.comment'), t('bookmarks.column.saved'), t('pages.actions'),
    ], 'bookmarks-table');
    for (const bookmark of bookmarks) {
      const entry = bookmark.entry ?? {};
      const seconds = (bookmark.position ?? 0) / 1000;
      tbody.append(h('tr', { 'data-focus-group': `bookmark-${entry.id}` },
        h('td', {}, data(entry.title ?? t('pages.untitled'))),
        h('td', {}, data(entry.artist ?? '')),
        h('td', {}, data(entry.album ?? '')),
        h('td', { class: 'num', text: entry.duration ? t('bookmarks.positionOf', { position: clock(seconds), duration: clock(entry.duration) }) : clock(seconds) }),
        h('td', {}, bookmark.comment ? data(bookmark.comment) : ''),
        h('td', { class: 'date', title: formatDateTime(bookmark.changed ?? bookmark.created), text: formatDate(bookmark.changed ?? bookmark.created) }),
        h('td', { class: 'actions' },
          button(t('bookmarks.resume'), () => this.resume(bookmark), { class: 'primary', 'data-focus': `resume-${entry.id}` }),
          button(t('pages.delete'), () => this.remove(bookmark), { 'data-focus': `delete-${entry.id}` }),
        ),
      ));
    }
    this.body.replaceChildren(region);
  }

  /** Plays the bookmarked track from its place: the player's playAt when it has one, else play
   *  and seek once the audio can. */
  async resume(bookmark) {
    showError(this.error, null);
    const id = trackNumber(bookmark.entry?.id);
    if (id === null) return;
    try {
      const track = await api(`api/tracks/${id}`);
      const seconds = (bookmark.position ?? 0) / 1000;
      const player = this.deps.player;
      if (typeof player.playAt === 'function') {
        player.playAt(track, seconds);
      } else {
        player.playNow([track]);
        if (seconds > 0) seekWhenReady(player, seconds);
      }
    } catch (error) {
      showError(this.error, error);
    }
  }

  async remove(bookmark) {
    showError(this.error, null);
    try {
      await subsonic('deleteBookmark', { id: bookmark.entry?.id });
      this.status.textContent = t('bookmarks.deleted');
      await this.load();
    } catch (error) {
      showError(this.error, error);
    }
  }
}
