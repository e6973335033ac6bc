// What the admin page's sections share: the section itself (named by its <h2>), the lists of
// numbers they show, and sizes and spans of time in words.
import { api, clock } from './api.js';
import { t, formatNumber } from './i18n.js';
import { h, errorBox, statusBox, showError, button } from './dom.js';

/** Bytes as B, KB, MB, GB or TB (powers of 1024), one decimal from MB up. */
export function formatBytes(bytes) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = Number(bytes) || 0;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${formatNumber(unit >= 2 ? Math.round(value * 10) / 10 : Math.round(value))} ${units[unit]}`;
}

/** A long span of seconds as days and hours (or hours and minutes, or m:ss under an hour). */
export function formatSpan(seconds) {
  const total = Math.round(Number(seconds) || 0);
  if (total < 3600) return clock(total);
  const days = Math.floor(total / 86400);
  const hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  return days ? t('admin.stats.daysHours', { days: formatNumber(days), hours }) : t('admin.stats.hoursMinutes', { hours, minutes });
}

/** A <section> of the admin page, named by its <h2> (`id`). */
export function adminSection(id, title, ...children) {
  return h('section', { class: 'admin-section', 'aria-labelledby': id }, h('h2', { id, text: title }), ...children);
}

/** A definition list of [label, value] rows; numbers are formatted, nodes and text shown as they are. */
export function numbers(rows) {
  return h('dl', { class: 'facts' },
    rows.map(([term, value]) => h('div', { class: 'fact' },
      h('dt', { text: term }),
      h('dd', {}, typeof value === 'number' ? formatNumber(value) : value),
    )));
}

/** A section of the admin page over one server job (`api/NAME`: loudness, analysis, backups):
 *  its start button, error and status boxes and body, loaded from the job's status. Subclasses
 *  give `update(status)` (ending with `pollWhile`), and `start()` where starting is not a plain
 *  POST; `hide()` stops any polling `start()` set up. */
export class JobSection {
  constructor(page, name) {
    this.page = page;
    this.name = name;
    this.timer = null;
  }

  hide() {
    clearTimeout(this.timer);
    this.timer = null;
  }

  build() {
    this.button = button(t(`admin.${this.name}.start`), () => this.start(), { class: 'primary' });
    this.error = errorBox();
    this.state = statusBox();
    this.body = h('div');
    return adminSection(`admin-${this.name}-title`, t(`admin.${this.name}.title`),
      h('p', { class: 'page-intro', text: t(`admin.${this.name}.intro`) }),
      h('div', { class: 'page-toolbar' }, this.button),
      this.error, this.state, this.body,
    );
  }

  /** Starts a run in the background (`POST api/NAME`), then polls until the job says it runs
   *  and until it ends. */
  async start() {
    showError(this.error, null);
    try {
      this.update(await api(`api/${this.name}`, { method: 'POST' }));
      this.wait = Date.now() + 10_000;
      clearTimeout(this.timer);
      if (this.page.visible) this.timer = setTimeout(() => this.load(), 1500);
    } catch (error) {
      showError(this.error, error);
    }
  }

  /** Reads the status again in 3 s while the job runs (or for 10 s after a start, until it says
   *  so), as long as the page is shown. */
  pollWhile(running) {
    clearTimeout(this.timer);
    const waiting = this.wait && Date.now() < this.wait;
    if (!running && !waiting) this.wait = 0;
    this.timer = (running || waiting) && this.page.visible ? setTimeout(() => this.load(), 3000) : null;
  }

  /** Reads the job's status; an answer for a page shown since is dropped. */
  async load() {
    const generation = this.page.generation;
    try {
      const status = await api(`api/${this.name}`);
      if (generation === this.page.generation) this.update(status);
    } catch (error) {
      if (generation === this.page.generation) showError(this.error, error);
    }
  }
}
