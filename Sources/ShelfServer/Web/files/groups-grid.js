// The album (artist, composer, genre) grid: tiles in a virtual grid like the table's rows.
// Only the tiles near the view exist; each cover is asked for at its CSS size × devicePixelRatio
// rounded up to the server's size steps, set when its tile comes near the view and dropped when
// the tile is recycled, so far covers hold no memory.
import { api, artworkURL, isAbort } from './api.js';
import { t, tn } from './i18n.js';

const MAX_SCROLL = 8_000_000;
const MIN_TILE = 168;

/** A grid over `viewport` (scroll container), `layer` (sticky tile layer) and `spacer`. */
export class GroupsGrid {
  constructor({ viewport, layer, spacer }, { onOpen }) {
    Object.assign(this, { viewport, layer, spacer, onOpen });
    this.items = new Map();
    this.cursors = new Map([[0, null]]);
    this.total = 0;
    this.pool = [];
    this.inflight = null;
    this.generation = 0;
    viewport.addEventListener('scroll', () => this.update(), { passive: true });
    new ResizeObserver(() => this.layout()).observe(viewport);
    layer.addEventListener('click', (event) => {
      const tile = event.target.closest('.tile');
      if (tile?.dataset.index) this.onOpen(this.items.get(Number(tile.dataset.index)));
    });
    layer.addEventListener('keydown', (event) => {
      const tile = event.target.closest('.tile');
      if (tile?.dataset.index && (event.key === 'Enter' || event.key === ' ')) {
        event.preventDefault();
        this.onOpen(this.items.get(Number(tile.dataset.index)));
      }
    });
  }

  /** Shows `api/{path}` (albums, artists, composers, genres) with `params`. */
  show(path, params, kind) {
    this.inflight?.abort();
    this.inflight = null;
    this.generation += 1;
    Object.assign(this, { path, params, kind });
    this.items = new Map();
    this.cursors = new Map([[0, null]]);
    this.total = 0;
    this.pending = true;
    this.viewport.scrollTop = 0;
    this.layout();
  }

  columns() { return Math.max(1, Math.floor(this.viewport.clientWidth / MIN_TILE)); }

  tileWidth() { return this.viewport.clientWidth / this.columns(); }

  tileHeight() { return (this.kind === 'album' ? this.tileWidth() : 0) + 60; }

  rowsTotal() { return Math.ceil(this.total / this.columns()); }

  ratio() {
    const view = this.viewport.clientHeight;
    const virtual = this.rowsTotal() * this.tileHeight() - view;
    const scroll = Math.min(this.rowsTotal() * this.tileHeight(), MAX_SCROLL) - view;
    return scroll > 0 && virtual > 0 ? virtual / scroll : 1;
  }

  layout() {
    const view = this.viewport.clientHeight;
    this.layer.style.height = `${view}px`;
    this.spacer.style.height = `${Math.max(0, Math.min(this.rowsTotal() * this.tileHeight(), MAX_SCROLL) - view)}px`;
    const needed = (Math.ceil(view / this.tileHeight()) + 1) * this.columns();
    while (this.pool.length < needed) {
      const tile = document.createElement('div');
      tile.className = 'tile';
      tile.setAttribute('translate', 'no'); // a name from the library, in its label too
      tile.tabIndex = 0;
      tile.setAttribute('role', 'link');
      const image = document.createElement('img');
      image.alt = '';
      image.decoding = 'async';
      const name = document.createElement('div');
      name.className = 'name';
      const sub = document.createElement('div');
      sub.className = 'sub';
      tile.append(image, name, sub);
      this.layer.append(tile);
      this.pool.push(tile);
    }
    while (this.pool.length > needed) this.pool.pop().remove();
    this.update();
  }

  update() {
    const columns = this.columns();
    const width = this.tileWidth();
    const height = this.tileHeight();
    const virtualTop = this.viewport.scrollTop * this.ratio();
    const firstRow = Math.floor(virtualTop / height);
    const offset = virtualTop - firstRow * height;
    const first = firstRow * columns;
    this.pool.forEach((tile, k) => {
      const index = first + k;
      const [image, name, sub] = tile.children;
      if (index >= this.total) {
        tile.hidden = true;
        image.removeAttribute('src');
        delete tile.dataset.id;
        return;
      }
      tile.hidden = false;
      tile.style.width = `${width}px`;
      tile.style.height = `${height}px`;
      tile.style.transform = `translate(${(k % columns) * width}px, ${Math.floor(k / columns) * height - offset}px)`;
      tile.dataset.index = String(index);
      const item = this.items.get(index);
      image.hidden = this.kind !== 'album';
      if (!item) {
        name.textContent = '';
        sub.textContent = '';
        image.removeAttribute('src');
        delete tile.dataset.id;
        return;
      }
      if (tile.dataset.id === String(item.id)) return;
      tile.dataset.id = String(item.id);
      name.textContent = item.name || t('common.none');
      // An album's line is its artist and year (library data, like the tile); the others' are counts, in words.
      if (this.kind === 'album') {
        sub.textContent = [item.artist, item.year].filter(Boolean).join(' · ');
        sub.removeAttribute('translate');
      } else {
        sub.textContent = [item.albumCount ? tn('groups.albumCount', item.albumCount) : '', tn('list.count', item.trackCount ?? 0)].filter(Boolean).join(' · ');
        sub.setAttribute('translate', 'yes');
      }
      tile.setAttribute('aria-label', sub.textContent ? t('groups.tileLabel', { name: name.textContent, details: sub.textContent }) : name.textContent);
      if (this.kind === 'album' && item.artworkID) image.src = artworkURL(item.artworkID, width - 16);
      else image.removeAttribute('src');
    });
    this.fetch(first, first + this.pool.length + columns * 2);
  }

  async fetch(first, last) {
    let missing = -1;
    for (let i = first; i < (this.pending ? last : Math.min(last, this.total)); i += 1) {
      if (!this.items.has(i)) { missing = i; break; }
    }
    if (missing < 0 || this.inflight) return;
    const from = Math.max(...[...this.cursors.keys()].filter((k) => k <= missing));
    const controller = new AbortController();
    this.inflight = controller;
    const generation = this.generation;
    try {
      const limit = Math.min(10_000, missing - from + (last - first) + 50);
      const page = await api(`api/${this.path}`, { params: { ...this.params, after: this.cursors.get(from) || undefined, limit }, signal: controller.signal });
      if (generation !== this.generation) return;
      page.items.forEach((item, i) => this.items.set(from + i, item));
      for (const index of this.items.keys()) if (index < first - 2000 || index > last + 2000) this.items.delete(index);
      if (page.nextCursor) this.cursors.set(from + page.items.length, page.nextCursor);
      const changed = this.pending || page.total !== this.total;
      this.total = page.total;
      this.pending = false;
      this.inflight = null;
      if (changed) this.layout();
      else this.update();
    } catch (error) {
      if (generation === this.generation) this.inflight = null;
      if (!isAbort(error)) console.error(error);
    }
  }

  /** Moves the tile row holding item `index` to the top (a jump bar's section). */
  scrollToIndex(index) {
    const row = Math.floor(index / this.columns());
    this.viewport.scrollTop = (row * this.tileHeight()) / this.ratio();
    this.update();
  }

  /** The library changed: drop what is loaded and fetch what is in view again. */
  refresh() {
    if (!this.path) return;
    this.inflight?.abort();
    this.inflight = null;
    this.generation += 1;
    this.items = new Map();
    this.cursors = new Map([[0, null]]);
    this.pool.forEach((tile) => delete tile.dataset.id);
    this.update();
  }
}
