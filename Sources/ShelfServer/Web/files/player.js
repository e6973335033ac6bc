// The player: one <audio> fed from /api/stream (ranges, so seeking works; or a transcode chosen
// in the bar), a queue (play now, play next, add, reorder, remove, clear), the Media Session
// (metadata, artwork, play/pause/next/previous/seek), and a scrobble once half the track (or
// four minutes) has played.
import { api, artworkURL, clock } from './api.js';

const BIT_RATES = { opus: 128, mp3: 192, aac: 160 };

/** The player bar and its queue. */
export class Player {
  constructor(elements, { onTrack }) {
    this.el = elements;
    this.onTrack = onTrack;
    this.queue = [];
    this.current = -1;
    this.scrobbled = false;
    this.seeking = false;
    const { audio } = elements;
    this.el.transcode.value = localStorage.getItem('shelf.transcode') ?? '';
    this.el.volume.value = localStorage.getItem('shelf.volume') ?? '1';
    audio.volume = Number(this.el.volume.value);
    elements.play.addEventListener('click', () => this.toggle());
    elements.next.addEventListener('click', () => this.next());
    elements.prev.addEventListener('click', () => this.previous());
    elements.volume.addEventListener('input', () => {
      audio.volume = Number(elements.volume.value);
      localStorage.setItem('shelf.volume', elements.volume.value);
    });
    elements.transcode.addEventListener('change', () => localStorage.setItem('shelf.transcode', elements.transcode.value));
    elements.seek.addEventListener('input', () => { this.seeking = true; elements.time.textContent = clock(Number(elements.seek.value)); });
    elements.seek.addEventListener('change', () => { this.seeking = false; this.seekTo(Number(elements.seek.value)); });
    audio.addEventListener('timeupdate', () => this.showTime());
    audio.addEventListener('durationchange', () => this.showTime());
    audio.addEventListener('play', () => this.showState());
    audio.addEventListener('pause', () => this.showState());
    audio.addEventListener('ended', () => this.next());
    elements.queueClear.addEventListener('click', () => this.clear());
    elements.queueToggle.addEventListener('click', () => {
      const open = elements.queuePanel.hidden;
      elements.queuePanel.hidden = !open;
      elements.queueToggle.setAttribute('aria-expanded', String(open));
    });
    if ('mediaSession' in navigator) {
      const session = navigator.mediaSession;
      const handlers = {
        play: () => audio.play(), pause: () => audio.pause(), nexttrack: () => this.next(), previoustrack: () => this.previous(),
        seekto: (details) => this.seekTo(details.seekTime), seekbackward: () => this.seekTo(audio.currentTime - 10),
        seekforward: () => this.seekTo(audio.currentTime + 10),
      };
      for (const [action, handler] of Object.entries(handlers)) {
        try { session.setActionHandler(action, handler); } catch { /* an action this browser lacks */ }
      }
    }
    this.renderQueue();
  }

  get track() { return this.queue[this.current] ?? null; }

  /** Replaces the queue with `tracks` and plays the one at `start`. */
  playNow(tracks, start = 0) {
    this.queue = tracks.slice();
    this.play(start);
  }

  /** Puts `tracks` right after the current one. */
  playNext(tracks) {
    this.queue.splice(this.current + 1, 0, ...tracks);
    if (this.current < 0) this.play(0);
    else this.renderQueue();
  }

  /** Appends `tracks` to the queue. */
  add(tracks) {
    const wasEmpty = this.queue.length === 0;
    this.queue.push(...tracks);
    if (wasEmpty) this.play(0);
    else this.renderQueue();
  }

  clear() {
    this.queue = [];
    this.current = -1;
    this.el.audio.pause();
    this.el.audio.removeAttribute('src');
    this.el.audio.load();
    this.showTrack();
    this.renderQueue();
  }

  /** Moves queue entry `from` to position `to`. */
  move(from, to) {
    if (to < 0 || to >= this.queue.length) return;
    const [entry] = this.queue.splice(from, 1);
    this.queue.splice(to, 0, entry);
    if (this.current === from) this.current = to;
    else if (from < this.current && to >= this.current) this.current -= 1;
    else if (from > this.current && to <= this.current) this.current += 1;
    this.renderQueue();
  }

  remove(index) {
    this.queue.splice(index, 1);
    if (index < this.current) this.current -= 1;
    else if (index === this.current) {
      if (this.queue.length) this.play(Math.min(index, this.queue.length - 1));
      else this.clear();
      return;
    }
    this.renderQueue();
  }

  streamURL(track, offset = 0) {
    const format = this.el.transcode.value;
    if (!format) return `/api/stream/${track.id}`;
    const params = new URLSearchParams({ format, bitRate: String(BIT_RATES[format] ?? 128) });
    if (offset > 0) params.set('timeOffset', offset.toFixed(1));
    return `/api/stream/${track.id}?${params}`;
  }

  /** Plays queue entry `index`. */
  play(index) {
    if (index < 0 || index >= this.queue.length) return;
    this.current = index;
    this.offset = 0;
    this.scrobbled = false;
    const track = this.track;
    this.el.audio.src = this.streamURL(track);
    this.el.audio.play().catch(() => this.showState());
    this.showTrack();
    this.renderQueue();
    this.onTrack(track);
  }

  toggle() {
    if (!this.track) {
      if (this.queue.length) this.play(0);
      return;
    }
    if (this.el.audio.paused) this.el.audio.play().catch(() => {});
    else this.el.audio.pause();
  }

  next() {
    if (this.current + 1 < this.queue.length) this.play(this.current + 1);
    else this.showState();
  }

  previous() {
    if (this.position() > 3 || this.current <= 0) this.seekTo(0);
    else this.play(this.current - 1);
  }

  /** Seconds into the track (a transcode started at an offset counts from there). */
  position() { return (this.offset ?? 0) + (this.el.audio.currentTime || 0); }

  duration() { return this.track?.duration || this.el.audio.duration || 0; }

  seekTo(seconds) {
    const track = this.track;
    if (!track) return;
    const target = Math.max(0, Math.min(seconds, this.duration()));
    if (this.el.transcode.value) {
      // A transcode is a pipe, not a file: seeking restarts it at the offset.
      this.offset = target;
      this.el.audio.src = this.streamURL(track, target);
      this.el.audio.play().catch(() => {});
    } else {
      this.el.audio.currentTime = target;
    }
  }

  showTime() {
    const position = this.position();
    const duration = this.duration();
    if (!this.seeking) {
      this.el.seek.max = String(duration);
      this.el.seek.value = String(position);
      this.el.time.textContent = clock(position);
    }
    this.el.length.textContent = clock(duration);
    if ('mediaSession' in navigator && duration > 0 && navigator.mediaSession.setPositionState) {
      try { navigator.mediaSession.setPositionState({ duration, position: Math.min(position, duration), playbackRate: 1 }); } catch { /* out of range */ }
    }
    const track = this.track;
    if (track && !this.scrobbled && duration > 0 && (position >= duration / 2 || position >= 240)) {
      this.scrobbled = true;
      api(`/api/tracks/${track.id}/scrobble`, { method: 'POST' }).catch(() => {});
    }
  }

  showState() {
    const playing = !this.el.audio.paused;
    this.el.play.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    this.el.bar.dataset.state = playing ? 'playing' : 'paused';
    if ('mediaSession' in navigator) navigator.mediaSession.playbackState = playing ? 'playing' : 'paused';
  }

  showTrack() {
    const track = this.track;
    this.el.title.textContent = track ? (track.title ?? '(untitled)') : 'Nothing playing';
    this.el.artist.textContent = track ? (track.artist ?? '') : '';
    this.el.bar.dataset.track = track ? String(track.id) : '';
    if (track?.artworkID) this.el.cover.src = artworkURL(track.artworkID, 48);
    else this.el.cover.removeAttribute('src');
    if ('mediaSession' in navigator && track && window.MediaMetadata) {
      navigator.mediaSession.metadata = new MediaMetadata({
        title: track.title ?? '', artist: track.artist ?? '', album: track.album ?? '',
        artwork: track.artworkID ? [96, 256, 512].map((size) => ({ src: `/api/artwork/${track.artworkID}?size=${size}`, sizes: `${size}x${size}`, type: 'image/jpeg' })) : [],
      });
    }
    this.showTime();
    this.showState();
  }

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
      const label = document.createElement('button');
      label.type = 'button';
      label.className = 'label';
      label.textContent = `${track.title ?? '(untitled)'} — ${track.artist ?? ''}`;
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
        ['↑', 'Move up', () => this.move(index, index - 1)],
        ['↓', 'Move down', () => this.move(index, index + 1)],
        ['✕', 'Remove', () => this.remove(index)],
      ].map(([text, name, action]) => {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = text;
        button.setAttribute('aria-label', `${name}: ${track.title ?? ''}`);
        button.addEventListener('click', action);
        return button;
      });
      item.append(label, ...controls);
      list.append(item);
    });
  }
}
