// Playback through the Web Audio API, so that consecutive tracks join with no gap: each track is
// fetched whole and decoded to an AudioBuffer, and the next one is decoded while the current one
// plays and scheduled on the audio clock to start on the very sample after the current one's
// last. decodeAudioData already trims what encoders add at the edges when the file declares it
// (MP3's LAME/Xing delay and padding, AAC's edit lists, Opus's pre-skip), so the join is the
// album's own.
//
// The graph, one per track: AudioBufferSourceNode → the track's GainNode (ReplayGain and the
// crossfade ramps) → the master GainNode (the volume slider, nothing else) → the output.
//
// Tracks too long to hold decoded (MAX_DECODED_SECONDS; a decoded second is 4 bytes × channels ×
// the context's rate, about 23 MB a stereo minute at 48 kHz) and files the browser cannot decode
// by decodeAudioData play through the page's <audio> element instead, routed into the same kind
// of track GainNode by createMediaElementSource. Those get ReplayGain and the volume but are not
// gapless: an element's end is only known from its `ended` event, which comes late and unevenly.
//
// At most two tracks are held decoded, the current and the next; a buffer is dropped when its
// track is no longer either (a source node still playing it keeps it alive until it ends).

/** Tracks longer than this (seconds) play through the <audio> element instead of a buffer. */
export const MAX_DECODED_SECONDS = 25 * 60;
/** Files larger than this (bytes) do too: the download alone would delay the start too long. */
export const MAX_FETCHED_BYTES = 400 * 1024 * 1024;
/** Crossfade bounds in seconds (0 is off). */
export const CROSSFADE_MAX = 12;
/** ReplayGain modes. */
export const REPLAY_GAIN_MODES = ['auto', 'album', 'track', 'off'];

// How far ahead (seconds) a start "now" is scheduled, so it is still in the future when the
// audio thread sees it: a start in the past would be clipped by however late it came.
const LEAD = 0.06;
// Short ramps that keep a stop or a start in the middle of a waveform from clicking.
const DECLICK = 0.025;
// Automatic advances remembered in `joins` (for tests and the UI); older ones are dropped.
const JOINS_KEPT = 100;
// Chrome gives the Media Session (media keys, lock screen, the OS's media controls) only to a
// playing media element, never to an AudioContext alone; so the graph's output plays through an
// <audio> element fed by a MediaStream (srcObject is not a URL, so media-src 'self' allows it).
// If that element refuses to play, the output goes to the context's destination directly.
const OUTPUT_THROUGH_ELEMENT = true;

const SETTINGS_KEYS = { replayGain: 'shelf.replayGain', preamp: 'shelf.preamp', defaultGain: 'shelf.defaultGain', crossfade: 'shelf.crossfade' };
const DEFAULT_SETTINGS = { replayGain: 'auto', preamp: 0, defaultGain: -6, crossfade: 0 };

const clamp = (value, low, high) => Math.min(high, Math.max(low, value));

/** Settings made valid: a known mode, pre-amp −15…15 dB, default gain −24…12 dB, crossfade 0 or 1…12 s. */
export function normalizeSettings(settings = {}) {
  const merged = { ...DEFAULT_SETTINGS, ...settings };
  const number = (value, fallback) => (Number.isFinite(Number(value)) && value !== '' && value !== null ? Number(value) : fallback);
  const crossfade = number(merged.crossfade, 0);
  return {
    replayGain: REPLAY_GAIN_MODES.includes(merged.replayGain) ? merged.replayGain : DEFAULT_SETTINGS.replayGain,
    preamp: clamp(number(merged.preamp, 0), -15, 15),
    defaultGain: clamp(number(merged.defaultGain, DEFAULT_SETTINGS.defaultGain), -24, 12),
    crossfade: crossfade <= 0 ? 0 : clamp(crossfade, 1, CROSSFADE_MAX),
  };
}

/** The ReplayGain and crossfade settings saved in localStorage (defaults where none is). */
export function loadSettings() {
  const saved = {};
  try {
    for (const [name, key] of Object.entries(SETTINGS_KEYS)) {
      const value = localStorage.getItem(key);
      if (value !== null) saved[name] = value;
    }
  } catch { /* storage blocked: the defaults */ }
  return normalizeSettings(saved);
}

/** Saves settings (normalized) to localStorage and returns what was saved. */
export function saveSettings(settings) {
  const valid = normalizeSettings(settings);
  try {
    for (const [name, key] of Object.entries(SETTINGS_KEYS)) localStorage.setItem(key, String(valid[name]));
  } catch { /* storage blocked: they last for this page */ }
  return valid;
}

/** Whether `b` follows `a` on the same album, in order: same album and album artist, a later disc or track. */
export function inAlbumOrder(a, b) {
  if (!a || !b || !a.album || a.album !== b.album) return false;
  if ((a.albumArtist ?? '') !== (b.albumArtist ?? '')) return false;
  const discA = a.discNumber ?? 1;
  const discB = b.discNumber ?? 1;
  if (discB !== discA) return discB > discA;
  return (b.trackNumber ?? 0) > (a.trackNumber ?? 0);
}

/** The ReplayGain mode in force for queue entry `index` ('auto' resolved: album when the queue
 *  plays that track's album in order around it, else track). `trackAt(i)` reads the queue. */
export function resolvedMode(mode, trackAt, index) {
  if (mode !== 'auto') return mode;
  const track = trackAt(index);
  return inAlbumOrder(trackAt(index - 1), track) || inAlbumOrder(track, trackAt(index + 1)) ? 'album' : 'track';
}

/** The linear gain for `track` in `mode` ('album', 'track' or 'off'): 10^((gain + pre-amp)/20)
 *  with the settings' default gain standing in for a missing one, capped at 1/peak when the
 *  matching peak is known so that the gain never makes the track clip. */
export function replayGainLinear(track, mode, { preamp, defaultGain }) {
  if (mode === 'off') return 1;
  const rg = track?.replayGain ?? null;
  const album = mode === 'album';
  const first = album ? rg?.albumGain : rg?.trackGain;
  const second = album ? rg?.trackGain : rg?.albumGain;
  let gain = defaultGain;
  let peak = null;
  // A track tagged only with the other kind of gain is levelled by that, with its own peak.
  if (Number.isFinite(first)) {
    gain = first;
    peak = album ? rg.albumPeak : rg.trackPeak;
  } else if (Number.isFinite(second)) {
    gain = second;
    peak = album ? rg.trackPeak : rg.albumPeak;
  }
  let linear = 10 ** ((gain + preamp) / 20);
  if (Number.isFinite(peak) && peak > 0) linear = Math.min(linear, 1 / peak);
  return linear;
}

/** An equal-power fade of `level` over `steps` points: in (sine) or out (cosine). */
function fadeCurve(level, steps, rising) {
  const curve = new Float32Array(steps);
  for (let i = 0; i < steps; i += 1) {
    const x = i / (steps - 1);
    curve[i] = level * (rising ? Math.sin(x * Math.PI / 2) : Math.cos(x * Math.PI / 2));
  }
  return curve;
}

/** A failed fetch or decode; `stage` says which, so a file the browser cannot decode gets the element. */
class LoadError extends Error {
  constructor(stage, message) {
    super(message);
    this.stage = stage;
  }
}

/** Gapless playback of a queue the player owns (see the file's comment for the design). */
export class AudioEngine {
  /** `fallback`: the <audio> element for what is not decoded whole; `trackAt(i)`: the queue's
   *  entry i or null; `urlFor(track, offset)`: its stream URL (offset only for the element);
   *  `rateOf(track)`: the sample rate its stream decodes to (a transcode's may differ from the file's). */
  constructor({ fallback, trackAt, urlFor, rateOf, onTrackStart, onEnded, onTime, onState, onLoading, onError }) {
    this.fallback = fallback;
    this.trackAt = trackAt;
    this.urlFor = urlFor;
    this.rateOf = rateOf ?? ((track) => track?.sampleRate);
    this.onTrackStart = onTrackStart ?? (() => {});
    this.onEnded = onEnded ?? (() => {});
    this.onTime = onTime ?? (() => {});
    this.onState = onState ?? (() => {});
    this.onLoading = onLoading ?? (() => {});
    this.onError = onError ?? (() => {});
    /** Each automatic advance: {from, to, endedAt, startedAt, gap, gapless} in audio-clock
     *  seconds; endedAt is the end of the previous buffer's last sample, so a gap of 0 means the
     *  next sample followed it directly. */
    this.joins = [];
    this.settings = loadSettings();
    this.volume = 1;
    this.muted = false;
    this.playing = false;
    this.index = -1;
    this.pendingOffset = 0;
    this.voice = null; // the current track's voice
    this.nextVoice = null; // the next one: preparing, or scheduled to start
    this.fading = new Set(); // previous voices still sounding (a crossfade's tail, a declick)
    this.buffers = new Map(); // URL → {promise, buffer, controller}
    this.undecodable = new Set(); // URLs decodeAudioData refused: the element plays them
    this.generation = 0;
    this.ctx = null;
    this.master = null;
    this.ticker = null;
    this.elementSource = null;
    this.preloadedURL = null;
    fallback.addEventListener('ended', () => { if (this.voice?.kind === 'element') this.#currentEnded(this.voice); });
    fallback.addEventListener('error', () => {
      if (!fallback.getAttribute('src')) return;
      const error = new LoadError('element', fallback.error?.message || 'media error');
      const voice = this.voice;
      if (voice?.kind === 'element') this.#failed(voice.index, error);
      // The next track, loaded ahead, cannot play either: skipped when its turn comes.
      else if (this.preloadedURL && this.nextVoice?.kind === 'element') this.nextVoice.failed = error;
    });
    fallback.addEventListener('playing', () => {
      const voice = this.voice;
      if (voice?.kind === 'element' && voice.pendingJoin) {
        this.#pushJoin({ ...voice.pendingJoin, startedAt: this.ctx.currentTime, gapless: false });
        voice.pendingJoin = null;
      }
      this.onLoading(false);
    });
    fallback.addEventListener('waiting', () => { if (this.voice?.kind === 'element' && this.playing) this.onLoading(true); });
  }

  /** The AudioContext (made on first use: a test may tap `output` before anything plays). */
  get context() { return this.#ensureContext(); }

  /** The master GainNode, after every track and before the speakers. */
  get output() {
    this.#ensureContext();
    return this.master;
  }

  /** The current track's gain (ReplayGain, or a crossfade's point), or null when none plays. */
  trackGain() { return this.voice?.gain?.gain.value ?? null; }

  /** Seconds into the current track, from the audio clock (or the element's). */
  position() {
    const voice = this.voice;
    if (!voice) return this.pendingOffset;
    if (voice.kind === 'element') return voice.base + (this.fallback.currentTime || 0);
    if (voice.t0 === undefined) return voice.from ?? 0;
    return clamp(Math.max(voice.from, this.ctx.currentTime - voice.t0), 0, voice.buffer.duration);
  }

  /** The current track's length in seconds (the decoded buffer's when there is one). */
  duration() {
    const voice = this.voice;
    if (voice?.buffer) return voice.buffer.duration;
    const track = this.trackAt(this.index);
    if (track?.duration) return track.duration;
    return voice?.kind === 'element' && Number.isFinite(this.fallback.duration) ? this.fallback.duration : 0;
  }

  /** Sets the volume (0…1), applied by the master gain only. */
  setVolume(volume) {
    this.volume = clamp(Number(volume) || 0, 0, 1);
    this.#applyVolume();
  }

  /** Mutes or unmutes without forgetting the volume. */
  setMuted(muted) {
    this.muted = Boolean(muted);
    this.#applyVolume();
  }

  /** Changes the ReplayGain and crossfade settings: saved, the current track's gain eased to
   *  the new value, and the next track planned again. */
  setSettings(settings) {
    this.settings = saveSettings({ ...this.settings, ...settings });
    this.#replan();
    return this.settings;
  }

  /** Plays queue entry `index` from `offset` seconds (paused there when `autoplay` is false). */
  load(index, { offset = 0, autoplay = true } = {}) {
    const previous = this.#previousInfo();
    this.#open(index, { offset, autoplay, previous, automatic: false });
  }

  /** Makes entry `index` current at `offset` seconds without fetching anything (a restored
   *  queue): the first play() loads it. */
  cue(index, offset = 0) {
    this.generation += 1;
    this.#releaseAll();
    this.playing = false;
    this.index = index;
    this.pendingOffset = Math.max(0, offset);
    this.#suspend();
    this.#prune();
    this.onTrackStart(index, { automatic: false, cued: true, previous: null });
    this.onState(false);
    this.onTime();
  }

  /** Starts or resumes playing. */
  play() {
    if (this.index < 0) return;
    if (!this.voice) {
      this.load(this.index, { offset: this.pendingOffset, autoplay: true });
      return;
    }
    this.playing = true;
    this.#resume();
    if (this.voice.kind === 'element') this.fallback.play().catch((error) => this.#elementRefused(error));
    this.onState(true);
    this.onTime();
  }

  /** Pauses: the audio clock stops, so everything scheduled on it waits too. */
  pause() {
    if (!this.playing) return;
    this.playing = false;
    if (this.voice?.kind === 'element') this.fallback.pause();
    this.#suspend();
    this.onState(false);
    this.onTime();
  }

  /** Plays if paused, pauses if playing. */
  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  /** Jumps to `seconds` into the current track. */
  seek(seconds) {
    const voice = this.voice;
    const target = clamp(Number(seconds) || 0, 0, Math.max(0, this.duration()));
    if (!voice) {
      this.pendingOffset = target;
      this.onTime();
      return;
    }
    if (voice.kind === 'element') {
      const track = voice.track;
      // A transcode's URL names its start (the file's does not): it is a pipe, not a file, so
      // seeking starts it again at the offset.
      if (this.urlFor(track, 1) !== this.urlFor(track, 0)) {
        voice.base = target;
        this.fallback.src = this.urlFor(track, target);
        if (this.playing) this.fallback.play().catch((error) => this.#elementRefused(error));
      } else {
        this.fallback.currentTime = target;
      }
      this.onTime();
      return;
    }
    if (!voice.buffer) {
      voice.from = target;
      this.pendingOffset = target;
      this.onTime();
      return;
    }
    // A buffer source plays once: the seek is a new source on the same buffer (and the next
    // track is scheduled again against the new end).
    this.#cancelNext();
    this.#stopFading();
    this.#release(voice, { declick: true });
    const fresh = this.#bufferVoice(voice.index, voice.track, voice.url, voice.buffer);
    this.voice = fresh;
    this.#startBuffer(fresh, target, { declick: target > 0 });
    this.#planNext();
    this.onTime();
  }

  /** Stops and forgets everything (the queue was cleared). */
  stop() {
    this.generation += 1;
    this.#releaseAll();
    this.playing = false;
    this.index = -1;
    this.pendingOffset = 0;
    this.#dropBuffers();
    this.#suspend();
    this.onLoading(false);
    this.onState(false);
  }

  /** The queue changed around the current track, which is now entry `index`: the next track is
   *  planned again if it is no longer the one prepared, and the gain follows a changed album context. */
  queueChanged(index) {
    this.index = index;
    if (this.voice) this.voice.index = index;
    const next = this.nextVoice;
    if (next) {
      const track = this.trackAt(index + 1);
      if (track && track.id === next.track.id && this.urlFor(track, 0) === next.url && next.level === this.#levelFor(index + 1, track)) {
        next.index = index + 1;
        this.#applyTrackGain();
        return;
      }
    }
    this.#replan();
  }

  // MARK: Voices

  /** Switches to entry `index` and starts it (after its decode, or through the element). */
  async #open(index, { offset, autoplay, previous, automatic, join = null }) {
    const generation = ++this.generation;
    const track = this.trackAt(index);
    this.#releaseAll({ keepNextBuffer: true });
    this.index = index;
    this.pendingOffset = Math.max(0, offset);
    this.playing = autoplay;
    if (!track) {
      this.stop();
      return;
    }
    this.#ensureContext(track);
    if (autoplay) this.#resume();
    else this.#suspend();
    this.onTrackStart(index, { automatic, previous, cued: false });
    this.onState(autoplay);
    this.#prune();
    const url = this.urlFor(track, 0);
    if (this.#needsElement(track) || this.undecodable.has(url)) {
      this.#startElement(index, track, offset, join);
      this.#planNext();
      return;
    }
    this.onLoading(true);
    const pending = this.#bufferVoice(index, track, url, null);
    pending.from = this.pendingOffset;
    this.voice = pending;
    let buffer;
    try {
      buffer = await this.#decoded(url);
    } catch (error) {
      if (generation !== this.generation) return;
      if (error.stage === 'decode') {
        // Not decodable here (a codec decodeAudioData lacks): the element may still play it.
        this.#markUndecodable(url);
        this.#release(pending);
        this.voice = null;
        this.#startElement(index, track, this.pendingOffset, join);
        this.#planNext();
      } else {
        this.#failed(index, error);
      }
      return;
    }
    if (generation !== this.generation) return;
    pending.buffer = buffer;
    this.#startBuffer(pending, Math.min(pending.from, buffer.duration), { declick: pending.from > 0 });
    if (join) this.#pushJoin({ ...join, startedAt: pending.startAt, gapless: false });
    this.onLoading(false);
    this.#planNext();
    this.onTime();
  }

  /** A voice object for a buffer (the buffer may come later). */
  #bufferVoice(index, track, url, buffer) {
    const gain = this.ctx.createGain();
    const level = this.#levelFor(index, track);
    gain.gain.value = level;
    gain.connect(this.master);
    return { kind: 'buffer', index, track, url, buffer, gain, level, source: null, from: 0 };
  }

  /** Starts `voice`'s buffer `offset` seconds in, as soon as the audio clock allows. */
  #startBuffer(voice, offset, { declick = false } = {}) {
    const ctx = this.ctx;
    const rate = ctx.sampleRate;
    // Whole sample frames for the start and the offset, so the end (start + the rest of the
    // buffer) falls on a frame too and the next track can start on the frame after it.
    const from = clamp(Math.round(offset * rate) / rate, 0, voice.buffer.duration);
    const when = Math.ceil((ctx.currentTime + LEAD) * rate) / rate;
    const source = ctx.createBufferSource();
    source.buffer = voice.buffer;
    source.connect(voice.gain);
    source.onended = () => this.#currentEnded(voice);
    voice.source = source;
    voice.from = from;
    voice.startAt = when;
    voice.t0 = when - from;
    voice.endAt = voice.t0 + voice.buffer.duration;
    if (declick) {
      voice.gain.gain.setValueAtTime(0, when);
      voice.gain.gain.linearRampToValueAtTime(voice.level, when + DECLICK);
    }
    source.start(when, from);
  }

  /** Plays entry `index` through the <audio> element (not gapless; see the file's comment). */
  #startElement(index, track, offset, join) {
    const element = this.fallback;
    const gain = this.ctx.createGain();
    const level = this.#levelFor(index, track);
    gain.gain.value = level;
    gain.connect(this.master);
    if (!this.elementSource) this.elementSource = this.ctx.createMediaElementSource(element);
    this.elementSource.disconnect();
    this.elementSource.connect(gain);
    const plainURL = this.urlFor(track, 0);
    const url = this.urlFor(track, offset);
    const transcoded = url !== plainURL;
    const voice = { kind: 'element', index, track, url: plainURL, gain, level, base: transcoded ? offset : 0, pendingJoin: join };
    this.voice = voice;
    // Loaded ahead already, unless that load failed (then again, so its error is heard now).
    if (this.preloadedURL !== url || element.error) element.src = url;
    this.preloadedURL = null;
    if (!transcoded && offset > 0) element.currentTime = offset;
    this.onLoading(true);
    if (this.playing) element.play().catch((error) => this.#elementRefused(error));
    this.onTime();
  }

  /** The element would not play: autoplay refused (paused, waiting for a click) or a real failure. */
  #elementRefused(error) {
    if (error?.name === 'NotAllowedError') {
      this.playing = false;
      this.onLoading(false);
      this.onState(false);
    }
    // Other failures come as the element's `error` event.
  }

  /** Plans the track after the current one: fetched and decoded now, scheduled to start at
   *  the current one's end (or crossfaded into it), or prepared on the element. */
  #planNext() {
    const current = this.voice;
    if (!current) return;
    const index = current.index + 1;
    const track = this.trackAt(index);
    if (!track) return;
    const url = this.urlFor(track, 0);
    const plan = { kind: 'buffer', index, track, url, level: this.#levelFor(index, track), buffer: null, source: null };
    this.nextVoice = plan;
    this.#prune();
    if (this.#needsElement(track) || this.undecodable.has(url)) {
      plan.kind = 'element';
      this.#preloadElement(current, url);
      return;
    }
    this.#dropPreload();
    this.#decoded(url).then((buffer) => {
      if (this.nextVoice !== plan) return;
      plan.buffer = buffer;
      this.#schedule(plan);
    }, (error) => {
      if (this.nextVoice !== plan) return;
      if (error.stage === 'decode') {
        this.#markUndecodable(url);
        plan.kind = 'element';
        this.#preloadElement(this.voice, url);
      } else {
        plan.failed = error;
      }
    });
  }

  /** Loads the element ahead with the next track's file when the element is free. */
  #preloadElement(current, url) {
    if (current?.kind !== 'buffer' || this.preloadedURL === url) return;
    this.fallback.preload = 'auto';
    this.fallback.src = url;
    this.preloadedURL = url;
  }

  /** Schedules a decoded next track against the current buffer's end (with its crossfade). */
  #schedule(plan) {
    const current = this.voice;
    // After an element, or once the current track has ended, the next starts from #currentEnded.
    if (!current || current.kind !== 'buffer' || current.endAt === undefined || current.ended) return;
    const ctx = this.ctx;
    const rate = ctx.sampleRate;
    const earliest = Math.ceil((ctx.currentTime + LEAD) * rate) / rate;
    let fade = this.#crossfadeSeconds(current, plan);
    let when = current.endAt - fade;
    if (when < earliest) {
      // Decoded too late for the planned start: as soon as possible, fading over what is left.
      when = earliest;
      fade = Math.max(0, current.endAt - when);
      if (fade < 0.5) fade = 0;
    }
    const gain = ctx.createGain();
    gain.connect(this.master);
    const source = ctx.createBufferSource();
    source.buffer = plan.buffer;
    source.connect(gain);
    plan.gain = gain;
    plan.source = source;
    plan.from = 0;
    plan.startAt = when;
    plan.t0 = when;
    plan.endAt = when + plan.buffer.duration;
    plan.fade = fade;
    source.onended = () => this.#currentEnded(plan);
    if (fade > 0) {
      gain.gain.value = 0;
      gain.gain.setValueCurveAtTime(fadeCurve(plan.level, 64, true), when, fade);
      current.gain.gain.cancelScheduledValues(0);
      current.gain.gain.setValueAtTime(current.level, ctx.currentTime);
      current.gain.gain.setValueCurveAtTime(fadeCurve(current.level, 64, false), when, fade);
    } else {
      gain.gain.value = plan.level;
    }
    source.start(when);
  }

  /** Seconds of crossfade between two voices: the setting, but none between tracks of one
   *  album in order (they join gapless) and never more than half of either track. */
  #crossfadeSeconds(current, next) {
    const seconds = this.settings.crossfade;
    if (!seconds || inAlbumOrder(current.track, next.track)) return 0;
    return Math.min(seconds, current.buffer.duration / 2, next.buffer.duration / 2);
  }

  /** A voice came to its end (or the element did): the scheduled next one takes over, or the
   *  next entry is loaded, or the queue is done. */
  #currentEnded(voice) {
    voice.ended = true;
    if (voice !== this.voice) {
      if (this.fading.has(voice)) this.#release(voice);
      return;
    }
    const next = this.nextVoice;
    if (next?.source) {
      this.#promote();
      return;
    }
    const ctx = this.ctx;
    const endedAt = voice.kind === 'buffer' ? voice.endAt : ctx.currentTime;
    const previous = { track: voice.track, position: this.duration(), ended: true };
    const join = { from: voice.track.id, endedAt };
    if (next?.failed) {
      // The next one could not be fetched: say so, and go on after it.
      this.onError(next.index, next.failed);
      if (this.trackAt(next.index + 1)) {
        this.#open(next.index + 1, { offset: 0, autoplay: this.playing, previous, automatic: true, join });
        return;
      }
    } else if (this.trackAt(voice.index + 1)) {
      this.#open(voice.index + 1, { offset: 0, autoplay: this.playing, previous, automatic: true, join });
      return;
    }
    this.#finish(previous);
  }

  /** The scheduled next voice has started: it becomes current. */
  #promote() {
    const previous = this.voice;
    const next = this.nextVoice;
    this.nextVoice = null;
    this.#pushJoin({ from: previous.track.id, to: next.track.id, endedAt: previous.endAt, startedAt: next.startAt, gapless: true });
    const info = { track: previous.track, position: previous.buffer?.duration ?? this.duration(), ended: true };
    if (previous.kind === 'buffer' && previous.endAt > this.ctx.currentTime && !previous.ended) {
      this.fading.add(previous); // a crossfade's tail: released when its source ends
    } else {
      this.#release(previous);
    }
    this.voice = next;
    this.index = next.index;
    this.onTrackStart(next.index, { automatic: true, previous: info, cued: false });
    this.#prune();
    this.#planNext();
    this.onTime();
  }

  /** The last track ended. */
  #finish(previous) {
    this.#releaseAll();
    this.playing = false;
    this.pendingOffset = 0;
    this.#dropBuffers();
    this.#suspend();
    this.onLoading(false);
    this.onState(false);
    this.onEnded({ previous });
  }

  /** Entry `index` could not be played: reported, and the one after it is tried. */
  #failed(index, error) {
    // The failed track never sounded, so it is nobody's "previous" to report as stopped.
    const previous = null;
    this.onLoading(false);
    this.onError(index, error);
    if (index === this.index && this.trackAt(index + 1)) {
      this.#open(index + 1, { offset: 0, autoplay: this.playing, previous, automatic: true });
    } else if (index === this.index) {
      this.#finish(previous);
    }
  }

  #pushJoin({ from, to = this.trackAt(this.index)?.id, endedAt, startedAt, gapless }) {
    this.joins.push({ from, to, endedAt, startedAt, gap: startedAt - endedAt, gapless });
    if (this.joins.length > JOINS_KEPT) this.joins.splice(0, this.joins.length - JOINS_KEPT);
  }

  #previousInfo() {
    const voice = this.voice;
    return voice ? { track: voice.track, position: this.position(), ended: false } : null;
  }

  // MARK: Releasing

  /** Stops a voice (with a short fade when it is mid-sound) and lets go of its nodes. */
  #release(voice, { declick = false } = {}) {
    this.fading.delete(voice);
    if (voice.kind === 'element') {
      this.fallback.pause();
      if (!this.preloadedURL) {
        this.fallback.removeAttribute('src');
        this.fallback.load();
      }
      voice.gain.disconnect();
      return;
    }
    const { source, gain } = voice;
    if (!source || voice.ended) {
      // Nothing to stop (not started, or played out): its `ended` will not come again.
      source?.disconnect();
      gain?.disconnect();
      return;
    }
    source.onended = () => {
      source.disconnect();
      gain.disconnect();
    };
    try {
      if (declick && this.ctx.state === 'running') {
        const now = this.ctx.currentTime;
        gain.gain.cancelScheduledValues(now);
        gain.gain.setValueAtTime(gain.gain.value, now);
        gain.gain.linearRampToValueAtTime(0, now + DECLICK);
        source.stop(now + DECLICK);
      } else {
        source.stop();
      }
    } catch {
      // Never started, or stopped already.
      source.disconnect();
      gain.disconnect();
    }
  }

  /** Cancels a planned next voice (its decoded buffer stays cached for a new plan). */
  #cancelNext() {
    const next = this.nextVoice;
    this.nextVoice = null;
    if (!next) return;
    if (next.source) this.#release(next);
    const current = this.voice;
    if (next.fade > 0 && current?.gain) {
      // Its crossfade had begun ramping the current track down: back to level.
      const now = this.ctx.currentTime;
      current.gain.gain.cancelScheduledValues(0);
      current.gain.gain.setValueAtTime(current.level, now);
    }
    if (next.kind === 'element') this.#dropPreload();
  }

  /** Empties the element loaded ahead for a next track that is no longer next. */
  #dropPreload() {
    if (!this.preloadedURL) return;
    this.preloadedURL = null;
    if (this.voice?.kind !== 'element') {
      this.fallback.removeAttribute('src');
      this.fallback.load();
    }
  }

  #stopFading() {
    for (const voice of [...this.fading]) this.#release(voice, { declick: true });
  }

  /** Stops every voice; the decoded buffers are kept or dropped by #prune. */
  #releaseAll({ keepNextBuffer = false } = {}) {
    const next = this.nextVoice;
    this.nextVoice = null;
    if (next?.source) this.#release(next);
    if (!keepNextBuffer) this.#dropPreload();
    this.#stopFading();
    if (this.voice) this.#release(this.voice, { declick: true });
    this.voice = null;
  }

  /** Plans the next track again (settings or the queue changed) and eases the current gain. */
  #replan() {
    if (!this.voice) return;
    const next = this.nextVoice;
    // A next track already sounding (inside a crossfade) is left to finish taking over.
    if (next?.source && next.startAt <= this.ctx.currentTime + LEAD) return;
    this.#cancelNext();
    this.#applyTrackGain();
    this.#planNext();
  }

  /** Moves the current track's gain to what the settings now give, over a short ramp. */
  #applyTrackGain() {
    const voice = this.voice;
    if (!voice?.gain || this.nextVoice?.fade > 0) return;
    const level = this.#levelFor(voice.index, voice.track);
    if (Math.abs(level - voice.level) < 1e-4) return;
    voice.level = level;
    const now = this.ctx.currentTime;
    voice.gain.gain.cancelScheduledValues(now);
    voice.gain.gain.setValueAtTime(voice.gain.gain.value, now);
    voice.gain.gain.linearRampToValueAtTime(level, now + 0.2);
  }

  /** Drops decoded buffers (and aborts downloads) of tracks that are neither current nor next. */
  #prune() {
    const keep = new Set();
    if (this.voice?.url) keep.add(this.voice.url);
    if (this.nextVoice?.url) keep.add(this.nextVoice.url);
    if (this.index >= 0 && !this.voice) {
      const track = this.trackAt(this.index);
      if (track) keep.add(this.urlFor(track, 0));
    }
    for (const [url, entry] of this.buffers) {
      if (keep.has(url)) continue;
      entry.controller.abort();
      this.buffers.delete(url);
    }
  }

  /** Lets go of every decoded buffer and download (nothing is current any more). */
  #dropBuffers() {
    for (const entry of this.buffers.values()) entry.controller.abort();
    this.buffers.clear();
  }

  // MARK: Loading

  #markUndecodable(url) {
    // Bounded: a long session of such files must not grow it for ever.
    if (this.undecodable.size >= 200) this.undecodable.clear();
    this.undecodable.add(url);
  }

  #needsElement(track) {
    return (track.duration ?? 0) > MAX_DECODED_SECONDS || (track.fileSize ?? 0) > MAX_FETCHED_BYTES;
  }

  /** The decoded buffer of `url`, fetched once and shared while it is current or next. */
  #decoded(url) {
    let entry = this.buffers.get(url);
    if (!entry) {
      const controller = new AbortController();
      entry = { controller, buffer: null, promise: null };
      entry.promise = (async () => {
        let bytes;
        try {
          const response = await fetch(url, { credentials: 'same-origin', signal: controller.signal });
          if (!response.ok) throw new LoadError('fetch', `${response.status} ${response.statusText}`);
          bytes = await response.arrayBuffer();
        } catch (error) {
          if (error instanceof LoadError) throw error;
          throw new LoadError(error?.name === 'AbortError' ? 'abort' : 'fetch', error?.message ?? String(error));
        }
        try {
          entry.buffer = await this.ctx.decodeAudioData(bytes);
        } catch (error) {
          throw new LoadError('decode', error?.message ?? String(error));
        }
        return entry.buffer;
      })();
      // A download dropped by #prune rejects with nobody waiting: not an error worth a console
      // line. A failure is not kept, so the track is fetched again when next asked for.
      entry.promise.catch(() => { if (this.buffers.get(url) === entry) this.buffers.delete(url); });
      this.buffers.set(url, entry);
    }
    return entry.promise;
  }

  /** The linear gain for entry `index` under the current settings. */
  #levelFor(index, track) {
    const mode = resolvedMode(this.settings.replayGain, (i) => (i === index ? track : this.trackAt(i)), index);
    return replayGainLinear(track, mode, this.settings);
  }

  // MARK: The context

  #ensureContext(track = null) {
    if (this.ctx) return this.ctx;
    const Context = window.AudioContext || window.webkitAudioContext;
    // 'playback' trades latency nobody hears in a music player for fewer dropouts and less CPU.
    // The rate is the first track's: decodeAudioData resamples every file to the context's rate,
    // each file on its own, and a resampler's edges at the ends of two files would blur their
    // join; at the files' own rate nothing is resampled until the one continuous output.
    const options = { latencyHint: 'playback' };
    const rate = Number(track ? this.rateOf(track) : NaN);
    if (rate >= 8000 && rate <= 192000) options.sampleRate = rate;
    let ctx;
    try {
      ctx = new Context(options);
    } catch {
      ctx = new Context({ latencyHint: 'playback' });
    }
    this.ctx = ctx;
    this.master = ctx.createGain();
    this.#applyVolume();
    if (OUTPUT_THROUGH_ELEMENT && typeof ctx.createMediaStreamDestination === 'function' && 'srcObject' in HTMLMediaElement.prototype) {
      this.stream = ctx.createMediaStreamDestination();
      this.sink = document.createElement('audio');
      this.sink.srcObject = this.stream.stream;
      this.master.connect(this.stream);
    } else {
      this.master.connect(ctx.destination);
    }
    ctx.addEventListener('statechange', () => {
      // The system may interrupt the context (a call on a phone): the player shows it paused.
      if (ctx.state !== 'running' && this.playing && ctx.state !== 'suspended') {
        this.playing = false;
        this.onState(false);
      }
    });
    return ctx;
  }

  /** The output element could not play: the graph goes to the speakers directly instead. */
  #outputDirectly() {
    if (!this.sink) return;
    this.master.disconnect();
    this.master.connect(this.ctx.destination);
    this.sink.srcObject = null;
    this.sink = null;
    this.stream = null;
  }

  #resume() {
    const ctx = this.#ensureContext();
    if (ctx.state !== 'running') ctx.resume().catch(() => {});
    // A play() cut short by a pause() is no refusal; anything else is, and the graph then
    // goes to the speakers directly (without the Media Session, but with sound).
    this.sink?.play().catch((error) => { if (error?.name !== 'AbortError') this.#outputDirectly(); });
    this.#startTicker();
  }

  #suspend() {
    this.#stopTicker();
    this.sink?.pause();
    if (this.ctx && this.ctx.state === 'running') this.ctx.suspend().catch(() => {});
  }

  #applyVolume() {
    if (!this.master) return;
    const value = this.muted ? 0 : this.volume;
    const now = this.ctx.currentTime;
    // A short ramp: a jump in gain is a click.
    this.master.gain.cancelScheduledValues(now);
    this.master.gain.setValueAtTime(this.master.gain.value, now);
    this.master.gain.linearRampToValueAtTime(value, now + 0.03);
  }

  // Four times a second while playing: the time shown moves, and a crossfaded next track is
  // made current once it starts (a gapless one is made current by the previous one's `ended`).
  #startTicker() {
    if (this.ticker) return;
    this.ticker = setInterval(() => {
      const next = this.nextVoice;
      if (next?.source && this.ctx.currentTime >= next.startAt && this.voice) this.#promote();
      this.onTime();
    }, 250);
  }

  #stopTicker() {
    clearInterval(this.ticker);
    this.ticker = null;
  }
}
