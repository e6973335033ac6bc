// The shares page (the user's public links: copy, edit, revoke) and the dialog that shares the
// list's selection as a new link.
import { subsonic, list, isAdmin } from './api.js';
import { t, tn, formatNumber, formatDate } from './i18n.js';
import {
  h, data, pageHeading, errorBox, statusBox, showError, showMessage, scrollTable, formDialog, button, field, copyField, loadList, Page,
} from './dom.js';

/** The date a <input type="date"> value names, as the end of that day here, in ms since 1970 (a
 *  share that "expires on the 5th" works through the 5th); null when the field is empty. */
function endOfDay(value) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value ?? '');
  if (!match) return null;
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 23, 59, 59, 999).getTime();
}

/** The <input type="date"> value of a date (local day), '' for none. */
function dateInputValue(value) {
  if (!value) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Today as an <input type="date"> value (the earliest expiry a share may have). */
function today() { return dateInputValue(new Date()); }

const SHARE_TRACKS_SHOWN = 30;

/** The user's public share links (an admin sees everyone's): copy, edit the description and
 *  expiry, revoke. `show()` takes no arguments. */
export class SharesPage extends Page {

  async show() {
    this.generation += 1;
    const heading = pageHeading(t('shares.title'));
    const intro = h('p', { class: 'page-intro', text: t('shares.intro') });
    this.error = errorBox();
    this.status = statusBox();
    this.body = h('div');
    this.dialog = this.buildDialog();
    this.container.replaceChildren(heading, intro, this.error, this.status, this.body, this.dialog.dialog);
    this.status.textContent = t('pages.loading');
    await this.load();
  }

  load() {
    return loadList(this, async () => list((await subsonic('getShares')).shares?.share));
  }

  render(shares) {
    if (!shares.length) {
      this.body.replaceChildren(h('p', { class: 'page-empty', text: t('shares.none') }));
      return;
    }
    const admin = isAdmin(this.deps.user);
    const headers = [t('shares.column.description'), t('shares.column.link'), t('shares.column.tracks'), t('shares.column.created'),
      t('shares.column.expires'), t('shares.column.visits')];
    if (admin) headers.push(t('shares.column.user'));
    headers.push(t('pages.actions'));
    const { region, tbody } = scrollTable(t('shares.tableLabel'), headers, 'shares-table');
    for (const share of shares) {
      const entries = list(share.entry);
      const link = copyField(t('shares.column.link'), share.url, { hideLabel: true });
      link.copy.dataset.focus = `copy-${share.id}`;
      const tracks = h('details', { class: 'share-tracks' },
        h('summary', { text: tn('shares.trackCount', entries.length) }),
        // The first tracks only: a long share would make a row as tall as the page.
        h('ol', {}, entries.slice(0, SHARE_TRACKS_SHOWN).map((entry) => h('li', {}, data(entry.title ?? t('pages.untitled')), entry.artist ? [' — ', data(entry.artist)] : []))),
        entries.length > SHARE_TRACKS_SHOWN ? h('p', { class: 'muted', text: tn('shares.moreTracks', entries.length - SHARE_TRACKS_SHOWN) }) : null,
      );
      const visits = h('td', { class: 'num' }, formatNumber(share.visitCount ?? 0));
      if (share.lastVisited) visits.append(h('br'), h('span', { class: 'muted', text: t('shares.lastVisited', { date: formatDate(share.lastVisited) }) }));
      const row = h('tr', { 'data-focus-group': `share-${share.id}` },
        h('td', {}, share.description ? data(share.description) : h('span', { class: 'muted', text: t('shares.noDescription') })),
        h('td', { class: 'link-cell' }, link.element),
        h('td', {}, tracks),
        h('td', { class: 'date', text: formatDate(share.created) }),
        h('td', { class: 'date', text: share.expires ? formatDate(share.expires) : t('shares.never') }),
        visits,
      );
      if (admin) row.append(h('td', {}, data(share.username ?? '')));
      row.append(h('td', { class: 'actions' },
        button(t('pages.edit'), () => this.edit(share), { 'data-focus': `edit-${share.id}` }),
        button(t('shares.revoke'), () => this.revoke(share), { 'data-focus': `revoke-${share.id}` }),
      ));
      tbody.append(row);
    }
    this.body.replaceChildren(region);
  }

  /** <dialog id="share-edit-dialog">: the description and the expiry date (empty: never). */
  buildDialog() {
    const description = h('input', { name: 'description', autocomplete: 'off', translate: 'no' });
    const expires = h('input', { name: 'expires', type: 'date' });
    const parts = formDialog('share-edit-dialog', t('shares.editTitle'), {
      content: [
        field(t('shares.column.description'), description),
        field(t('shares.expiresOn'), expires, t('shares.expiresHint')),
      ],
      onSubmit: async ({ dialog, error }) => {
        const until = endOfDay(expires.value);
        if (until !== null && until <= Date.now()) {
          showMessage(error, t('shares.expiryPast'));
          return;
        }
        // The description goes as a one-item list, so that an emptied one is still sent (and
        // clears it): subsonic() leaves out empty plain values.
        await subsonic('updateShare', { id: this.editing.id, description: [description.value.trim()], expires: until ?? 0 });
        dialog.close();
        this.status.textContent = t('shares.saved');
        await this.load();
      },
    });
    return { ...parts, description, expires };
  }

  edit(share) {
    const d = this.dialog;
    this.editing = share;
    d.description.value = share.description ?? '';
    d.expires.value = dateInputValue(share.expires);
    d.expires.min = today();
    showError(d.error, null);
    d.dialog.showModal();
    d.description.focus();
  }

  async revoke(share) {
    const name = share.description || share.url;
    if (!window.confirm(t('shares.confirmRevoke', { name }))) return;
    showError(this.error, null);
    try {
      await subsonic('deleteShare', { id: share.id });
      this.status.textContent = t('shares.revoked');
      await this.load();
    } catch (error) {
      showError(this.error, error);
    }
  }
}

/** Opens <dialog id="share-dialog"> to share the tracks `trackIDs` (numbers) as one public link,
 *  with a description and an optional expiry; shows the new link with a Copy button. Resolves
 *  when the dialog closes, to the created share or null. */
export function createShareDialog(trackIDs) {
  document.getElementById('share-dialog')?.remove();
  const description = h('input', { name: 'description', autocomplete: 'off', translate: 'no' });
  const expires = h('input', { name: 'expires', type: 'date', min: today() });
  const result = h('div', { class: 'dialog-form', hidden: true });
  let created = null;
  const { dialog } = formDialog('share-dialog', t('shares.createTitle'), {
    content: [
      h('p', { text: tn('shares.createCount', trackIDs.length) }),
      field(t('shares.column.description'), description),
      field(t('shares.expiresOn'), expires, t('shares.expiresHint')),
    ],
    submitText: t('shares.create'),
    headingOutside: true,
    onSubmit: async ({ form, error, submit }) => {
      const until = endOfDay(expires.value);
      if (until !== null && until <= Date.now()) {
        showMessage(error, t('shares.expiryPast'));
        return;
      }
      submit.disabled = true;
      try {
        const answer = await subsonic('createShare', {
          id: trackIDs.map((n) => `tr-${n}`), description: description.value.trim(), expires: until ?? undefined,
        });
        created = list(answer.shares?.share)[0] ?? null;
        const link = copyField(t('shares.column.link'), created?.url ?? '');
        result.replaceChildren(
          h('p', { text: t('shares.createdNote') }),
          link.element,
          h('div', { class: 'dialog-actions' }, button(t('pages.close'), () => dialog.close(), { class: 'primary' })),
        );
        form.hidden = true;
        result.hidden = false;
        link.input.focus();
      } finally {
        submit.disabled = false;
      }
    },
  });
  dialog.append(result);
  document.body.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(created);
    });
    dialog.showModal();
    description.focus();
  });
}
