// Where the table's rows come from. Each source answers fetch({ start, cursor, limit, signal })
// with { items, total, nextCursor }: the library by cursor or offset, search and sorted playlist
// pages by cursor only (walking on from the nearest cursor they know), and whole lists
// (a playlist in its own order, a smart playlist, an album) from one answer kept in memory.
import { api } from './api.js';

/** The whole library, sorted and filtered: `api/tracks` by cursor, else by offset. */
export function librarySource({ sort, sortTags, filter }) {
  return {
    kind: 'library',
    params: { sort, sortTags, filter },
    fetch({ start, cursor, limit, signal }) {
      const params = { sort, sortTags, filter, limit };
      if (cursor) params.after = cursor;
      else params.offset = start;
      return api('api/tracks', { params, signal });
    },
    async snapshot() { return (await api('api/snapshot', { params: { sort, sortTags, filter } })).ids; },
  };
}

/** A list the server pages by cursor only: pages are walked from the nearest known cursor. */
function cursorSource(kind, path, baseParams) {
  const cursors = new Map([[0, null]]);
  return {
    kind,
    params: null,
    async fetch({ start, cursor, limit, signal }) {
      let from = start;
      let after = cursor;
      if (!after && start > 0) {
        from = Math.max(...[...cursors.keys()].filter((k) => k <= start));
        after = cursors.get(from);
      }
      // A request takes at most 10,000 rows, so a start further than that from the nearest known
      // cursor is walked to in such steps (each remembered), never answered from the wrong page.
      let page;
      for (;;) {
        const want = Math.min(10_000, start - from + limit);
        page = await api(path, { params: { ...baseParams, after: after || undefined, limit: want }, signal });
        if (page.nextCursor) cursors.set(from + page.items.length, page.nextCursor);
        if (cursors.size > 200) cursors.delete([...cursors.keys()][1]);
        if (start - from < page.items.length || !page.nextCursor) break;
        from += page.items.length;
        after = page.nextCursor;
      }
      const end = start - from + limit;
      const items = page.items.slice(start - from, end);
      // The next cursor is the page's only when these rows reach its end.
      return { items, total: page.total, nextCursor: items.length && end >= page.items.length ? page.nextCursor : null };
    },
  };
}

/** Search results for `q` (plain words), optionally filtered. */
export function searchSource(q, filter) {
  return cursorSource('search', 'api/search', { q, filter });
}

/** A playlist sorted by a column. */
export function playlistPageSource(id, { sort, sortTags }) {
  return cursorSource('playlist', `api/playlists/${id}/page`, { sort, sortTags });
}

/** A list fetched whole once (`load()` → tracks), served from memory. */
export function wholeSource(kind, load) {
  let tracks = null;
  return {
    kind,
    params: null,
    async fetch({ start, limit }) {
      if (!tracks) tracks = await load();
      return { items: tracks.slice(start, start + limit), total: tracks.length, nextCursor: null };
    },
    reset() { tracks = null; },
  };
}

/** A playlist in its own order (its items with their positions). */
export function playlistSource(id) {
  const source = wholeSource('playlist', async () => {
    const document = await api(`api/playlists/${id}`);
    source.playlist = document.playlist;
    return document.items.map((item) => ({ ...item.track, position: item.position }));
  });
  source.playlistID = id;
  return source;
}

/** A smart playlist's tracks. */
export function smartSource(id) {
  return wholeSource('smart', async () => (await api(`api/smart/${id}`, { params: { limit: 100_000 } })).items);
}

/** An album's tracks. */
export function albumSource(id) {
  return wholeSource('album', async () => (await api(`api/albums/${id}/tracks`)).items);
}
