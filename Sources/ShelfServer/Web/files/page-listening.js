// The listening page: what the user played most in a week, month, year or all time, plays per
// day as a bar chart the page draws itself (SVG), and the listen log, newest first.
import { api } from './api.js';
import { t, tn, formatNumber, formatDateTime, language } from './i18n.js';
import { h, data, pageHeading, errorBox, statusBox, showError, scrollTable, button, Page } from './dom.js';

const PERIODS = ['week', 'month', 'year', 'all'];
const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes and children (h() makes HTML elements). */
function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children.filter((child) => child !== null && child !== undefined));
  return element;
}

/** A day as the reader writes dates (`2026-11-30` → 30 Nov / 11月30日). */
function shortDay(day) {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(Date.UTC(year, month - 1, date)).toLocaleDateString(language, { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** Plays per day as bars: one per day, the busiest day's count on the axis, each bar titled
 *  with its date and count; a weekly bar for spans longer than a year, so bars stay visible. */
export function playsChart(days) {
  let bars = days;
  if (days.length > 366) {
    bars = [];
    for (let i = 0; i < days.length; i += 7) {
      const week = days.slice(i, i + 7);
      bars.push({ date: week[0].date, plays: week.reduce((sum, day) => sum + day.plays, 0) });
    }
  }
  const width = 720;
  const height = 160;
  const top = 12;
  const bottom = 22;
  const left = 34;
  const most = Math.max(1, ...bars.map((bar) => bar.plays));
  const step = (width - left) / Math.max(1, bars.length);
  const total = days.reduce((sum, day) => sum + day.plays, 0);
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`, class: 'listening-chart', role: 'img',
    'aria-label': t('listening.chart.label', { plays: formatNumber(total), days: formatNumber(days.length) }),
  });
  chart.append(
    svg('line', { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: 'axis' }),
    svg('text', { x: left - 6, y: top + 4, 'text-anchor': 'end', class: 'tick' }, formatNumber(most)),
    svg('text', { x: left - 6, y: height - bottom, 'text-anchor': 'end', class: 'tick' }, '0'),
  );
  bars.forEach((bar, index) => {
    const barHeight = ((height - top - bottom) * bar.plays) / most;
    const rect = svg('rect', {
      x: left + index * step + step * 0.1, y: height - bottom - barHeight, width: Math.max(1, step * 0.8), height: barHeight,
      class: 'bar', 'data-date': bar.date, 'data-plays': bar.plays,
    }, svg('title', {}, `${shortDay(bar.date)}: ${tn('listening.plays', bar.plays)}`));
    chart.append(rect);
  });
  if (bars.length) {
    chart.append(
      svg('text', { x: left, y: height - 6, class: 'tick' }, shortDay(bars[0].date)),
      svg('text', { x: width, y: height - 6, 'text-anchor': 'end', class: 'tick' }, shortDay(bars[bars.length - 1].date)),
    );
  }
  return chart;
}

/** What the user listened to. `show()` takes no arguments. */
export class ListeningPage extends Page {
  constructor(container, deps) {
    super(container, deps);
    this.period = 'month';
  }

  async show() {
    this.generation += 1;
    const periods = h('div', { class: 'segmented', role: 'group', 'aria-label': t('listening.period.label') },
      PERIODS.map((period) => {
        const choice = button(t(`listening.period.${period}`), () => {
          this.period = period;
          for (const other of periods.querySelectorAll('button')) other.setAttribute('aria-pressed', String(other === choice));
          this.loadStats();
        }, { 'aria-pressed': String(period === this.period), 'data-period': period });
        return choice;
      }));
    this.error = errorBox();
    this.status = statusBox();
    this.summary = h('p', { class: 'page-intro listening-summary' });
    this.chart = h('figure', { class: 'listening-figure' });
    this.tops = h('div', { class: 'listening-tops' });
    this.recent = h('div', { class: 'listening-recent' });
    this.container.replaceChildren(
      pageHeading(t('listening.title')), h('p', { class: 'page-intro', text: t('listening.intro') }), periods,
      this.error, this.status, this.summary, this.chart, this.tops,
      h('h2', { text: t('listening.recent') }), this.recent,
    );
    this.status.textContent = t('pages.loading');
    this.cursor = null;
    this.recentRows = null;
    await Promise.all([this.loadStats(), this.loadRecent()]);
  }

  async loadStats() {
    const generation = this.generation;
    const period = this.period;
    try {
      // The reader's own calendar days: JavaScript's offset is minutes west, the API's east.
      const stats = await api('api/me/stats', { params: { period, tz: -new Date().getTimezoneOffset() } });
      if (generation !== this.generation || period !== this.period) return;
      this.status.textContent = '';
      this.render(stats);
    } catch (error) {
      if (generation !== this.generation) return;
      this.status.textContent = '';
      showError(this.error, error);
    }
  }

  render(stats) {
    const hours = stats.seconds / 3600;
    const plays = tn('listening.plays', stats.plays);
    // Under an hour in minutes, so a short week does not read as "0 hours".
    this.summary.textContent = !stats.plays ? t('listening.nothing')
      : hours < 1 ? t('listening.summaryMinutes', { plays, minutes: tn('listening.minutes', Math.max(1, Math.round(stats.seconds / 60))) })
        : t('listening.summary', { plays, hours: hours.toLocaleString(language, { maximumFractionDigits: 1 }) });
    this.container.dataset.plays = String(stats.plays);
    this.chart.replaceChildren(playsChart(stats.days), h('figcaption', { text: t('listening.chart.caption') }));
    const top = (title, entries, className) => h('section', { class: `listening-top ${className}`, 'aria-label': title },
      h('h2', { text: title }),
      entries.length
        ? h('ol', {}, entries.map((entry) => h('li', {},
          data(entry.name, 'name'),
          entry.artist ? h('span', { class: 'by' }, data(entry.artist)) : null,
          h('span', { class: 'count', text: tn('listening.plays', entry.plays) }))))
        : h('p', { class: 'page-empty', text: t('listening.none') }));
    this.tops.replaceChildren(
      top(t('listening.top.artists'), stats.artists, 'artists'),
      top(t('listening.top.albums'), stats.albums, 'albums'),
      top(t('listening.top.tracks'), stats.tracks, 'tracks'),
    );
  }

  async loadRecent() {
    const generation = this.generation;
    try {
      const page = await api('api/me/listens', { params: { limit: 50, ...(this.cursor ? { cursor: this.cursor } : {}) } });
      if (generation !== this.generation) return;
      this.cursor = page.nextCursor;
      if (!this.recentRows) {
        if (!page.items.length) {
          this.recent.replaceChildren(h('p', { class: 'page-empty', text: t('listening.noListens') }));
          return;
        }
        const { region, tbody } = scrollTable(t('listening.recent'), [
          t('listening.column.played'), t('listening.column.title'), t('listening.column.artist'), t('listening.column.album'),
          t('listening.column.from'),
        ], 'listens-table');
        this.recentRows = tbody;
        this.more = button(t('listening.more'), () => this.loadRecent());
        this.recent.replaceChildren(region, h('div', { class: 'page-actions' }, this.more));
      }
      for (const listen of page.items) {
        this.recentRows.append(h('tr', {},
          h('td', { class: 'date', text: formatDateTime(listen.playedAt) }),
          h('td', {}, data(listen.title || t('pages.untitled'))),
          h('td', {}, data(listen.artist)),
          h('td', {}, data(listen.album)),
          h('td', {}, data(listen.client ? `${t(`listening.source.${listen.source.split(':')[0]}`)} · ${listen.client}` : t(`listening.source.${listen.source.split(':')[0]}`))),
        ));
      }
      this.more.hidden = !this.cursor;
    } catch (error) {
      if (generation !== this.generation) return;
      showError(this.error, error);
    }
  }
}
