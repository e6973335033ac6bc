// The page's service worker: keeps the shell (the page's own files) so it opens offline. The
// server writes the file list and a version made from the files' contents into this file as it
// serves it, so any change to the files is a new worker, which caches the new set and drops the
// old. Answers of the API, pictures and audio are never cached: they are the library's, not the
// shell's, and a stale list would be worse than an error.
const VERSION = '__SHELF_VERSION__';
const FILES = __SHELF_FILES__;
// The server's base path (`base-path`, empty at the root), written in as the file is served.
const BASE = '__SHELF_BASE__';
const CACHE = `shelf-shell-${VERSION}`;

self.addEventListener('install', (event) => {
  // Where the browser can route requests without starting the worker (Chrome's static routing),
  // everything but the shell goes straight to the network: the API, audio, pictures and shares.
  try {
    event.addRoutes?.([
      { condition: { urlPattern: `${BASE}/api/*` }, source: 'network' },
      { condition: { urlPattern: `${BASE}/rest/*` }, source: 'network' },
      { condition: { urlPattern: `${BASE}/share/*` }, source: 'network' },
    ]);
  } catch { /* routes this browser does not take: the fetch handler below lets them pass */ }
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((name) => name.startsWith('shelf-shell-') && name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

/** Whether a request is for one of the shell's files (the page and /app/…, under the base path). */
function isShell(request) {
  if (request.method !== 'GET') return false;
  const url = new URL(request.url);
  return url.origin === self.location.origin && (url.pathname === `${BASE}/` || url.pathname.startsWith(`${BASE}/app/`));
}

// Network first, so a reachable server always gives the current files (a 304 when unchanged);
// the cache answers only when the network cannot.
self.addEventListener('fetch', (event) => {
  if (!isShell(event.request)) return;
  event.respondWith(
    fetch(event.request).catch(() => caches.open(CACHE).then((cache) => cache.match(event.request, { ignoreSearch: true })).then((hit) => hit || Response.error())),
  );
});
