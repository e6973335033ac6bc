// The page's keyboard shortcuts, and the help dialog that lists them (opened with ?). A key is
// left alone while the reader types (a text field, a select), when another dialog is open, when
// a modifier is held (the browser's own shortcuts), and when a focused control already used it:
// the grid's Space selects a row, a button's Space presses it. Plain arrows belong to the grid
// and the sliders, so seeking takes Shift.
import { t } from './i18n.js';

const SEEK_STEP = 10;
const TYPING = 'input, textarea, select, [contenteditable]:not([contenteditable="false"])';
// Controls for which Space is their own activation.
const SPACE_OWNERS = 'button, a[href], summary, [role="button"], [role="checkbox"], [role="switch"], [role="option"], [role="menuitem"], [role="tab"], [role="link"]';

/** The shortcuts as the help dialog lists them: the keys shown, and what they do. */
const LIST = [
  [['keys.space'], 'keys.playPause'],
  [['Shift', '→'], 'keys.forward'],
  [['Shift', '←'], 'keys.back'],
  [['N'], 'keys.next'],
  [['P'], 'keys.previous'],
  [['+'], 'keys.volumeUp'],
  [['−'], 'keys.volumeDown'],
  [['M'], 'keys.mute'],
  [['L'], 'keys.lyrics'],
  [['Q'], 'keys.queue'],
  [['/'], 'keys.search'],
  [['?'], 'keys.help'],
];

/** The help dialog: a table of the shortcuts and a Close button (Escape closes it too). */
function buildDialog() {
  const dialog = document.createElement('dialog');
  dialog.id = 'shortcuts-dialog';
  dialog.className = 'edit-dialog shortcuts-dialog';
  dialog.setAttribute('aria-labelledby', 'shortcuts-title');
  const heading = document.createElement('h2');
  heading.id = 'shortcuts-title';
  heading.textContent = t('keys.title');
  const table = document.createElement('table');
  table.className = 'shortcuts-table';
  const head = table.createTHead().insertRow();
  for (const key of ['keys.key', 'keys.action']) {
    const cell = document.createElement('th');
    cell.scope = 'col';
    cell.textContent = t(key);
    head.append(cell);
  }
  const body = table.createTBody();
  for (const [keys, action] of LIST) {
    const row = body.insertRow();
    const keyCell = row.insertCell();
    keys.forEach((name, index) => {
      if (index) keyCell.append(' + ');
      const kbd = document.createElement('kbd');
      kbd.textContent = name.startsWith('keys.') ? t(name) : name;
      keyCell.append(kbd);
    });
    row.insertCell().textContent = t(action);
  }
  const actions = document.createElement('div');
  actions.className = 'dialog-actions';
  const close = document.createElement('button');
  close.type = 'button';
  close.id = 'shortcuts-close';
  close.textContent = t('common.close');
  close.addEventListener('click', () => dialog.close());
  actions.append(close);
  dialog.append(heading, table, actions);
  // A click on the backdrop (outside the dialog's box) closes it as Escape does.
  dialog.addEventListener('click', (event) => { if (event.target === dialog) dialog.close(); });
  return dialog;
}

/** Installs the global shortcuts for `player` (and its lyrics pane); returns the help dialog
 *  and a way to remove them again. */
export function installShortcuts({ player, lyrics = player.lyrics, search = document.getElementById('search'), app = document.getElementById('app') }) {
  const dialog = buildDialog();
  document.body.append(dialog);

  const actions = {
    ' ': () => player.toggle(),
    n: () => player.next(),
    p: () => player.previous(),
    '+': () => player.changeVolume(player.volumeStep),
    '=': () => player.changeVolume(player.volumeStep),
    '-': () => player.changeVolume(-player.volumeStep),
    m: () => player.toggleMute(),
    l: () => lyrics?.toggle(),
    q: () => player.toggleQueue(),
    '/': () => {
      search?.focus();
      search?.select();
    },
    '?': () => {
      if (dialog.open) dialog.close();
      else dialog.showModal();
    },
  };

  const onKey = (event) => {
    if (event.defaultPrevented || event.isComposing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (app?.hidden) return; // signed out
    const target = event.target instanceof Element ? event.target : null;
    if (target?.closest(TYPING)) return;
    const open = document.querySelector('dialog[open]');
    if (open && open !== dialog) return;
    let action = null;
    if (event.shiftKey && (event.key === 'ArrowRight' || event.key === 'ArrowLeft')) {
      const step = event.key === 'ArrowRight' ? SEEK_STEP : -SEEK_STEP;
      action = () => player.seekTo(player.position() + step);
    } else if (event.key === ' ') {
      if (target?.closest(SPACE_OWNERS)) return;
      action = actions[' '];
    } else if (event.key.length === 1) {
      action = actions[event.key.toLowerCase()] ?? null;
    }
    if (!action) return;
    event.preventDefault();
    action();
  };
  document.addEventListener('keydown', onKey);
  return {
    dialog,
    uninstall() {
      document.removeEventListener('keydown', onKey);
      dialog.remove();
    },
  };
}
