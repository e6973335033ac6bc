// The admin page's loudness measurement: whether it runs in the background, how many tracks wait
// for it, the last run, and a run started by hand (polled until it ends while the page is shown).
import { api } from './api.js';
import { t, formatDateTime } from './i18n.js';
import { showError } from './dom.js';
import { JobSection, numbers, formatSpan } from './admin-common.js';

/** The loudness section of `page` (the AdminPage: its generation, and whether it is shown).
 *  `hide()` stops its polling. */
export class LoudnessSection extends JobSection {
  constructor(page) {
    super(page, 'loudness');
  }

  async start() {
    showError(this.error, null);
    try {
      this.update(await api('api/loudness', { method: 'POST' }));
      // The run starts in the background: poll until it says so and then until it ends.
      this.wait = Date.now() + 10_000;
      clearTimeout(this.timer);
      if (this.page.visible) this.timer = setTimeout(() => this.load(), 1500);
    } catch (error) {
      showError(this.error, error);
    }
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
    clearTimeout(this.timer);
    const waiting = this.wait && Date.now() < this.wait;
    if (!status.running && !waiting) this.wait = 0;
    this.timer = (status.running || waiting) && this.page.visible ? setTimeout(() => this.load(), 3000) : null;
  }
}
