// The admin page's sonic analysis: whether it runs in the background, how many tracks are
// analysed, waiting and without features, the current run's progress and rate, and a run started
// by hand (polled until it ends while the page is shown).
import { t, formatDateTime, formatNumber } from './i18n.js';
import { JobSection, numbers, formatSpan } from './admin-common.js';

/** The analysis section of `page` (the AdminPage). `hide()` stops its polling. */
export class AnalysisSection extends JobSection {
  constructor(page) {
    super(page, 'analysis');
  }

  /** Shows the analysis' status (GET /api/analysis's JSON). */
  update(status) {
    this.button.disabled = Boolean(status.running);
    const progress = status.progress;
    this.state.textContent = status.running
      ? t('admin.analysis.running', { done: formatNumber(progress?.done ?? 0), total: formatNumber(progress?.total ?? 0) })
      : '';
    const rows = [
      [t('admin.analysis.background'), status.enabled ? t('admin.analysis.on') : t('admin.analysis.off')],
      [t('admin.analysis.done'), status.done ?? 0],
      [t('admin.analysis.pending'), status.pending ?? 0],
      [t('admin.analysis.failed'), status.failed ?? 0],
      [t('admin.analysis.workers'), status.workers ?? 1],
    ];
    const last = status.last;
    if (last) {
      rows.push([t('admin.analysis.lastRun'), formatDateTime(last.finished) || '—']);
      rows.push([t('admin.analysis.analyzed'), last.analyzed ?? 0]);
      rows.push([t('admin.analysis.took'), formatSpan(last.seconds ?? 0)]);
      if (status.rate) rows.push([t('admin.analysis.rate'), t('admin.analysis.rateValue', { rate: formatNumber(Math.round(status.rate)) })]);
    }
    this.body.replaceChildren(numbers(rows));
    this.pollWhile(status.running);
  }
}
