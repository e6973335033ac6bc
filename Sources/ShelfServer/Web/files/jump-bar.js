// The jump bar: A–Z, the kana rows and #, from /api/sections (with counts) for the list as it is
// sorted, filtered and sort-tagged; empty sections are disabled; a click, or a letter typed
// while the list has focus, moves to the section's first row through /api/anchor.
import { api, isAbort } from './api.js';
import { t, formatNumber } from './i18n.js';

export const SECTIONS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ', ...'あかさたなはまやらわ', '#'];

// Kana by their row, so typing any kana (hiragana or katakana) finds its row.
const KANA_ROWS = {
  あ: 'あいうえおぁぃぅぇぉゔ', か: 'かきくけこがぎぐげごゕゖ', さ: 'さしすせそざじずぜぞ', た: 'たちつてとだぢづでどっ',
  な: 'なにぬねの', は: 'はひふへほばびぶべぼぱぴぷぺぽ', ま: 'まみむめも', や: 'やゆよゃゅょ', ら: 'らりるれろ', わ: 'わゐゑをんゎ',
};

/** The section a typed character belongs to, or null. */
export function sectionOfKey(key) {
  if (key.length !== 1) return null;
  const upper = key.toUpperCase();
  if (upper >= 'A' && upper <= 'Z') return upper;
  if (key === '#' || (key >= '0' && key <= '9')) return '#';
  let code = key.charCodeAt(0);
  if (code >= 0x30a1 && code <= 0x30f6) code -= 0x60; // katakana → hiragana
  const hiragana = String.fromCharCode(code);
  for (const [row, members] of Object.entries(KANA_ROWS)) if (members.includes(hiragana)) return row;
  return null;
}

/** A jump bar in `element` for lists described by `params()` ({sort, sortTags, filter}). */
export class JumpBar {
  constructor(element, { onJump, path = 'api/sections', anchorPath = 'api/anchor' }) {
    // anchorPath null: jump to the section's firstIndex from the sections themselves.
    this.element = element;
    this.onJump = onJump;
    this.path = path;
    this.anchorPath = anchorPath;
    this.params = null;
    this.counts = new Map();
    this.controller = null;
    this.buttons = new Map();
    for (const name of SECTIONS) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = name;
      button.setAttribute('translate', 'no'); // a letter or kana row, not a word
      button.dataset.section = name;
      button.disabled = true;
      button.addEventListener('click', () => this.jump(name));
      element.append(button);
      this.buttons.set(name, button);
    }
  }

  /** Loads the sections of the list `params` describes (null: a list without sections). */
  async load(params, path = this.path) {
    this.params = params;
    this.path = path;
    this.controller?.abort();
    if (!params) {
      this.element.hidden = true;
      return;
    }
    this.element.hidden = false;
    const controller = new AbortController();
    this.controller = controller;
    try {
      const { sections } = await api(this.path, { params, signal: controller.signal });
      this.counts = new Map(sections.map((s) => [s.name, s]));
      for (const [name, button] of this.buttons) {
        const info = this.counts.get(name);
        button.disabled = !info || info.count === 0;
        button.title = info
          ? t('jump.title', { section: name, count: formatNumber(info.count), row: formatNumber(info.firstIndex + 1) })
          : t('jump.none', { section: name });
        button.setAttribute('aria-label', info ? t('jump.rows', { section: name, count: formatNumber(info.count) }) : t('jump.empty', { section: name }));
      }
    } catch (error) {
      if (!isAbort(error)) throw error;
    }
  }

  /** Moves the list to `section`'s first row. */
  async jump(section) {
    if (!this.params || !this.counts.get(section)?.count) return false;
    try {
      // The views have sections but no anchors: their first index is where to go.
      if (!this.anchorPath) {
        this.onJump(this.counts.get(section).firstIndex, undefined, section);
        return true;
      }
      const anchor = await api(this.anchorPath, { params: { ...this.params, section } });
      this.onJump(anchor.index, anchor.cursor, section);
      return true;
    } catch (error) {
      if (error.status === 404) return false;
      throw error;
    }
  }
}
