// The admin page: users (add, reset a password, the admin flag, delete, API keys), a scan of the
// music folders with its progress, the loudness measurement, the backups, and the library's
// numbers, one module each (admin-users.js, admin-keys.js, admin-scan.js, admin-loudness.js,
// admin-backups.js, admin-stats.js) composed here. Users go through the Subsonic API (the page's
// session signs those calls); keys, scans, loudness, backups and the numbers through the native API.
import { isAdmin } from './api.js';
import { t } from './i18n.js';
import { h, pageHeading, Page } from './dom.js';
import { UsersSection } from './admin-users.js';
import { KeysDialog } from './admin-keys.js';
import { ScanSection } from './admin-scan.js';
import { LoudnessSection } from './admin-loudness.js';
import { AnalysisSection } from './admin-analysis.js';
import { BackupsSection } from './admin-backups.js';
import { StatsSection } from './admin-stats.js';
import { LibrariesSection } from './admin-libraries.js';

/** The admin page (admins only: others see a note). `show()` takes no arguments; `onScan(status)`
 *  takes a scan's status (GET /api/import's JSON, also the events stream's 'scan' events);
 *  `hide()` stops its polling. The sections read the page's `generation` (an answer for an older
 *  show() is dropped), `visible` (they poll only while it is shown), `container` and `deps`. */
export class AdminPage extends Page {
  constructor(container, deps) {
    super(container, deps);
    this.keys = new KeysDialog();
    this.users = new UsersSection(this, { openKeys: (user) => this.keys.open(user) });
    this.scan = new ScanSection(this, { onFinished: () => this.stats.load() });
    this.loudness = new LoudnessSection(this);
    this.analysis = new AnalysisSection(this);
    this.backups = new BackupsSection(this);
    this.stats = new StatsSection(this);
    this.libraries = new LibrariesSection(this);
  }

  hide() {
    this.visible = false;
    this.scan.hide();
    this.loudness.hide();
    this.analysis.hide();
    this.backups.hide();
  }

  async show() {
    this.hide();
    this.visible = true;
    this.generation += 1;
    const heading = pageHeading(t('admin.title'));
    if (!isAdmin(this.deps.user)) {
      this.scan.box = null;
      this.container.replaceChildren(heading, h('p', { class: 'page-intro', text: t('admin.notAdmin') }));
      return;
    }
    this.container.replaceChildren(heading, this.users.build(), this.libraries.build(), this.scan.build(), this.loudness.build(), this.analysis.build(), this.backups.build(), this.stats.build(),
      this.users.buildPasswordDialog(), this.keys.build());
    await Promise.all([this.users.load(), this.libraries.load(), this.scan.load(), this.loudness.load(), this.analysis.load(), this.backups.load(), this.stats.load()]);
  }

  /** A scan's status, from app.js's events stream: shown when the scan section is on the page. */
  onScan(status) {
    this.scan.onScan(status);
  }
}
