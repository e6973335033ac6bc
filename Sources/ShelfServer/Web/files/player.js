// The player: the bar and its queue over the gapless AudioEngine (ReplayGain, crossfade), the
// Media Session (metadata, artwork, actions, position), the queue saved to the server so that
// another device (or this one, reloaded) can resume it, playback reports from which the server
// counts plays, and the lyrics pane's button.
import { api, subsonic, artworkURL, clock } from './api.js';
import { t, tn, formatDateTime } from './i18n.js';
import { AudioEngine } from './audio-engine.js';
import { LyricsPane } from './lyrics.js';

const BIT_RATES = { opus: 128, mp3: 192, aac: 160 };
// The queue is saved this long after its last change, so a burst of edits is one request.
const SAVE_DELAY = 2000;
// While playing: the position saved this often, and a playback report every second beat (30 s).
const HEARTBEAT = 15000;
// How long a failure stays in the bar.
const STATUS_SHOWN = 8000;
// Volume steps of the keyboard.
const VOLUME_STEP = 0.05;
// Requests at once when a restored queue's tracks are fetched.
const RESTORE_CONCURRENCY = 6;
// fetch's keepalive carries at most 64 KiB.
const KEEPALIVE_LIMIT = 60000;

/** This browser's ID, kept in localStorage, which names it as the client that saved a queue. */
function deviceID() {
  try {
    let id = localStorage.getItem('shelf.device');
    if (!id) {
      id = (crypto.randomUUID?.() ?? String(Math.random()).slice(2)).replace(/-/g, '').slice(0, 8);
      localStorage.setItem('shelf.device', id);
    }
    return id;
  } catch {
    return 'anonymous';
  }
}

/** The Subsonic client name of this device (the `c` of every call the player makes). */
export const CLIENT = `Shelf web ${deviceID()}`;

const songID = (id) => `tr-${id}`;
/** The native track ID of a Subsonic song ID (`tr-12` → 12), or null. */
function trackIDOf(song) {
  const match = /^tr-(\d+)$/.exec(String(song ?? ''));
  return match ? Number(match[1]) : null;
}

/** A native-shaped track from a Subsonic song, for when /api/tracks/ID cannot be read. */
function trackOfSong(song) {
  return {
    id: trackIDOf(song.id), title: song.title ?? null, artist: song.artist ?? null, album: song.album ?? null,
    albumArtist: song.displayAlbumArtist ?? null, trackNumber: song.track ?? null, discNumber: song.discNumber ?? null,
    duration: song.duration ?? null, year: song.year ?? null, genre: song.genre ?? null, artworkID: null,
    replayGain: song.replayGain ?? null,
  };
}

const titleOf = (track) => track?.title ?? t('common.untitled');
const SVG = 'http://www.w3.org/2000/svg';

/** The player bar, its queue, and everything that plays. */
export class Player {
  constructor(elements, { onTrack } = {}) {
    this.el = elements;
    this.onTrack = onTrack ?? (() => {});
    this.queue = [];
    this.current = -1;
    this.seeking = false;
    this.client = CLIENT;
    this.touched = false; // whether this page changed the queue (only then is it saved)
    this.saveTimer = null;
    this.heartbeat = null;
    this.beats = 0;
    this.thresholdTimer = null;
    this.reports = Promise.resolve();
    this.reportedID = null; // the track told `starting` and not yet `stopped`
    this.statusTimer = null;
    this.failure = '';
    this.loading = false;
    this.shown = { time: '', length: '', max: '', value: '' };
    // A user who may stream but not download is sent a transcode (Opus when no format is named):
    // the player names it, so the engine treats it as one and seeks by `timeOffset`.
    this.streamOnly = false;

    const { audio } = elements;
    elements.transcode.value = localStorage.getItem('shelf.transcode') ?? '';
    elements.volume.value = localStorage.getItem('shelf.volume') ?? '1';
    this.engine = new AudioEngine({
      fallback: audio,
      trackAt: (index) => this.queue[index] ?? null,
      urlFor: (track, offset) => this.streamURL(track, offset),
      // Opus always decodes at 48 kHz; the other transcodes keep the file's rate.
      rateOf: (track) => (this.format === 'opus' ? 48000 : track.sampleRate),
      onTrackStart: (index, info) => this.#started(index, info),
      onEnded: ({ previous }) => this.#ended(previous),
      onTime: () => this.showTime(),
      onState: () => this.showState(),
      onLoading: (loading) => this.#loading(loading),
      onError: (index, error) => this.#failed(index, error),
    });
    this.engine.setVolume(Number(elements.volume.value));

    elements.play.addEventListener('click', () => this.toggle());
    elements.next.addEventListener('click', () => this.next());
    elements.prev.addEventListener('click', () => this.previous());
    elements.volume.addEventListener('input', () => this.setVolume(Number(elements.volume.value)));
    elements.transcode.addEventListener('change', () => {
      localStorage.setItem('shelf.transcode', elements.transcode.value);
      // The current track goes on as fetched; the next one is fetched in the new format.
      if (this.current >= 0) this.engine.queueChanged(this.current);
    });
    elements.seek.addEventListener('input', () => { this.seeking = true; elements.time.textContent = clock(Number(elements.seek.value)); });
    elements.seek.addEventListener('change', () => { this.seeking = false; this.seekTo(Number(elements.seek.value)); });
    elements.queueClear.addEventListener('click', () => this.clear());
    elements.queueToggle.addEventListener('click', () => this.toggleQueue());

    this.#buildBar();
    this.lyrics = new LyricsPane(this, { container: elements.app ?? document.getElementById('app'), toggle: this.lyricsButton });
    this.#mediaSession();
    // The last word before the page goes: where the queue stands. sendBeacon cannot carry the
    // anti-forgery header, so it is a fetch with keepalive.
    window.addEventListener('pagehide', () => this.#flush({ leaving: true }));
    document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') this.#flush({ leaving: false }); });
    window.shelf = Object.assign(window.shelf || {}, { player: this });
    this.showTrack();
    this.renderQueue();
  }

  /** The current track, or null. */
  get track() { return this.queue[this.current] ?? null; }

  /** Whether audio is playing (or about to, once loaded). */
  get playing() { return this.engine.playing; }

  // MARK: The queue

  /** Replaces the queue with `tracks` and plays the one at `start`. */
  playNow(tracks, start = 0) {
    if (!tracks?.length) return;
    this.queue = tracks.slice();
    this.touched = true;
    this.play(start);
    this.#scheduleSave();
  }

  /** Puts `tracks` right after the current one. */
  playNext(tracks) {
    if (!tracks?.length) return;
    this.queue.splice(this.current + 1, 0, ...tracks);
    if (this.current < 0) this.play(0);
    else this.#queueEdited();
  }

  /** Appends `tracks` to the queue. */
  add(tracks) {
    if (!tracks?.length) return;
    const wasEmpty = this.queue.length === 0;
    this.queue.push(...tracks);
    if (wasEmpty) this.play(0);
    else this.#queueEdited();
  }

  /** Empties the queue and stops (saved, so the server's queue is emptied too). */
  clear() {
    this.#reportStopped();
    this.engine.stop();
    this.queue = [];
    this.current = -1;
    this.showTrack();
    this.lyrics.setTrack(null);
    this.touched = true;
    this.#queueEdited();
  }

  /** Moves queue entry `from` to position `to`. */
  move(from, to) {
    if (to < 0 || to >= this.queue.length || from === to) return;
    const [entry] = this.queue.splice(from, 1);
    this.queue.splice(to, 0, entry);
    if (this.current === from) this.current = to;
    else if (from < this.current && to >= this.current) this.current -= 1;
    else if (from > this.current && to <= this.current) this.current += 1;
    this.#queueEdited();
  }

  /** Removes queue entry `index` (the current one: the next plays). */
  remove(index) {
    if (index < 0 || index >= this.queue.length) return;
    this.queue.splice(index, 1);
    if (index < this.current) this.current -= 1;
    else if (index === this.current) {
      if (this.queue.length) {
        this.touched = true;
        this.play(Math.min(index, this.queue.length - 1));
        this.#scheduleSave();
        this.renderQueue();
      } else {
        this.clear();
      }
      return;
    }
    this.#queueEdited();
  }

  /** The format asked for: the bar's choice, else Opus for a stream-only user ('' for the file). */
  get format() {
    return this.el.transcode.value || (this.streamOnly ? 'opus' : '');
  }

  /** The URL the engine fetches for `track`: the file, or a transcode in the bar's format
   *  (`offset` only for the element, whose transcode is a pipe seeking cannot jump in). */
  streamURL(track, offset = 0) {
    // A podcast episode (`episode`: its number) streams from its own route; a track by its ID.
    const base = track.episode ? `api/podcasts/episodes/${track.episode}/stream` : `api/stream/${track.id}`;
    const format = this.format;
    if (!format) return base;
    const params = new URLSearchParams({ format, bitRate: String(BIT_RATES[format] ?? 128) });
    if (offset > 0) params.set('timeOffset', offset.toFixed(1));
    return `${base}?${params}`;
  }

  // MARK: Transport

  /** Plays queue entry `index` from its start. */
  play(index) {
    if (index < 0 || index >= this.queue.length) return;
    this.engine.load(index, { offset: 0, autoplay: true });
  }

  /** Plays if paused, pauses if playing; with nothing current, plays the queue from its start. */
  toggle() {
    if (!this.track) {
      if (this.queue.length) this.play(0);
      return;
    }
    if (this.engine.playing) this.pause();
    else this.resume();
  }

  /** Resumes (or starts the current track, when a restored queue has not loaded it yet). */
  resume() {
    if (!this.track || this.engine.playing) return;
    const loaded = Boolean(this.engine.voice);
    this.engine.play();
    this.touched = true;
    if (loaded) this.#report(this.track, 'playing');
  }

  /** Pauses. */
  pause() {
    if (!this.engine.playing) return;
    this.engine.pause();
    this.#report(this.track, 'paused');
    this.#scheduleSave();
  }

  /** The next track of the queue (nothing at its end). */
  next() {
    if (this.current + 1 < this.queue.length) this.play(this.current + 1);
    else this.showState();
  }

  /** The previous track, or the start of this one once it has played three seconds. */
  previous() {
    if (this.position() > 3 || this.current <= 0) this.seekTo(0);
    else this.play(this.current - 1);
  }

  /** Seconds into the current track. */
  position() { return this.engine.position(); }

  /** The current track's length in seconds. */
  duration() { return this.engine.duration() || this.track?.duration || 0; }

  /** Jumps to `seconds` into the current track. */
  seekTo(seconds) {
    if (!this.track) return;
    this.engine.seek(Math.max(0, Math.min(seconds, this.duration())));
    this.#armThreshold();
    this.#positionState();
    this.lyrics.sync();
    if (this.touched) this.#scheduleSave();
  }

  /** Sets the volume (0…1), unmuting; kept in localStorage. */
  setVolume(volume) {
    const value = Math.max(0, Math.min(1, volume));
    this.el.volume.value = String(value);
    this.engine.setVolume(value);
    if (this.engine.muted) this.setMuted(false);
    localStorage.setItem('shelf.volume', String(value));
  }

  /** Changes the volume by `delta` (the keyboard's + and −). */
  changeVolume(delta) { this.setVolume(Number(this.el.volume.value) + delta); }

  /** Volume steps for the keyboard. */
  get volumeStep() { return VOLUME_STEP; }

  /** Mutes or unmutes (the volume is kept). */
  setMuted(muted) {
    this.engine.setMuted(muted);
    this.el.bar.dataset.muted = String(Boolean(muted));
    if (muted) this.el.volume.setAttribute('aria-valuetext', t('player.muted'));
    else this.el.volume.removeAttribute('aria-valuetext');
  }

  /** Mutes if audible, unmutes if muted. */
  toggleMute() { this.setMuted(!this.engine.muted); }

  /** Shows or hides the queue panel. */
  toggleQueue(open = this.el.queuePanel.hidden) {
    this.el.queuePanel.hidden = !open;
    this.el.queueToggle.setAttribute('aria-expanded', String(open));
  }

  /** Shows or hides the lyrics pane. */
  toggleLyrics() { this.lyrics.toggle(); }

  /** The ReplayGain and crossfade settings: {replayGain: 'auto'|'album'|'track'|'off', preamp,
   *  defaultGain (dB), crossfade (seconds, 0 off)}. */
  settings() { return { ...this.engine.settings }; }

  /** Changes some of those settings (kept in localStorage); returns them all, made valid. */
  setSettings(settings) { return { ...this.engine.setSettings(settings) }; }

  // MARK: What the engine tells

  #started(index, { automatic, previous, cued }) {
    if (previous && this.reportedID === previous.track.id) {
      this.#report(previous.track, 'stopped', previous.position);
      this.reportedID = null;
    }
    this.current = index;
    const track = this.track;
    // A failure stays in view while the engine skips past it on its own.
    if (!automatic) this.#setStatus('');
    this.showTrack();
    this.renderQueue();
    if (!track) return;
    this.onTrack(track);
    this.lyrics.setTrack(track);
    if (cued) return;
    this.touched = true;
    // An episode is no song: no play is counted and the saved queue holds songs only.
    if (track.episode) return;
    this.reportedID = track.id;
    this.#report(track, 'starting', automatic ? 0 : this.engine.pendingOffset);
    this.#armThreshold();
    this.#scheduleSave();
  }

  #ended(previous) {
    if (previous && this.reportedID === previous.track.id) this.#report(previous.track, 'stopped', previous.position);
    this.reportedID = null;
    this.showState();
    this.#scheduleSave();
  }

  #loading(loading) {
    this.loading = loading;
    this.el.bar.dataset.loading = String(loading);
    this.#renderStatus();
    if (!loading) this.#positionState();
  }

  #failed(index, error) {
    const track = this.queue[index];
    console.warn(`player: track ${track?.id} failed (${error?.stage ?? 'error'}): ${error?.message ?? error}`);
    this.#setStatus(t('player.failed', { title: titleOf(track) }));
  }

  // MARK: Showing

  /** The time, the slider and the length (written only when they change). */
  showTime() {
    const position = this.position();
    const duration = this.duration();
    const shown = this.shown;
    if (!this.seeking) {
      const max = String(duration);
      const value = String(Math.round(position * 10) / 10);
      const time = clock(position);
      if (shown.max !== max) this.el.seek.max = shown.max = max;
      if (shown.value !== value) this.el.seek.value = shown.value = value;
      if (shown.time !== time) this.el.time.textContent = shown.time = time;
    }
    const length = clock(duration);
    if (shown.length !== length) this.el.length.textContent = shown.length = length;
  }

  /** The play button, the bar's state, and what follows the state (heartbeat, lyrics). */
  showState() {
    const playing = this.engine.playing;
    this.el.play.setAttribute('aria-label', playing ? t('player.pause') : t('player.play'));
    this.el.play.removeAttribute('data-i18n-aria-label');
    this.el.bar.dataset.state = playing ? 'playing' : 'paused';
    if ('mediaSession' in navigator) navigator.mediaSession.playbackState = this.track ? (playing ? 'playing' : 'paused') : 'none';
    if (playing) this.#startHeartbeat();
    else this.#stopHeartbeat();
    this.#armThreshold();
    this.#positionState();
    this.lyrics?.sync();
    this.showTime();
  }

  /** The bar's title, artist and cover, and the Media Session's metadata. */
  showTrack() {
    const track = this.track;
    const title = this.el.title;
    if (track) {
      // The page's translation pass must not write "Nothing playing" over a title.
      delete title.dataset.i18n;
      title.textContent = titleOf(track);
    } else {
      title.dataset.i18n = 'player.nothingPlaying';
      title.textContent = t('player.nothingPlaying');
    }
    this.el.artist.textContent = track ? (track.artist ?? '') : '';
    this.el.bar.dataset.track = track ? String(track.id) : '';
    if (track?.artworkID) this.el.cover.src = artworkURL(track.artworkID, 48);
    else this.el.cover.removeAttribute('src');
    if ('mediaSession' in navigator && window.MediaMetadata) {
      navigator.mediaSession.metadata = track ? new MediaMetadata({
        title: track.title ?? '', artist: track.artist ?? '', album: track.album ?? '',
        artwork: track.artworkID ? [96, 256, 512].map((size) => ({ src: `api/artwork/${track.artworkID}?size=${size}`, sizes: `${size}x${size}`, type: 'image/jpeg' })) : [],
      }) : null;
    }
    this.showState();
  }

  /** The queue panel's list, from the queue. */
  renderQueue() {
    const list = this.el.queueList;
    list.textContent = '';
    this.el.queueCount.textContent = String(this.queue.length);
    this.queue.forEach((track, index) => {
      const item = document.createElement('li');
      item.dataset.id = String(track.id);
      if (index === this.current) {
        item.className = 'current';
        item.setAttribute('aria-current', 'true');
      }
      const title = titleOf(track);
      const label = document.createElement('button');
      label.type = 'button';
      label.className = 'label';
      label.translate = false;
      label.textContent = track.artist ? `${title} — ${track.artist}` : title;
      // A mix's suggestion says why it is there ("same key (A minor) · tempo 126 vs 128 BPM").
      if (track.why) label.append(Object.assign(document.createElement('small'), { className: 'why', textContent: track.why }));
      label.addEventListener('click', () => this.play(index));
      label.addEventListener('keydown', (event) => {
        // Reorder by keyboard: Alt+↑/↓ moves the entry, focus follows it.
        if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
          event.preventDefault();
          const to = index + (event.key === 'ArrowUp' ? -1 : 1);
          this.move(index, to);
          list.children[Math.max(0, Math.min(to, this.queue.length - 1))]?.querySelector('.label')?.focus();
        }
      });
      const controls = [
        ['↑', 'queue.moveUp', () => this.move(index, index - 1)],
        ['↓', 'queue.moveDown', () => this.move(index, index + 1)],
        ['✕', 'queue.remove', () => this.remove(index)],
      ].map(([text, key, action]) => {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = text;
        button.setAttribute('aria-label', t(key, { title }));
        button.addEventListener('click', action);
        return button;
      });
      item.append(label, ...controls);
      list.append(item);
    });
  }

  /** The bar's additions: a status line under the artist, and the lyrics button. */
  #buildBar() {
    const status = document.createElement('div');
    status.id = 'player-status';
    status.className = 'now-status';
    status.setAttribute('role', 'status');
    this.el.artist.after(status);
    this.statusElement = status;

    const button = document.createElement('button');
    button.type = 'button';
    button.id = 'lyrics-toggle';
    button.className = 'icon-button lyrics-toggle';
    button.setAttribute('aria-label', t('player.lyrics'));
    button.setAttribute('aria-expanded', 'false');
    button.setAttribute('aria-controls', 'lyrics');
    button.title = t('player.lyrics');
    const icon = document.createElementNS(SVG, 'svg');
    icon.setAttribute('viewBox', '0 0 24 24');
    icon.setAttribute('width', '18');
    icon.setAttribute('height', '18');
    icon.setAttribute('aria-hidden', 'true');
    icon.setAttribute('focusable', 'false');
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('fill', 'currentColor');
    // Lines of text beside a note.
    path.setAttribute('d', 'M3 5h11v2H3zm0 4h11v2H3zm0 4h7v2H3zm14-9h4v2h-2v9.5A2.5 2.5 0 1 1 17 13.05z');
    icon.append(path);
    button.append(icon);
    this.el.queueToggle.before(button);
    this.lyricsButton = button;
  }

  /** A message in the status line (a failure), cleared after a while. */
  /** Says `text` on the status line under the artist (a mix started, nothing to mix): news,
   *  not a failure, so in the line's quiet colour. */
  announce(text) {
    this.#setStatus(text);
    this.notice = Boolean(text);
    this.#renderStatus();
  }

  #setStatus(text) {
    this.notice = false;
    clearTimeout(this.statusTimer);
    this.failure = text;
    if (text) this.statusTimer = setTimeout(() => { this.failure = ''; this.#renderStatus(); }, STATUS_SHOWN);
    this.#renderStatus();
  }

  #renderStatus() {
    const text = this.failure || (this.loading ? t('player.loading') : '');
    if (this.statusElement.textContent !== text) this.statusElement.textContent = text;
    this.statusElement.classList.toggle('error', Boolean(this.failure) && !this.notice);
  }

  // MARK: Media Session

  #mediaSession() {
    if (!('mediaSession' in navigator)) return;
    const session = navigator.mediaSession;
    const handlers = {
      play: () => this.resume(), pause: () => this.pause(), stop: () => this.pause(),
      nexttrack: () => this.next(), previoustrack: () => this.previous(),
      seekto: (details) => this.seekTo(details.seekTime),
      seekbackward: (details) => this.seekTo(this.position() - (details.seekOffset || 10)),
      seekforward: (details) => this.seekTo(this.position() + (details.seekOffset || 10)),
    };
    for (const [action, handler] of Object.entries(handlers)) {
      try { session.setActionHandler(action, handler); } catch { /* an action this browser lacks */ }
    }
  }

  // The browser runs the position on from here by itself, so it is set only when it jumps.
  #positionState() {
    const session = navigator.mediaSession;
    if (!session?.setPositionState) return;
    const duration = this.duration();
    try {
      if (this.track && duration > 0) session.setPositionState({ duration, position: Math.min(Math.max(0, this.position()), duration), playbackRate: 1 });
      else session.setPositionState();
    } catch { /* a state the browser refuses: none shown */ }
  }

  // MARK: Playback reports: the server counts the play by its own rule (half the track or four minutes).

  #report(track, state, position = this.position()) {
    if (!track) return;
    const params = { mediaId: songID(track.id), mediaType: 'song', positionMs: Math.max(0, Math.round(position * 1000)), state, c: this.client };
    // One at a time, in order: a late `stopped` must not land after the next track's `starting`.
    this.reports = this.reports.then(() => subsonic('reportPlayback', params)).catch(() => {});
  }

  #reportStopped() {
    const track = this.track;
    if (track && this.reportedID === track.id) this.#report(track, 'stopped');
    this.reportedID = null;
  }

  // One report when the position reaches the point where the server counts the play, so a
  // short track is counted while it plays, not only at its end.
  #armThreshold() {
    clearTimeout(this.thresholdTimer);
    this.thresholdTimer = null;
    const track = this.track;
    if (!track || !this.engine.playing || this.reportedID !== track.id) return;
    const duration = this.duration();
    const threshold = duration > 0 ? Math.min(240, duration / 2) : 240;
    const remaining = threshold - this.position();
    if (remaining <= 0) return;
    this.thresholdTimer = setTimeout(() => {
      this.thresholdTimer = null;
      if (this.track === track && this.engine.playing) this.#report(track, 'playing');
    }, remaining * 1000 + 250);
  }

  #startHeartbeat() {
    if (this.heartbeat) return;
    this.beats = 0;
    this.heartbeat = setInterval(() => {
      this.beats += 1;
      this.#save();
      if (this.beats % 2 === 0 && this.reportedID === this.track?.id) this.#report(this.track, 'playing');
    }, HEARTBEAT);
  }

  #stopHeartbeat() {
    clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  // MARK: The queue on the server

  #queueEdited() {
    this.touched = true;
    if (this.current >= 0) this.engine.queueChanged(this.current);
    this.renderQueue();
    this.#scheduleSave();
  }

  #scheduleSave() {
    if (!this.touched) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      this.#save();
    }, SAVE_DELAY);
  }

  /** savePlayQueue's parameters: no `id` empties the server's queue. */
  #saveParams() {
    const track = this.track;
    const songs = this.queue.filter((entry) => !entry.episode);
    if (!songs.length || !track) return { c: this.client };
    const current = track.episode ? songs[0] : track;
    const position = track.episode ? 0 : Math.max(0, Math.round(this.position() * 1000));
    return { id: songs.map((entry) => songID(entry.id)), current: songID(current.id), position, c: this.client };
  }

  /** Saves the queue now rather than after the debounce (a test, or a page about to change). */
  saveQueue() { return this.#save(); }

  async #save() {
    if (!this.touched) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = null;
    try {
      await subsonic('savePlayQueue', this.#saveParams());
    } catch {
      // Offline or a song deleted meanwhile: the next change or beat saves again.
    }
  }

  /** The page is hidden or going: the queue (and, when going, the listen's end) sent with keepalive. */
  #flush({ leaving }) {
    if (this.touched) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
      this.#beacon('savePlayQueue', this.#saveParams());
    }
    if (leaving && this.track && this.reportedID === this.track.id) {
      this.#beacon('reportPlayback', { mediaId: songID(this.track.id), mediaType: 'song', positionMs: Math.round(this.position() * 1000), state: 'stopped', c: this.client });
    }
  }

  /** A Subsonic call as api.js's subsonic() makes it, but with keepalive so it outlives the page. */
  #beacon(name, params) {
    const form = new URLSearchParams({ f: 'json' });
    for (const [key, value] of Object.entries(params)) {
      if (Array.isArray(value)) value.forEach((item) => form.append(key, String(item)));
      else if (value !== undefined && value !== null && value !== '') form.set(key, String(value));
    }
    const body = form.toString();
    fetch(`rest/${name}`, {
      method: 'POST', credentials: 'same-origin', keepalive: body.length < KEEPALIVE_LIMIT,
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', 'X-Shelf-Request': '1' },
      body,
    }).catch(() => {});
  }

  /** After sign-in: the queue saved on the server. This device's own comes back silently
   *  (paused where it was); another device's is offered in a banner. */
  async offerResume() {
    let answer;
    try {
      answer = await subsonic('getPlayQueue', { c: this.client });
    } catch {
      return;
    }
    const saved = answer?.playQueue;
    const songs = (saved?.entry ?? []).filter((song) => trackIDOf(song.id) !== null);
    // Something already playing here wins over any saved queue.
    if (!songs.length || this.queue.length) return;
    if (saved.changedBy === this.client) await this.#restore(saved, songs, { accepted: false });
    else this.#showBanner(saved, songs);
  }

  #showBanner(saved, songs) {
    document.getElementById('resume-banner')?.remove();
    const banner = document.createElement('div');
    banner.id = 'resume-banner';
    banner.className = 'resume-banner';
    banner.setAttribute('role', 'region');
    banner.setAttribute('aria-label', t('player.resumeLabel'));
    const text = document.createElement('p');
    text.className = 'resume-text';
    // The device's name is the other client's, not words to translate: a span of its own.
    const marker = '\u0000';
    const sentence = tn('player.resumeOffer', songs.length, { device: marker, date: formatDateTime(saved.changed) });
    const [before, after = ''] = sentence.split(marker);
    const device = document.createElement('span');
    device.translate = false;
    device.className = 'resume-device';
    device.textContent = saved.changedBy || t('player.resumeUnknownDevice');
    text.append(before, device, after);
    const accept = document.createElement('button');
    accept.type = 'button';
    accept.id = 'resume-accept';
    accept.className = 'primary';
    accept.textContent = t('player.resumeAccept');
    const dismiss = document.createElement('button');
    dismiss.type = 'button';
    dismiss.id = 'resume-dismiss';
    dismiss.textContent = t('player.resumeDismiss');
    accept.addEventListener('click', async () => {
      accept.disabled = true;
      dismiss.disabled = true;
      text.textContent = t('player.resumeLoading');
      await this.#restore(saved, songs, { accepted: true });
      banner.remove();
    });
    dismiss.addEventListener('click', () => banner.remove());
    banner.append(text, accept, dismiss);
    this.el.bar.prepend(banner);
  }

  /** Loads a saved queue, paused at its position: the tracks as /api/tracks gives them (the
   *  engine needs their ReplayGain; the player their artwork), the Subsonic song where that fails. */
  async #restore(saved, songs, { accepted }) {
    const tracks = new Array(songs.length);
    let next = 0;
    const worker = async () => {
      while (next < songs.length) {
        const index = next;
        next += 1;
        try {
          tracks[index] = await api(`api/tracks/${trackIDOf(songs[index].id)}`);
        } catch {
          tracks[index] = trackOfSong(songs[index]);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(RESTORE_CONCURRENCY, songs.length) }, worker));
    // Something started here while the tracks came: the silent restore gives way to it.
    if (!accepted && this.queue.length) return;
    let index = songs.findIndex((song) => song.id === saved.current);
    if (index < 0) index = 0;
    this.#reportStopped();
    this.queue = tracks;
    // Taken on as this device's queue only when chosen here; a silent restore is already ours.
    this.touched = accepted;
    this.engine.cue(index, Math.max(0, Number(saved.position) || 0) / 1000);
    this.#positionState();
  }

  /** Before signing out: the queue and the listen's end told to the server while the session
   *  still stands, then everything stopped here without emptying the server's queue. */
  async signOut() {
    clearTimeout(this.saveTimer);
    this.saveTimer = null;
    const track = this.track;
    const calls = [];
    if (this.touched) calls.push(subsonic('savePlayQueue', this.#saveParams()).catch(() => {}));
    if (track && this.reportedID === track.id) {
      calls.push(subsonic('reportPlayback', { mediaId: songID(track.id), mediaType: 'song', positionMs: Math.round(this.position() * 1000), state: 'stopped', c: this.client }).catch(() => {}));
    }
    await Promise.all(calls);
    this.reset();
  }

  /** Stops and empties everything here, telling the server nothing (the session is gone). */
  reset() {
    clearTimeout(this.saveTimer);
    this.saveTimer = null;
    this.touched = false;
    this.reportedID = null;
    this.engine.stop();
    this.queue = [];
    this.current = -1;
    document.getElementById('resume-banner')?.remove();
    this.showTrack();
    this.renderQueue();
    this.lyrics.setTrack(null);
  }
}
