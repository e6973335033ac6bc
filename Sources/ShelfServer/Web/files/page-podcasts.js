// The podcasts page: channels and their episodes through the Subsonic API, polled while the
// server fetches feeds and episodes in the background.
import { subsonic, clock, list, isAdmin } from './api.js';
import { t, tn, formatDate } from './i18n.js';
import { h, data, pageHeading, errorBox, statusBox, showError, scrollTable, button, field, externalLink, keepFocus, Page } from './dom.js';

const EPISODES_SHOWN = 20;
const EPISODE_STATUSES = ['new', 'downloading', 'completed', 'error', 'skipped', 'deleted'];

/** Podcast channels and their episodes: subscribe, refresh, download and delete (the podcast
 *  role), and play an episode the player can stream. `show()` takes no arguments; `hide()` stops
 *  the polling that follows downloads. */
export class PodcastsPage extends Page {
  constructor(container, deps) {
    super(container, deps);
    this.timer = null;
    this.expanded = new Set();
    this.pollUntil = 0;
  }

  /** Subscribing and the other changes need the podcast role (admins have every role). */
  get canManage() {
    const user = this.deps.user;
    return isAdmin(user) || (Array.isArray(user?.roles) && user.roles.includes('podcast'));
  }

  async show() {
    this.hide();
    this.visible = true;
    this.generation += 1;
    this.signature = null;
    const heading = pageHeading(t('podcasts.title'));
    this.error = errorBox();
    this.status = statusBox();
    this.list = h('div', { class: 'channels' });
    const parts = [heading];
    if (this.canManage) {
      const url = h('input', { type: 'url', name: 'url', required: true, autocomplete: 'off', spellcheck: false, translate: 'no' });
      const form = h('form', { class: 'inline-form', 'aria-label': t('podcasts.subscribe') },
        field(t('podcasts.feedURL'), url),
        h('button', { type: 'submit', class: 'primary', text: t('podcasts.subscribe') }),
      );
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        this.act(() => subsonic('createPodcastChannel', { url: url.value.trim() }), t('podcasts.subscribed')).then((ok) => { if (ok) url.value = ''; });
      });
      const refresh = button(t('podcasts.refresh'), () => this.act(() => subsonic('refreshPodcasts'), t('podcasts.refreshing')));
      parts.push(form, h('div', { class: 'page-toolbar' }, refresh));
    } else {
      parts.push(h('p', { class: 'page-intro', text: t('podcasts.noRole') }));
    }
    parts.push(this.error, this.status, this.list);
    this.container.replaceChildren(...parts);
    this.status.textContent = t('pages.loading');
    await this.load();
  }

  hide() {
    this.visible = false;
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** Runs a change, then reads the channels again and keeps polling a while, since the server
   *  fetches feeds and episodes in the background. Resolves to whether it worked. */
  async act(change, done) {
    showError(this.error, null);
    try {
      await change();
      this.status.textContent = done ?? '';
      this.pollUntil = Date.now() + 30_000;
      await this.load();
      return true;
    } catch (error) {
      showError(this.error, error);
      return false;
    }
  }

  async load() {
    const generation = this.generation;
    clearTimeout(this.timer);
    try {
      const answer = await subsonic('getPodcasts', { includeEpisodes: true });
      if (generation !== this.generation) return;
      const channels = list(answer.podcasts?.channel);
      if (this.status.textContent === t('pages.loading')) this.status.textContent = '';
      // Polling redraws only when something changed, so the focus and scroll stay put.
      const signature = JSON.stringify(channels);
      if (signature !== this.signature) {
        this.signature = signature;
        keepFocus(this.container, () => this.render(channels));
      }
      const busy = channels.some((channel) => channel.status === 'new' || channel.status === 'downloading'
        || list(channel.episode).some((episode) => episode.status === 'downloading'));
      if (this.visible && (busy || Date.now() < this.pollUntil)) this.timer = setTimeout(() => this.load(), 3000);
    } catch (error) {
      if (generation !== this.generation) return;
      this.status.textContent = '';
      showError(this.error, error);
    }
  }

  render(channels) {
    this.list.replaceChildren();
    if (!channels.length) {
      this.list.append(h('p', { class: 'page-empty', text: t('podcasts.none') }));
      return;
    }
    for (const channel of channels) {
      const episodes = list(channel.episode);
      const titleID = `podcast-${channel.id}-title`;
      // An <article>, not a <section>: a named section is a landmark, and its episode table's
      // region carries the same name.
      const section = h('article', { class: 'channel', 'aria-labelledby': titleID, 'data-focus-group': `channel-${channel.id}` });
      const head = h('div', { class: 'channel-head' }, h('h2', { id: titleID, translate: 'no', text: channel.title || channel.url }));
      if (this.canManage) {
        head.append(button(t('podcasts.deleteChannel'), () => {
          if (!window.confirm(t('podcasts.confirmDeleteChannel', { title: channel.title || channel.url }))) return;
          this.act(() => subsonic('deletePodcastChannel', { id: channel.id }), t('podcasts.channelDeleted'));
        }, { 'data-focus': `delete-${channel.id}` }));
      }
      section.append(head);
      section.append(h('p', { class: 'channel-url' }, externalLink(channel.url)));
      if (channel.description) section.append(h('p', { class: 'channel-description', translate: 'no', text: channel.description }));
      if (channel.status === 'error') {
        section.append(h('p', { class: 'problem' }, t('podcasts.channelError'), ' ', data(channel.errorMessage ?? '')));
      } else if (channel.status === 'new' || channel.status === 'downloading') {
        section.append(h('p', { class: 'muted', text: t('podcasts.channelLoading') }));
      }
      if (episodes.length) section.append(this.episodeTable(channel, episodes));
      else if (channel.status === 'completed') section.append(h('p', { class: 'muted', text: t('podcasts.noEpisodes') }));
      this.list.append(section);
    }
  }

  episodeTable(channel, episodes) {
    const expanded = this.expanded.has(channel.id);
    const shown = expanded ? episodes : episodes.slice(0, EPISODES_SHOWN);
    const { region, tbody } = scrollTable(null, [
      t('podcasts.column.title'), t('podcasts.column.published'), t('podcasts.column.duration'), t('podcasts.column.status'), t('pages.actions'),
    ], 'episodes-table', { labelledBy: `podcast-${channel.id}-title` });
    for (const episode of shown) {
      const status = EPISODE_STATUSES.includes(episode.status) ? t(`podcasts.status.${episode.status}`) : null;
      const statusCell = h('td', { class: `episode-status status-${episode.status}` }, status ?? data(episode.status));
      if (episode.status === 'error' && episode.errorMessage) statusCell.append(h('br'), data(episode.errorMessage, 'problem'));
      const actions = h('td', { class: 'actions' });
      const episodeNumber = /^pe-(\d+)$/.exec(episode.id ?? '')?.[1];
      if (episode.status === 'completed' && episodeNumber) {
        actions.append(button(t('podcasts.play'), () => this.deps.player.playNow([{
          id: episode.id, episode: Number(episodeNumber), title: episode.title, artist: channel.title, album: channel.title,
          duration: episode.duration, artworkID: null,
        }]), { 'data-focus': `play-${episode.id}` }));
      }
      if (this.canManage && ['new', 'error', 'skipped', 'deleted'].includes(episode.status)) {
        actions.append(button(t('podcasts.download'), () => this.act(() => subsonic('downloadPodcastEpisode', { id: episode.id }), t('podcasts.downloadStarted')),
          { 'data-focus': `download-${episode.id}` }));
      }
      if (this.canManage && episode.status === 'completed') {
        actions.append(button(t('podcasts.deleteEpisode'), () => {
          if (!window.confirm(t('podcasts.confirmDeleteEpisode', { title: episode.title ?? '' }))) return;
          this.act(() => subsonic('deletePodcastEpisode', { id: episode.id }), t('podcasts.episodeDeleted'));
        }, { 'data-focus': `delete-${episode.id}` }));
      }
      tbody.append(h('tr', { 'data-focus-group': `episode-${episode.id}` },
        h('td', {}, data(episode.title ?? t('pages.untitled'))),
        h('td', { class: 'date', text: formatDate(episode.publishDate) || '—' }),
        h('td', { class: 'num', text: episode.duration ? clock(episode.duration) : '—' }),
        statusCell,
        actions,
      ));
    }
    const wrapper = h('div', { class: 'episodes' }, region);
    if (episodes.length > EPISODES_SHOWN) {
      wrapper.append(button(expanded ? t('podcasts.showFewer') : tn('podcasts.showAll', episodes.length), () => {
        if (expanded) this.expanded.delete(channel.id);
        else this.expanded.add(channel.id);
        this.signature = null;
        this.load();
      }, { class: 'more-button', 'data-focus': `more-${channel.id}`, 'aria-expanded': String(expanded) }));
    }
    return wrapper;
  }
}
