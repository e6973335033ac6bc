// The one place that talks to /api/: JSON in and out, the anti-forgery header on writes,
// cancellation through AbortSignal, and errors as ApiError with the server's code and message;
// and the small readings the pages share: Subsonic lists, song IDs and passwords, the admin flag.

/** A failed answer: the HTTP status and the server's `{"error":{code,message}}`. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const listeners = new Set();

/** Calls `handler()` whenever an answer says the session is gone (401). */
export function onSignedOut(handler) { listeners.add(handler); }

/** Builds `path?name=value…`, leaving out empty values. */
export function url(path, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** Group IDs are 64-bit hashes, beyond a double's 53 bits: such numbers are kept as their exact
 *  digits (a string, used as it is in URLs), through JSON.parse's access to the source text. */
function keepBigIntegers(key, value, context) {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && Number.isInteger(value) && context && context.source) return context.source;
  return value;
}

let libraryID = null;

/** Narrows every later call to one of the user's libraries (the switcher's choice; null: all of
 *  them), through the `X-Shelf-Library` header both APIs read. */
export function setLibrary(id) { libraryID = id === null || id === undefined || id === '' ? null : String(id); }

/** The library the page is narrowed to, or null. */
export function currentLibrary() { return libraryID; }

/** One request; resolves to the parsed JSON, rejects with ApiError or the AbortError. */
export async function api(path, { method = 'GET', body, signal, params } = {}) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['X-Shelf-Request'] = '1';
  // The list of libraries is asked unnarrowed (the saved choice may be one the user lost).
  if (libraryID && path !== 'api/libraries') headers['X-Shelf-Library'] = libraryID;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url(path, params), {
    method, headers, signal, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  // The reviver costs on every value, so only the views whose IDs are hashes get it.
  const reviver = /^api\/(albums|artists|composers|genres|folders)/.test(path) ? keepBigIntegers : undefined;
  try { json = text ? JSON.parse(text, reviver) : null; } catch { json = null; }
  if (!response.ok) {
    const error = json && json.error ? json.error : { code: 'http', message: `${response.status} ${response.statusText}` };
    if (response.status === 401 && path !== 'api/session') listeners.forEach((handler) => handler());
    throw new ApiError(response.status, error.code, error.message);
  }
  return json;
}

/** Whether `error` is a cancelled request (a newer one replaced it). */
export function isAbort(error) { return error && error.name === 'AbortError'; }

/** `api/artwork/ID?size=S` with S the CSS size × devicePixelRatio rounded up to a server step. */
export const SIZE_STEPS = [16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1536, 2048];
export function artworkURL(artworkID, cssSize) {
  const wanted = Math.ceil(cssSize * (window.devicePixelRatio || 1));
  const size = SIZE_STEPS.find((step) => step >= wanted) || 2048;
  return `api/artwork/${artworkID}?size=${size}`;
}

/** `m:ss` (or `h:mm:ss`) of a number of seconds. */
export function clock(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return '0:00';
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

/** One call of the OpenSubsonic API under /rest/, signed in by the page's own session (the
 *  anti-forgery header stands in for u/p or apiKey): resolves to the `subsonic-response` object,
 *  rejects with ApiError carrying the Subsonic error code. `params` values that are arrays repeat
 *  the name (`id=1&id=2`); the call goes as a form POST so long lists fit. */
export async function subsonic(name, params = {}, { signal } = {}) {
  const form = new URLSearchParams({ f: 'json', c: 'Shelf web' });
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) value.forEach((item) => form.append(key, String(item)));
    else if (value !== undefined && value !== null && value !== '') form.set(key, String(value));
  }
  const response = await fetch(`rest/${name}`, {
    method: 'POST', signal, credentials: 'same-origin',
    headers: {
      Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', 'X-Shelf-Request': '1',
      ...(libraryID ? { 'X-Shelf-Library': libraryID } : {}),
    },
    body: form.toString(),
  });
  let json = null;
  try { json = await response.json(); } catch { json = null; }
  const answer = json && json['subsonic-response'];
  if (!answer) throw new ApiError(response.status, 'http', `${response.status} ${response.statusText}`);
  if (answer.status !== 'ok') {
    const error = answer.error || {};
    if (error.code === 10 || error.code === 40) listeners.forEach((handler) => handler());
    throw new ApiError(response.status, error.code ?? 0, error.message ?? 'failed');
  }
  return answer;
}

/** A Subsonic list, which the JSON may give as an array, a lone object, or not at all when empty. */
export function list(value) {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** The number N of a Subsonic song ID `tr-N`; null for anything else (a podcast episode's `pe-N`). */
export function trackNumber(id) {
  const match = /^tr-(\d+)$/.exec(String(id ?? ''));
  return match ? Number(match[1]) : null;
}

/** A password as the Subsonic API's `enc:` hex of its UTF-8 bytes, so one that itself starts
 *  with "enc:" (or holds any character) arrives exactly as typed. */
export function encodePassword(password) {
  return `enc:${[...new TextEncoder().encode(password)].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/** Whether a user may stream but not download (/api/me's `roles`): the server sends them transcodes only. */
export function isStreamOnly(user) {
  return Boolean(user) && !isAdmin(user) && Array.isArray(user.roles) && !user.roles.includes('download');
}

/** Whether the signed-in user is an admin (/api/me says `admin`; the brief's `isAdmin` also counts). */
export function isAdmin(user) {
  return Boolean(user && (user.admin ?? user.isAdmin));
}
