// The admin page's scan of the music folders: starting one, its progress (from the events
// stream, polled as well while the page is shown), and the report of the last one.
import { api, list } from './api.js';
import { t, tn, formatNumber } from './i18n.js';
import { h, data, errorBox, statusBox, showError, scrollTable, button } from './dom.js';
import { adminSection, numbers } from './admin-common.js';

/** A collapsed list of files and what went wrong with each (the server's words, untranslated). */
function problems(summary, failures) {
  return h('details', { class: 'problems' },
    h('summary', { text: summary }),
    h('ul', {}, failures.slice(0, 200).map((failure) => h('li', {}, data(failure.path, 'path'), ': ', data(failure.error ?? '')))),
  );
}

/** The scan section of `page` (the AdminPage: its generation, and whether it is shown);
 *  `onFinished()` follows a scan seen to end. `hide()` stops its polling. */
export class ScanSection {
  constructor(page, { onFinished }) {
    Object.assign(this, { page, onFinished });
    this.timer = null;
    this.box = null;
  }

  hide() {
    clearTimeout(this.timer);
    this.timer = null;
  }

  build() {
    this.button = button(t('admin.scan.start'), () => this.start(), { class: 'primary' });
    this.error = errorBox();
    this.state = statusBox();
    this.progress = h('progress', { class: 'scan-progress', max: 1, value: 0, hidden: true, 'aria-label': t('admin.scan.progress') });
    this.report = h('div', { class: 'scan-report' });
    this.box = adminSection('admin-scan-title', t('admin.scan.title'),
      h('p', { class: 'page-intro', text: t('admin.scan.intro') }),
      h('div', { class: 'page-toolbar' }, this.button),
      this.error, this.state, this.progress, this.report,
    );
    return this.box;
  }

  async start() {
    showError(this.error, null);
    try {
      this.onScan(await api('api/import', { method: 'POST', body: { scan: true } }));
    } catch (error) {
      showError(this.error, error);
    }
  }

  async load() {
    const generation = this.page.generation;
    try {
      const status = await api('api/import');
      if (generation === this.page.generation) this.onScan(status);
    } catch (error) {
      if (generation === this.page.generation) showError(this.error, error);
    }
  }

  /** Shows a scan's (or import's) status; app.js calls it with each 'scan' event of the events
   *  stream (through AdminPage.onScan), and the page polls while one runs in case the stream is
   *  not there. */
  onScan(status) {
    if (!this.box || !this.box.isConnected || !status) return;
    const wasRunning = this.running;
    const running = status.state === 'running';
    this.running = running;
    this.button.disabled = running;
    this.progress.hidden = !running;
    if (running) {
      // Before the files are counted the bar is indeterminate (no value).
      if (status.total > 0) {
        this.progress.max = status.total;
        this.progress.value = status.done ?? 0;
      } else {
        this.progress.removeAttribute('value');
      }
    }
    const states = {
      idle: t('admin.scan.idle'),
      running: status.total > 0
        ? t('admin.scan.running', { done: formatNumber(status.done ?? 0), total: formatNumber(status.total) })
        : t('admin.scan.counting'),
      finished: t('admin.scan.finished'),
      failed: t('admin.scan.failed'),
    };
    this.state.textContent = states[status.state] ?? '';
    // The server's words: shown as an error of its own, marked untranslatable outside English.
    if (status.state === 'failed' && status.error) showError(this.error, { message: status.error });
    this.renderReport(status);
    clearTimeout(this.timer);
    // Polled only while the page is shown; a hidden page still takes the stream's events.
    this.timer = running && this.page.visible ? setTimeout(() => this.load(), 2000) : null;
    // A finished scan changed the numbers.
    if (wasRunning && !running) this.onFinished();
  }

  renderReport(status) {
    const parts = [];
    const report = status.report;
    if (report && status.state !== 'running') {
      const failed = list(report.failed);
      const rows = [
        [t('admin.scan.added'), report.added], [t('admin.scan.updated'), report.updated], [t('admin.scan.unchanged'), report.unchanged],
        [t('admin.scan.moved'), report.moved], [t('admin.scan.failedFiles'), failed.length], [t('admin.scan.warnings'), list(report.warnings).length],
      ];
      if (report.seconds !== undefined) rows.push([t('admin.scan.seconds'), t('admin.scan.secondsValue', { seconds: formatNumber(Math.round(report.seconds * 10) / 10) })]);
      parts.push(h('h3', { text: t('admin.scan.reportTitle') }), numbers(rows));
      if (failed.length) parts.push(problems(tn('admin.scan.failedList', failed.length), failed));
    }
    const scan = status.scan;
    if (scan && status.state !== 'running') {
      const missing = Array.isArray(scan.missing) ? scan.missing.length : scan.missing;
      parts.push(h('h3', { text: t('admin.scan.missingTitle') }), numbers([
        [t('admin.scan.missing'), missing ?? 0],
        [t('admin.scan.newlyMissing'), scan.newlyMissing ?? 0],
        [t('admin.scan.returned'), scan.returned ?? scan.back ?? 0],
        [t('admin.scan.purged'), scan.pruned ?? scan.purged ?? 0],
        [t('admin.scan.keptOffline'), scan.keptOffline ?? 0],
      ]));
      const roots = list(scan.roots);
      if (roots.length) {
        const { region, tbody } = scrollTable(t('admin.scan.roots'), [t('admin.scan.folder'), t('admin.scan.folderState'), t('admin.scan.folderTracks')], 'roots-table');
        for (const root of roots) {
          const online = root.online ?? root.state === 'online';
          const state = h('td', { class: online ? '' : 'problem', text: online ? t('admin.scan.online') : t('admin.scan.offline') });
          if (!online && root.reason) state.append(' (', data(root.reason), ')');
          tbody.append(h('tr', {}, h('td', { class: 'path' }, data(root.path)), state, h('td', { class: 'num', text: formatNumber(root.tracks ?? 0) })));
        }
        parts.push(h('h3', { text: t('admin.scan.roots') }), region);
      }
    }
    this.report.replaceChildren(...parts);
  }
}
