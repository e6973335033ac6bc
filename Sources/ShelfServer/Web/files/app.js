// The page: sign in, then one table (or grid) at a time with the jump bar, the search box, the
// sidebar of views and playlists, the player, the edit dialog, and live updates from
// /api/events. State flows one way: the state below → sources → the table renders; events
// and input change the state.
import { api, onSignedOut, artworkURL, clock, isAbort, setLibrary, currentLibrary, isStreamOnly } from './api.js';
import { VirtualTable } from './virtual-table.js';
import { JumpBar, sectionOfKey } from './jump-bar.js';
import { librarySource, searchSource, playlistSource, playlistPageSource, smartSource, albumSource } from './sources.js';
import { Player } from './player.js';
import { Mixer } from './mix.js';
import { installShortcuts } from './shortcuts.js';
import { GroupsGrid } from './groups-grid.js';
import { EditDialog } from './edit-dialog.js';
import { Playlists } from './playlists.js';
import { applyTranslations, t, tn, formatNumber, showErrorIn } from './i18n.js';

const $ = (id) => document.getElementById(id);

// The theme before anything draws (settings.js writes it; reading it here keeps the pages'
// modules off the first load).
try {
  const theme = localStorage.getItem('shelf.theme');
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
} catch { /* storage refused: the system's theme */ }

// The views beside the list, each a module loaded the first time it is opened, so the first
// rows never wait for them.
const PAGES = {
  missing: ['./page-missing.js', 'MissingPage'], podcasts: ['./page-podcasts.js', 'PodcastsPage'], radio: ['./page-radio.js', 'RadioPage'],
  bookmarks: ['./page-bookmarks.js', 'BookmarksPage'], shares: ['./page-shares.js', 'SharesPage'], artist: ['./page-artist.js', 'ArtistPage'],
  folders: ['./page-folders.js', 'FoldersPage'], listening: ['./page-listening.js', 'ListeningPage'],
  admin: ['./admin.js', 'AdminPage'], settings: ['./settings.js', 'SettingsPage'],
};
const pages = new Map();
let shownPage = null;

const state = {
  user: null,
  sort: { field: 'artist', desc: false },
  sortTags: true,
  text: '',
  list: { type: 'library' }, // library | search | playlist | smart | album
  view: 'tracks', // tracks | albums | artists | composers | genres | album
};

let events = null;
let refreshTimer = null;

const table = new VirtualTable(
  { grid: $('grid'), viewport: $('viewport'), layer: $('rows'), spacer: $('spacer'), headRow: document.querySelector('.head-row'), headGroup: document.querySelector('.grid-head') },
  {
    onActivate: (index) => playFrom(index),
    onSort: (field) => {
      if (state.list.type === 'search' || state.list.type === 'album' || state.list.type === 'smart') return;
      state.sort = { field, desc: state.sort.field === field ? !state.sort.desc : false };
      if (state.list.type === 'playlist') state.list.sorted = true;
      showList();
    },
    onSelection: () => showSelection(),
    onTotal: (total) => showCount(total),
    onError: (error) => showError(error),
    onRows: () => {
      if (state.errorShown) clearError();
      afterFirstRows();
    },
    onKey: (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey) {
        if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) movePlaylistRow(event);
        return;
      }
      const section = sectionOfKey(event.key);
      if (section && !jumpBar.element.hidden) {
        event.preventDefault();
        jumpBar.jump(section).catch(showError);
      }
    },
  },
);

const jumpBar = new JumpBar($('jumpbar'), {
  onJump: (index, cursor) => {
    table.scrollToIndex(index, cursor);
    table.active = index;
    table.update();
  },
});

const groupsJumpBar = new JumpBar($('groups-jumpbar'), {
  anchorPath: null,
  onJump: (index) => grid.scrollToIndex(index),
});

const player = new Player(
  {
    audio: $('audio'), play: $('play'), next: $('next'), prev: $('prev'), seek: $('seek'), time: $('time'), length: $('length'),
    volume: $('volume'), transcode: $('transcode'), title: $('player-title'), artist: $('player-artist'), cover: $('player-cover'),
    bar: document.querySelector('.player'), queueList: $('queue-list'), queueClear: $('queue-clear'), queueToggle: $('queue-toggle'),
    queuePanel: $('queue'), queueCount: $('queue-count'),
  },
  { onTrack: (track) => { table.showPlaying(track.id); mixer.onTrack(); } },
);
const mixer = new Mixer(player, (text) => player.announce(text));
const shortcuts = installShortcuts({ player });

const grid = new GroupsGrid(
  { viewport: $('groups-viewport'), layer: $('groups-layer'), spacer: $('groups-spacer') },
  { onOpen: (item) => openGroup(item) },
);

const editor = new EditDialog(
  { dialog: $('edit-dialog'), form: $('edit-form'), fields: $('edit-fields'), report: $('edit-report'), cancel: $('edit-cancel') },
  { onSaved: () => refreshAll() },
);

const playlists = new Playlists($('playlists'), {
  onOpen: (playlist) => {
    state.list = playlist.kind === 'smart' ? { type: 'smart', id: playlist.id, name: playlist.name } : { type: 'playlist', id: playlist.id, name: playlist.name };
    state.text = '';
    $('search').value = '';
    showView('tracks');
    showList();
  },
  selectedIDs: () => table.selectedIDs(),
  onChanged: () => {
    const open = playlists.playlists.find((p) => p.id === state.list.id);
    if (state.list.type === 'playlist' || state.list.type === 'smart') {
      if (open) state.list.name = open.name;
      showTitle(state.list.name);
      refreshAll();
    }
  },
});

// MARK: Signing in and out

/** Registers the service worker that keeps the shell's files for opening offline (sw.js; the API
 *  and audio are never cached), and then offers the queue another device saved. Both wait until
 *  the page has drawn its first rows and the browser is idle: the worker's first install fetches
 *  every file, and neither may compete with the first rows. */
let afterFirstRowsDone = false;
function afterFirstRows() {
  if (afterFirstRowsDone) return;
  afterFirstRowsDone = true;
  const later = window.requestIdleCallback ?? ((callback) => setTimeout(callback, 200));
  later(() => {
    if (state.user) player.offerResume();
    navigator.serviceWorker?.register('sw.js').catch(() => { /* no worker: the page works without one */ });
  }, { timeout: 2000 });
}

async function start() {
  applyTranslations();
  try {
    const { user } = await api('api/me');
    signedIn(user);
  } catch {
    showSignIn();
  }
}

function showSignIn() {
  afterFirstRows();
  clearTimeout(relistenTimer);
  events?.close();
  events = null;
  state.user = null;
  $('app').hidden = true;
  $('signin').hidden = false;
  $('signin').elements.name.focus();
}

/** Where the library switcher keeps each user's choice on this device. */
function libraryKey(user) { return `shelf.library.${user.name}`; }

/** The switcher, shown when the user sees more than one library: all of them, or one; the
 *  choice is remembered per user. A remembered library the user no longer sees is forgotten. */
async function loadLibraries(user) {
  const select = $('library');
  const { libraries } = await api('api/libraries');
  if (state.user !== user) return;
  const remembered = currentLibrary();
  if (remembered && !libraries.some((library) => String(library.id) === remembered)) {
    setLibrary(null);
    try { localStorage.removeItem(libraryKey(user)); } catch { /* storage refused */ }
    showList();
  }
  select.hidden = libraries.length < 2;
  select.replaceChildren(
    new Option(t('library.all'), ''),
    ...libraries.map((library) => new Option(library.name, String(library.id))),
  );
  select.value = currentLibrary() ?? '';
}

$('library').addEventListener('change', (event) => {
  const value = event.target.value;
  setLibrary(value || null);
  try {
    if (value) localStorage.setItem(libraryKey(state.user), value);
    else localStorage.removeItem(libraryKey(state.user));
  } catch { /* storage refused: the choice lasts this visit */ }
  if (PAGES[state.view]) openPage(state.view);
  else {
    showView(state.view === 'album' ? 'tracks' : state.view);
    if (state.view === 'tracks') showList();
  }
});

function signedIn(user) {
  state.user = user;
  player.streamOnly = isStreamOnly(user);
  // The remembered library first, so that the first rows are already its own.
  let remembered = null;
  try { remembered = localStorage.getItem(libraryKey(user)); } catch { /* storage refused */ }
  setLibrary(remembered);
  loadLibraries(user).catch(() => { $('library').hidden = true; });
  $('signin').hidden = true;
  $('app').hidden = false;
  $('me').textContent = user.name;
  document.body.dataset.admin = String(Boolean(user.admin));
  for (const element of document.querySelectorAll('.admin-only')) element.hidden = !user.admin;
  listen();
  // A later sign-in (the first rows are long drawn) offers the saved queue at once.
  if (afterFirstRowsDone) player.offerResume();
  playlists.load().catch(showError);
  showView('tracks');
  showList();
  $('grid').focus();
  // Back from Last.fm's authorisation (`#settings/lastfm-linked`): the settings say how it went.
  const back = /^#settings\/([a-z-]+)$/.exec(window.location.hash);
  if (back) {
    history.replaceState(null, '', window.location.pathname + window.location.search);
    openPage('settings', { notice: back[1] }).catch(showError);
  }
}

$('signin').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  $('signin-error').textContent = '';
  try {
    const { user } = await api('api/session', { method: 'POST', body: { name: form.elements.name.value, password: form.elements.password.value } });
    form.elements.password.value = '';
    signedIn(user);
  } catch (error) {
    // The server's 401 here means a wrong name or password; its other answers say what they are.
    showErrorIn($('signin-error'), error, { unauthorized: 'signin.failed' });
  }
});

$('signout').addEventListener('click', async () => {
  // The player saves the queue and ends the listen while the session still works.
  await player.signOut();
  try { await api('api/session', { method: 'DELETE' }); } catch { /* signed out either way */ }
  showSignIn();
});

onSignedOut(() => {
  if (!state.user) return;
  player.reset();
  showSignIn();
});

// MARK: The list

function listParams() {
  const filter = state.text && isFilter(state.text) ? state.text : undefined;
  return { sort: `${state.sort.field}${state.sort.desc ? ':desc' : ''}`, sortTags: state.sortTags ? 'on' : 'off', filter };
}

/** The filter language has `field:value` terms; anything else is words to search for. */
function isFilter(text) { return /(^|\s)-?[A-Za-z]+:/.test(text); }

function currentSource() {
  const params = listParams();
  const list = state.list;
  if (list.type === 'library' && state.text && !isFilter(state.text)) return searchSource(state.text.trim());
  if (list.type === 'playlist') return list.sorted ? playlistPageSource(list.id, params) : playlistSource(list.id);
  if (list.type === 'smart') return smartSource(list.id);
  if (list.type === 'album') return albumSource(list.id);
  return librarySource(params);
}

let source = null;

function showList({ keepPosition = false } = {}) {
  clearError();
  source = currentSource();
  const searching = source.kind === 'search';
  table.showSort(searching || source.kind === 'smart' || source.kind === 'album' || (source.kind === 'playlist' && !state.list.sorted) ? null : state.sort.field, state.sort.desc);
  table.setSource(source, { keepPosition });
  if (searching) showTitle(t('list.searchTitle', { text: state.text.trim() }), { data: true });
  else showTitle(state.list.name);
  jumpBar.load(source.kind === 'library' ? listParams() : null).catch(showError);
  showSelection();
}

/** The list's heading: `text` (library data such as a playlist's name when `data`, so marked
 *  translate="no"), or the Tracks view's name when there is none. */
function showTitle(text, { data = text != null } = {}) {
  const title = $('list-title');
  title.removeAttribute('data-i18n');
  title.textContent = text ?? t('views.tracks');
  if (data) title.setAttribute('translate', 'no');
  else title.removeAttribute('translate');
}

/** "1,234 tracks" beside the heading. */
function showCount(total) {
  $('list-count').textContent = tn('list.count', total);
}

function showError(error) {
  if (isAbort(error)) return;
  showErrorIn($('search-error'), error);
  state.errorShown = true;
  if (error.status === 400) showCount(0);
}

function clearError() {
  $('search-error').textContent = '';
  state.errorShown = false;
}

function showSelection() {
  const count = table.selection.size;
  $('selection-count').textContent = count ? t('list.selected', { count: formatNumber(count) }) : '';
  for (const id of ['play-selection', 'next-selection', 'queue-selection', 'mix-selection', 'add-to-playlist', 'share-selection', 'edit-selection']) $(id).disabled = count === 0;
  $('path-selection').disabled = count !== 2;
}

async function selectedTracks() {
  const ids = table.selectedIDs();
  const tracks = [];
  const missing = [];
  for (const id of ids) {
    const track = table.loadedTrack(id);
    if (track) tracks.push(track);
    else missing.push(id);
  }
  // Rows selected but not loaded (a shift-click over far rows): fetched, a few at a time.
  for (let i = 0; i < missing.length && i < 500; i += 20) {
    const fetched = await Promise.all(missing.slice(i, i + 20).map((id) => api(`api/tracks/${id}`).catch(() => null)));
    tracks.push(...fetched.filter(Boolean));
  }
  return { ids, tracks };
}

function playFrom(index) {
  const tracks = table.tracksFrom(index, 500);
  if (tracks.length) player.playNow(tracks, 0);
}

$('play-selection').addEventListener('click', async () => player.playNow((await selectedTracks()).tracks));
$('queue-selection').addEventListener('click', async () => player.add((await selectedTracks()).tracks));
$('next-selection').addEventListener('click', async () => player.playNext((await selectedTracks()).tracks));
$('add-to-playlist').addEventListener('click', () => playlists.chooseAndAdd(table.selectedIDs()));
// An instant mix of the selected track (or the first of several); a path between two selected.
$('mix-selection').addEventListener('click', () => mixer.start({ track: table.selectedIDs()[0] }).catch((error) => player.announce(error.message)));
$('path-selection').addEventListener('click', () => {
  const [from, to] = table.selectedIDs();
  mixer.path(from, to).catch((error) => player.announce(error.message));
});
$('share-selection').addEventListener('click', async () => {
  const { createShareDialog } = await import('./page-shares.js');
  await createShareDialog(table.selectedIDs());
});
$('edit-selection').addEventListener('click', async () => {
  const { ids, tracks } = await selectedTracks();
  editor.open(ids, tracks);
});

async function movePlaylistRow(event) {
  if (state.list.type !== 'playlist' || state.list.sorted || table.active < 0) return;
  event.preventDefault();
  const track = table.rows.get(table.active);
  if (!track) return;
  const up = event.key === 'ArrowUp';
  const to = track.position + (up ? -1 : 2);
  if (to < 1 || to > table.total + 1) return;
  await api(`api/playlists/${state.list.id}/move`, { method: 'POST', body: { positions: [track.position], to } });
  table.active += up ? -1 : 1;
  refreshAll();
}

// MARK: Search and filter: debounced; the table cancels the requests of the list it replaces.

let searchTimer = null;
$('search').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    state.text = $('search').value;
    if (state.list.type !== 'library' && state.list.type !== 'playlist') state.list = { type: 'library' };
    if (state.view !== 'tracks') showView('tracks');
    showList();
  }, 200);
});
$('search').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' || event.key === 'ArrowDown') {
    event.preventDefault();
    $('grid').focus();
  }
});

$('sort-tags').addEventListener('change', () => {
  state.sortTags = $('sort-tags').checked;
  if (state.view === 'tracks') showList();
  else showView(state.view);
});

// MARK: Views

function showView(view) {
  state.view = view;
  for (const button of document.querySelectorAll('[data-view]')) {
    if (button.dataset.view === view) button.setAttribute('aria-current', 'page');
    else button.removeAttribute('aria-current');
  }
  $('tracks-view').hidden = view !== 'tracks';
  $('groups-view').hidden = !['albums', 'artists', 'composers', 'genres'].includes(view);
  $('album-view').hidden = view !== 'album';
  document.querySelector('.list-actions').hidden = view !== 'tracks';
  const isPage = Boolean(PAGES[view]);
  $('page-view').hidden = !isPage;
  document.querySelector('.listhead').hidden = isPage;
  if (!isPage && shownPage) {
    shownPage.hide?.();
    shownPage = null;
  }
  const sortTags = state.sortTags ? 'on' : 'off';
  const groups = {
    albums: ['albums', { sortTags }, 'album', t('views.albums')],
    artists: ['artists', { sortTags, by: 'albumArtist' }, 'artist', t('views.artists')],
    composers: ['composers', { sortTags }, 'composer', t('views.composers')],
    genres: ['genres', { sortTags }, 'genre', t('views.genres')],
  }[view];
  if (groups) {
    const [path, params, kind, title] = groups;
    showTitle(title, { data: false });
    $('groups-view').setAttribute('aria-label', title);
    $('list-count').textContent = '';
    grid.show(path, params, kind);
    groupsJumpBar.load(params, `api/${path}/sections`).catch(showError);
  } else {
    groupsJumpBar.load(null);
  }
  $('sidebar').classList.remove('open');
}

for (const button of document.querySelectorAll('[data-view]')) {
  button.addEventListener('click', () => {
    playlists.markCurrent(null);
    if (PAGES[button.dataset.view]) {
      openPage(button.dataset.view).catch(showError);
    } else if (button.dataset.view === 'tracks') {
      state.list = { type: 'library' };
      showView('tracks');
      showList();
    } else {
      showView(button.dataset.view);
    }
  });
}

/** What the pages may do to the rest of the page. */
function pageDeps() {
  return {
    player, user: state.user, mixer,
    openAlbum: (album) => openAlbum(album),
    openArtist: (id, name) => openPage('artist', { id, name }),
    openArtistByName: (name, mbid) => openArtistByName(name, mbid),
    search: (text) => searchFor(text),
  };
}

/** Shows page `view` (loading its module the first time) with `args`. */
async function openPage(view, args = {}) {
  const [module, name] = PAGES[view];
  const section = $('page-view');
  showView(view);
  section.dataset.view = view;
  section.dataset.ready = 'false';
  let page = pages.get(view);
  if (!page) {
    const Page = (await import(module))[name];
    page = new Page(section, pageDeps());
    pages.set(view, page);
  }
  if (state.view !== view) return;  // another view was chosen while the module loaded
  if (shownPage && shownPage !== page) shownPage.hide?.();
  shownPage = page;
  page.deps = pageDeps();
  await page.show(args);
  if (state.view !== view) return;
  section.dataset.ready = 'true';
  section.querySelector('h1')?.focus();
}

/** The artist page of a name (one of a track's several artists), with its MusicBrainz ID when
 *  the track gives one: two artists of one name are told apart by it. */
async function openArtistByName(name, mbid) {
  const { id } = await api('api/artists/named', { params: { name, musicBrainzId: mbid } });
  await openPage('artist', { id, name });
}

/** The tracks view filtered by `text` (a genre or label link). */
function searchFor(text) {
  state.list = { type: 'library' };
  state.text = text;
  $('search').value = text;
  showView('tracks');
  showList();
}

async function openGroup(item) {
  if (!item) return;
  if (item.kind === 'album') return openAlbum(item);
  if (item.kind === 'artist' || item.kind === 'albumArtist') {
    return openPage('artist', { id: item.id, name: item.name });
  }
  // Composers and genres drill down to the tracks, filtered.
  const field = item.kind === 'composer' ? 'composer' : 'genre';
  state.list = { type: 'library' };
  state.text = `${field}:="${item.name}"`;
  $('search').value = state.text;
  showView('tracks');
  showList();
}

async function openAlbum(item) {
  showView('album');
  // A blank album tag is its artist's unknown album: named as the grid names it.
  showTitle(item.name || t('common.none'), { data: Boolean(item.name) });
  $('album-name').textContent = item.name || t('common.none');
  if (item.artworkID) $('album-cover').src = artworkURL(item.artworkID, 200);
  else $('album-cover').removeAttribute('src');
  const { items } = await api(`api/albums/${item.id}/tracks`);
  const seconds = items.reduce((sum, track) => sum + (track.duration || 0), 0);
  $('album-meta').textContent = [item.artist, item.year, tn('list.count', items.length), clock(seconds)].filter(Boolean).join(' · ');
  const list = $('album-tracks');
  list.textContent = '';
  $('album-details').textContent = '';
  // Release details, disc headings and credits come with their own module (loaded on demand).
  const { albumHeader, discGroups, discHeading, artistLinks } = await import('./album-details.js');
  const deps = pageDeps();
  $('album-details').append(albumHeader(items, deps));
  const groups = discGroups(items);
  let index = 0;
  for (const group of groups) {
    if (groups.length > 1 || group.subtitle) {
      const heading = document.createElement('li');
      heading.className = 'disc';
      heading.append(discHeading(group));
      list.append(heading);
    }
    for (const track of group.tracks) {
      const at = index++;
      const entry = document.createElement('li');
      entry.tabIndex = 0;
      entry.className = 'album-track';
      const title = document.createElement('span');
      title.className = 'album-track-title';
      title.textContent = track.title ?? t('common.untitled');
      const credits = document.createElement('div');
      credits.className = 'album-track-credits';
      credits.append(artistLinks(track, deps));
      const time = document.createElement('span');
      time.className = 'album-track-time';
      time.textContent = clock(track.duration);
      entry.append(title, time, credits);
      const play = () => player.playNow(items, at);
      entry.addEventListener('click', play);
      entry.addEventListener('keydown', (event) => { if (event.key === 'Enter' && event.target === entry) play(); });
      list.append(entry);
    }
  }
  $('album-play').onclick = () => player.playNow(items, 0);
  $('album-mix').onclick = () => mixer.start({ album: item.id }).catch((error) => player.announce(error.message));
  $('album-back').onclick = () => showView('albums');
}

$('menu').addEventListener('click', () => {
  const open = !$('sidebar').classList.contains('open');
  $('sidebar').classList.toggle('open', open);
  $('menu').setAttribute('aria-expanded', String(open));
});

// MARK: Live updates: the browser's EventSource resumes with Last-Event-ID by itself after a
// network error. After an answer that is not a stream (a 401 when the session ended, a 502 or 503
// while the server restarts) it gives up for good, so the page checks the session and opens a new
// stream from the last event it saw (`since`), missing nothing.

let lastEventID = null;
let relistenTimer = null;

function listen() {
  clearTimeout(relistenTimer);
  events?.close();
  events = new EventSource(lastEventID ? `api/events?since=${encodeURIComponent(lastEventID)}` : 'api/events');
  const seen = (event) => { if (event.lastEventId) lastEventID = event.lastEventId; };
  events.addEventListener('change', (event) => { seen(event); scheduleRefresh(); });
  events.addEventListener('tokenExpired', (event) => { seen(event); scheduleRefresh(); });
  events.addEventListener('ready', (event) => { seen(event); document.body.dataset.live = 'true'; });
  events.addEventListener('scan', (event) => {
    try { pages.get('admin')?.onScan(JSON.parse(event.data)); } catch { /* a torn event: the next one says the same */ }
  });
  events.addEventListener('error', () => {
    if (events.readyState !== EventSource.CLOSED) return;
    document.body.dataset.live = 'false';
    relistenTimer = setTimeout(async () => {
      try {
        await api('api/me');
        listen();
      } catch {
        // A 401 has already signed the page out (api() reports it); anything else tries again.
        if (state.user) relistenTimer = setTimeout(listen, 5000);
      }
    }, 2000);
  });
}

function scheduleRefresh() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    refreshAll();
  }, 250);
}

/** Refetches what is shown, keeping the scroll position and the selection. */
function refreshAll() {
  source?.reset?.();
  table.refresh();
  if (source?.kind === 'library') jumpBar.load(listParams()).catch(showError);
  if (!$('groups-view').hidden) {
    grid.refresh();
    if (groupsJumpBar.params) groupsJumpBar.load(groupsJumpBar.params).catch(() => {});
  }
  playlists.load().catch(() => {});
}

// For the browser suite and the console: open an artist, show the shortcuts.
window.shelf = Object.assign(window.shelf || {}, {
  openArtist: (id, name) => openPage('artist', { id, name }),
  showShortcuts: () => { if (!shortcuts.dialog.open) shortcuts.dialog.showModal(); },
});

start();
