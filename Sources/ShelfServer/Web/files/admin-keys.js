// The admin page's API keys: a dialog with a user's keys (IDs only), a new key shown once, and
// revoking, through the native API.
import { api } from './api.js';
import { t, formatDateTime } from './i18n.js';
import { h, data, statusBox, showError, scrollTable, formDialog, button, copyField, keepFocus } from './dom.js';

/** <dialog id="admin-keys-dialog">: `build()` makes it, `open(user)` shows that user's keys. */
export class KeysDialog {
  build() {
    const who = data('', 'user-name');
    const status = statusBox();
    const body = h('div');
    const created = h('div', { class: 'new-key', hidden: true });
    const create = button(t('admin.keys.create'), () => this.create(), { class: 'primary' });
    const parts = formDialog('admin-keys-dialog', t('admin.keys.title'), {
      content: [
        h('p', {}, t('admin.keys.for'), ' ', who),
        h('p', { class: 'page-intro', text: t('admin.keys.intro') }),
      ],
      after: [status, created, body],
      actions: [create],
    });
    // The key itself is dropped from the page when the dialog closes: it is shown once.
    parts.dialog.addEventListener('close', () => created.replaceChildren());
    this.dialog = { dialog: parts.dialog, who, error: parts.error, status, body, created };
    return parts.dialog;
  }

  async open(user) {
    const d = this.dialog;
    this.user = user.username;
    d.who.textContent = user.username;
    d.created.hidden = true;
    d.created.replaceChildren();
    d.status.textContent = '';
    showError(d.error, null);
    d.body.replaceChildren();
    d.dialog.showModal();
    await this.load();
  }

  async load() {
    const d = this.dialog;
    const name = this.user;
    try {
      const { keys } = await api(`api/users/${encodeURIComponent(name)}/keys`);
      if (name !== this.user) return;
      keepFocus(d.dialog, () => this.render(keys ?? []));
    } catch (error) {
      showError(d.error, error);
    }
  }

  render(keys) {
    const d = this.dialog;
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
        h('td', { class: 'actions' }, button(t('admin.keys.revoke'), () => this.revoke(key), { 'data-focus': `revoke-${key.id}` })),
      ));
    }
    d.body.replaceChildren(region);
  }

  async create() {
    const d = this.dialog;
    const name = this.user;
    showError(d.error, null);
    try {
      const answer = await api(`api/users/${encodeURIComponent(name)}/keys`, { method: 'POST' });
      const copy = copyField(t('admin.keys.newKey'), answer.key);
      d.created.replaceChildren(h('p', { class: 'warning', text: t('admin.keys.once') }), copy.element);
      d.created.hidden = false;
      copy.input.focus();
      await this.load();
    } catch (error) {
      showError(d.error, error);
    }
  }

  async revoke(key) {
    const d = this.dialog;
    if (!window.confirm(t('admin.keys.confirmRevoke', { id: key.id }))) return;
    showError(d.error, null);
    try {
      await api(`api/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
      d.status.textContent = t('admin.keys.revoked', { id: key.id });
      await this.load();
    } catch (error) {
      showError(d.error, error);
    }
  }
}
