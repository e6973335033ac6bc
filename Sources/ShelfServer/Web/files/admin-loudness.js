// The admin page's loudness measurement: whether it runs in the background, how many tracks wait
// for it, the last run, and a run started by hand (polled until it ends while the page is shown).
import { t, formatDateTime } from './i18n.js';
import { JobSection, numbers, formatSpan } from './admin-common.js';

/** The loudness section of `page` (the AdminPage: its generation, and whether it is shown).
 *  `hide()` stops its polling. */
export class LoudnessSection extends JobSection {
  constructor(page) {
    super(page, 'loudness');
  }

  /** Shows the measurement's status (GET /api/loudness's JSON). */
  update(status) {
    this.button.disabled = Boolean(status.running);
    this.state.textContent = status.running ? t('admin.loudness.running') : '';
    const rows = [
      [t('admin.loudness.background'), status.enabled ? t('admin.loudness.on') : t('admin.loudness.off')],
      [t('admin.loudness.waiting'), status.withoutGain ?? 0],
    ];
    const last = status.last;
    if (last) {
      rows.push([t('admin.loudness.lastRun'), formatDateTime(last.finished) || '—']);
      rows.push([t('admin.loudness.measured'), last.measured ?? 0]);
      rows.push([t('admin.loudness.albums'), last.albums ?? 0]);
      rows.push([t('admin.loudness.failed'), last.failed ?? 0]);
      rows.push([t('admin.loudness.took'), formatSpan(last.seconds ?? 0)]);
    }
    this.body.replaceChildren(numbers(rows));
    this.pollWhile(status.running);
  }
}
