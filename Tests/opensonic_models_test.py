"""Parses podcast and jukebox answers of a running `shelf serve` into py-opensonic's strict
models (a Subsonic client from PyPI): every answer must fit its dataclasses.

Usage: opensonic_models_test.py BASE_URL PORT USER PASSWORD podcasts EPISODE_ID
       opensonic_models_test.py BASE_URL PORT USER PASSWORD jukebox SONG_ID
       opensonic_models_test.py BASE_URL PORT USER PASSWORD browse SONG_COUNT
Exits non-zero with the failing check on the first failure."""
import sys

import libopensonic

base, port, user, password, mode, subject = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


conn = libopensonic.Connection(base, username=user, password=password, port=port)
if mode == "browse":
    # The walk a folder-browsing app makes, whichever tree the server browses (folders or tags):
    # getIndexes, then getMusicDirectory down every directory; each song is reached exactly once.
    # (Not getMusicFolders: this py-opensonic iterates `musicFolders` itself rather than its
    # `musicFolder` list, which the spec and every server send.)
    indexes = conn.get_indexes()
    pending = [a.id for i in (indexes.index or []) for a in (i.artist or [])]
    songs = [c.id for c in (indexes.child or [])]
    seen = set()
    while pending:
        directory_id = pending.pop()
        check(directory_id not in seen, f"directory {directory_id} reached twice")
        seen.add(directory_id)
        directory = conn.get_music_directory(directory_id)
        check(directory.id == directory_id and directory.name, f"getMusicDirectory {directory_id}: {directory}")
        for child in directory.child or []:
            if child.is_dir:
                pending.append(child.id)
            else:
                check(child.parent == directory_id, f"song {child.id} under {directory_id} has parent {child.parent}")
                songs.append(child.id)
    check(len(songs) == int(subject) and len(set(songs)) == len(songs), f"{len(songs)} songs reached ({len(set(songs))} distinct), {subject} expected")
    print(f"ok   {len(seen)} directories, {len(songs)} songs, each once")
elif mode == "podcasts":
    channels = conn.get_podcasts()
    check(channels and all(c.id and c.url and c.status for c in channels), f"getPodcasts: {channels}")
    episodes = [e for c in channels for e in (c.episode or [])]
    check(any(e.id == subject and e.stream_id == subject for e in episodes), f"the downloaded episode in getPodcasts: {episodes}")
    check(not conn.get_podcasts(inc_episodes=False)[0].episode, "getPodcasts without episodes")
    newest = conn.get_newest_podcasts(count=3)
    check(len(newest) == 3 and all(e.channel_id for e in newest), f"getNewestPodcasts: {newest}")
    episode = conn.get_podcast_episode(subject)
    check(episode.id == subject and getattr(episode.status, "value", episode.status) == "completed" and episode.duration, f"getPodcastEpisode: {episode}")
    # The writes as the library sends them: a second subscription to the same feed (another URL), refreshed, then gone.
    feed_url = next(c.url for c in channels if c.id == episode.channel_id)
    check(conn.create_podcast_channel(feed_url + "?copy=1"), "createPodcastChannel")
    check(conn.refresh_podcasts(), "refreshPodcasts")
    copy = next(c for c in conn.get_podcasts(inc_episodes=False) if c.url == feed_url + "?copy=1")
    check(conn.delete_podcast_channel(copy.id), "deletePodcastChannel")
    check(all(c.id != copy.id for c in conn.get_podcasts(inc_episodes=False)), "deletePodcastChannel took")
elif mode == "jukebox":
    status = conn.jukebox_control("add", sids=[subject])
    check(status.current_index == 0 and status.playing is False, f"jukebox add: {status}")
    playlist = conn.jukebox_control("get")
    check([e.id for e in (playlist.entry or [])] == [subject], f"jukebox get: {playlist}")
    check(abs(conn.jukebox_control("setGain", gain=0.25).gain - 0.25) < 1e-6, "jukebox setGain")
    check(conn.jukebox_control("clear").current_index == -1, "jukebox clear")
else:
    check(False, f"unknown mode {mode}")
print(f"py-opensonic {mode}: all checks passed")
