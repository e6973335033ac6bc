// The admin page's users: the list (the admin flag, delete), adding one, and the dialog that
// sets another user's password. Users go through the Subsonic API (the page's session signs
// those calls); their API keys are admin-keys.js's dialog.
import { subsonic, list, encodePassword } from './api.js';
import { t } from './i18n.js';
import { h, data, errorBox, statusBox, showError, showMessage, scrollTable, formDialog, button, field, keepFocus } from './dom.js';
import { adminSection } from './admin-common.js';

/** The users section of `page` (the AdminPage: its container, deps and generation);
 *  `openKeys(user)` opens a user's API keys. */
export class UsersSection {
  constructor(page, { openKeys }) {
    Object.assign(this, { page, openKeys });
  }

  build() {
    const name = h('input', { name: 'username', required: true, autocomplete: 'off', spellcheck: false, translate: 'no' });
    const password = h('input', { name: 'password', type: 'password', required: true, autocomplete: 'new-password' });
    const admin = h('input', { name: 'admin', type: 'checkbox' });
    this.error = errorBox();
    this.status = statusBox();
    const form = h('form', { class: 'inline-form', 'aria-labelledby': 'admin-add-user-title' },
      h('h3', { id: 'admin-add-user-title', class: 'form-title', text: t('admin.users.addTitle') }),
      field(t('admin.users.name'), name),
      field(t('admin.users.password'), password),
      h('label', { class: 'check' }, admin, t('admin.users.admin')),
      h('button', { type: 'submit', class: 'primary', text: t('admin.users.add') }),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      showError(this.error, null);
      const username = name.value.trim();
      try {
        await subsonic('createUser', { username, password: encodePassword(password.value), email: '', adminRole: admin.checked });
        form.reset();
        this.status.textContent = t('admin.users.added', { name: username });
        await this.load();
      } catch (error) {
        showError(this.error, error);
      }
    });
    this.body = h('div');
    return adminSection('admin-users-title', t('admin.users.title'), this.error, this.status, this.body, form);
  }

  async load() {
    const generation = this.page.generation;
    try {
      const answer = await subsonic('getUsers');
      if (generation !== this.page.generation) return;
      keepFocus(this.page.container, () => this.render(list(answer.users?.user)));
    } catch (error) {
      if (generation === this.page.generation) showError(this.error, error);
    }
  }

  render(users) {
    const me = this.page.deps.user?.name;
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
    this.body.replaceChildren(region);
  }

  async setAdmin(user, checkbox) {
    const adminRole = checkbox.checked;
    showError(this.error, null);
    if (!adminRole && user.username === this.page.deps.user?.name && !window.confirm(t('admin.users.confirmDemoteSelf'))) {
      checkbox.checked = true;
      return;
    }
    try {
      await subsonic('updateUser', { username: user.username, adminRole });
      this.status.textContent = adminRole ? t('admin.users.madeAdmin', { name: user.username }) : t('admin.users.madeUser', { name: user.username });
      await this.load();
    } catch (error) {
      // The server refused (the last admin cannot be demoted): the box shows what is true again.
      checkbox.checked = !adminRole;
      showError(this.error, error);
    }
  }

  async deleteUser(user) {
    if (!window.confirm(t('admin.users.confirmDelete', { name: user.username }))) return;
    showError(this.error, null);
    try {
      await subsonic('deleteUser', { username: user.username });
      this.status.textContent = t('admin.users.deleted', { name: user.username });
      await this.load();
    } catch (error) {
      showError(this.error, error);
    }
  }

  /** <dialog id="admin-password-dialog">: a new password for another user, typed twice. */
  buildPasswordDialog() {
    const who = data('', 'user-name');
    const password = h('input', { type: 'password', name: 'password', required: true, autocomplete: 'new-password' });
    const confirm = h('input', { type: 'password', name: 'confirm', required: true, autocomplete: 'new-password' });
    const parts = formDialog('admin-password-dialog', t('admin.password.title'), {
      content: [
        h('p', {}, t('admin.password.for'), ' ', who),
        field(t('admin.password.new'), password),
        field(t('admin.password.confirm'), confirm),
      ],
      onSubmit: async ({ dialog, error }) => {
        if (password.value !== confirm.value) {
          showMessage(error, t('admin.password.mismatch'));
          confirm.focus();
          return;
        }
        await subsonic('changePassword', { username: this.passwordUser, password: encodePassword(password.value) });
        dialog.close();
        this.status.textContent = t('admin.password.changed', { name: this.passwordUser });
      },
    });
    // The typed passwords leave the page with the dialog.
    parts.dialog.addEventListener('close', () => parts.form.reset());
    this.passwordDialog = { ...parts, who, password };
    return parts.dialog;
  }

  openPassword(user) {
    const d = this.passwordDialog;
    this.passwordUser = user.username;
    d.who.textContent = user.username;
    showError(d.error, null);
    d.dialog.showModal();
    d.password.focus();
  }
}
