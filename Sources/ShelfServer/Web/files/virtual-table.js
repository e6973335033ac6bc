// The virtual track table: an ARIA grid of any length. Browsers cap an element's height (about
// 33 million px in Chromium, less in Firefox), so the scroll area is at most MAX_SCROLL px and
// the scroll position is scaled to the list's virtual height; only the rows in view exist as
// elements (a fixed pool, recycled), and the row under any scroll position is computed.
// Rows come in pages from a source: by cursor when the previous page's end is known (scrolling
// on), by offset otherwise (a far drag or a jump); requests for rows no longer near the view
// are cancelled; rows far from it are dropped, so memory stays flat.
import { isAbort, clock } from './api.js';
import { t, formatNumber, formatDate } from './i18n.js';

const MAX_SCROLL = 8_000_000;

/** Sets a cell's text by reusing its text node: recycling rows then makes no garbage nodes. */
function setText(cell, text) {
  const node = cell.firstChild;
  if (node && node.nodeType === Node.TEXT_NODE && !node.nextSibling) {
    if (node.nodeValue !== text) node.nodeValue = text;
  } else {
    cell.textContent = text;
  }
}

/** The table's columns: header, tooltip, sort field, how a cell shows a track, numeric or not. */
export const COLUMNS = [
  { label: t('fields.title'), title: t('columns.sortBy.title'), sort: 'title', cell: (track) => track.title ?? '', cls: 'title' },
  { label: t('fields.artist'), title: t('columns.sortBy.artist'), sort: 'artist', cell: (track) => track.artist ?? '' },
  { label: t('fields.album'), title: t('columns.sortBy.album'), sort: 'album', cell: (track) => track.album ?? '' },
  { label: t('fields.albumArtist'), title: t('columns.sortBy.albumArtist'), sort: 'albumArtist', cell: (track) => track.albumArtist ?? '' },
  { label: t('fields.composer'), title: t('columns.sortBy.composer'), sort: 'composer', cell: (track) => track.composer ?? '' },
  { label: t('fields.genre'), title: t('columns.sortBy.genre'), sort: 'genre', cell: (track) => track.genre ?? '' },
  { label: t('fields.year'), title: t('columns.sortBy.year'), sort: 'year', cell: (track) => track.year ?? '', num: true },
  { label: t('columns.trackNumber'), title: t('columns.sortBy.trackNumber'), sort: 'trackNumber', cell: (track) => track.trackNumber ?? '', num: true },
  { label: t('fields.duration'), title: t('columns.sortBy.duration'), sort: 'duration', cell: (track) => clock(track.duration), num: true },
  { label: t('fields.playCount'), title: t('columns.sortBy.playCount'), sort: 'playCount', cell: (track) => (track.playCount ? formatNumber(track.playCount) : ''), num: true },
  { label: t('fields.rating'), title: t('columns.sortBy.rating'), sort: 'rating', cell: (track) => (track.rating ? '★'.repeat(Math.round(track.rating / 20)) : '') },
  { label: t('fields.dateAdded'), title: t('columns.sortBy.dateAdded'), sort: 'dateAdded', cell: (track) => formatDate(track.dateAdded), num: true },
];

/** The table over `elements` (grid, viewport, rows layer, spacer, header row). */
export class VirtualTable {
  constructor({ grid, viewport, layer, spacer, headRow, headGroup }, handlers) {
    Object.assign(this, { grid, viewport, layer, spacer, headRow, headGroup });
    this.handlers = handlers; // onActivate(index, track), onSort(field), onSelection(), onKey(event)
    this.rowHeight = 32;
    this.total = 0;
    this.rows = new Map(); // index → track
    this.stale = new Map(); // rows shown while a refresh fetches their replacements
    this.cursors = new Map(); // index → cursor whose page starts at that index
    this.inflight = new Map(); // first index → { end, controller }
    this.generation = 0;
    this.source = null;
    this.pool = [];
    this.active = -1;
    this.selection = new Set();
    this.anchorIndex = -1;
    this.virtualTop = 0;
    this.setScroll = null; // the scrollTop we set and the virtual top it stands for
    this.sort = { field: 'artist', desc: false };
    this.playingID = null;
    this.buildHeader();
    viewport.addEventListener('scroll', () => this.onScroll(), { passive: true });
    new ResizeObserver(() => this.layout()).observe(viewport);
    this.passFocusThroughViewport();
    layer.addEventListener('click', (event) => this.onClick(event));
    layer.addEventListener('dblclick', (event) => {
      const index = this.indexOf(event.target);
      if (index >= 0 && this.rows.has(index)) this.handlers.onActivate(index, this.rows.get(index));
    });
    grid.addEventListener('keydown', (event) => this.onKey(event));
    grid.addEventListener('focus', () => { if (this.active < 0 && this.total > 0) this.setActive(this.firstVisible()); });
  }

  buildHeader() {
    this.headRow.textContent = '';
    this.headCells = COLUMNS.map((column, i) => {
      const cell = document.createElement('div');
      cell.setAttribute('role', 'columnheader');
      cell.setAttribute('aria-colindex', String(i + 1));
      if (column.num) cell.className = 'num';
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = column.label;
      button.title = column.title;
      button.dataset.sort = column.sort;
      button.addEventListener('click', () => this.handlers.onSort(column.sort));
      cell.append(button);
      this.headRow.append(cell);
      return cell;
    });
  }

  /** Shows which column sorts and which way. */
  showSort(field, desc) {
    this.sort = { field, desc };
    COLUMNS.forEach((column, i) => {
      const cell = this.headCells[i];
      if (column.sort === field) cell.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
      else cell.removeAttribute('aria-sort');
    });
  }

  /** A new list: `source.fetch({ start, cursor, limit, signal })` → `{ items, total, nextCursor }`. */
  setSource(source, { keepPosition = false } = {}) {
    this.abortAll();
    this.generation += 1;
    this.source = source;
    this.failed = false;
    this.rows = new Map();
    this.stale = new Map();
    this.cursors = new Map([[0, null]]);
    if (!keepPosition) {
      this.total = 0;
      this.active = -1;
      this.anchorIndex = -1;
      this.selection.clear();
      this.handlers.onSelection();
      this.scrollToVirtual(0);
    }
    this.pendingTotal = true;
    this.layout();
  }

  /** The library changed: refetch what is shown, keeping scroll position, focus and selection. */
  refresh() {
    if (!this.source) return;
    this.abortAll();
    this.generation += 1;
    this.failed = false;
    for (const [index, track] of this.rows) this.stale.set(index, track);
    this.rows = new Map();
    this.cursors = new Map([[0, null]]);
    this.update();
  }

  abortAll() {
    for (const request of this.inflight.values()) request.controller.abort();
    this.inflight.clear();
  }

  /** Rows that fit in the view, plus one. */
  /** A scroll container must be reachable by keyboard (WCAG 2.1.1; axe's scrollable-region-
   *  focusable), so the viewport is in the tab order; but the grid owns the keys and the active
   *  row, so focus arriving in the viewport goes on: to the grid, or past the viewport when Tab
   *  leaves the grid forwards. A click on a row focuses the grid too. */
  passFocusThroughViewport() {
    const { grid, viewport } = this;
    viewport.tabIndex = 0;
    let pointer = false;
    viewport.addEventListener('pointerdown', () => { pointer = true; }, true);
    viewport.addEventListener('focus', (event) => {
      const forwardFromGrid = grid.contains(event.relatedTarget) && event.relatedTarget !== viewport && !pointer;
      pointer = false;
      if (!forwardFromGrid) {
        grid.focus({ preventScroll: true });
        return;
      }
      const stops = [...document.querySelectorAll('button, a[href], input, select, textarea, [tabindex]')]
        .filter((el) => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0);
      (stops[stops.indexOf(viewport) + 1] ?? grid).focus();
    });
  }

  visibleCount() { return Math.ceil(this.viewport.clientHeight / this.rowHeight) + 1; }

  /** Rows per request: twice what the view shows (so a tall window is filled by one request). */
  pageSize() { return Math.min(1000, Math.max(50, Math.ceil((this.visibleCount() * 2) / 25) * 25)); }

  virtualHeight() { return this.total * this.rowHeight; }

  scrollHeight() { return Math.max(this.viewport.clientHeight, Math.min(this.virtualHeight(), MAX_SCROLL)); }

  /** Scaled: scrollTop × (virtual range / scroll range). */
  ratio() {
    const view = this.viewport.clientHeight;
    const scrollRange = this.scrollHeight() - view;
    const virtualRange = this.virtualHeight() - view;
    return scrollRange > 0 && virtualRange > 0 ? virtualRange / scrollRange : 1;
  }

  layout() {
    const view = this.viewport.clientHeight;
    this.rowHeight = parseFloat(getComputedStyle(this.grid).getPropertyValue('--row')) || 32;
    this.layer.style.height = `${view}px`;
    this.spacer.style.height = `${Math.max(0, this.scrollHeight() - view)}px`;
    this.grid.setAttribute('aria-rowcount', String(this.total + 1));
    const needed = this.visibleCount();
    while (this.pool.length < needed) {
      const row = document.createElement('div');
      row.className = 'row';
      row.setAttribute('role', 'row');
      row.id = `row-${this.pool.length}`;
      COLUMNS.forEach((column, i) => {
        const cell = document.createElement('div');
        cell.setAttribute('role', 'gridcell');
        cell.setAttribute('aria-colindex', String(i + 1));
        cell.className = [column.num ? 'num' : '', column.cls ?? ''].join(' ').trim();
        row.append(cell);
      });
      this.layer.append(row);
      this.pool.push(row);
    }
    while (this.pool.length > needed) this.pool.pop().remove();
    // The scale changes with the row count: keep the same rows in view under the new scale.
    this.scrollToVirtual(this.virtualTop);
  }

  onScroll() {
    const top = this.viewport.scrollTop;
    let user = false;
    if (this.setScroll && Math.abs(top - this.setScroll.scrollTop) < 1.5) {
      this.virtualTop = this.setScroll.virtualTop;
    } else {
      this.setScroll = null;
      this.virtualTop = Math.min(top * this.ratio(), Math.max(0, this.virtualHeight() - this.viewport.clientHeight));
      user = true;
    }
    this.headGroup.scrollLeft = this.viewport.scrollLeft;
    this.update({ flinging: user });
  }

  /** Puts the virtual offset `virtualTop` at the top of the view. */
  scrollToVirtual(virtualTop) {
    const max = Math.max(0, this.virtualHeight() - this.viewport.clientHeight);
    this.virtualTop = Math.max(0, Math.min(virtualTop, max));
    const scrollTop = this.virtualTop / this.ratio();
    this.viewport.scrollTop = scrollTop;
    this.setScroll = { scrollTop: this.viewport.scrollTop, virtualTop: this.virtualTop };
    this.update();
  }

  /** Moves row `index` to the top of the view; `cursor` (from /api/anchor) fetches its page by cursor. */
  scrollToIndex(index, cursor) {
    if (cursor !== undefined) this.cursors.set(index, cursor);
    this.scrollToVirtual(index * this.rowHeight);
  }

  /** Scrolls just enough to show row `index`. */
  reveal(index) {
    const top = index * this.rowHeight;
    const view = this.viewport.clientHeight;
    if (top < this.virtualTop) this.scrollToVirtual(top);
    else if (top + this.rowHeight > this.virtualTop + view) this.scrollToVirtual(top + this.rowHeight - view);
    else this.update();
  }

  firstVisible() { return Math.min(this.total - 1, Math.floor(this.virtualTop / this.rowHeight)); }

  /** Renders the rows in view and asks for the ones missing. */
  update({ flinging = false } = {}) {
    const first = Math.floor(this.virtualTop / this.rowHeight);
    const offset = this.virtualTop - first * this.rowHeight;
    let activeRow = null;
    this.pool.forEach((row, k) => {
      const index = first + k;
      if (index >= this.total) {
        row.hidden = true;
        return;
      }
      row.hidden = false;
      row.style.transform = `translateY(${k * this.rowHeight - offset}px)`;
      row.setAttribute('aria-rowindex', String(index + 2));
      row.dataset.index = String(index);
      const track = this.rows.get(index) ?? this.stale.get(index);
      if (track) {
        // Repainted when the row shows another track or a refetched copy of it: an edit within the
        // same second as the import before it leaves dateModified's text unchanged, so that is no version.
        if (row.dataset.id !== String(track.id) || row.shownTrack !== track || row.classList.contains('placeholder')) {
          row.classList.remove('placeholder');
          row.dataset.id = String(track.id);
          row.shownTrack = track;
          COLUMNS.forEach((column, i) => setText(row.children[i], String(column.cell(track))));
        }
        row.setAttribute('aria-selected', String(this.selection.has(track.id)));
        row.classList.toggle('playing', track.id === this.playingID);
        row.removeAttribute('aria-busy');
      } else {
        if (!row.classList.contains('placeholder')) {
          row.classList.add('placeholder');
          delete row.dataset.id;
          row.shownTrack = null;
          for (const cell of row.children) setText(cell, '');
        }
        row.setAttribute('aria-busy', 'true');
        row.setAttribute('aria-selected', 'false');
        row.classList.remove('playing');
      }
      const isActive = index === this.active;
      row.classList.toggle('active', isActive);
      if (isActive) activeRow = row;
    });
    // What tests and the benchmark wait on: the first row in view and how many rows still wait.
    this.grid.dataset.first = String(first);
    this.grid.dataset.offset = String(Math.round(offset));
    const waiting = this.pool.filter((row) => !row.hidden && row.classList.contains('placeholder')).length;
    this.grid.dataset.waiting = String(waiting);
    if (!this.markedFirstRows && waiting === 0 && this.total > 0) {
      // The frame after the first rows are painted: what `shelf-bench web` reports.
      this.markedFirstRows = true;
      requestAnimationFrame(() => performance.mark('shelf:first-rows'));
    }
    if (activeRow) this.grid.setAttribute('aria-activedescendant', activeRow.id);
    else this.grid.removeAttribute('aria-activedescendant');
    // While the list flies by (a fling or a drag moving more than a few screens a frame) the
    // pages would be stale before they arrived: ask once it slows down, so no request is wasted.
    const moved = Math.abs(first - (this.lastFirst ?? first));
    this.lastFirst = first;
    clearTimeout(this.requestTimer);
    if (flinging && moved > this.pool.length * 3) {
      this.requestTimer = setTimeout(() => this.request(first, first + this.pool.length), 50);
    } else {
      this.request(first, first + this.pool.length);
    }
  }

  /** Fetches what is missing around [first, last), cancels what is far, drops rows far away. */
  request(first, last) {
    if (!this.source || this.failed) return;
    const size = this.pageSize();
    const low = Math.max(0, first - size);
    const high = this.pendingTotal ? last + size : Math.min(this.total, last + size);
    for (const [start, request] of this.inflight) {
      if (request.end < low - size || start > high + size) {
        request.controller.abort();
        this.inflight.delete(start);
      }
    }
    const keepLow = first - size * 3;
    const keepHigh = last + size * 3;
    for (const map of [this.rows, this.stale]) {
      for (const index of map.keys()) if (index < keepLow || index > keepHigh) map.delete(index);
    }
    for (const index of this.cursors.keys()) if (index !== 0 && (index < keepLow || index > keepHigh)) this.cursors.delete(index);
    let index = first;
    // Rows in view first, alone: the margins (after them, then before) are asked for only once
    // the view is filled, so they never compete with it for the server or the connection.
    const inView = Math.min(last, this.pendingTotal ? last : this.total);
    const order = [[first, inView], [inView, high], [low, first]];
    for (const [segment, [from, to]] of order.entries()) {
      if (segment === 1) {
        for (let i = first; i < inView; i += 1) if (!this.rows.has(i)) return;
      }
      index = from;
      while (index < to) {
        if (this.rows.has(index) || this.covered(index)) { index += 1; continue; }
        // A page starts where a known cursor is, when one is near: scrolling on stays on cursors.
        let start = index;
        for (let back = index; back > index - size && back >= 0 && !this.rows.has(back); back -= 1) {
          if (this.cursors.has(back) && !this.covered(back)) { start = back; break; }
        }
        this.fetch(start, size);
        index = start + size;
      }
    }
  }

  covered(index) {
    for (const [start, request] of this.inflight) if (index >= start && index < request.end) return true;
    return false;
  }

  async fetch(start, limit) {
    const controller = new AbortController();
    const generation = this.generation;
    this.inflight.set(start, { end: start + limit, controller });
    const cursor = this.cursors.has(start) ? this.cursors.get(start) : undefined;
    try {
      const page = await this.source.fetch({ start, cursor, limit, signal: controller.signal });
      if (generation !== this.generation) return;
      this.inflight.delete(start);
      page.items.forEach((track, i) => { this.rows.set(start + i, track); this.stale.delete(start + i); });
      if (page.nextCursor) this.cursors.set(start + page.items.length, page.nextCursor);
      const totalChanged = page.total !== this.total || this.pendingTotal;
      this.pendingTotal = false;
      if (totalChanged) {
        this.total = page.total;
        for (const index of this.stale.keys()) if (index >= this.total) this.stale.delete(index);
        if (this.active >= this.total) this.active = this.total - 1;
        this.layout();
        this.handlers.onTotal?.(this.total);
      } else {
        this.update();
      }
      this.handlers.onRows?.();
    } catch (error) {
      if (generation === this.generation) this.inflight.delete(start);
      if (isAbort(error)) return;
      // A list the server refuses (a filter mistake) is not asked for again until it changes.
      if (error.status >= 400 && error.status < 500 && generation === this.generation) {
        this.failed = true;
        this.total = 0;
        this.pendingTotal = false;
        this.layout();
      }
      this.handlers.onError?.(error);
    }
  }

  indexOf(target) {
    const row = target.closest?.('.row');
    return row && row.dataset.index !== undefined ? Number(row.dataset.index) : -1;
  }

  onClick(event) {
    const index = this.indexOf(event.target);
    if (index < 0) return;
    this.grid.focus({ preventScroll: true });
    this.select(index, event);
  }

  /** Click, ctrl/cmd-click and shift-click selection (shift ranges over rows not loaded too). */
  async select(index, { shiftKey = false, ctrlKey = false, metaKey = false } = {}) {
    const track = this.rows.get(index);
    if (shiftKey && this.anchorIndex >= 0) {
      const [from, to] = [Math.min(this.anchorIndex, index), Math.max(this.anchorIndex, index)];
      if (!(ctrlKey || metaKey)) this.selection.clear();
      for (const id of await this.idsBetween(from, to)) this.selection.add(id);
    } else if (ctrlKey || metaKey) {
      if (track) this.selection.has(track.id) ? this.selection.delete(track.id) : this.selection.add(track.id);
      this.anchorIndex = index;
    } else {
      this.selection.clear();
      if (track) this.selection.add(track.id);
      this.anchorIndex = index;
    }
    this.active = index;
    this.update();
    this.handlers.onSelection();
  }

  /** The IDs of rows from..to (inclusive), fetching those not loaded. */
  async idsBetween(from, to) {
    // The library's order as IDs alone (/api/snapshot): one small answer for any range.
    if (this.source.snapshot && to - from > 200) return (await this.source.snapshot()).slice(from, to + 1);
    const ids = [];
    let index = from;
    while (index <= to) {
      const track = this.rows.get(index) ?? this.stale.get(index);
      if (track) { ids.push(track.id); index += 1; continue; }
      const limit = Math.min(5000, to - index + 1);
      const page = await this.source.fetch({ start: index, cursor: this.cursors.get(index), limit });
      if (!page.items.length) break;
      page.items.slice(0, limit).forEach((t) => ids.push(t.id));
      index += page.items.length;
    }
    return ids;
  }

  setActive(index) {
    if (this.total === 0) return;
    this.active = Math.max(0, Math.min(this.total - 1, index));
    this.reveal(this.active);
  }

  onKey(event) {
    if (event.target !== this.grid) return;
    const page = Math.max(1, this.visibleCount() - 2);
    const moves = {
      ArrowDown: this.active + 1, ArrowUp: this.active - 1, PageDown: this.active + page, PageUp: this.active - page,
      Home: 0, End: this.total - 1,
    };
    if (event.key in moves && !event.altKey) {
      event.preventDefault();
      const from = this.active;
      this.setActive(this.active < 0 ? this.firstVisible() : moves[event.key]);
      if (event.shiftKey) {
        if (this.anchorIndex < 0) this.anchorIndex = from;
        this.select(this.active, { shiftKey: true });
      }
      return;
    }
    if (event.key === 'Enter' && this.active >= 0) {
      event.preventDefault();
      const track = this.rows.get(this.active);
      if (track) this.handlers.onActivate(this.active, track);
      return;
    }
    if (event.key === ' ' && this.active >= 0) {
      event.preventDefault();
      this.select(this.active, { ctrlKey: true });
      return;
    }
    if (event.key === 'a' && (event.ctrlKey || event.metaKey)) return;
    this.handlers.onKey?.(event);
  }

  /** Marks the playing track's row. */
  showPlaying(id) {
    this.playingID = id;
    this.update();
  }

  /** The selected IDs in list order where loaded, then the rest. */
  selectedIDs() { return [...this.selection]; }

  /** A loaded track by ID (for the edit dialog's values). */
  loadedTrack(id) {
    for (const map of [this.rows, this.stale]) for (const track of map.values()) if (track.id === id) return track;
    return null;
  }

  /** The loaded tracks from `index` on (for the queue), at most `limit`. */
  tracksFrom(index, limit) {
    const tracks = [];
    for (let i = index; i < index + limit && this.rows.has(i); i += 1) tracks.push(this.rows.get(i));
    return tracks;
  }
}
