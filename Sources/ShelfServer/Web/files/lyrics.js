// The lyrics pane: the current track's lyrics from getLyricsBySongId, one language at a time
// (chosen in a select when there are several; the choice is remembered as a language for the
// next track). Synced lyrics follow the playback: the current line is marked and kept in the
// middle of the pane unless the reader scrolled it a moment ago, and a click on a line plays
// from there. Plain lyrics are paragraphs; none is a message.
import { subsonic } from './api.js';
import { t, language } from './i18n.js';

// After the reader scrolls the pane, it is left where they put it for this long.
const USER_SCROLL_PAUSE = 3000;
const LANGUAGE_KEY = 'shelf.lyricsLang';
const SCROLL_KEYS = new Set(['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End', ' ']);

/** A language tag in its canonical form ('eng' → 'en'); '' for none or "undetermined". */
function canonicalLanguage(tag) {
  const text = String(tag ?? '').trim();
  if (!text || ['und', 'xxx', 'zxx', 'mis', 'mul'].includes(text.toLowerCase())) return '';
  try {
    return Intl.getCanonicalLocales(text)[0];
  } catch {
    return '';
  }
}

let displayNames = null;
/** The name of a language in the page's language ('ja' → "Japanese" / "日本語"). */
function languageName(tag) {
  if (!tag) return t('lyrics.languageUnknown');
  try {
    displayNames ??= new Intl.DisplayNames([language], { type: 'language' });
    return displayNames.of(tag) ?? tag;
  } catch {
    return tag;
  }
}

/** The lyrics side panel and its button in the player bar. */
export class LyricsPane {
  /** `player`: position(), seekTo(), playing and the current track; `container`: where the
   *  pane goes (#app); `toggle`: the bar's button that opens and closes it. */
  constructor(player, { container, toggle = null }) {
    this.player = player;
    this.toggleButton = toggle;
    this.track = null;
    this.loadedID = null;
    this.controller = null;
    this.entries = [];
    this.times = []; // effective start (ms) of each synced line, ascending
    this.lineElements = [];
    this.currentLine = -1;
    this.userScrolled = -Infinity;
    this.frame = 0;
    this.#build(container);
    toggle?.addEventListener('click', () => this.toggle());
  }

  /** Whether the pane is showing. */
  get open() { return !this.element.hidden; }

  /** Shows or hides the pane. */
  toggle(open = !this.open) {
    if (open) this.show();
    else this.hide();
  }

  /** Opens the pane, loading the current track's lyrics if they are not there yet. */
  show() {
    this.element.hidden = false;
    this.toggleButton?.setAttribute('aria-expanded', 'true');
    if (this.loadedID !== (this.track?.id ?? null) || !this.track) this.#load();
    this.sync();
  }

  /** Closes the pane (its animation frames stop with it). */
  hide() {
    this.element.hidden = true;
    this.toggleButton?.setAttribute('aria-expanded', 'false');
    cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  /** The player's current track changed (null: nothing plays). Loaded now if the pane shows,
   *  else when it is opened. */
  setTrack(track) {
    if ((track?.id ?? null) === (this.track?.id ?? null) && this.loadedID !== null) return;
    this.track = track;
    this.loadedID = null;
    this.controller?.abort();
    this.controller = null;
    if (this.open) this.#load();
  }

  /** The playback moved or started or stopped: the current line follows, by animation frames
   *  while it plays and the pane shows, once otherwise. */
  sync() {
    if (!this.open || !this.times.length || this.frame) return;
    this.frame = requestAnimationFrame(this.#tick);
  }

  #tick = () => {
    this.frame = 0;
    if (!this.open || !this.times.length) return;
    this.#update();
    if (this.player.playing) this.frame = requestAnimationFrame(this.#tick);
  };

  #build(container) {
    const aside = document.createElement('aside');
    aside.id = 'lyrics';
    aside.className = 'lyrics';
    aside.hidden = true;
    aside.setAttribute('aria-label', t('lyrics.title'));

    const head = document.createElement('div');
    head.className = 'lyrics-head';
    const heading = document.createElement('h2');
    heading.id = 'lyrics-heading';
    heading.textContent = t('lyrics.title');
    const select = document.createElement('select');
    select.id = 'lyrics-lang';
    select.hidden = true;
    select.setAttribute('aria-label', t('lyrics.language'));
    select.addEventListener('change', () => {
      const entry = this.entries[Number(select.value)];
      if (!entry) return;
      try { localStorage.setItem(LANGUAGE_KEY, canonicalLanguage(entry.lang)); } catch { /* not remembered */ }
      this.#render(entry);
    });
    const close = document.createElement('button');
    close.type = 'button';
    close.id = 'lyrics-close';
    close.className = 'icon-button';
    close.setAttribute('aria-label', t('lyrics.close'));
    close.textContent = '✕';
    close.addEventListener('click', () => {
      this.hide();
      this.toggleButton?.focus();
    });
    head.append(heading, select, close);

    const about = document.createElement('p');
    about.className = 'lyrics-track';
    about.translate = false;

    const body = document.createElement('div');
    body.id = 'lyrics-body';
    body.className = 'lyrics-body';
    body.addEventListener('click', (event) => {
      const line = event.target.closest('.lyric-line');
      if (line) this.player.seekTo(Math.max(0, Number(line.dataset.start) - this.offset) / 1000);
    });
    // The reader's own scrolling (not ours): wheel, touch, keys, or a drag of the scroll bar.
    const scrolled = () => { this.userScrolled = performance.now(); };
    body.addEventListener('wheel', scrolled, { passive: true });
    body.addEventListener('touchmove', scrolled, { passive: true });
    body.addEventListener('pointerdown', (event) => { if (event.target === body) scrolled(); });
    body.addEventListener('keydown', (event) => { if (SCROLL_KEYS.has(event.key) && !event.target.closest('button')) scrolled(); });

    const message = document.createElement('p');
    message.className = 'lyrics-message';
    message.setAttribute('role', 'status');

    aside.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !event.defaultPrevented) {
        event.preventDefault();
        close.click();
      }
    });
    aside.append(head, about, message, body);
    container.append(aside);
    Object.assign(this, { element: aside, select, about, body, message, offset: 0 });
  }

  #clear() {
    this.entries = [];
    this.times = [];
    this.lineElements = [];
    this.currentLine = -1;
    this.body.textContent = '';
    this.body.removeAttribute('lang');
    this.about.textContent = '';
    this.select.textContent = '';
    this.select.hidden = true;
    this.message.textContent = '';
  }

  async #load() {
    this.controller?.abort();
    this.#clear();
    const track = this.track;
    if (!track) {
      this.loadedID = null;
      this.message.textContent = t('player.nothingPlaying');
      return;
    }
    this.loadedID = track.id;
    const controller = new AbortController();
    this.controller = controller;
    this.message.textContent = t('lyrics.loading');
    let list;
    try {
      const answer = await subsonic('getLyricsBySongId', { id: `tr-${track.id}` }, { signal: controller.signal });
      list = answer.lyricsList?.structuredLyrics ?? [];
    } catch (error) {
      if (controller.signal.aborted || controller !== this.controller) return;
      this.loadedID = null; // tried again when the pane is next opened
      this.message.textContent = t('lyrics.failed');
      return;
    }
    if (controller !== this.controller) return;
    this.entries = list.filter((entry) => Array.isArray(entry.line) && entry.line.some((line) => (line.value ?? '').trim() !== ''));
    if (!this.entries.length) {
      this.message.textContent = t('lyrics.none');
      return;
    }
    this.message.textContent = '';
    const chosen = this.#preferred();
    if (this.entries.length > 1) this.#fillSelect(chosen);
    this.#render(this.entries[chosen]);
  }

  /** The entry in the remembered language, else in the page's, else the first synced, else the first. */
  #preferred() {
    let remembered = null;
    try { remembered = localStorage.getItem(LANGUAGE_KEY); } catch { /* none */ }
    const tags = this.entries.map((entry) => canonicalLanguage(entry.lang));
    const base = (tag) => tag.split('-')[0];
    const pick = (test) => tags.findIndex(test);
    let index = remembered !== null ? pick((tag) => tag === remembered) : -1;
    if (index < 0 && remembered) index = pick((tag) => base(tag) === base(remembered));
    if (index < 0) index = pick((tag) => base(tag) === language);
    if (index < 0) index = this.entries.findIndex((entry) => entry.synced);
    return Math.max(0, index);
  }

  #fillSelect(chosen) {
    const labels = this.entries.map((entry) => languageName(canonicalLanguage(entry.lang)));
    // Two entries of one language (synced and plain, say) are told apart.
    const named = labels.map((label, index) => {
      if (labels.filter((other) => other === label).length < 2) return label;
      return `${label} (${this.entries[index].synced ? t('lyrics.synced') : t('lyrics.unsynced')})`;
    });
    named.forEach((label, index) => {
      const option = document.createElement('option');
      option.value = String(index);
      option.textContent = named.filter((other) => other === label).length > 1 ? `${label} ${index + 1}` : label;
      this.select.append(option);
    });
    this.select.value = String(chosen);
    this.select.hidden = false;
  }

  #render(entry) {
    this.body.textContent = '';
    this.lineElements = [];
    this.times = [];
    this.currentLine = -1;
    this.userScrolled = -Infinity;
    const tag = canonicalLanguage(entry.lang);
    // The lyrics' own language, so the browser picks fitting glyphs (Japanese kanji, not Chinese).
    if (tag) this.body.lang = tag;
    else this.body.removeAttribute('lang');
    const title = entry.displayTitle ?? this.track?.title ?? '';
    const artist = entry.displayArtist ?? this.track?.artist ?? '';
    this.about.textContent = title && artist ? `${title} — ${artist}` : title || artist;
    this.offset = Number(entry.offset) || 0;
    const lines = entry.line ?? [];
    if (entry.synced) {
      const sorted = lines.filter((line) => Number.isFinite(Number(line.start))).sort((a, b) => Number(a.start) - Number(b.start));
      for (const line of sorted) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'lyric-line';
        button.translate = false;
        button.dataset.start = String(Number(line.start));
        const text = (line.value ?? '').trim();
        // An empty timed line is a break in the singing: shown as a note, still a place to seek to.
        button.textContent = text || '♪';
        if (!text) button.classList.add('instrumental');
        this.body.append(button);
        this.lineElements.push(button);
        // LRC's offset: positive brings the lines sooner.
        this.times.push(Number(line.start) - this.offset);
      }
      this.sync();
    } else {
      for (const line of lines) {
        const paragraph = document.createElement('p');
        paragraph.className = 'lyric-text';
        paragraph.translate = false;
        const text = line.value ?? '';
        if (text.trim()) paragraph.textContent = text;
        else paragraph.classList.add('blank');
        this.body.append(paragraph);
      }
    }
    this.body.scrollTop = 0;
  }

  /** Marks the line at the player's position and brings it to the middle. */
  #update() {
    const ms = this.player.position() * 1000;
    const times = this.times;
    // The last line starting at or before the position (-1 before the first).
    let low = 0;
    let high = times.length - 1;
    let index = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (times[middle] <= ms) {
        index = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    if (index === this.currentLine) return;
    const old = this.lineElements[this.currentLine];
    if (old) {
      old.classList.remove('current');
      old.removeAttribute('aria-current');
    }
    this.currentLine = index;
    const line = this.lineElements[index];
    if (!line) return;
    line.classList.add('current');
    line.setAttribute('aria-current', 'true');
    if (performance.now() - this.userScrolled < USER_SCROLL_PAUSE) return;
    // Scrolled within the pane only (scrollIntoView would move every scrolling ancestor too).
    const body = this.body;
    const top = line.offsetTop - (body.clientHeight - line.offsetHeight) / 2;
    const still = window.matchMedia?.('(prefers-reduced-motion: reduce)').matches;
    body.scrollTo({ top: Math.max(0, top), behavior: still ? 'auto' : 'smooth' });
  }
}
