// The page's words in the reader's language: one table per language (i18n-en.js, i18n-ja.js, the
// same keys in each), chosen once when the page loads (a choice saved in localStorage, else the
// browser's languages), with numbers and dates formatted by Intl for the same language. Changing
// the language reloads the page, so nothing has to be redrawn in place.
import en from './i18n-en.js';

const STORAGE_KEY = 'shelf.lang';

/** The languages the page speaks. */
export const languages = ['en', 'ja'];

/** The language saved in localStorage, else the first of the browser's languages the page speaks, else English. */
function chooseLanguage() {
  let saved = null;
  try { saved = localStorage.getItem(STORAGE_KEY); } catch { /* storage blocked: the browser decides */ }
  if (saved && languages.includes(saved)) return saved;
  const wanted = typeof navigator === 'undefined' ? [] : (navigator.languages?.length ? navigator.languages : [navigator.language ?? '']);
  for (const tag of wanted) {
    const lower = String(tag).toLowerCase();
    if (lower.startsWith('ja')) return 'ja';
    if (lower.startsWith('en')) return 'en';
  }
  return 'en';
}

/** The page's language for this load: 'en' or 'ja'. */
export const language = chooseLanguage();

// Only the table in use is fetched: English always (every other language falls back to it), the
// other when it is the page's language.
const TABLES = { en };
if (language === 'ja') TABLES.ja = (await import('./i18n-ja.js')).default;
const table = TABLES[language];
const warned = new Set();

/** Saves `lang` ('en' or 'ja') as the reader's choice and reloads the page in it. */
export function setLanguage(lang) {
  if (!languages.includes(lang)) throw new RangeError(`unknown language ${lang}`);
  localStorage.setItem(STORAGE_KEY, lang);
  location.reload();
}

/** A whole table by language (for tests and tools); only the page's language and English are loaded. */
export function strings(lang = language) { return TABLES[lang] ?? null; }

/** Whether the current table has `key`. */
export function has(key) { return Object.hasOwn(table, key); }

/** The text for `key` with `{name}` placeholders filled from `params`; a key the table lacks
 *  falls back to English, then to the key itself, and is reported once on the console. */
export function t(key, params) {
  let text = table[key];
  if (text === undefined) {
    text = en[key] ?? key;
    if (!warned.has(key)) {
      warned.add(key);
      console.warn(`i18n: no ${language} text for '${key}'`);
    }
  }
  if (!params) return text;
  return text.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

const pluralRules = new Intl.PluralRules(language);

/** `key.one` or `key.other` as the language's plural rules pick for `count`, with `{count}`
 *  filled in formatted (other params as given). */
export function tn(key, count, params = {}) {
  const category = pluralRules.select(count);
  const chosen = has(`${key}.${category}`) ? `${key}.${category}` : `${key}.other`;
  return t(chosen, { ...params, count: formatNumber(count) });
}

// Intl's formats for the language ('en' is formatted as en-US, 'ja' as ja-JP), made once.
const numberFormat = new Intl.NumberFormat(language);
const dateFormat = new Intl.DateTimeFormat(language, { dateStyle: 'medium' });
const dateTimeFormat = new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short' });

/** A number with the language's grouping (1,234); anything not a finite number as it is. */
export function formatNumber(n) {
  const value = typeof n === 'string' && n.trim() !== '' ? Number(n) : n;
  return typeof value === 'number' && Number.isFinite(value) ? numberFormat.format(value) : String(n ?? '');
}

/** A Date from a Date, an ISO 8601 string (a bare YYYY-MM-DD is that day here, not UTC's) or
 *  seconds since 1970; null when there is none or it is not a date. */
function toDate(value) {
  if (value === null || value === undefined || value === '') return null;
  let date;
  if (value instanceof Date) date = value;
  else if (typeof value === 'number') date = new Date(value * 1000);
  else {
    const text = String(value);
    const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
    date = day ? new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3])) : new Date(text);
  }
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The date alone (Jan 5, 2024 / 2024/01/05); '' for no date. */
export function formatDate(value) {
  const date = toDate(value);
  return date ? dateFormat.format(date) : '';
}

/** The date and the time of day (Jan 5, 2024, 3:04 PM / 2024/01/05 15:04); '' for no date. */
export function formatDateTime(value) {
  const date = toDate(value);
  return date ? dateTimeFormat.format(date) : '';
}

const ATTRIBUTES = [
  ['data-i18n-aria-label', 'aria-label'],
  ['data-i18n-placeholder', 'placeholder'],
  ['data-i18n-title', 'title'],
  ['data-i18n-alt', 'alt'],
];

/** Fills the page's words under `root`: `data-i18n` sets the text, `data-i18n-aria-label`,
 *  `-placeholder`, `-title` and `-alt` those attributes; and says the page's language on <html>. */
export function applyTranslations(root = document) {
  const within = (selector) => {
    const found = [...root.querySelectorAll(selector)];
    if (root.matches?.(selector)) found.unshift(root);
    return found;
  };
  for (const element of within('[data-i18n]')) element.textContent = t(element.dataset.i18n);
  for (const [data, attribute] of ATTRIBUTES) {
    for (const element of within(`[${data}]`)) element.setAttribute(attribute, t(element.getAttribute(data)));
  }
  document.documentElement.lang = language;
}

/** What to tell the reader about a failed request: the table's words for a network failure, and
 *  for a server error whose code the table knows (`errors.CODE`, or the key `keys[CODE]` names)
 *  when the page is not in English: the server's messages are English, and more specific, so
 *  English readers get them as they are. Otherwise the server's message. `translated` is false
 *  when the text is the server's own words in a page that is not in English. */
export function describeError(error, keys = {}) {
  if (!error) return { text: '', translated: true };
  if (error.name === 'TypeError' && !('status' in error)) return { text: t('errors.network'), translated: true };
  const key = error.code ? (keys[error.code] ?? `errors.${error.code}`) : null;
  if (key && language !== 'en' && has(key)) return { text: t(key), translated: true };
  return { text: error.message ? String(error.message) : String(error), translated: language === 'en' };
}

/** The text of `describeError(error, keys)`, for alert() and the like. */
export function errorText(error, keys) { return describeError(error, keys).text; }

/** Shows `error` in `element` (see describeError), marked translate="no" while it holds the
 *  server's untranslated words. */
export function showErrorIn(element, error, keys) {
  const { text, translated } = describeError(error, keys);
  element.textContent = text;
  if (translated) element.removeAttribute('translate');
  else element.setAttribute('translate', 'no');
}
