// The admin page's statistics: the library's numbers from /api/info, with the album and artist
// counts from their views when the server's info leaves them out.
import { api } from './api.js';
import { t } from './i18n.js';
import { h, data, errorBox, showError } from './dom.js';
import { adminSection, numbers, formatBytes, formatSpan } from './admin-common.js';

/** The statistics section of `page` (the AdminPage: its generation). */
export class StatsSection {
  constructor(page) {
    this.page = page;
  }

  build() {
    this.error = errorBox();
    this.body = h('div');
    return adminSection('admin-stats-title', t('admin.stats.title'), this.error, this.body);
  }

  async load() {
    const generation = this.page.generation;
    // The album and artist counts are the totals of their views (limit 0: no rows, just the total).
    const [info, albums, artists] = await Promise.allSettled([
      api('api/info'),
      api('api/albums', { params: { limit: 0 } }),
      api('api/artists', { params: { limit: 0, by: 'albumArtist' } }),
    ]);
    if (generation !== this.page.generation) return;
    if (info.status === 'rejected') {
      showError(this.error, info.reason);
      return;
    }
    showError(this.error, null);
    const facts = info.value ?? {};
    const rows = [[t('admin.stats.tracks'), facts.trackCount ?? facts.tracks ?? 0]];
    const albumCount = facts.albumCount ?? (albums.status === 'fulfilled' ? albums.value.total : null);
    const artistCount = facts.artistCount ?? (artists.status === 'fulfilled' ? artists.value.total : null);
    if (albumCount !== null && albumCount !== undefined) rows.push([t('admin.stats.albums'), albumCount]);
    if (artistCount !== null && artistCount !== undefined) rows.push([t('admin.stats.artists'), artistCount]);
    if (facts.playlistCount !== undefined) rows.push([t('admin.stats.playlists'), facts.playlistCount]);
    if (facts.artworkCount !== undefined) rows.push([t('admin.stats.pictures'), facts.artworkCount]);
    const duration = facts.totalDuration ?? facts.duration;
    if (duration !== undefined && duration !== null) rows.push([t('admin.stats.duration'), formatSpan(duration)]);
    const bytes = facts.bytesOnDisk ?? facts.size;
    if (bytes !== undefined) rows.push([t('admin.stats.size'), data(formatBytes(bytes))]);
    if (facts.fileSize !== undefined) rows.push([t('admin.stats.musicSize'), data(formatBytes(facts.fileSize))]);
    if (facts.path) rows.push([t('admin.stats.path'), data(facts.path, 'path')]);
    this.body.replaceChildren(numbers(rows));
  }
}
