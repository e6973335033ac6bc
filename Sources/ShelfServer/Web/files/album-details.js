// The album page's details, loaded by app.js when it first shows an album: album artists, dates,
// labels, release types and genres under the title, disc headings, and each track's credits.
import { t, tn, formatDate } from './i18n.js';
import { h, data } from './dom.js';

/** A filter value in quotes (the filter language has no escape for a quote inside one). */
function quoted(text) { return `"${String(text).replace(/"/g, '')}"`; }

/** Release types MusicBrainz names, by their key in the tables (lower case, letters only). */
const RELEASE_TYPES = ['album', 'single', 'ep', 'broadcast', 'other', 'compilation', 'live', 'soundtrack', 'remix', 'demo', 'djmix',
  'mixtapestreet', 'interview', 'spokenword', 'audiobook', 'audiodrama', 'fieldrecording'];

/** Contributor roles the tags name, by their key in the tables. */
const ROLES = ['lyricist', 'conductor', 'remixer', 'producer', 'engineer', 'mixer', 'djmixer', 'arranger', 'performer', 'composer', 'writer', 'orchestra'];

/** A button inside a clickable album row: its clicks and keys stop here, so pressing it does not
 *  also play the row's track. */
function rowButton(text, action, className = 'link-button') {
  const control = h('button', { type: 'button', class: className, translate: 'no', text });
  control.addEventListener('click', (event) => {
    event.stopPropagation();
    action();
  });
  control.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') event.stopPropagation();
  });
  return control;
}

/** Opens the artist named `name` (told apart from others of its name by `mbid`, its MusicBrainz
 *  ID, when known): the page's own way when app.js gives one, else a search. */
function openArtistByName(deps, name, field = 'albumArtist', mbid = undefined) {
  if (typeof deps.openArtistByName === 'function') deps.openArtistByName(name, mbid);
  else deps.search(`${field}:=${quoted(name)}`);
}

/** The MusicBrainz ID of `names[index]` from a track's `ids`, when the IDs line up with the names. */
function idOf(ids, names, index) {
  return Array.isArray(ids) && ids.length === names.length ? ids[index] : undefined;
}

/** The distinct values of `key` (a list field) over `tracks`, in first-seen order. */
function distinct(tracks, key) {
  const seen = new Map();
  for (const track of tracks) {
    for (const value of track[key] ?? []) {
      const folded = String(value).toLocaleLowerCase();
      if (value && !seen.has(folded)) seen.set(folded, value);
    }
  }
  return [...seen.values()];
}

/** A tagged date ("1969", "1969-09" or "1969-09-26"): a whole day in the reader's format, a year
 *  or month as tagged. */
function taggedDate(text) {
  if (!text) return '';
  return /^\d{4}-\d{2}-\d{2}$/.test(text) ? formatDate(text) : String(text);
}

/** Items with a separator between them (", " in English, "、" in Japanese). */
function joined(items) {
  const nodes = [];
  items.forEach((item, index) => {
    if (index) nodes.push(t('pages.listSeparator'));
    nodes.push(item);
  });
  return nodes;
}

/** The album page's details under its title, from its `tracks`: album artists (each a button that
 *  opens the artist), release and original dates, labels, release types, and genres (each a
 *  button that searches the genre). `deps` as the pages' (search, openArtistByName). */
export function albumHeader(tracks, deps) {
  const first = tracks[0] ?? {};
  const details = h('dl', { class: 'album-details' });
  const row = (label, ...values) => details.append(h('div', { class: 'detail' }, h('dt', { text: label }), h('dd', {}, ...values)));
  let artists = distinct(tracks.slice(0, 1), 'albumArtists');
  if (!artists.length && first.albumArtist) artists = [first.albumArtist];
  if (artists.length) {
    const ids = first.musicBrainz?.albumArtistIDs;
    row(
      tn('album.details.albumArtists', artists.length),
      joined(artists.map((name, index) => rowButton(name, () => openArtistByName(deps, name, 'albumArtist', idOf(ids, artists, index))))),
    );
  }
  const released = taggedDate(first.releaseDate) || (first.year ? String(first.year) : '');
  if (released) row(t('album.details.released'), released);
  if (first.originalDate && first.originalDate !== first.releaseDate && String(first.originalDate) !== String(first.year ?? '')) {
    row(t('album.details.original'), taggedDate(first.originalDate));
  }
  const labels = distinct(tracks, 'labels');
  if (labels.length) {
    row(tn('album.details.labels', labels.length), joined(labels.map((label) => rowButton(label, () => deps.search(`label:=${quoted(label)}`)))));
  }
  const types = distinct(tracks.slice(0, 1), 'releaseTypes');
  if (types.length) {
    row(t('album.details.releaseType'), joined(types.map((type) => {
      const key = String(type).toLowerCase().replace(/[^a-z]/g, '');
      return RELEASE_TYPES.includes(key) ? t(`album.type.${key}`) : data(type);
    })));
  }
  let genres = distinct(tracks, 'genres');
  if (!genres.length && first.genre) genres = [first.genre];
  if (genres.length) {
    row(tn('album.details.genres', genres.length), joined(genres.map((genre) => rowButton(genre, () => deps.search(`genre:=${quoted(genre)}`)))));
  }
  return details;
}

/** The album's tracks by disc, in the order given: [{disc, subtitle, tracks}] (disc null when
 *  untagged), so the album page can head each disc "Disc 2: subtitle". */
export function discGroups(tracks) {
  const groups = [];
  const byDisc = new Map();
  for (const track of tracks) {
    const disc = track.discNumber ?? null;
    let group = byDisc.get(disc);
    if (!group) {
      group = { disc, subtitle: null, tracks: [] };
      byDisc.set(disc, group);
      groups.push(group);
    }
    if (!group.subtitle && track.discSubtitle) group.subtitle = track.discSubtitle;
    group.tracks.push(track);
  }
  return groups;
}

/** A heading for one of `discGroups`' groups ("Disc 2: subtitle"), at heading `level` (3 by default). */
export function discHeading(group, level = 3) {
  const heading = h(`h${level}`, { class: 'disc-heading' }, group.disc === null ? t('album.discUnknown') : t('album.disc', { disc: group.disc }));
  if (group.subtitle) heading.append(t('album.discSubtitleSeparator'), data(group.subtitle));
  return heading;
}

/** A track row's credits: each of its artists a separate button (opening the artist), then its
 *  contributors as "role: names" lines. */
export function artistLinks(track, deps) {
  const fragment = document.createDocumentFragment();
  const names = track.artists?.length ? track.artists : (track.artist ? [track.artist] : []);
  if (names.length) {
    const ids = track.musicBrainz?.artistIDs;
    fragment.append(
      h('span', { class: 'track-artists' }, joined(names.map((name, index) => rowButton(name, () => openArtistByName(deps, name, 'artist', idOf(ids, names, index)))))),
    );
  }
  const roles = new Map();
  for (const contributor of track.contributors ?? []) {
    const key = `${contributor.role}\u0000${contributor.subRole ?? ''}`;
    if (!roles.has(key)) roles.set(key, { role: contributor.role, subRole: contributor.subRole, names: [] });
    roles.get(key).names.push(contributor.name);
  }
  if (roles.size) {
    const lines = h('ul', { class: 'contributors' });
    for (const { role, subRole, names: credited } of roles.values()) {
      const roleKey = String(role).toLowerCase().replace(/[^a-z]/g, '');
      const label = h('span', { class: 'role' }, ROLES.includes(roleKey) ? t(`album.role.${roleKey}`) : data(role));
      if (subRole) label.append(t('album.subRoleOpen'), data(subRole), t('album.subRoleClose'));
      lines.append(h('li', {}, label, t('album.roleSeparator'), joined(credited.map((name) => data(name)))));
    }
    fragment.append(lines);
  }
  return fragment;
}
