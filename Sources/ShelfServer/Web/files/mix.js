// Instant mixes and paths from Shelf's own listening (the sonic analysis): a queue of the tracks
// that sound most like a track, an album or an artist, which extends itself while it plays and
// leaves out what was played in the last hour; and a path that moves step by step from one track
// to another. Each suggestion carries the traits that made it close ("same key (A minor)").
import { api } from './api.js';
import { t, tn } from './i18n.js';

/** The words of one trait from `/api/…/similar`'s `traits` (`{kind, a, b}`). */
export function traitText(trait) {
  return t(`mix.why.${trait.kind}`, { a: trait.a ?? '', b: trait.b ?? '' });
}

/** The track of a match, carrying its "why" line for the queue. */
function suggestion(match) {
  return { ...match.track, why: (match.traits ?? []).map(traitText).join(' · ') };
}

/** Starts and keeps instant mixes going on `player`; `notify(text)` says what happened. */
export class Mixer {
  constructor(player, notify) {
    this.player = player;
    this.notify = notify;
    this.queue = null;  // the player's queue array while a mix owns it
    this.extending = false;
  }

  /** IDs played in the last hour (the listen log) and those in the queue: left out of a mix. */
  async #recent() {
    // Seconds since 1970: the API reads ISO 8601 without fractions, which toISOString() has.
    const since = Math.floor(Date.now() / 1000) - 3600;
    let played = [];
    try {
      played = (await api('api/me/listens', { params: { since, limit: 200 } })).items?.map((listen) => listen.trackID ?? listen.track).filter(Boolean) ?? [];
    } catch { /* no log to read: only the queue is left out */ }
    const queued = this.player.queue.map((track) => track.id);
    return [...new Set([...played, ...queued])].slice(-300);
  }

  /** Plays a mix seeded by `seed`: `{track}`, `{album}` or `{artist}` (IDs). */
  async start(seed) {
    const exclude = (await this.#recent()).join(',');
    const { matches } = await api('api/similar', { params: { ...seed, count: 25, exclude: exclude || undefined } });
    if (!matches?.length) return this.notify(t('mix.nothing'));
    const first = seed.track ? [await api(`api/tracks/${seed.track}`)] : [];
    this.player.playNow([...first, ...matches.map(suggestion)], 0);
    this.queue = this.player.queue;
    this.notify(tn('mix.started', matches.length));
  }

  /** Plays a path from track `from` to track `to`. */
  async path(from, to) {
    const { path } = await api('api/mix', { params: { from, to, count: 15 } });
    if (!path?.length) return this.notify(t('mix.nothing'));
    this.queue = null;
    this.player.playNow(path.map(suggestion), 0);
    this.notify(tn('mix.pathStarted', path.length));
  }

  /** Called as each track starts: near the end of a mix, more neighbours of its last tracks. */
  async onTrack() {
    const player = this.player;
    if (!this.queue || player.queue !== this.queue) {
      this.queue = null;
      return;
    }
    if (this.extending || player.current < player.queue.length - 3) return;
    this.extending = true;
    try {
      const seeds = player.queue.slice(-3).map((track) => track.id);
      const exclude = (await this.#recent()).join(',');
      const more = [];
      for (const id of seeds) {
        const { matches } = await api('api/similar', { params: { track: id, count: 5, exclude } });
        for (const match of matches ?? []) {
          if (!more.some((track) => track.id === match.track.id)) more.push(suggestion(match));
        }
      }
      if (more.length && player.queue === this.queue) player.add(more.slice(0, 10));
    } catch { /* the mix ends where it is; playing goes on */ }
    this.extending = false;
  }
}
