// The admin page: users (add, reset a password, the admin flag, delete, API keys), a scan of the
// music folders with its progress, the loudness measurement, the backups, and the library's
// numbers. Users go through the Subsonic API (the page's session signs those calls); keys, scans,
// loudness, backups and the numbers through the native API.
import { api, subsonic, clock } from './api.js';
import { t, tn, formatNumber, formatDateTime } from './i18n.js';
import {
  h, data, pageHeading, errorBox, statusBox, showError, showMessage, scrollTable, pageDialog, button, field, copyField,
  keepFocus, isAdmin, list, encodePassword,
} from './pages.js';

/** Bytes as B, KB, MB, GB or TB (powers of 1024), one decimal from MB up. */
function formatBytes(bytes) {
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
function formatSpan(seconds) {
  const total = Math.round(Number(seconds) || 0);
  if (total < 3600) return clock(total);
  const days = Math.floor(total / 86400);
  const hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  return days ? t('admin.stats.daysHours', { days: formatNumber(days), hours }) : t('admin.stats.hoursMinutes', { hours, minutes });
}

/** An interval in seconds in its largest whole unit: 1 day, 6 hours, 30 minutes, 90 seconds. */
function formatEvery(seconds) {
  const total = Math.max(0, Math.round(Number(seconds) || 0));
  if (total && total % 86400 === 0) return tn('admin.backups.everyDays', total / 86400);
  if (total && total % 3600 === 0) return tn('admin.backups.everyHours', total / 3600);
  if (total && total % 60 === 0) return tn('admin.backups.everyMinutes', total / 60);
  return tn('admin.backups.everySeconds', total);
}

/** A <section> of the admin page, named by its <h2> (`id`). */
function adminSection(id, title, ...children) {
  return h('section', { class: 'admin-section', 'aria-labelledby': id }, h('h2', { id, text: title }), ...children);
}

/** The admin page (admins only: others see a note). `show()` takes no arguments; `onScan(status)`
 *  takes a scan's status (GET /api/import's JSON, also the events stream's 'scan' events);
 *  `hide()` stops its polling. */
export class AdminPage {
  constructor(container, deps) {
    Object.assign(this, { container, deps });
    container.classList.add('page-view');
    this.generation = 0;
    this.scanTimer = null;
    this.loudnessTimer = null;
    this.backupsTimer = null;
    this.scanBox = null;
  }

  hide() {
    this.visible = false;
    clearTimeout(this.scanTimer);
    clearTimeout(this.loudnessTimer);
    clearTimeout(this.backupsTimer);
    this.scanTimer = null;
    this.loudnessTimer = null;
    this.backupsTimer = null;
  }

  async show() {
    this.hide();
    this.visible = true;
    this.generation += 1;
    const heading = pageHeading(t('admin.title'));
    if (!isAdmin(this.deps.user)) {
      this.scanBox = null;
      this.container.replaceChildren(heading, h('p', { class: 'page-intro', text: t('admin.notAdmin') }));
      return;
    }
    this.container.replaceChildren(heading, this.buildUsers(), this.buildScan(), this.buildLoudness(), this.buildBackups(), this.buildStats(),
      this.buildPasswordDialog(), this.buildKeysDialog());
    await Promise.all([this.loadUsers(), this.loadScan(), this.loadLoudness(), this.loadBackups(), this.loadStats()]);
  }

  // MARK: Users

  buildUsers() {
    const name = h('input', { name: 'username', required: true, autocomplete: 'off', spellcheck: false, translate: 'no' });
    const password = h('input', { name: 'password', type: 'password', required: true, autocomplete: 'new-password' });
    const admin = h('input', { name: 'admin', type: 'checkbox' });
    this.usersError = errorBox();
    this.usersStatus = statusBox();
    const form = h('form', { class: 'inline-form', 'aria-labelledby': 'admin-add-user-title' },
      h('h3', { id: 'admin-add-user-title', class: 'form-title', text: t('admin.users.addTitle') }),
      field(t('admin.users.name'), name),
      field(t('admin.users.password'), password),
      h('label', { class: 'check' }, admin, t('admin.users.admin')),
      h('button', { type: 'submit', class: 'primary', text: t('admin.users.add') }),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      showError(this.usersError, null);
      const username = name.value.trim();
      try {
        await subsonic('createUser', { username, password: encodePassword(password.value), email: '', adminRole: admin.checked });
        form.reset();
        this.usersStatus.textContent = t('admin.users.added', { name: username });
        await this.loadUsers();
      } catch (error) {
        showError(this.usersError, error);
      }
    });
    this.usersBody = h('div');
    return adminSection('admin-users-title', t('admin.users.title'), this.usersError, this.usersStatus, this.usersBody, form);
  }

  async loadUsers() {
    const generation = this.generation;
    try {
      const answer = await subsonic('getUsers');
      if (generation !== this.generation) return;
      keepFocus(this.container, () => this.renderUsers(list(answer.users?.user)));
    } catch (error) {
      if (generation === this.generation) showError(this.usersError, error);
    }
  }

  renderUsers(users) {
    const me = this.deps.user?.name;
    const { region, tbody } = scrollTable(t('admin.users.tableLabel'), [
      t('admin.users.name'), t('admin.users.email'), t('admin.users.role'), t('pages.actions'),
    ], 'users-table');
    for (const user of users) {
      const self = user.username === me;
      const adminBox = h('input', { type: 'checkbox', checked: Boolean(user.adminRole), 'data-focus': `admin-${user.username}` });
      adminBox.addEventListener('change', () => this.setAdmin(user, adminBox));
      const nameCell = h('td', {}, data(user.username, 'user-name'));
      if (self) nameCell.append(' ', h('span', { class: 'muted', text: t('admin.users.you') }));
      const deleteButton = button(t('pages.delete'), () => this.deleteUser(user), { 'data-focus': `delete-${user.username}` });
      // Deleting oneself would end one's own session mid-page; another admin can do it.
      if (self) {
        deleteButton.disabled = true;
        deleteButton.title = t('admin.users.cannotDeleteSelf');
      }
      tbody.append(h('tr', { 'data-focus-group': `user-${user.username}` },
        nameCell,
        h('td', {}, user.email ? data(user.email) : ''),
        h('td', {}, h('label', { class: 'check' }, adminBox, t('admin.users.admin'))),
        h('td', { class: 'actions' },
          button(t('admin.users.resetPassword'), () => this.openPassword(user), { 'data-focus': `password-${user.username}` }),
          button(t('admin.keys.button'), () => this.openKeys(user), { 'data-focus': `keys-${user.username}` }),
          deleteButton,
        ),
      ));
    }
    this.usersBody.replaceChildren(region);
  }

  async setAdmin(user, checkbox) {
    const adminRole = checkbox.checked;
    showError(this.usersError, null);
    if (!adminRole && user.username === this.deps.user?.name && !window.confirm(t('admin.users.confirmDemoteSelf'))) {
      checkbox.checked = true;
      return;
    }
    try {
      await subsonic('updateUser', { username: user.username, adminRole });
      this.usersStatus.textContent = adminRole ? t('admin.users.madeAdmin', { name: user.username }) : t('admin.users.madeUser', { name: user.username });
      await this.loadUsers();
    } catch (error) {
      // The server refused (the last admin cannot be demoted): the box shows what is true again.
      checkbox.checked = !adminRole;
      showError(this.usersError, error);
    }
  }

  async deleteUser(user) {
    if (!window.confirm(t('admin.users.confirmDelete', { name: user.username }))) return;
    showError(this.usersError, null);
    try {
      await subsonic('deleteUser', { username: user.username });
      this.usersStatus.textContent = t('admin.users.deleted', { name: user.username });
      await this.loadUsers();
    } catch (error) {
      showError(this.usersError, error);
    }
  }

  /** <dialog id="admin-password-dialog">: a new password for another user, typed twice. */
  buildPasswordDialog() {
    const { dialog, heading } = pageDialog('admin-password-dialog', t('admin.password.title'));
    const who = data('', 'user-name');
    const password = h('input', { type: 'password', name: 'password', required: true, autocomplete: 'new-password' });
    const confirm = h('input', { type: 'password', name: 'confirm', required: true, autocomplete: 'new-password' });
    const error = errorBox();
    const form = h('form', { method: 'dialog', class: 'dialog-form' },
      heading,
      h('p', {}, t('admin.password.for'), ' ', who),
      field(t('admin.password.new'), password),
      field(t('admin.password.confirm'), confirm),
      error,
      h('div', { class: 'dialog-actions' },
        button(t('pages.cancel'), () => dialog.close()),
        h('button', { type: 'submit', class: 'primary', text: t('pages.save') }),
      ),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      showError(error, null);
      if (password.value !== confirm.value) {
        showMessage(error, t('admin.password.mismatch'));
        confirm.focus();
        return;
      }
      try {
        await subsonic('changePassword', { username: this.passwordUser, password: encodePassword(password.value) });
        dialog.close();
        this.usersStatus.textContent = t('admin.password.changed', { name: this.passwordUser });
      } catch (failure) {
        showError(error, failure);
      }
    });
    // The typed passwords leave the page with the dialog.
    dialog.addEventListener('close', () => form.reset());
    dialog.append(form);
    this.passwordDialog = { dialog, who, password, error };
    return dialog;
  }

  openPassword(user) {
    const d = this.passwordDialog;
    this.passwordUser = user.username;
    d.who.textContent = user.username;
    showError(d.error, null);
    d.dialog.showModal();
    d.password.focus();
  }

  // MARK: API keys

  /** <dialog id="admin-keys-dialog">: a user's API keys (IDs only), a new key shown once, revoking. */
  buildKeysDialog() {
    const { dialog, heading } = pageDialog('admin-keys-dialog', t('admin.keys.title'));
    const who = data('', 'user-name');
    const error = errorBox();
    const status = statusBox();
    const body = h('div');
    const created = h('div', { class: 'new-key', hidden: true });
    const create = button(t('admin.keys.create'), () => this.createKey(), { class: 'primary' });
    dialog.append(
      heading,
      h('p', {}, t('admin.keys.for'), ' ', who),
      h('p', { class: 'page-intro', text: t('admin.keys.intro') }),
      error, status, created, body,
      h('div', { class: 'dialog-actions' }, create, button(t('pages.close'), () => dialog.close())),
    );
    // The key itself is dropped from the page when the dialog closes: it is shown once.
    dialog.addEventListener('close', () => created.replaceChildren());
    this.keysDialog = { dialog, who, error, status, body, created };
    return dialog;
  }

  async openKeys(user) {
    const d = this.keysDialog;
    this.keysUser = user.username;
    d.who.textContent = user.username;
    d.created.hidden = true;
    d.created.replaceChildren();
    d.status.textContent = '';
    showError(d.error, null);
    d.body.replaceChildren();
    d.dialog.showModal();
    await this.loadKeys();
  }

  async loadKeys() {
    const d = this.keysDialog;
    const name = this.keysUser;
    try {
      const { keys } = await api(`/api/users/${encodeURIComponent(name)}/keys`);
      if (name !== this.keysUser) return;
      keepFocus(d.dialog, () => this.renderKeys(keys ?? []));
    } catch (error) {
      showError(d.error, error);
    }
  }

  renderKeys(keys) {
    const d = this.keysDialog;
    if (!keys.length) {
      d.body.replaceChildren(h('p', { class: 'page-empty', text: t('admin.keys.none') }));
      return;
    }
    const { region, tbody } = scrollTable(t('admin.keys.tableLabel'), [
      t('admin.keys.id'), t('admin.keys.created'), t('admin.keys.lastUsed'), t('pages.actions'),
    ], 'keys-table');
    for (const key of keys) {
      tbody.append(h('tr', { 'data-focus-group': `key-${key.id}` },
        h('td', {}, data(key.id, 'key-id')),
        h('td', { class: 'date', text: formatDateTime(key.created) }),
        h('td', { class: 'date', text: key.lastUsed ? formatDateTime(key.lastUsed) : t('admin.keys.never') }),
        h('td', { class: 'actions' }, button(t('admin.keys.revoke'), () => this.revokeKey(key), { 'data-focus': `revoke-${key.id}` })),
      ));
    }
    d.body.replaceChildren(region);
  }

  async createKey() {
    const d = this.keysDialog;
    const name = this.keysUser;
    showError(d.error, null);
    try {
      const answer = await api(`/api/users/${encodeURIComponent(name)}/keys`, { method: 'POST' });
      const copy = copyField(t('admin.keys.newKey'), answer.key);
      d.created.replaceChildren(h('p', { class: 'warning', text: t('admin.keys.once') }), copy.element);
      d.created.hidden = false;
      copy.input.focus();
      await this.loadKeys();
    } catch (error) {
      showError(d.error, error);
    }
  }

  async revokeKey(key) {
    const d = this.keysDialog;
    if (!window.confirm(t('admin.keys.confirmRevoke', { id: key.id }))) return;
    showError(d.error, null);
    try {
      await api(`/api/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
      d.status.textContent = t('admin.keys.revoked', { id: key.id });
      await this.loadKeys();
    } catch (error) {
      showError(d.error, error);
    }
  }

  // MARK: Scans

  buildScan() {
    this.scanButton = button(t('admin.scan.start'), () => this.startScan(), { class: 'primary' });
    this.scanError = errorBox();
    this.scanState = statusBox();
    this.scanProgress = h('progress', { class: 'scan-progress', max: 1, value: 0, hidden: true, 'aria-label': t('admin.scan.progress') });
    this.scanReport = h('div', { class: 'scan-report' });
    this.scanBox = adminSection('admin-scan-title', t('admin.scan.title'),
      h('p', { class: 'page-intro', text: t('admin.scan.intro') }),
      h('div', { class: 'page-toolbar' }, this.scanButton),
      this.scanError, this.scanState, this.scanProgress, this.scanReport,
    );
    return this.scanBox;
  }

  async startScan() {
    showError(this.scanError, null);
    try {
      this.onScan(await api('/api/import', { method: 'POST', body: { scan: true } }));
    } catch (error) {
      showError(this.scanError, error);
    }
  }

  async loadScan() {
    const generation = this.generation;
    try {
      const status = await api('/api/import');
      if (generation === this.generation) this.onScan(status);
    } catch (error) {
      if (generation === this.generation) showError(this.scanError, error);
    }
  }

  /** Shows a scan's (or import's) status; app.js calls it with each 'scan' event of the events
   *  stream, and the page polls while one runs in case the stream is not there. */
  onScan(status) {
    if (!this.scanBox || !this.scanBox.isConnected || !status) return;
    const wasRunning = this.scanRunning;
    const running = status.state === 'running';
    this.scanRunning = running;
    this.scanButton.disabled = running;
    this.scanProgress.hidden = !running;
    if (running) {
      // Before the files are counted the bar is indeterminate (no value).
      if (status.total > 0) {
        this.scanProgress.max = status.total;
        this.scanProgress.value = status.done ?? 0;
      } else {
        this.scanProgress.removeAttribute('value');
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
    this.scanState.textContent = states[status.state] ?? '';
    // The server's words: shown as an error of its own, marked untranslatable outside English.
    if (status.state === 'failed' && status.error) showError(this.scanError, { message: status.error });
    this.renderScanReport(status);
    clearTimeout(this.scanTimer);
    // Polled only while the page is shown; a hidden page still takes the stream's events.
    this.scanTimer = running && this.visible ? setTimeout(() => this.loadScan(), 2000) : null;
    // A finished scan changed the numbers.
    if (wasRunning && !running) this.loadStats();
  }

  renderScanReport(status) {
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
    this.scanReport.replaceChildren(...parts);
  }

  // MARK: Loudness

  buildLoudness() {
    this.loudnessButton = button(t('admin.loudness.start'), () => this.startLoudness(), { class: 'primary' });
    this.loudnessError = errorBox();
    this.loudnessState = statusBox();
    this.loudnessBody = h('div');
    return adminSection('admin-loudness-title', t('admin.loudness.title'),
      h('p', { class: 'page-intro', text: t('admin.loudness.intro') }),
      h('div', { class: 'page-toolbar' }, this.loudnessButton),
      this.loudnessError, this.loudnessState, this.loudnessBody,
    );
  }

  async loadLoudness() {
    const generation = this.generation;
    try {
      const status = await api('/api/loudness');
      if (generation === this.generation) this.showLoudness(status);
    } catch (error) {
      if (generation === this.generation) showError(this.loudnessError, error);
    }
  }

  async startLoudness() {
    showError(this.loudnessError, null);
    try {
      this.showLoudness(await api('/api/loudness', { method: 'POST' }));
      // The run starts in the background: poll until it says so and then until it ends.
      this.loudnessWait = Date.now() + 10_000;
      clearTimeout(this.loudnessTimer);
      if (this.visible) this.loudnessTimer = setTimeout(() => this.loadLoudness(), 1500);
    } catch (error) {
      showError(this.loudnessError, error);
    }
  }

  showLoudness(status) {
    this.loudnessButton.disabled = Boolean(status.running);
    this.loudnessState.textContent = status.running ? t('admin.loudness.running') : '';
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
    this.loudnessBody.replaceChildren(numbers(rows));
    clearTimeout(this.loudnessTimer);
    const waiting = this.loudnessWait && Date.now() < this.loudnessWait;
    if (!status.running && !waiting) this.loudnessWait = 0;
    this.loudnessTimer = (status.running || waiting) && this.visible ? setTimeout(() => this.loadLoudness(), 3000) : null;
  }

  // MARK: Backups

  buildBackups() {
    this.backupButton = button(t('admin.backups.start'), () => this.startBackup(), { class: 'primary' });
    this.backupsError = errorBox();
    this.backupsState = statusBox();
    this.backupsBody = h('div');
    return adminSection('admin-backups-title', t('admin.backups.title'),
      h('p', { class: 'page-intro', text: t('admin.backups.intro') }),
      h('div', { class: 'page-toolbar' }, this.backupButton),
      this.backupsError, this.backupsState, this.backupsBody,
    );
  }

  async loadBackups() {
    const generation = this.generation;
    try {
      const status = await api('/api/backups');
      if (generation === this.generation) this.showBackups(status);
    } catch (error) {
      if (generation === this.generation) showError(this.backupsError, error);
    }
  }

  /** Takes a backup now; the request returns once the file is written (and old ones rotated out). */
  async startBackup() {
    showError(this.backupsError, null);
    this.backupButton.disabled = true;
    this.backupsState.textContent = t('admin.backups.running');
    try {
      const report = await api('/api/backups', { method: 'POST' });
      const name = String(report?.path ?? '').split('/').pop();
      this.backupsState.replaceChildren(t('admin.backups.taken'), ' ', data(name, 'path'));
    } catch (error) {
      this.backupsState.textContent = '';
      showError(this.backupsError, error);
    }
    await this.loadBackups();
  }

  showBackups(status) {
    const configured = Boolean(status.directory);
    this.backupButton.disabled = !configured || Boolean(status.running);
    if (!configured) {
      this.backupsBody.replaceChildren(h('p', { class: 'page-empty', text: t('admin.backups.notConfigured') }));
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
    this.backupsBody.replaceChildren(...parts);
    // A scheduled backup in progress: polled until it ends, while the page is shown.
    clearTimeout(this.backupsTimer);
    this.backupsTimer = status.running && this.visible ? setTimeout(() => this.loadBackups(), 3000) : null;
  }

  // MARK: Statistics

  buildStats() {
    this.statsError = errorBox();
    this.statsBody = h('div');
    return adminSection('admin-stats-title', t('admin.stats.title'), this.statsError, this.statsBody);
  }

  async loadStats() {
    const generation = this.generation;
    // The album and artist counts are the totals of their views (limit 0: no rows, just the total).
    const [info, albums, artists] = await Promise.allSettled([
      api('/api/info'),
      api('/api/albums', { params: { limit: 0 } }),
      api('/api/artists', { params: { limit: 0, by: 'albumArtist' } }),
    ]);
    if (generation !== this.generation) return;
    if (info.status === 'rejected') {
      showError(this.statsError, info.reason);
      return;
    }
    showError(this.statsError, null);
    const facts = info.value ?? {};
    const rows = [[t('admin.stats.tracks'), facts.trackCount ?? facts.tracks ?? 0]];
    const albumCount = facts.albumCount ?? (albums.status === 'fulfilled' ? albums.value.total : null);
    const artistCount = facts.artistCount ?? (artists.status === 'fulfilled' ? artists.value.total : null);
    if (albumCount !== null && albumCount !== undefined) rows.push([t('admin.stats.albums'), albumCount]);
    if (artistCount !== null && artistCount !== undefined) rows.push([t('admin.stats.artists'), artistCount]);
    if (facts.playlistCount !== undefined) rows.push([t('admin.stats.playlists'), facts.playlistCount]);
    if (facts.artworkCount !== undefined) rows.push([t('admin.stats.pictures'), facts.artworkCount]);
    const duration = facts.totalDuration ?? facts.duration;
    if (duration !== undefined && duration !== null) rows.push([t('admin.stats.duration'), formatSpan(duration)]);
    const bytes = facts.bytesOnDisk ?? facts.size;
    if (bytes !== undefined) rows.push([t('admin.stats.size'), data(formatBytes(bytes))]);
    if (facts.fileSize !== undefined) rows.push([t('admin.stats.musicSize'), data(formatBytes(facts.fileSize))]);
    if (facts.path) rows.push([t('admin.stats.path'), data(facts.path, 'path')]);
    this.statsBody.replaceChildren(numbers(rows));
  }
}

/** A definition list of [label, value] rows; numbers are formatted, nodes and text shown as they are. */
function numbers(rows) {
  return h('dl', { class: 'facts' },
    rows.map(([term, value]) => h('div', { class: 'fact' },
      h('dt', { text: term }),
      h('dd', {}, typeof value === 'number' ? formatNumber(value) : value),
    )));
}

/** A collapsed list of files and what went wrong with each (the server's words, untranslated). */
function problems(summary, failures) {
  return h('details', { class: 'problems' },
    h('summary', { text: summary }),
    h('ul', {}, failures.slice(0, 200).map((failure) => h('li', {}, data(failure.path, 'path'), ': ', data(failure.error ?? '')))),
  );
}
