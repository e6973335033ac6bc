// The settings page: the user's own password, their other sessions, the theme and language of
// the page, and playback (ReplayGain, pre-amp, the gain of untagged tracks, crossfade). The
// theme lives in localStorage and is applied by applyTheme() before the page draws.
import { api, subsonic, encodePassword } from './api.js';
import { t, tn, language, setLanguage } from './i18n.js';
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

  async show() {
    this.container.replaceChildren(
      pageHeading(t('settings.title')),
      this.buildPassword(), this.buildSessions(), this.buildAppearance(), this.buildPlayback(),
    );
    await Promise.all([this.loadSessions(), this.loadPlayback()]);
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
