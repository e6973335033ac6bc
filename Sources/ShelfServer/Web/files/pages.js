// The pages beside the track list: missing files, podcasts, internet radio, bookmarks, shares, an
// artist's releases, and the album page's details. Each page is a class that draws into the
// <section> app.js gives it (`show(args)` replaces its children). Everything is built with
// createElement, because the page's CSP allows no inline script or style attribute and the page never parses HTML from strings.
// Names, titles, paths and addresses from the library carry translate="no": they are data, not
// words of the page, and must not be translated (nor flagged as untranslated).
import { api, subsonic, clock, artworkURL, isAbort } from './api.js';
import { t, tn, formatNumber, formatDate, formatDateTime, showErrorIn } from './i18n.js';

// MARK: Helpers shared with admin.js and settings.js

/** Builds an element: `props` sets properties, except `class`, `text`, `on<event>` (a listener),
 *  and `translate`, `role` and dashed names (aria-*, data-*), which are attributes; null and
 *  undefined props and children are left out, and false children. */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null) continue;
    if (key === 'class') element.className = value;
    else if (key === 'text') element.textContent = String(value);
    else if (key.startsWith('on') && typeof value === 'function') element.addEventListener(key.slice(2), value);
    // `translate` is a boolean property: assigning 'no' to it would mean yes. A false attribute
    // is left out; a false property (spellcheck, hidden) is set, which is what it says.
    else if (key === 'translate' || key === 'role' || key.includes('-')) {
      if (value !== false) element.setAttribute(key, value === true ? '' : String(value));
    } else element[key] = value;
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** A span of library or user data, kept from translation. */
export function data(text, className) {
  return h('span', { class: className, translate: 'no', text: text ?? '' });
}

/** The page's <h1>: focusable by script (tabindex -1) so app.js can move focus to a page it shows. */
export function pageHeading(text) {
  return h('h1', { class: 'page-title', tabIndex: -1, text });
}

/** A paragraph for errors, announced when filled (role="alert"); hidden while empty by app.css. */
export function errorBox() {
  return h('p', { class: 'error page-error', role: 'alert' });
}

/** A paragraph for quiet progress reports (role="status"). */
export function statusBox() {
  return h('p', { class: 'page-status', role: 'status' });
}

/** Shows `error` in `box` (the server's message, marked untranslatable while it is English);
 *  a cancelled request is no error. */
export function showError(box, error) {
  if (isAbort(error)) return;
  if (!error) {
    box.textContent = '';
    return;
  }
  showErrorIn(box, error);
}

/** A message of the page's own (already translated) in an error box. */
export function showMessage(box, text) {
  box.removeAttribute('translate');
  box.textContent = text;
}

/** A table inside a region that scrolls sideways on narrow screens; the region is focusable and
 *  named so a keyboard can scroll it and a screen reader can tell what it holds. */
export function scrollTable(label, headers, className = '', { labelledBy } = {}) {
  const head = h('tr', {}, headers.map((text) => h('th', { scope: 'col', text })));
  const tbody = h('tbody');
  const table = h('table', { class: `page-table ${className}`.trim() }, h('thead', {}, head), tbody);
  // Named by an element (a heading of library data) when given, so no data lands in an attribute.
  const name = labelledBy ? { 'aria-labelledby': labelledBy } : { 'aria-label': label };
  const region = h('div', { class: 'table-scroll', role: 'region', ...name, tabIndex: 0 }, table);
  return { region, table, tbody };
}

/** A modal <dialog> named by its <h2> (`${id}-title`); Escape closes it, as dialogs do. */
export function pageDialog(id, title) {
  const heading = h('h2', { id: `${id}-title`, text: title });
  const dialog = h('dialog', { id, class: 'page-dialog', 'aria-labelledby': heading.id });
  return { dialog, heading };
}

/** A button of type "button" with `text` that runs `action`. */
export function button(text, action, props = {}) {
  return h('button', { type: 'button', text, onclick: action, ...props });
}

let hintCount = 0;

/** A labelled form control: the <label> wraps its text and the control (tied without IDs); a
 *  hint sits outside the label, so it describes the control (aria-describedby, `field-hint-N`)
 *  instead of lengthening its name. */
export function field(labelText, control, hint) {
  const label = h('label', { class: 'field' }, h('span', { class: 'field-label', text: labelText }), control);
  if (!hint) return label;
  hintCount += 1;
  const note = h('span', { class: 'field-hint', id: `field-hint-${hintCount}`, text: hint });
  control.setAttribute('aria-describedby', note.id);
  return h('div', { class: 'field' }, label, note);
}

/** Copies `text` to the clipboard; where the Clipboard API is missing (a page on plain http) or
 *  refused, selects `input` and asks the older copy command. Resolves to whether it worked. */
export async function copyText(text, input) {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, page not focused): the selection below still lets the reader copy.
  }
  if (input) {
    input.focus();
    input.select();
    try { return document.execCommand('copy'); } catch { return false; }
  }
  return false;
}

/** A read-only text field holding `value` (a link, a key) with a Copy button and a status line
 *  that says whether it was copied. */
export function copyField(labelText, value, { hideLabel = false } = {}) {
  const input = h('input', { type: 'text', readOnly: true, value, translate: 'no', class: 'copy-input', spellcheck: false });
  input.addEventListener('focus', () => input.select());
  const status = h('span', { class: 'copy-status', role: 'status' });
  const copy = button(t('pages.copy'), async () => {
    status.textContent = (await copyText(input.value, input)) ? t('pages.copied') : t('pages.copyFailed');
  });
  // In a table row the column header already says what it is: the label is then for screen readers only.
  const label = h('label', { class: 'field copy-field' }, h('span', { class: hideLabel ? 'visually-hidden' : 'field-label', text: labelText }), input);
  return { element: h('div', { class: 'copy-row' }, label, copy, status), input, copy };
}

/** Runs `render` (which redraws inside `root`) keeping the focus on the element with the same
 *  `data-focus` key (the same row's button), else on the first button of the same
 *  `data-focus-group` (the row), else on the page's heading, so a redraw never drops it on <body>. */
export function keepFocus(root, render) {
  const active = document.activeElement;
  const inside = active && active !== document.body && root.contains(active);
  const key = inside ? active.dataset.focus : null;
  const group = inside ? active.closest('[data-focus-group]')?.dataset.focusGroup : null;
  render();
  if (!inside) return;
  const escape = (text) => (window.CSS?.escape ? CSS.escape(text) : text.replace(/["\\]/g, '\\$&'));
  const target = (key && root.querySelector(`[data-focus="${escape(key)}"]`))
    || (group && root.querySelector(`[data-focus-group="${escape(group)}"] button, [data-focus-group="${escape(group)}"] a`))
    // Out of a modal dialog focus cannot go (the page behind is inert): its first button then.
    || (root.closest('dialog') ? root.closest('dialog').querySelector('button') : root.closest('section, main, body')?.querySelector('h1'));
  if (target && document.activeElement !== target) target.focus();
}

/** What every page beside the list starts as: its container (given the page-view class), the
 *  rest of the page it may call (`deps`), and a generation that a newer show() advances, so an
 *  answer for an older one is dropped. */
export class Page {
  constructor(container, deps) {
    Object.assign(this, { container, deps });
    container.classList.add('page-view');
    this.generation = 0;
  }
}

/** Fetches a page's list (`fetch` resolves to it) and renders it with `page.render`, keeping the
 *  focus; an answer for an older show() (another `generation`) is dropped, and a failure goes to
 *  the page's error box. */
export async function loadList(page, fetch) {
  const generation = page.generation;
  try {
    const items = await fetch();
    if (generation !== page.generation) return;
    if (page.status.textContent === t('pages.loading')) page.status.textContent = '';
    keepFocus(page.container, () => page.render(items));
  } catch (error) {
    if (generation !== page.generation) return;
    page.status.textContent = '';
    showError(page.error, error);
  }
}

/** Whether the signed-in user is an admin (/api/me says `admin`; the brief's `isAdmin` also counts). */
export function isAdmin(user) {
  return Boolean(user && (user.admin ?? user.isAdmin));
}

/** A password as the Subsonic API's `enc:` hex of its UTF-8 bytes, so one that itself starts
 *  with "enc:" (or holds any character) arrives exactly as typed. */
export function encodePassword(password) {
  return `enc:${[...new TextEncoder().encode(password)].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/** A Subsonic list, which the JSON may give as an array, a lone object, or not at all when empty. */
export function list(value) {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** A link opening `url` in a new tab without giving that page a hold on this one; only http and
 *  https become links (a stored address is someone's input, and a javascript: URL is no link). */
function externalLink(url, text = url) {
  if (!url) return h('span', { class: 'muted', text: '—' });
  if (!/^https?:\/\//i.test(url)) return data(text, 'url');
  return h('a', { href: url, target: '_blank', rel: 'noopener noreferrer', translate: 'no', class: 'url', text });
}

/** The date a <input type="date"> value names, as the end of that day here, in ms since 1970 (a
 *  share that "expires on the 5th" works through the 5th); null when the field is empty. */
function endOfDay(value) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value ?? '');
  if (!match) return null;
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 23, 59, 59, 999).getTime();
}

/** The <input type="date"> value of a date (local day), '' for none. */
function dateInputValue(value) {
  if (!value) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Today as an <input type="date"> value (the earliest expiry a share may have). */
function today() { return dateInputValue(new Date()); }

/** The number N of a Subsonic song ID `tr-N`; null for anything else (a podcast episode's `pe-N`). */
function trackNumber(id) {
  const match = /^tr-(\d+)$/.exec(String(id ?? ''));
  return match ? Number(match[1]) : null;
}

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

/** A filter value in quotes (the filter language has no escape for a quote inside one). */
function quoted(text) { return `"${String(text).replace(/"/g, '')}"`; }

// MARK: Missing files

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
      const page = await api('/api/tracks', { params });
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

// MARK: Podcasts

const EPISODES_SHOWN = 20;
const EPISODE_STATUSES = ['new', 'downloading', 'completed', 'error', 'skipped', 'deleted'];

/** Podcast channels and their episodes: subscribe, refresh, download and delete (the podcast
 *  role), and play an episode the player can stream. `show()` takes no arguments; `hide()` stops
 *  the polling that follows downloads. */
export class PodcastsPage {
  constructor(container, deps) {
    Object.assign(this, { container, deps });
    container.classList.add('page-view');
    this.generation = 0;
    this.timer = null;
    this.expanded = new Set();
    this.pollUntil = 0;
  }

  /** Subscribing and the other changes need the podcast role (admins have every role). */
  get canManage() {
    const user = this.deps.user;
    return isAdmin(user) || (Array.isArray(user?.roles) && user.roles.includes('podcast'));
  }

  async show() {
    this.hide();
    this.visible = true;
    this.generation += 1;
    this.signature = null;
    const heading = pageHeading(t('podcasts.title'));
    this.error = errorBox();
    this.status = statusBox();
    this.list = h('div', { class: 'channels' });
    const parts = [heading];
    if (this.canManage) {
      const url = h('input', { type: 'url', name: 'url', required: true, autocomplete: 'off', spellcheck: false, translate: 'no' });
      const form = h('form', { class: 'inline-form', 'aria-label': t('podcasts.subscribe') },
        field(t('podcasts.feedURL'), url),
        h('button', { type: 'submit', class: 'primary', text: t('podcasts.subscribe') }),
      );
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        this.act(() => subsonic('createPodcastChannel', { url: url.value.trim() }), t('podcasts.subscribed')).then((ok) => { if (ok) url.value = ''; });
      });
      const refresh = button(t('podcasts.refresh'), () => this.act(() => subsonic('refreshPodcasts'), t('podcasts.refreshing')));
      parts.push(form, h('div', { class: 'page-toolbar' }, refresh));
    } else {
      parts.push(h('p', { class: 'page-intro', text: t('podcasts.noRole') }));
    }
    this.note = h('p', { class: 'page-note', text: t('podcasts.playNote'), hidden: true });
    parts.push(this.error, this.status, this.note, this.list);
    this.container.replaceChildren(...parts);
    this.status.textContent = t('pages.loading');
    await this.load();
  }

  hide() {
    this.visible = false;
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** Runs a change, then reads the channels again and keeps polling a while, since the server
   *  fetches feeds and episodes in the background. Resolves to whether it worked. */
  async act(change, done) {
    showError(this.error, null);
    try {
      await change();
      this.status.textContent = done ?? '';
      this.pollUntil = Date.now() + 30_000;
      await this.load();
      return true;
    } catch (error) {
      showError(this.error, error);
      return false;
    }
  }

  async load() {
    const generation = this.generation;
    clearTimeout(this.timer);
    try {
      const answer = await subsonic('getPodcasts', { includeEpisodes: true });
      if (generation !== this.generation) return;
      const channels = list(answer.podcasts?.channel);
      if (this.status.textContent === t('pages.loading')) this.status.textContent = '';
      // Polling redraws only when something changed, so the focus and scroll stay put.
      const signature = JSON.stringify(channels);
      if (signature !== this.signature) {
        this.signature = signature;
        keepFocus(this.container, () => this.render(channels));
      }
      const busy = channels.some((channel) => channel.status === 'new' || channel.status === 'downloading'
        || list(channel.episode).some((episode) => episode.status === 'downloading'));
      if (this.visible && (busy || Date.now() < this.pollUntil)) this.timer = setTimeout(() => this.load(), 3000);
    } catch (error) {
      if (generation !== this.generation) return;
      this.status.textContent = '';
      showError(this.error, error);
    }
  }

  render(channels) {
    this.list.replaceChildren();
    if (!channels.length) {
      this.list.append(h('p', { class: 'page-empty', text: t('podcasts.none') }));
      this.note.hidden = true;
      return;
    }
    let unplayable = false;
    for (const channel of channels) {
      const episodes = list(channel.episode);
      if (episodes.some((episode) => episode.status === 'completed' && trackNumber(episode.streamId) === null)) unplayable = true;
      const titleID = `podcast-${channel.id}-title`;
      // An <article>, not a <section>: a named section is a landmark, and its episode table's
      // region carries the same name.
      const section = h('article', { class: 'channel', 'aria-labelledby': titleID, 'data-focus-group': `channel-${channel.id}` });
      const head = h('div', { class: 'channel-head' }, h('h2', { id: titleID, translate: 'no', text: channel.title || channel.url }));
      if (this.canManage) {
        head.append(button(t('podcasts.deleteChannel'), () => {
          if (!window.confirm(t('podcasts.confirmDeleteChannel', { title: channel.title || channel.url }))) return;
          this.act(() => subsonic('deletePodcastChannel', { id: channel.id }), t('podcasts.channelDeleted'));
        }, { 'data-focus': `delete-${channel.id}` }));
      }
      section.append(head);
      section.append(h('p', { class: 'channel-url' }, externalLink(channel.url)));
      if (channel.description) section.append(h('p', { class: 'channel-description', translate: 'no', text: channel.description }));
      if (channel.status === 'error') {
        section.append(h('p', { class: 'problem' }, t('podcasts.channelError'), ' ', data(channel.errorMessage ?? '')));
      } else if (channel.status === 'new' || channel.status === 'downloading') {
        section.append(h('p', { class: 'muted', text: t('podcasts.channelLoading') }));
      }
      if (episodes.length) section.append(this.episodeTable(channel, episodes));
      else if (channel.status === 'completed') section.append(h('p', { class: 'muted', text: t('podcasts.noEpisodes') }));
      this.list.append(section);
    }
    this.note.hidden = !unplayable;
  }

  episodeTable(channel, episodes) {
    const expanded = this.expanded.has(channel.id);
    const shown = expanded ? episodes : episodes.slice(0, EPISODES_SHOWN);
    const { region, tbody } = scrollTable(null, [
      t('podcasts.column.title'), t('podcasts.column.published'), t('podcasts.column.duration'), t('podcasts.column.status'), t('pages.actions'),
    ], 'episodes-table', { labelledBy: `podcast-${channel.id}-title` });
    for (const episode of shown) {
      const status = EPISODE_STATUSES.includes(episode.status) ? t(`podcasts.status.${episode.status}`) : null;
      const statusCell = h('td', { class: `episode-status status-${episode.status}` }, status ?? data(episode.status));
      if (episode.status === 'error' && episode.errorMessage) statusCell.append(h('br'), data(episode.errorMessage, 'problem'));
      const actions = h('td', { class: 'actions' });
      const streamID = trackNumber(episode.streamId);
      if (episode.status === 'completed' && streamID !== null) {
        actions.append(button(t('podcasts.play'), () => this.deps.player.playNow([{
          id: streamID, title: episode.title, artist: channel.title, album: channel.title, duration: episode.duration,
        }]), { 'data-focus': `play-${episode.id}` }));
      }
      if (this.canManage && ['new', 'error', 'skipped', 'deleted'].includes(episode.status)) {
        actions.append(button(t('podcasts.download'), () => this.act(() => subsonic('downloadPodcastEpisode', { id: episode.id }), t('podcasts.downloadStarted')),
          { 'data-focus': `download-${episode.id}` }));
      }
      if (this.canManage && episode.status === 'completed') {
        actions.append(button(t('podcasts.deleteEpisode'), () => {
          if (!window.confirm(t('podcasts.confirmDeleteEpisode', { title: episode.title ?? '' }))) return;
          this.act(() => subsonic('deletePodcastEpisode', { id: episode.id }), t('podcasts.episodeDeleted'));
        }, { 'data-focus': `delete-${episode.id}` }));
      }
      tbody.append(h('tr', { 'data-focus-group': `episode-${episode.id}` },
        h('td', {}, data(episode.title ?? t('pages.untitled'))),
        h('td', { class: 'date', text: formatDate(episode.publishDate) || '—' }),
        h('td', { class: 'num', text: episode.duration ? clock(episode.duration) : '—' }),
        statusCell,
        actions,
      ));
    }
    const wrapper = h('div', { class: 'episodes' }, region);
    if (episodes.length > EPISODES_SHOWN) {
      wrapper.append(button(expanded ? t('podcasts.showFewer') : tn('podcasts.showAll', episodes.length), () => {
        if (expanded) this.expanded.delete(channel.id);
        else this.expanded.add(channel.id);
        this.signature = null;
        this.load();
      }, { class: 'more-button', 'data-focus': `more-${channel.id}`, 'aria-expanded': String(expanded) }));
    }
    return wrapper;
  }
}

// MARK: Internet radio

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
    const { dialog, heading } = pageDialog('radio-dialog', t('radio.add'));
    const name = h('input', { name: 'name', required: true, autocomplete: 'off', translate: 'no' });
    const stream = h('input', { name: 'streamUrl', type: 'url', required: true, autocomplete: 'off', spellcheck: false, translate: 'no' });
    const home = h('input', { name: 'homepageUrl', type: 'url', autocomplete: 'off', spellcheck: false, translate: 'no' });
    const error = errorBox();
    const form = h('form', { method: 'dialog', class: 'dialog-form' },
      heading,
      field(t('radio.column.name'), name),
      field(t('radio.streamURL'), stream),
      field(t('radio.homePageURL'), home, t('radio.optional')),
      error,
      h('div', { class: 'dialog-actions' },
        button(t('pages.cancel'), () => dialog.close()),
        h('button', { type: 'submit', class: 'primary', text: t('pages.save') }),
      ),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      showError(error, null);
      const params = { name: name.value.trim(), streamUrl: stream.value.trim(), homepageUrl: home.value.trim() };
      try {
        if (this.editing) await subsonic('updateInternetRadioStation', { id: this.editing.id, ...params });
        else await subsonic('createInternetRadioStation', params);
        dialog.close();
        this.status.textContent = this.editing ? t('radio.saved') : t('radio.added');
        await this.load();
      } catch (failure) {
        showError(error, failure);
      }
    });
    dialog.append(form);
    return { dialog, heading, name, stream, home, error, form };
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

// MARK: Bookmarks

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
      const track = await api(`/api/tracks/${id}`);
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

// MARK: Shares

const SHARE_TRACKS_SHOWN = 30;

/** The user's public share links (an admin sees everyone's): copy, edit the description and
 *  expiry, revoke. `show()` takes no arguments. */
export class SharesPage extends Page {

  async show() {
    this.generation += 1;
    const heading = pageHeading(t('shares.title'));
    const intro = h('p', { class: 'page-intro', text: t('shares.intro') });
    this.error = errorBox();
    this.status = statusBox();
    this.body = h('div');
    this.dialog = this.buildDialog();
    this.container.replaceChildren(heading, intro, this.error, this.status, this.body, this.dialog.dialog);
    this.status.textContent = t('pages.loading');
    await this.load();
  }

  load() {
    return loadList(this, async () => list((await subsonic('getShares')).shares?.share));
  }

  render(shares) {
    if (!shares.length) {
      this.body.replaceChildren(h('p', { class: 'page-empty', text: t('shares.none') }));
      return;
    }
    const admin = isAdmin(this.deps.user);
    const headers = [t('shares.column.description'), t('shares.column.link'), t('shares.column.tracks'), t('shares.column.created'),
      t('shares.column.expires'), t('shares.column.visits')];
    if (admin) headers.push(t('shares.column.user'));
    headers.push(t('pages.actions'));
    const { region, tbody } = scrollTable(t('shares.tableLabel'), headers, 'shares-table');
    for (const share of shares) {
      const entries = list(share.entry);
      const link = copyField(t('shares.column.link'), share.url, { hideLabel: true });
      link.copy.dataset.focus = `copy-${share.id}`;
      const tracks = h('details', { class: 'share-tracks' },
        h('summary', { text: tn('shares.trackCount', entries.length) }),
        // The first tracks only: a long share would make a row as tall as the page.
        h('ol', {}, entries.slice(0, SHARE_TRACKS_SHOWN).map((entry) => h('li', {}, data(entry.title ?? t('pages.untitled')), entry.artist ? [' — ', data(entry.artist)] : []))),
        entries.length > SHARE_TRACKS_SHOWN ? h('p', { class: 'muted', text: tn('shares.moreTracks', entries.length - SHARE_TRACKS_SHOWN) }) : null,
      );
      const visits = h('td', { class: 'num' }, formatNumber(share.visitCount ?? 0));
      if (share.lastVisited) visits.append(h('br'), h('span', { class: 'muted', text: t('shares.lastVisited', { date: formatDate(share.lastVisited) }) }));
      const row = h('tr', { 'data-focus-group': `share-${share.id}` },
        h('td', {}, share.description ? data(share.description) : h('span', { class: 'muted', text: t('shares.noDescription') })),
        h('td', { class: 'link-cell' }, link.element),
        h('td', {}, tracks),
        h('td', { class: 'date', text: formatDate(share.created) }),
        h('td', { class: 'date', text: share.expires ? formatDate(share.expires) : t('shares.never') }),
        visits,
      );
      if (admin) row.append(h('td', {}, data(share.username ?? '')));
      row.append(h('td', { class: 'actions' },
        button(t('pages.edit'), () => this.edit(share), { 'data-focus': `edit-${share.id}` }),
        button(t('shares.revoke'), () => this.revoke(share), { 'data-focus': `revoke-${share.id}` }),
      ));
      tbody.append(row);
    }
    this.body.replaceChildren(region);
  }

  /** <dialog id="share-edit-dialog">: the description and the expiry date (empty: never). */
  buildDialog() {
    const { dialog, heading } = pageDialog('share-edit-dialog', t('shares.editTitle'));
    const description = h('input', { name: 'description', autocomplete: 'off', translate: 'no' });
    const expires = h('input', { name: 'expires', type: 'date' });
    const error = errorBox();
    const form = h('form', { method: 'dialog', class: 'dialog-form' },
      heading,
      field(t('shares.column.description'), description),
      field(t('shares.expiresOn'), expires, t('shares.expiresHint')),
      error,
      h('div', { class: 'dialog-actions' },
        button(t('pages.cancel'), () => dialog.close()),
        h('button', { type: 'submit', class: 'primary', text: t('pages.save') }),
      ),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      showError(error, null);
      const until = endOfDay(expires.value);
      if (until !== null && until <= Date.now()) {
        showMessage(error, t('shares.expiryPast'));
        return;
      }
      try {
        // The description goes as a one-item list, so that an emptied one is still sent (and
        // clears it): subsonic() leaves out empty plain values.
        await subsonic('updateShare', { id: this.editing.id, description: [description.value.trim()], expires: until ?? 0 });
        dialog.close();
        this.status.textContent = t('shares.saved');
        await this.load();
      } catch (failure) {
        showError(error, failure);
      }
    });
    dialog.append(form);
    return { dialog, description, expires, error };
  }

  edit(share) {
    const d = this.dialog;
    this.editing = share;
    d.description.value = share.description ?? '';
    d.expires.value = dateInputValue(share.expires);
    d.expires.min = today();
    showError(d.error, null);
    d.dialog.showModal();
    d.description.focus();
  }

  async revoke(share) {
    const name = share.description || share.url;
    if (!window.confirm(t('shares.confirmRevoke', { name }))) return;
    showError(this.error, null);
    try {
      await subsonic('deleteShare', { id: share.id });
      this.status.textContent = t('shares.revoked');
      await this.load();
    } catch (error) {
      showError(this.error, error);
    }
  }
}

/** Opens <dialog id="share-dialog"> to share the tracks `trackIDs` (numbers) as one public link,
 *  with a description and an optional expiry; shows the new link with a Copy button. Resolves
 *  when the dialog closes, to the created share or null. */
export function createShareDialog(trackIDs) {
  document.getElementById('share-dialog')?.remove();
  const { dialog, heading } = pageDialog('share-dialog', t('shares.createTitle'));
  const description = h('input', { name: 'description', autocomplete: 'off', translate: 'no' });
  const expires = h('input', { name: 'expires', type: 'date', min: today() });
  const error = errorBox();
  const create = h('button', { type: 'submit', class: 'primary', text: t('shares.create') });
  const form = h('form', { method: 'dialog', class: 'dialog-form' },
    h('p', { text: tn('shares.createCount', trackIDs.length) }),
    field(t('shares.column.description'), description),
    field(t('shares.expiresOn'), expires, t('shares.expiresHint')),
    error,
    h('div', { class: 'dialog-actions' }, button(t('pages.cancel'), () => dialog.close()), create),
  );
  const result = h('div', { class: 'dialog-form', hidden: true });
  dialog.append(heading, form, result);
  let created = null;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showError(error, null);
    const until = endOfDay(expires.value);
    if (until !== null && until <= Date.now()) {
      showMessage(error, t('shares.expiryPast'));
      return;
    }
    create.disabled = true;
    try {
      const answer = await subsonic('createShare', {
        id: trackIDs.map((n) => `tr-${n}`), description: description.value.trim(), expires: until ?? undefined,
      });
      created = list(answer.shares?.share)[0] ?? null;
      const link = copyField(t('shares.column.link'), created?.url ?? '');
      result.replaceChildren(
        h('p', { text: t('shares.createdNote') }),
        link.element,
        h('div', { class: 'dialog-actions' }, button(t('pages.close'), () => dialog.close(), { class: 'primary' })),
      );
      form.hidden = true;
      result.hidden = false;
      link.input.focus();
    } catch (failure) {
      showError(error, failure);
    } finally {
      create.disabled = false;
    }
  });
  document.body.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(created);
    });
    dialog.showModal();
    description.focus();
  });
}

// MARK: Artist

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
export class ArtistPage {
  constructor(container, deps) {
    Object.assign(this, { container, deps });
    container.classList.add('page-view');
    this.generation = 0;
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
    this.container.replaceChildren(
      h('div', { class: 'artist-head' }, this.picture, h('div', {}, this.heading, this.meta)),
      this.error, this.status, this.groups,
    );
    this.status.textContent = t('pages.loading');
    try {
      let after;
      do {
        const page = await api(`/api/artists/${encodeURIComponent(id)}/albums`, { params: { limit: 500, after }, signal });
        if (generation !== this.generation) return;
        this.albums.push(...(page.items ?? []));
        after = page.nextCursor ?? undefined;
      } while (after && this.albums.length < 5000);
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
        if (album.firstTrack) track = await api(`/api/tracks/${album.firstTrack}`, { signal });
        else track = (await api(`/api/albums/${album.id}/tracks`, { signal })).items?.[0];
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

// MARK: Album details

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

/** Opens the artist named `name`: the page's own way when app.js gives one, else a search. */
function openArtistByName(deps, name, field = 'albumArtist') {
  if (typeof deps.openArtistByName === 'function') deps.openArtistByName(name);
  else deps.search(`${field}:=${quoted(name)}`);
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
    row(tn('album.details.albumArtists', artists.length), joined(artists.map((name) => rowButton(name, () => openArtistByName(deps, name)))));
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
    fragment.append(h('span', { class: 'track-artists' }, joined(names.map((name) => rowButton(name, () => openArtistByName(deps, name, 'artist'))))));
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
