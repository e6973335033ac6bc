// The pages' DOM kit, which every page module may import: elements, fields, the dialogs (one
// form dialog for all), error and status boxes, tables that scroll sideways, the focus kept over
// a redraw, and the start every page shares. Everything is built with createElement, because the
// page's CSP allows no inline script or style attribute and the page never parses HTML from strings.
// Names, titles, paths and addresses from the library carry translate="no": they are data, not
// words of the page, and must not be translated (nor flagged as untranslated).
import { isAbort } from './api.js';
import { t, showErrorIn } from './i18n.js';

// MARK: Elements

/** Builds an element: `props` sets properties, except `class`, `text`, `on<event>` (a listener),
 *  and `translate`, `role` and dashed names (aria-*, data-*), which are attributes; null and
 *  undefined props and children are left out, and false children. */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null) continue;
    if (key === 'class') element.className = value;
    else if (key === 'text') element.textContent = String(value);
    else if (key.startsWith('on') && typeof value === 'function') element.addEventListener(key.slice(2), value);
    // `translate` is a boolean property: assigning 'no' to it would mean yes. A false attribute
    // is left out; a false property (spellcheck, hidden) is set, which is what it says.
    else if (key === 'translate' || key === 'role' || key.includes('-')) {
      if (value !== false) element.setAttribute(key, value === true ? '' : String(value));
    } else element[key] = value;
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** A span of library or user data, kept from translation. */
export function data(text, className) {
  return h('span', { class: className, translate: 'no', text: text ?? '' });
}

/** The page's <h1>: focusable by script (tabindex -1) so app.js can move focus to a page it shows. */
export function pageHeading(text) {
  return h('h1', { class: 'page-title', tabIndex: -1, text });
}

/** A button of type "button" with `text` that runs `action`. */
export function button(text, action, props = {}) {
  return h('button', { type: 'button', text, onclick: action, ...props });
}

/** A link opening `url` in a new tab without giving that page a hold on this one; only http and
 *  https become links (a stored address is someone's input, and a javascript: URL is no link). */
export function externalLink(url, text = url) {
  if (!url) return h('span', { class: 'muted', text: '—' });
  if (!/^https?:\/\//i.test(url)) return data(text, 'url');
  return h('a', { href: url, target: '_blank', rel: 'noopener noreferrer', translate: 'no', class: 'url', text });
}

/** A table inside a region that scrolls sideways on narrow screens; the region is focusable and
 *  named so a keyboard can scroll it and a screen reader can tell what it holds. */
export function scrollTable(label, headers, className = '', { labelledBy } = {}) {
  const head = h('tr', {}, headers.map((text) => h('th', { scope: 'col', text })));
  const tbody = h('tbody');
  const table = h('table', { class: `page-table ${className}`.trim() }, h('thead', {}, head), tbody);
  // Named by an element (a heading of library data) when given, so no data lands in an attribute.
  const name = labelledBy ? { 'aria-labelledby': labelledBy } : { 'aria-label': label };
  const region = h('div', { class: 'table-scroll', role: 'region', ...name, tabIndex: 0 }, table);
  return { region, table, tbody };
}

// MARK: Errors and status

/** A paragraph for errors, announced when filled (role="alert"); hidden while empty by app.css. */
export function errorBox() {
  return h('p', { class: 'error page-error', role: 'alert' });
}

/** A paragraph for quiet progress reports (role="status"). */
export function statusBox() {
  return h('p', { class: 'page-status', role: 'status' });
}

/** Shows `error` in `box` (the server's message, marked untranslatable while it is English);
 *  a cancelled request is no error. */
export function showError(box, error) {
  if (isAbort(error)) return;
  if (!error) {
    box.textContent = '';
    return;
  }
  showErrorIn(box, error);
}

/** A message of the page's own (already translated) in an error box. */
export function showMessage(box, text) {
  box.removeAttribute('translate');
  box.textContent = text;
}

// MARK: Fields

let hintCount = 0;

/** A labelled form control: the <label> wraps its text and the control (tied without IDs); a
 *  hint sits outside the label, so it describes the control (aria-describedby, `field-hint-N`)
 *  instead of lengthening its name. */
export function field(labelText, control, hint) {
  const label = h('label', { class: 'field' }, h('span', { class: 'field-label', text: labelText }), control);
  if (!hint) return label;
  hintCount += 1;
  const note = h('span', { class: 'field-hint', id: `field-hint-${hintCount}`, text: hint });
  control.setAttribute('aria-describedby', note.id);
  return h('div', { class: 'field' }, label, note);
}

/** Copies `text` to the clipboard; where the Clipboard API is missing (a page on plain http) or
 *  refused, selects `input` and asks the older copy command. Resolves to whether it worked. */
export async function copyText(text, input) {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, page not focused): the selection below still lets the reader copy.
  }
  if (input) {
    input.focus();
    input.select();
    try { return document.execCommand('copy'); } catch { return false; }
  }
  return false;
}

/** A read-only text field holding `value` (a link, a key) with a Copy button and a status line
 *  that says whether it was copied. */
export function copyField(labelText, value, { hideLabel = false } = {}) {
  const input = h('input', { type: 'text', readOnly: true, value, translate: 'no', class: 'copy-input', spellcheck: false });
  input.addEventListener('focus', () => input.select());
  const status = h('span', { class: 'copy-status', role: 'status' });
  const copy = button(t('pages.copy'), async () => {
    status.textContent = (await copyText(input.value, input)) ? t('pages.copied') : t('pages.copyFailed');
  });
  // In a table row the column header already says what it is: the label is then for screen readers only.
  const label = h('label', { class: 'field copy-field' }, h('span', { class: hideLabel ? 'visually-hidden' : 'field-label', text: labelText }), input);
  return { element: h('div', { class: 'copy-row' }, label, copy, status), input, copy };
}

// MARK: Dialogs

/** A modal <dialog> named by its <h2> (`${id}-title`); Escape closes it, as dialogs do. */
export function pageDialog(id, title) {
  const heading = h('h2', { id: `${id}-title`, text: title });
  const dialog = h('dialog', { id, class: 'page-dialog', 'aria-labelledby': heading.id });
  return { dialog, heading };
}

/** The pages' dialog (pageDialog's frame) around a <form method="dialog" class="dialog-form"> of
 *  the heading, `content` (fields, notes), an error box, `after`, and the actions: Cancel, which
 *  closes the dialog, and a primary submit button saying `submitText`. A submit clears the error
 *  box and awaits `onSubmit(parts)`, which closes the dialog when it is done; what it throws is
 *  shown in the error box and the dialog stays open. `headingOutside` puts the heading above the
 *  form (a form that gives way to a result the caller appends). Without `onSubmit` there is
 *  nothing to submit and no form: the heading, `content`, the error box, `after` and the actions
 *  (`actions`, then Close) go straight into the dialog. Returns the parts: { dialog, heading,
 *  form, error, submit } (form and submit null without a form). */
export function formDialog(id, title, { content = [], after = [], submitText = t('pages.save'), onSubmit, actions = [], headingOutside = false } = {}) {
  const { dialog, heading } = pageDialog(id, title);
  const error = errorBox();
  if (!onSubmit) {
    dialog.append(heading, ...content, error, ...after,
      h('div', { class: 'dialog-actions' }, actions, button(t('pages.close'), () => dialog.close())));
    return { dialog, heading, form: null, error, submit: null };
  }
  const submit = h('button', { type: 'submit', class: 'primary', text: submitText });
  const form = h('form', { method: 'dialog', class: 'dialog-form' },
    headingOutside ? null : heading,
    content,
    error,
    after,
    h('div', { class: 'dialog-actions' }, button(t('pages.cancel'), () => dialog.close()), submit),
  );
  const parts = { dialog, heading, form, error, submit };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showError(error, null);
    try {
      await onSubmit(parts);
    } catch (failure) {
      showError(error, failure);
    }
  });
  if (headingOutside) dialog.append(heading);
  dialog.append(form);
  return parts;
}

// MARK: Pages

/** Runs `render` (which redraws inside `root`) keeping the focus on the element with the same
 *  `data-focus` key (the same row's button), else on the first button of the same
 *  `data-focus-group` (the row), else on the page's heading, so a redraw never drops it on <body>. */
export function keepFocus(root, render) {
  const active = document.activeElement;
  const inside = active && active !== document.body && root.contains(active);
  const key = inside ? active.dataset.focus : null;
  const group = inside ? active.closest('[data-focus-group]')?.dataset.focusGroup : null;
  render();
  if (!inside) return;
  const escape = (text) => (window.CSS?.escape ? CSS.escape(text) : text.replace(/["\\]/g, '\\$&'));
  const target = (key && root.querySelector(`[data-focus="${escape(key)}"]`))
    || (group && root.querySelector(`[data-focus-group="${escape(group)}"] button, [data-focus-group="${escape(group)}"] a`))
    // Out of a modal dialog focus cannot go (the page behind is inert): its first button then.
    || (root.closest('dialog') ? root.closest('dialog').querySelector('button') : root.closest('section, main, body')?.querySelector('h1'));
  if (target && document.activeElement !== target) target.focus();
}

/** What every page beside the list starts as: its container (given the page-view class), the
 *  rest of the page it may call (`deps`), and a generation that a newer show() advances, so an
 *  answer for an older one is dropped. */
export class Page {
  constructor(container, deps) {
    Object.assign(this, { container, deps });
    container.classList.add('page-view');
    this.generation = 0;
  }
}

/** Fetches a page's list (`fetch` resolves to it) and renders it with `page.render`, keeping the
 *  focus; an answer for an older show() (another `generation`) is dropped, and a failure goes to
 *  the page's error box. */
export async function loadList(page, fetch) {
  const generation = page.generation;
  try {
    const items = await fetch();
    if (generation !== page.generation) return;
    if (page.status.textContent === t('pages.loading')) page.status.textContent = '';
    keepFocus(page.container, () => page.render(items));
  } catch (error) {
    if (generation !== page.generation) return;
    page.status.textContent = '';
    showError(page.error, error);
  }
}
