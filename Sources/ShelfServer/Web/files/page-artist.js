// The artist page: an artist's releases grouped by release type, each a cover tile that opens
// the album.
import { api, artworkURL, isAbort } from './api.js';
import { t, tn, formatNumber } from './i18n.js';
import { h, pageHeading, errorBox, statusBox, showError, keepFocus, Page } from './dom.js';

/** The release groups of an artist page, in the order shown. */
const RELEASE_GROUPS = ['albums', 'eps', 'singles', 'compilations', 'live', 'appearsOn'];

/** Which group an album goes in: "appears on" when its album artist is someone else, else by the
 *  release types its tracks carry (compilation and live win over the primary type). */
function releaseGroup(types, compilation, appearsOn) {
  if (appearsOn) return 'appearsOn';
  const set = new Set((types ?? []).map((type) => String(type).toLowerCase()));
  if (set.has('compilation') || compilation) return 'compilations';
  if (set.has('live')) return 'live';
  if (set.has('ep')) return 'eps';
  if (set.has('single')) return 'singles';
  return 'albums';
}

/** Runs `work` on each of `items`, at most `limit` at a time. */
async function eachLimited(items, limit, work) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** An artist's releases grouped as albums, EPs, singles, compilations, live and appearances, each
 *  a cover tile that opens the album. `show({id, name})`: the artist's group ID and name;
 *  `hide()` stops reading the albums' release types. */
export class ArtistPage extends Page {
  constructor(container, deps) {
    super(container, deps);
    this.controller = null;
    this.renderTimer = null;
  }

  hide() {
    this.controller?.abort();
    this.controller = null;
    clearTimeout(this.renderTimer);
    this.renderTimer = null;
  }

  async show({ id, name } = {}) {
    this.hide();
    const generation = ++this.generation;
    const controller = new AbortController();
    this.controller = controller;
    const signal = controller.signal;
    this.artistID = String(id);
    this.albums = [];
    this.details = new Map();
    this.heading = pageHeading(name || t('artist.unknown'));
    this.heading.setAttribute('translate', 'no');
    this.picture = h('img', { class: 'artist-picture', alt: '', hidden: true, decoding: 'async' });
    this.meta = h('p', { class: 'muted artist-meta' });
    this.error = errorBox();
    this.status = statusBox();
    this.groups = h('div', { class: 'release-groups' });
    const mix = h('button', {
      type: 'button', text: t('mix.instant'),
      onclick: () => this.deps.mixer?.start({ artist: id }).catch((error) => this.deps.player.announce(error.message)),
    });
    this.container.replaceChildren(
      h('div', { class: 'artist-head' }, this.picture, h('div', {}, this.heading, this.meta, mix)),
      this.error, this.status, this.groups,
    );
    this.status.textContent = t('pages.loading');
    try {
      let after;
      do {
        const page = await api(`api/artists/${encodeURIComponent(id)}/albums`, { params: { limit: 500, after }, signal });
        if (generation !== this.generation) return;
        this.albums.push(...(page.items ?? []));
        after = page.nextCursor ?? undefined;
      } while (after && this.albums.length < 5000);
      // The albums of others this artist is credited on: the "Appears on" row.
      const appears = await api(`api/artists/${encodeURIComponent(id)}/albums`, { params: { role: 'appears' }, signal });
      if (generation !== this.generation) return;
      const own = new Set(this.albums.map((album) => String(album.id)));
      this.albums.push(...(appears.items ?? []).filter((album) => !own.has(String(album.id))));
    } catch (error) {
      if (generation !== this.generation) return;
      this.status.textContent = '';
      showError(this.error, error);
      return;
    }
    // Oldest first, undated last: how a discography reads.
    this.albums.sort((a, b) => (a.year ?? 99999) - (b.year ?? 99999) || String(a.name).localeCompare(String(b.name)));
    if (!name) {
      const own = this.albums.find((album) => String(album.artistID) === this.artistID) ?? this.albums[0];
      if (own?.artist) this.heading.textContent = own.artist;
    }
    this.name = this.heading.textContent;
    const cover = this.albums.find((album) => album.artworkID && String(album.artistID ?? this.artistID) === this.artistID)
      ?? this.albums.find((album) => album.artworkID);
    if (cover) {
      this.picture.src = artworkURL(cover.artworkID, 160);
      this.picture.hidden = false;
    }
    const tracks = this.albums.reduce((sum, album) => sum + (album.trackCount ?? 0), 0);
    this.meta.textContent = `${tn('artist.albumCount', this.albums.length)} · ${tn('artist.trackCount', tracks)}`;
    this.status.textContent = this.albums.length ? t('artist.sorting') : '';
    this.render();
    // The albums list carries no release type: each album's first track tells it, read a few at a
    // time, the page redrawn as they come (at most every 250 ms).
    await eachLimited(this.albums, 4, async (album) => {
      if (signal.aborted) return;
      try {
        let track;
        if (album.firstTrack) track = await api(`api/tracks/${album.firstTrack}`, { signal });
        else track = (await api(`api/albums/${album.id}/tracks`, { signal })).items?.[0];
        if (track) this.details.set(String(album.id), track);
      } catch (error) {
        if (isAbort(error)) return;
        // One album that cannot be read stays among the albums; the rest go on.
      }
      if (generation === this.generation && !this.renderTimer) {
        this.renderTimer = setTimeout(() => {
          this.renderTimer = null;
          if (generation === this.generation) this.render();
        }, 250);
      }
    });
    if (generation !== this.generation) return;
    clearTimeout(this.renderTimer);
    this.renderTimer = null;
    this.status.textContent = '';
    this.render();
  }

  /** Whether `album` is another artist's that this one appears on: the list says whose album it
   *  is (its album artist's ID); without that, the first track's album artists tell. */
  appearsOn(album, track) {
    if (album.artistID !== undefined && album.artistID !== null) return String(album.artistID) !== this.artistID;
    const names = track?.albumArtists?.length ? track.albumArtists : (track?.albumArtist ? [track.albumArtist] : []);
    if (!names.length || !this.name) return false;
    const own = this.name.toLocaleLowerCase();
    return !names.some((name) => String(name).toLocaleLowerCase() === own);
  }

  render() {
    const grouped = new Map(RELEASE_GROUPS.map((group) => [group, []]));
    for (const album of this.albums) {
      const track = this.details.get(String(album.id));
      grouped.get(releaseGroup(track?.releaseTypes, track?.compilation, this.appearsOn(album, track))).push(album);
    }
    keepFocus(this.container, () => {
      this.groups.replaceChildren();
      if (!this.albums.length) {
        this.groups.append(h('p', { class: 'page-empty', text: t('artist.none') }));
        return;
      }
      for (const group of RELEASE_GROUPS) {
        const albums = grouped.get(group);
        if (!albums.length) continue;
        const titleID = `artist-group-${group}`;
        this.groups.append(h('section', { class: 'release-group', 'aria-labelledby': titleID },
          h('h2', { id: titleID }, t(`artist.group.${group}`), ' ', h('span', { class: 'count', text: formatNumber(albums.length) })),
          h('ul', { class: 'album-tiles' }, albums.map((album) => h('li', {}, this.tile(album, group === 'appearsOn')))),
        ));
      }
    });
  }

  tile(album, appearsOn) {
    const image = album.artworkID
      ? h('img', { src: artworkURL(album.artworkID, 160), alt: '', loading: 'lazy', decoding: 'async' })
      : h('span', { class: 'nocover', 'aria-hidden': 'true' });
    // An appearance names whose album it is.
    const sub = [album.year, appearsOn ? album.artist : null].filter(Boolean);
    return h('button', { type: 'button', class: 'album-tile', 'data-focus': `album-${album.id}`, onclick: () => this.deps.openAlbum(album) },
      image,
      h('span', { class: 'name', translate: 'no', text: album.name || t('pages.none') }),
      h('span', { class: 'sub', translate: 'no', text: sub.join(' · ') }),
    );
  }
}
