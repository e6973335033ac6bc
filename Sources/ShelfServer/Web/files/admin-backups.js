// The admin page's backups: the server's backup folder, how many it keeps and how often, the
// backups there, and one taken now.
import { api, list } from './api.js';
import { t, tn, formatNumber, formatDateTime } from './i18n.js';
import { h, data, showError, scrollTable } from './dom.js';
import { JobSection, numbers, formatBytes } from './admin-common.js';

/** An interval in seconds in its largest whole unit: 1 day, 6 hours, 30 minutes, 90 seconds. */
function formatEvery(seconds) {
  const total = Math.max(0, Math.round(Number(seconds) || 0));
  if (total && total % 86400 === 0) return tn('admin.backups.everyDays', total / 86400);
  if (total && total % 3600 === 0) return tn('admin.backups.everyHours', total / 3600);
  if (total && total % 60 === 0) return tn('admin.backups.everyMinutes', total / 60);
  return tn('admin.backups.everySeconds', total);
}

/** The backups section of `page` (the AdminPage: its generation, and whether it is shown).
 *  `hide()` stops its polling. */
export class BackupsSection extends JobSection {
  constructor(page) {
    super(page, 'backups');
  }

  /** Takes a backup now; the request returns once the file is written (and old ones rotated out). */
  async start() {
    showError(this.error, null);
    this.button.disabled = true;
    this.state.textContent = t('admin.backups.running');
    try {
      const report = await api('api/backups', { method: 'POST' });
      const name = String(report?.path ?? '').split('/').pop();
      this.state.replaceChildren(t('admin.backups.taken'), ' ', data(name, 'path'));
    } catch (error) {
      this.state.textContent = '';
      showError(this.error, error);
    }
    await this.load();
  }

  /** Shows the backups' status (GET /api/backups's JSON). */
  update(status) {
    const configured = Boolean(status.directory);
    this.button.disabled = !configured || Boolean(status.running);
    if (!configured) {
      this.body.replaceChildren(h('p', { class: 'page-empty', text: t('admin.backups.notConfigured') }));
      return;
    }
    const rows = [
      [t('admin.backups.folder'), data(status.directory, 'path')],
      [t('admin.backups.keep'), status.keep ?? 0],
      [t('admin.backups.every'), formatEvery(status.every)],
      [t('admin.backups.lastRun'), status.running ? t('admin.backups.running') : (formatDateTime(status.lastRun) || t('admin.backups.notYet'))],
    ];
    // The server's words (a path, an errno): shown as data.
    if (status.lastError) rows.push([t('admin.backups.lastError'), h('span', { class: 'problem' }, data(status.lastError))]);
    const parts = [numbers(rows)];
    const backups = list(status.backups);
    if (!backups.length) {
      parts.push(h('p', { class: 'page-empty', text: t('admin.backups.none') }));
    } else {
      const { region, tbody } = scrollTable(t('admin.backups.tableLabel'), [
        t('admin.backups.name'), t('admin.backups.created'), t('admin.backups.size'), t('admin.backups.tracks'),
      ], 'backups-table');
      for (const backup of backups) {
        const tracks = backup.error
          ? h('td', { class: 'problem' }, t('admin.backups.unreadable'), ' (', data(backup.error), ')')
          : h('td', { class: 'num', text: formatNumber(backup.trackCount ?? 0) });
        tbody.append(h('tr', {},
          h('td', { class: 'path' }, data(backup.name, 'path')),
          h('td', { class: 'date', text: formatDateTime(backup.created) }),
          h('td', { class: 'num' }, data(formatBytes(backup.bytes))),
          tracks,
        ));
      }
      parts.push(region);
    }
    this.body.replaceChildren(...parts);
    // A scheduled backup in progress: polled until it ends, while the page is shown.
    clearTimeout(this.timer);
    this.timer = status.running && this.page.visible ? setTimeout(() => this.load(), 3000) : null;
  }
}
