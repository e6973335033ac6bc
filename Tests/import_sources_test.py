"""`shelf import-from` against files built as their programs build them.

    import_sources_test.py SHELF LIBRARY MUSIC WORKDIR BEET

MUSIC holds six FLAC files the Swift test wrote (short tones); this script tags them with mutagen
(as Picard would), imports them into LIBRARY (which has the user ann), and then builds:

- beets' library.db with real beets (BEET): `beet import -A` and `beet modify` setting rating (as
  mpdstats writes it, 0–1, and on a 0–5 scale) and play_count;
- Navidrome's navidrome.db from its published schema (navidrome_schema.sql), filled as Navidrome
  fills it: paths relative to a library folder that has since moved, NFD (decomposed) Japanese
  names, a deleted song, users ann and 小林, album and artist stars, a playlist, a queue, a bookmark;
- Apple Music's Library.xml with plistlib (Apple's own property-list format): file:// locations
  percent-encoded under a moved folder, a catalogue track without a location, a computed rating,
  the Library and Music lists that are not the user's, and a user playlist;
- ListenBrainz's export (JSON lines) and a Last.fm CSV, with names spelled without accents and a
  title that two tracks share.

Each is imported, its report checked (matched, ambiguous, unmatched, with reasons), then the same
file is imported again and must change nothing: the change token stays where it was. What the
Navidrome import made is read back by a Subsonic client's calls to `shelf serve`. Prints one line
per check; exits 1 if any failed.
"""

import json
import os
import plistlib
import signal
import sqlite3
import subprocess
import sys
import time
import unicodedata
import urllib.parse
import urllib.request
from datetime import datetime, timezone

from check_kit import HANG, check, failures
from mutagen.flac import FLAC

SHELF, LIBRARY, MUSIC, WORK, BEET = sys.argv[1:6]
HERE = os.path.dirname(os.path.abspath(__file__))
PASSWORD = "ann's secret"

# The six tracks: folder, file, artist, title, album, recording MBID.
TRACKS = [
    ("くるり/ばらの花", "01 ばらの花.flac", "くるり", "ばらの花", "ばらの花", "11111111-1111-4111-8111-111111111111"),
    ("くるり/ばらの花", "02 ワンダーフォーゲル.flac", "くるり", "ワンダーフォーゲル", "ばらの花", "22222222-2222-4222-8222-222222222222"),
    ("Zeta/First", "01 Opening.flac", "Zeta", "Opening", "First", None),
    ("Zeta/Live", "01 Opening.flac", "Zeta", "Opening", "Live", None),
    ("Eta/Second", "01 Second Song.flac", "Eta", "Second Song", "Second", None),
    ("Sigur Rós/Ágætis byrjun", "01 Svefn-g-englar.flac", "Sigur Rós", "Svefn-g-englar", "Ágætis byrjun", None),
]


def shelf(*args, expect=0):
    result = subprocess.run([SHELF, "--library", LIBRARY, *args], capture_output=True, text=True, timeout=HANG,
                            env={**os.environ, "XDG_CONFIG_HOME": "/nonexistent-shelf-test-config"})
    assert result.returncode == expect, f"shelf {' '.join(args)} exited {result.returncode}: {result.stderr}"
    return result


def shelf_json(*args):
    return json.loads(shelf(*args, "--json").stdout)


def token():
    return shelf("token").stdout.strip()


def path(index):
    folder, name = TRACKS[index][:2]
    return os.path.join(MUSIC, folder, name)


def track_ids():
    """Shelf's track IDs by (artist, title, album)."""
    items = shelf_json("tracks", "--limit", "100")["items"]
    return {(t["artist"], t["title"], t["album"]): t["id"] for t in items}


def import_twice(source, file, *extra):
    """The report of a first import, after checking that a second one changes nothing."""
    report = shelf_json("import-from", source, file, *extra)
    before = token()
    again = shelf_json("import-from", source, file, *extra)
    assert token() == before, f"the second {source} import wrote something: {again['applied']}"
    assert all(value == 0 for value in again["applied"].values()), again["applied"]
    assert (again["matched"], again["ambiguous"], again["unmatched"]) == (report["matched"], report["ambiguous"], report["unmatched"])
    return report


def issues(report):
    return {(item["outcome"], item["item"].split(" (")[0]) for item in report["items"]}


# MARK: The library


def tag_and_import():
    for folder, name, artist, title, album, mbid in TRACKS:
        audio = FLAC(os.path.join(MUSIC, folder, name))
        audio.update({"artist": artist, "title": title, "album": album, "albumartist": artist, "tracknumber": name[:2]})
        if mbid:
            audio["musicbrainz_trackid"] = mbid
        audio.save()
    shelf("import", MUSIC)
    assert len(track_ids()) == 6


# MARK: beets


def beets():
    home = os.path.join(WORK, "beets")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.yaml"), "w") as f:
        f.write(f"directory: {MUSIC}\nlibrary: {os.path.join(home, 'library.db')}\nplugins: []\n"
                "import:\n    copy: no\n    move: no\n    write: no\n    autotag: no\n    quiet: yes\n    resume: no\n    incremental: no\n")
    env = {**os.environ, "BEETSDIR": home, "HOME": home}

    def beet(*args):
        result = subprocess.run([BEET, *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG)
        assert result.returncode == 0, f"beet {' '.join(args)}: {result.stderr}"

    beet("import", "-A", "-q", MUSIC)
    # mpdstats writes ratings from 0 to 1; a person's own `beet modify` often uses 0–5.
    beet("modify", "-y", "title:ワンダーフォーゲル", "rating=0.6", "play_count=12", "last_played=1700000000")
    beet("modify", "-y", "title:Second Song", "rating=4", "play_count=3", "skip_count=2")
    database = os.path.join(home, "library.db")
    with sqlite3.connect(database) as db:
        relative = db.execute("SELECT count(*) FROM items WHERE substr(CAST(path AS TEXT), 1, 1) <> '/'").fetchone()[0]
    report = import_twice("beets", database, "--user", "ann")
    assert (report["matched"], report["ambiguous"], report["unmatched"]) == (6, 0, 0), report
    applied = report["applied"]
    assert (applied["ratings"], applied["plays"]) == (2, 15), applied
    ids = track_ids()
    song = shelf_json("track", str(ids[("くるり", "ワンダーフォーゲル", "ばらの花")]))
    assert song["rating"] == 60 and song["playCount"] == 12 and song["lastPlayed"].startswith("2023-11-14T22:13:20"), song
    second = shelf_json("track", str(ids[("Eta", "Second Song", "Second")]))
    assert second["rating"] == 80 and second["playCount"] == 3 and second["skipCount"] == 2, second
    print(f"     beets kept {relative} of 6 paths relative to its music directory", flush=True)


# MARK: Navidrome


def navidrome():
    database = os.path.join(WORK, "navidrome.db")
    db = sqlite3.connect(database)
    with open(os.path.join(HERE, "navidrome_schema.sql")) as f:
        db.executescript(f.read())
    now = "2026-11-30 09:53:20.123456789+09:00"
    db.execute("INSERT INTO library (id, name, path) VALUES (1, 'Music Library', '/srv/old-music')")
    for uid, name in (("u-ann", "ann"), ("u-kobayashi", "小林")):
        db.execute("INSERT INTO user (id, user_name, name, password, created_at, updated_at) VALUES (?, ?, ?, 'encrypted', ?, ?)",
                   (uid, name, name, now, now))
    songs = {}
    # The music folder moved (/srv/old-music is now MUSIC), and the folder names are NFD as a Mac wrote them.
    for index, (folder, name, artist, title, album, mbid) in enumerate(TRACKS):
        songs[index] = f"mf{index}"
        # Navidrome's own tags for two songs differ from Shelf's (romanized; another album name),
        # and neither has an MBID: only the path, NFD under the moved folder, can find them.
        if index == 0:
            title, mbid = "Bara no Hana", None
        if index == 3:
            album = "Live at Budokan"
        db.execute(
            "INSERT INTO media_file (id, path, title, album, artist, album_artist, album_id, artist_id, duration, mbz_recording_id, library_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0.3, ?, 1)",
            (songs[index], unicodedata.normalize("NFD", f"{folder}/{name}"), title, album, artist, artist, f"al-{folder}", f"ar-{artist}", mbid or ""))
    db.execute("INSERT INTO media_file (id, path, title, album, artist, missing, library_id) VALUES ('gone', 'くるり/old/03 消えた曲.flac',"
               " '消えた曲', 'old', 'くるり', 1, 1)")
    db.execute("INSERT INTO album (id, name, album_artist) VALUES ('al-くるり/ばらの花', 'ばらの花', 'くるり')")
    db.execute("INSERT INTO artist (id, name) VALUES ('ar-くるり', 'くるり')")

    def annotate(user, item, kind, plays=0, played=None, rating=0, starred=False):
        db.execute("INSERT INTO annotation (user_id, item_id, item_type, play_count, play_date, rating, starred, starred_at)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (user, item, kind, plays, played, rating, starred, now if starred else None))

    annotate("u-ann", "mf0", "media_file", plays=7, played="2026-11-29 21:00:00.5+09:00", rating=4, starred=True)
    annotate("u-ann", "gone", "media_file", plays=3, played=now)
    annotate("u-ann", "al-くるり/ばらの花", "album", starred=True)
    annotate("u-ann", "ar-くるり", "artist", starred=True)
    annotate("u-kobayashi", "mf2", "media_file", plays=2, played="2026-11-01 08:00:00+00:00")
    annotate("u-kobayashi", "mf3", "media_file", plays=1, played="2026-11-02 08:00:00+00:00")
    db.execute("INSERT INTO playlist (id, name, comment, public, owner_id, created_at, updated_at) VALUES ('pl1', '夜 mix', '', 1, 'u-ann', ?, ?)",
               (now, now))
    for position, item in enumerate(["mf1", "mf0", "gone", "mf2"], start=1):
        db.execute("INSERT INTO playlist_tracks (id, playlist_id, media_file_id) VALUES (?, 'pl1', ?)", (position, item))
    db.execute("INSERT INTO playqueue (id, user_id, current, position, items, changed_by, created_at, updated_at)"
               " VALUES ('pq1', 'u-ann', 1, 5000, 'mf1,mf0,mf2', 'Symfonium', ?, ?)", (now, now))
    db.execute("INSERT INTO bookmark (user_id, item_id, item_type, comment, position, changed_by, created_at, updated_at)"
               " VALUES ('u-ann', 'mf1', 'media_file', 'the bridge', 61000, 'Symfonium', ?, ?)", (now, now))
    db.commit()
    db.close()

    dry = shelf_json("import-from", "navidrome", database, "--map", f"/srv/old-music={MUSIC}", "--dry-run")
    assert dry["dryRun"] and dry["applied"]["plays"] == 10 and dry["usersCreated"] == ["小林"], dry
    assert "小林" not in [u["name"] for u in shelf_json("user", "list")["users"]], "a dry run made a user"
    report = import_twice("navidrome", database, "--map", f"/srv/old-music={MUSIC}")
    # The songs anyone annotated, listed, queued or bookmarked: four found, the deleted one not.
    assert (report["matched"], report["ambiguous"], report["unmatched"]) == (4, 0, 1), report
    assert issues(report) == {("unmatched", "くるり – 消えた曲")}, report["items"]
    assert report["usersCreated"] == ["小林"] and sorted(report["users"]) == ["ann", "小林"], report
    applied = report["applied"]
    assert (applied["stars"], applied["ratings"], applied["plays"], applied["playlists"], applied["playlistItems"]) == (1, 1, 10, 1, 3), applied
    assert (applied["queues"], applied["bookmarks"], applied["albumStars"], applied["artistStars"]) == (1, 1, 1, 1), applied
    return report


def navidrome_as_a_client_sees_it():
    """What ann's Subsonic app shows after the move."""
    log = open(os.path.join(WORK, "serve.log"), "w+")
    server = subprocess.Popen([SHELF, "--library", LIBRARY, "serve", "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, "XDG_CONFIG_HOME": "/nonexistent-shelf-test-config"})
    try:
        deadline = time.monotonic() + HANG
        port = None
        while port is None and time.monotonic() < deadline:
            log.seek(0)
            for line in log.read().splitlines():
                if "serving" in line and " on http://127.0.0.1:" in line:
                    port = int(line.rsplit(":", 1)[1])
            time.sleep(0.05)
        assert port, "shelf serve did not start"

        def call(name, **params):
            query = urllib.parse.urlencode({"u": "ann", "p": PASSWORD, "v": "1.16.1", "c": "import-test", "f": "json", **params})
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/rest/{name}?{query}", timeout=30) as response:
                document = json.loads(response.read())["subsonic-response"]
            assert document["status"] == "ok", document
            return document

        ids = track_ids()
        bara, wonder, opening = ids[("くるり", "ばらの花", "ばらの花")], ids[("くるり", "ワンダーフォーゲル", "ばらの花")], ids[("Zeta", "Opening", "First")]
        starred = call("getStarred2")["starred2"]
        assert [s["title"] for s in starred.get("song", [])] == ["ばらの花"], starred
        assert [a["name"] for a in starred.get("album", [])] == ["ばらの花"] and [a["name"] for a in starred.get("artist", [])] == ["くるり"], starred
        song = call("getSong", id=f"tr-{bara}")["song"]
        assert song["userRating"] == 4 and song["playCount"] == 7 and song["played"].startswith("2026-11-29T12:00:00"), song
        playlists = call("getPlaylists")["playlists"]["playlist"]
        mix = [p for p in playlists if p["name"] == "夜 mix"]
        assert len(mix) == 1 and mix[0]["public"] is True and mix[0]["owner"] == "ann", playlists
        entries = call("getPlaylist", id=mix[0]["id"])["playlist"]["entry"]
        assert [e["id"] for e in entries] == [f"tr-{wonder}", f"tr-{bara}", f"tr-{opening}"], entries
        queue = call("getPlayQueue")["playQueue"]
        assert [e["id"] for e in queue["entry"]] == [f"tr-{wonder}", f"tr-{bara}", f"tr-{opening}"] and queue["current"] == f"tr-{bara}", queue
        assert queue["position"] == 5000 and queue["changedBy"] == "Symfonium", queue
        bookmarks = call("getBookmarks")["bookmarks"]["bookmark"]
        assert [(b["entry"]["id"], b["position"], b["comment"]) for b in bookmarks] == [(f"tr-{wonder}", 61000, "the bridge")], bookmarks
        # 小林 was made without a password anyone knows, with their own plays.
        users = {u["name"]: u for u in shelf_json("user", "list")["users"]}
        assert "小林" in users and not users["小林"]["admin"], users
        live = shelf_json("track", str(ids[("Zeta", "Opening", "Live")]))
        assert live["playCount"] == 0, "小林's plays are theirs, not the owner's"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(HANG)


# MARK: Apple Music


def itunes():
    moved = "/Users/ann/Music/iTunes/iTunes Media/Music"

    def location(index):
        folder, name = TRACKS[index][:2]
        return "file://localhost" + urllib.parse.quote(f"{moved}/{folder}/{name}")

    added = datetime(2010, 4, 1, 12, 0, tzinfo=timezone.utc)
    tracks = {
        "101": {"Track ID": 101, "Name": "Opening", "Artist": "Zeta", "Album": "Live", "Total Time": 300, "Location": location(3),
                "Persistent ID": "A1", "Play Count": 5, "Play Date UTC": datetime(2024, 6, 1, 8, 30, tzinfo=timezone.utc),
                "Rating": 100, "Loved": True, "Skip Count": 1, "Date Added": added},
        "102": {"Track ID": 102, "Name": "Svefn-g-englar", "Artist": "Sigur Rós", "Album": "Ágætis byrjun", "Location": location(5),
                "Persistent ID": "A2", "Rating": 60, "Rating Computed": True, "Date Added": added},
        "103": {"Track ID": 103, "Name": "Cloud Song", "Artist": "Somebody Else", "Album": "Streaming", "Persistent ID": "A3",
                "Track Type": "Remote", "Apple Music": True, "Play Count": 4},
    }
    library = {
        "Major Version": 1, "Minor Version": 1, "Application Version": "1.4.5.7", "Library Persistent ID": "0123456789ABCDEF",
        "Music Folder": "file://localhost" + urllib.parse.quote("/Users/ann/Music/iTunes/iTunes Media/"), "Tracks": tracks,
        "Playlists": [
            {"Name": "Library", "Master": True, "Playlist ID": 1, "Playlist Persistent ID": "P0", "Visible": False,
             "Playlist Items": [{"Track ID": 101}, {"Track ID": 102}, {"Track ID": 103}]},
            {"Name": "Music", "Distinguished Kind": 4, "Playlist ID": 2, "Playlist Persistent ID": "P1", "Playlist Items": [{"Track ID": 101}]},
            {"Name": "Road trip", "Playlist ID": 3, "Playlist Persistent ID": "P2",
             "Playlist Items": [{"Track ID": 102}, {"Track ID": 101}, {"Track ID": 103}]},
        ],
    }
    file = os.path.join(WORK, "Library.xml")
    with open(file, "wb") as f:
        plistlib.dump(library, f, fmt=plistlib.FMT_XML)
    report = import_twice("itunes", file, "--user", "ann", "--map", f"{moved}={MUSIC}")
    assert (report["matched"], report["ambiguous"], report["unmatched"]) == (2, 0, 1), report
    assert issues(report) == {("unmatched", "Somebody Else – Cloud Song")}, report["items"]
    applied = report["applied"]
    assert (applied["stars"], applied["ratings"], applied["plays"], applied["playlists"], applied["playlistItems"]) == (1, 1, 5, 1, 2), applied
    assert applied["datesAdded"] == 2, applied
    ids = track_ids()
    live = shelf_json("track", str(ids[("Zeta", "Opening", "Live")]))
    assert live["rating"] == 100 and live["playCount"] == 5 and live["skipCount"] == 1 and live["dateAdded"].startswith("2010-04-01"), live
    sigur = shelf_json("track", str(ids[("Sigur Rós", "Svefn-g-englar", "Ágætis byrjun")]))
    assert sigur["rating"] == 0, "a computed (album) rating was taken as the track's own"


# MARK: Listens


def listens():
    ids = track_ids()
    before = {key: shelf_json("track", str(ids[key]))["playCount"] for key in ids}
    lines = [
        {"listened_at": 1764000000, "track_metadata": {"artist_name": "Kururi", "track_name": "Bara no Hana",
                                                       "additional_info": {"recording_mbid": TRACKS[0][5]}}},
        {"listened_at": 1764000300, "track_metadata": {"artist_name": "くるり", "track_name": "ばらの花", "release_name": "ばらの花",
                                                       "mbid_mapping": {"recording_mbid": TRACKS[0][5]}}},
        {"listened_at": 1764000600, "track_metadata": {"artist_name": "ZETA", "track_name": "opening", "release_name": "Live"}},
        {"listened_at": 1764000900, "track_metadata": {"artist_name": "Nobody", "track_name": "Not Here"}},
    ]
    file = os.path.join(WORK, "listens.jsonl")
    with open(file, "w") as f:
        f.write("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n")
    dry = shelf_json("import-from", "listenbrainz", file, "--user", "ann", "--dry-run")
    report = import_twice("listenbrainz", file, "--user", "ann")
    assert dry["applied"] == report["applied"] and dry["matched"] == report["matched"], (dry, report)
    assert (report["matched"], report["ambiguous"], report["unmatched"]) == (3, 0, 1), report
    assert report["applied"]["listens"] == 4 and report["applied"]["plays"] == 3, report["applied"]
    csv = os.path.join(WORK, "scrobbles.csv")
    with open(csv, "w") as f:
        f.write('Sigur Ros,Agaetis byrjun,Svefn-g-englar,01 Dec 2025 10:00\n"Zeta",,"Opening",01 Dec 2025 10:05\n')
    report = import_twice("lastfm", csv, "--user", "ann")
    assert (report["matched"], report["ambiguous"], report["unmatched"]) == (1, 1, 0), report
    assert issues(report) == {("ambiguous", "Zeta – Opening")}, report["items"]
    assert report["applied"]["listens"] == 2 and report["applied"]["plays"] == 1, report["applied"]
    after = {key: shelf_json("track", str(ids[key]))["playCount"] for key in ids}
    assert after[("くるり", "ばらの花", "ばらの花")] - before[("くるり", "ばらの花", "ばらの花")] == 2
    assert after[("Zeta", "Opening", "Live")] - before[("Zeta", "Opening", "Live")] == 1
    history = shelf_json("history", "--user", "ann", "--limit", "100")["listens"]
    imported = [(h["title"], h["source"], h["track"] is not None) for h in history if h["source"].startswith("import:")]
    assert ("Not Here", "import:listenbrainz", False) in imported and ("Opening", "import:lastfm", False) in imported, imported
    assert len(imported) == 6, imported


def mistakes():
    bad = shelf("import-from", "navidrome", os.path.join(WORK, "Library.xml"), expect=2)
    assert "cannot import from" in bad.stderr and "Library.xml" in bad.stderr, bad.stderr
    missing = shelf("import-from", "beets", os.path.join(WORK, "nothing.db"), expect=2)
    assert "no such file" in missing.stderr, missing.stderr
    usage = shelf("import-from", "winamp", "x", expect=1)
    assert "expected navidrome, beets, itunes, listenbrainz or lastfm" in usage.stderr, usage.stderr


check("the library: six tracks tagged by mutagen", tag_and_import)
if os.path.exists(BEET):
    check("beets: ratings (0–1 and 0–5) and plays from real beets' flexible attributes, relative paths", beets)
else:
    print("skip beets: not installed in .venv/beets (make test installs it from PyPI)", flush=True)
check("navidrome: users, stars, ratings, plays, a playlist, the queue and a bookmark; NFD paths under a moved folder", navidrome)
check("navidrome: a Subsonic client sees the stars, ratings, playlist, queue and bookmark", navidrome_as_a_client_sees_it)
check("itunes: Library.xml with a moved folder, a catalogue track and Apple's own lists", itunes)
check("listens: ListenBrainz JSON lines and a Last.fm CSV, matched by MBID, folded names and album", listens)
check("mistakes: a file that is not the source, a missing file, an unknown source", mistakes)
sys.exit(1 if failures else 0)
