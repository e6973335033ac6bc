// The settings page: the user's own password, their other sessions, the theme and language of
// the page, and playback (ReplayGain, pre-amp, the gain of untagged tracks, crossfade). The
// theme lives in localStorage and is applied by applyTheme() before the page draws.
import { api, subsonic, encodePassword } from './api.js';
import { t, tn, language, setLanguage, formatNumber } from './i18n.js';
import { h, pageHeading, errorBox, statusBox, showError, showMessage, field } from './dom.js';

const THEME_KEY = 'shelf.theme';
const THEMES = ['auto', 'light', 'dark'];

/** The saved theme: 'light', 'dark' or 'auto' (follow the system). */
function savedTheme() {
  try {
    const theme = localStorage.getItem(THEME_KEY);
    return THEMES.includes(theme) ? theme : 'auto';
  } catch {
    return 'auto';
  }
}

/** Applies the saved theme to <html data-theme> (absent: follow the system); app.js calls it at start. */
export function applyTheme() {
  const theme = savedTheme();
  if (theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** A <section> of the settings page, named by its <h2> (`id`). */
function settingsSection(id, title, ...children) {
  return h('section', { class: 'settings-section', 'aria-labelledby': id }, h('h2', { id, text: title }), ...children);
}

/** A number input with its range and step (the browser checks them; savePlayback reads the verdict). */
function numberInput(name, min, max, step) {
  return h('input', { type: 'number', name, min, max, step, inputMode: 'decimal', class: 'number-input' });
}

/** The settings page. `show()` takes no arguments. */
export class SettingsPage {
  constructor(container, deps) {
    Object.assign(this, { container, deps });
    container.classList.add('page-view');
  }

  /** `notice`: what Last.fm's authorisation came back with (`lastfm-linked`, `lastfm-refused`, …). */
  async show({ notice } = {}) {
    this.container.replaceChildren(
      pageHeading(t('settings.title')),
      this.buildPassword(), this.buildSessions(), this.buildScrobbling(), this.buildAppearance(), this.buildPlayback(),
    );
    if (notice && /^lastfm-(linked|refused|unreachable)$/.test(notice)) {
      (notice === 'lastfm-linked' ? this.scrobblingStatus : this.scrobblingError).textContent = t(`settings.scrobbling.${notice}`);
    }
    await Promise.all([this.loadSessions(), this.loadPlayback(), this.loadScrobbling()]);
  }

  // MARK: Scrobbling

  buildScrobbling() {
    this.scrobblingError = errorBox();
    this.scrobblingStatus = statusBox();
    this.scrobblingServices = h('div', { class: 'scrobbling-services' });
    const field3 = (name) => h('input', { type: 'text', name, autocomplete: 'off', placeholder: t(`settings.scrobbling.rules.${name}.placeholder`) });
    this.rules = { libraries: field3('libraries'), genres: field3('genres'), clients: field3('clients') };
    const rules = h('form', { class: 'settings-form', 'aria-labelledby': 'settings-scrobbling-rules-title' },
      h('h3', { id: 'settings-scrobbling-rules-title', text: t('settings.scrobbling.rules.title') }),
      field(t('settings.scrobbling.rules.libraries'), this.rules.libraries),
      field(t('settings.scrobbling.rules.genres'), this.rules.genres),
      field(t('settings.scrobbling.rules.clients'), this.rules.clients, t('settings.scrobbling.rules.hint')),
      h('div', {}, h('button', { type: 'submit', text: t('settings.scrobbling.rules.save') })),
    );
    rules.addEventListener('submit', async (event) => {
      event.preventDefault();
      const split = (input) => input.value.split(',').map((word) => word.trim()).filter(Boolean);
      await this.scrobbling('api/me/scrobbling/rules', 'PUT',
        { libraries: split(this.rules.libraries), genres: split(this.rules.genres), clients: split(this.rules.clients) }, 'settings.scrobbling.rules.saved');
    });
    return settingsSection('settings-scrobbling-title', t('settings.scrobbling.title'),
      h('p', { class: 'page-intro', text: t('settings.scrobbling.intro') }),
      this.scrobblingServices, rules, this.scrobblingError, this.scrobblingStatus,
    );
  }

  /** One call to the scrobbling API; the page redraws from its answer. */
  async scrobbling(path, method, body, done) {
    showError(this.scrobblingError, null);
    this.scrobblingStatus.textContent = '';
    try {
      this.renderScrobbling(await api(path, { method, body }));
      if (done) this.scrobblingStatus.textContent = t(done);
      return true;
    } catch (error) {
      showError(this.scrobblingError, error);
      return false;
    }
  }

  async loadScrobbling() {
    try {
      this.renderScrobbling(await api('api/me/scrobbling'));
    } catch (error) {
      showError(this.scrobblingError, error);
    }
  }

  renderScrobbling(document) {
    const linked = Object.fromEntries(document.services.map((service) => [service.service, service]));
    const card = (service, title, linkControls) => {
      const state = linked[service];
      let text = t('settings.scrobbling.notLinked');
      if (state) {
        const who = state.account ? t('settings.scrobbling.as', { account: state.account }) : '';
        text = state.state === 'paused'
          ? t('settings.scrobbling.paused', { reason: state.pauseReason ?? '', queued: formatNumber(state.queued) })
          : t('settings.scrobbling.linked', { who, sent: formatNumber(state.sent), queued: formatNumber(state.queued) });
      }
      const controls = state
        ? [h('button', { type: 'button', text: t('settings.scrobbling.unlink'), 'data-unlink': service, onclick: () => this.scrobbling(`api/me/scrobbling/${service}`, 'DELETE', undefined, 'settings.scrobbling.unlinked') })]
        : [];
      return h('div', { class: 'scrobbling-service', 'data-service': service, 'data-state': state?.state ?? 'none' },
        h('h3', { text: title }),
        h('p', { class: state?.state === 'paused' ? 'scrobbling-state warning' : 'scrobbling-state', role: state?.state === 'paused' ? 'alert' : null, text }),
        state?.lastError && state.state === 'linked' && state.queued > 0 ? h('p', { class: 'page-intro', text: t('settings.scrobbling.retrying', { error: state.lastError }) }) : null,
        // A paused link is fixed by linking again: the queue is kept and sent then.
        !state || state.state === 'paused' ? linkControls() : null,
        ...controls);
    };
    const listenbrainz = () => {
      const token = h('input', { type: 'password', name: 'listenbrainz-token', autocomplete: 'off', required: true });
      const form = h('form', { class: 'settings-form' },
        field(t('settings.scrobbling.listenbrainz.token'), token, t('settings.scrobbling.listenbrainz.hint')),
        h('div', {}, h('button', { type: 'submit', class: 'primary', text: t('settings.scrobbling.link') })));
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        if (await this.scrobbling('api/me/scrobbling/listenbrainz', 'PUT', { token: token.value.trim() }, 'settings.scrobbling.linkedNow')) token.value = '';
      });
      return form;
    };
    const lastfm = () => {
      if (!document.lastfm) return h('p', { class: 'page-intro', text: t('settings.scrobbling.lastfm.unavailable') });
      return h('div', {}, h('button', {
        type: 'button', class: 'primary', text: t('settings.scrobbling.lastfm.link'),
        onclick: async () => {
          try {
            // Last.fm asks the user, then sends the browser back to Shelf, which links and returns here.
            const { url } = await api('api/me/scrobbling/lastfm/authorize');
            window.location.assign(url);
          } catch (error) {
            showError(this.scrobblingError, error);
          }
        },
      }));
    };
    this.scrobblingServices.replaceChildren(card('listenbrainz', 'ListenBrainz', listenbrainz), card('lastfm', 'Last.fm', lastfm));
    this.rules.libraries.value = (document.rules.libraries ?? []).join(', ');
    this.rules.genres.value = (document.rules.genres ?? []).join(', ');
    this.rules.clients.value = (document.rules.clients ?? []).join(', ');
  }

  // MARK: Password

  buildPassword() {
    const name = this.deps.user?.name ?? '';
    // A hidden user name field tells password managers whose new password this is.
    const username = h('input', { type: 'text', name: 'username', autocomplete: 'username', value: name, readOnly: true, hidden: true, translate: 'no' });
    const password = h('input', { type: 'password', name: 'password', required: true, autocomplete: 'new-password' });
    const confirm = h('input', { type: 'password', name: 'confirm', required: true, autocomplete: 'new-password' });
    const error = errorBox();
    const status = statusBox();
    const form = h('form', { class: 'settings-form', 'aria-labelledby': 'settings-password-title' },
      username,
      field(t('settings.password.new'), password),
      field(t('settings.password.confirm'), confirm),
      h('div', {}, h('button', { type: 'submit', class: 'primary', text: t('settings.password.change') })),
      error, status,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      showError(error, null);
      status.textContent = '';
      if (password.value !== confirm.value) {
        showMessage(error, t('settings.password.mismatch'));
        confirm.focus();
        return;
      }
      try {
        // The API asks no current password: the session proves who is asking.
        await subsonic('changePassword', { username: name, password: encodePassword(password.value) });
        password.value = '';
        confirm.value = '';
        status.textContent = t('settings.password.changed');
      } catch (failure) {
        showError(error, failure);
      }
    });
    return settingsSection('settings-password-title', t('settings.password.title'), form);
  }

  // MARK: Sessions

  buildSessions() {
    this.sessionsCount = h('p', { class: 'page-intro' });
    this.sessionsError = errorBox();
    this.sessionsStatus = statusBox();
    const signOut = h('button', { type: 'button', text: t('settings.sessions.signOutOthers') });
    signOut.addEventListener('click', async () => {
      showError(this.sessionsError, null);
      signOut.disabled = true;
      try {
        const { ended } = await api('api/me/sessions/others', { method: 'DELETE' });
        this.sessionsStatus.textContent = tn('settings.sessions.ended', Number(ended) || 0);
        await this.loadSessions();
      } catch (error) {
        showError(this.sessionsError, error);
      } finally {
        signOut.disabled = false;
      }
    });
    return settingsSection('settings-sessions-title', t('settings.sessions.title'),
      h('p', { class: 'page-intro', text: t('settings.sessions.intro') }),
      this.sessionsCount, h('div', {}, signOut), this.sessionsError, this.sessionsStatus,
    );
  }

  async loadSessions() {
    try {
      const { sessions } = await api('api/me/sessions');
      this.sessionsCount.textContent = tn('settings.sessions.count', Number(sessions) || 0);
    } catch {
      // The count is a nicety: signing out elsewhere works without it.
      this.sessionsCount.textContent = '';
    }
  }

  // MARK: Theme and language

  buildAppearance() {
    const current = savedTheme();
    const themes = h('fieldset', { class: 'choice-group' },
      h('legend', { text: t('settings.theme.title') }),
      THEMES.map((theme) => {
        const radio = h('input', { type: 'radio', name: 'theme', value: theme, checked: theme === current });
        radio.addEventListener('change', () => {
          if (!radio.checked) return;
          try {
            if (theme === 'auto') localStorage.removeItem(THEME_KEY);
            else localStorage.setItem(THEME_KEY, theme);
          } catch {
            // Storage blocked: the theme still applies to this visit.
            if (theme === 'auto') delete document.documentElement.dataset.theme;
            else document.documentElement.dataset.theme = theme;
            return;
          }
          applyTheme();
        });
        return h('label', { class: 'check' }, radio, t(`settings.theme.${theme}`));
      }),
    );
    // Each language is offered in its own name, the way people look for it.
    const languageSelect = h('select', { name: 'language' },
      h('option', { value: 'en', lang: 'en', translate: 'no', text: 'English' }),
      h('option', { value: 'ja', lang: 'ja', translate: 'no', text: '日本語' }),
    );
    languageSelect.value = language;
    languageSelect.addEventListener('change', () => {
      if (languageSelect.value !== language) setLanguage(languageSelect.value);
    });
    return settingsSection('settings-appearance-title', t('settings.appearance.title'),
      themes,
      field(t('settings.language.label'), languageSelect, t('settings.language.hint')),
    );
  }

  // MARK: Playback

  buildPlayback() {
    this.playbackError = errorBox();
    this.playbackStatus = statusBox();
    const replayGain = h('select', { name: 'replayGain' },
      ['auto', 'track', 'album', 'off'].map((mode) => h('option', { value: mode, text: t(`settings.replayGain.${mode}`) })));
    const preamp = numberInput('preamp', -15, 15, 0.5);
    const defaultGain = numberInput('defaultGain', -24, 12, 0.5);
    const crossfade = numberInput('crossfade', 0, 12, 0.5);
    this.playbackInputs = { replayGain, preamp, defaultGain, crossfade };
    this.playbackForm = h('form', { class: 'settings-form', 'aria-labelledby': 'settings-playback-title' },
      field(t('settings.replayGain.label'), replayGain, t('settings.replayGain.hint')),
      field(t('settings.preamp.label'), preamp, t('settings.preamp.hint')),
      field(t('settings.defaultGain.label'), defaultGain, t('settings.defaultGain.hint')),
      field(t('settings.crossfade.label'), crossfade, t('settings.crossfade.hint')),
      this.playbackError, this.playbackStatus,
    );
    // Each change applies at once; Enter in a number field must not submit (and reload) anything.
    this.playbackForm.addEventListener('submit', (event) => {
      event.preventDefault();
      this.savePlayback();
    });
    this.playbackForm.addEventListener('change', () => this.savePlayback());
    return settingsSection('settings-playback-title', t('settings.playback.title'), this.playbackForm);
  }

  async loadPlayback() {
    const player = this.deps.player;
    if (typeof player?.settings !== 'function' || typeof player?.setSettings !== 'function') {
      for (const input of Object.values(this.playbackInputs)) input.disabled = true;
      this.playbackStatus.textContent = t('settings.playback.unavailable');
      return;
    }
    try {
      this.fillPlayback((await player.settings()) ?? {});
    } catch (error) {
      showError(this.playbackError, error);
    }
  }

  /** Shows `settings` ({replayGain, preamp, defaultGain, crossfade}) in the form. */
  fillPlayback(settings) {
    const { replayGain, preamp, defaultGain, crossfade } = this.playbackInputs;
    replayGain.value = ['auto', 'track', 'album', 'off'].includes(settings.replayGain) ? settings.replayGain : 'auto';
    preamp.value = String(settings.preamp ?? 0);
    defaultGain.value = String(settings.defaultGain ?? -6);
    crossfade.value = String(settings.crossfade ?? 0);
  }

  async savePlayback() {
    const player = this.deps.player;
    if (typeof player?.setSettings !== 'function') return;
    showError(this.playbackError, null);
    const { replayGain, preamp, defaultGain, crossfade } = this.playbackInputs;
    // A field left empty or out of range is not saved: the browser marks it, the old value stands.
    for (const input of [preamp, defaultGain, crossfade]) {
      if (input.value === '' || !input.checkValidity()) {
        showMessage(this.playbackError, t('settings.playback.invalid', { min: input.min, max: input.max, step: input.step }));
        return;
      }
    }
    try {
      const saved = await player.setSettings({
        replayGain: replayGain.value, preamp: Number(preamp.value), defaultGain: Number(defaultGain.value), crossfade: Number(crossfade.value),
      });
      // The player answers with the values made valid (a crossfade under a second is one): shown as kept.
      if (saved && typeof saved === 'object') this.fillPlayback(saved);
      this.playbackStatus.textContent = t('settings.playback.saved');
    } catch (error) {
      showError(this.playbackError, error);
    }
  }
}
