"""A client of Shelf's two OpenSubsonic extensions, written against their documents
(docs/extension-shelfSync.md, docs/extension-shelfAlphabetIndex.md): it keeps a copy of the
library in step by token while another process imports, edits and deletes, and draws jump bars.

Usage: shelf_sync_client_test.py BASE PORT USER PASSWORD SHELF_BINARY LIBRARY_DIR WORK_DIR ROUNDS
Exits non-zero with the failing check on the first failure."""
import json
import math
import os
import random
import struct
import subprocess
import sys
import urllib.parse
import urllib.request
import wave

base, port, user, password, shelf, library, work, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7], int(sys.argv[8])
rng = random.Random(25)


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def call(endpoint, **params):
    pairs = [("u", user), ("p", password), ("v", "1.16.1"), ("c", "sync-client"), ("f", "json")]
    for name, value in params.items():
        for item in (value if isinstance(value, list) else [value]):
            pairs.append((name, str(item)))
    with urllib.request.urlopen(f"{base}:{port}/rest/{endpoint}?{urllib.parse.urlencode(pairs)}", timeout=60) as answer:
        return json.loads(answer.read())["subsonic-response"]


def ok(endpoint, **params):
    response = call(endpoint, **params)
    check(response["status"] == "ok", f"{endpoint} {params}: {response}")
    return response


def run_shelf(*args):
    result = subprocess.run([shelf, "--library", library, *args, "--json"], capture_output=True, text=True)
    check(result.returncode == 0, f"shelf {args}: {result.stderr}")
    return json.loads(result.stdout) if result.stdout.strip() else {}


def full_copy():
    """The whole library as a client that knows nothing sees it."""
    songs, albums, artists = {}, {}, {}
    offset = 0
    while True:
        page = ok("search3", query='""', artistCount=0, albumCount=0, songCount=500, songOffset=offset)["searchResult3"].get("song", [])
        for s in page:
            songs[s["id"]] = (s.get("title"), s.get("albumId"), s.get("artistId"))
        if len(page) < 500:
            break
        offset += 500
    offset = 0
    while True:
        page = ok("getAlbumList2", type="alphabeticalByName", size=500, offset=offset)["albumList2"].get("album", [])
        for a in page:
            albums[a["id"]] = (a["name"], a.get("songCount"))
        if len(page) < 500:
            break
        offset += 500
    offset = 0
    while True:
        page = ok("search3", query='""', artistCount=500, artistOffset=offset, albumCount=0, songCount=0)["searchResult3"].get("artist", [])
        for a in page:
            artists[a["id"]] = (a["name"], a.get("albumCount"))
        if len(page) < 500:
            break
        offset += 500
    playlists = {p["id"]: (p["name"], p.get("songCount")) for p in ok("getPlaylists")["playlists"].get("playlist", [])}
    return {"songs": songs, "albums": albums, "artists": artists, "playlists": playlists}


def song_row(id):
    s = ok("getSong", id=id)["song"]
    return (s.get("title"), s.get("albumId"), s.get("artistId"))


def album_row(id):
    a = ok("getAlbum", id=id)["album"]
    return (a["name"], a.get("songCount"))


def artist_row(id):
    a = ok("getArtist", id=id)["artist"]
    return (a["name"], a.get("albumCount"))


def playlist_row(id):
    p = ok("getPlaylist", id=id)["playlist"]
    return (p["name"], p.get("songCount"))


# Start: the token first, then everything; what changes meanwhile comes with the next answer.
token = ok("getLibraryChanges")["libraryChanges"]["token"]
copy = full_copy()
check(copy["songs"] and copy["albums"] and copy["artists"], "a library to start from")
bad = call("getLibraryChanges", token="shelf1.00000000-0000-0000-0000-000000000000.5")
check(bad["status"] == "failed" and bad["error"]["code"] == 80, f"a foreign token asks for a full resync: {bad}")

os.makedirs(work, exist_ok=True)
made_playlists = []
for round in range(rounds):
    # Another process changes the library: new files, edits of album and artist, deletions.
    folder = os.path.join(work, f"round{round}")
    os.makedirs(folder)
    for n in range(rng.randint(1, 3)):
        path = os.path.join(folder, f"new{n}.wav")
        frequency = rng.uniform(200, 2000)
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * frequency * i / 8000))) for i in range(4000)))
    imported = run_shelf("import", folder)
    ids = [int(s[3:]) for s in copy["songs"]]
    new_ids = sorted(set(int(t["id"]) for t in run_shelf("tracks", "--sort", "dateAdded:desc", "--limit", "3")["items"]))
    for id in rng.sample(ids + new_ids, min(3, len(ids))):
        change = rng.choice([f"album=Album {rng.randint(1, 6)}", f"albumArtist=Artist {rng.randint(1, 4)}", f"title=Title {rng.random():.5f}"])
        run_shelf("edit", str(id), "--set", change)
    if len(ids) > 5:
        run_shelf("delete", str(rng.choice(ids)))
    if rng.random() < 0.5 or not made_playlists:
        created = ok("createPlaylist", name=f"Round {round}", songId=[rng.choice(list(copy["songs"]))])["playlist"]["id"]
        made_playlists.append(created)
    elif made_playlists:
        ok("deletePlaylist", id=made_playlists.pop(0))

    # The client catches up by token, page after page.
    while True:
        answer = ok("getLibraryChanges", token=token, limit=2)["libraryChanges"]
        for kind, fetch in (("songs", song_row), ("albums", album_row), ("artists", artist_row), ("playlists", playlist_row)):
            section = answer.get(kind, {})
            for item in section.get("deleted", []):
                copy[kind].pop(item["id"], None)
            for item in section.get("inserted", []) + section.get("updated", []):
                response = call("getSong" if kind == "songs" else "getAlbum" if kind == "albums" else "getArtist" if kind == "artists" else "getPlaylist", id=item["id"])
                if response["status"] == "ok":
                    copy[kind][item["id"]] = fetch(item["id"])
                else:
                    # Gone again by a later transaction than this page answers: its deletion follows.
                    check(response["error"]["code"] == 70, f"{kind} {item}: {response}")
        token = answer["token"]
        if not answer["hasMore"]:
            break
    truth = full_copy()
    for kind in ("songs", "albums", "artists", "playlists"):
        check(copy[kind] == truth[kind], f"round {round}: {kind} differ: copy-only {set(copy[kind].items()) - set(truth[kind].items())}, server-only {set(truth[kind].items()) - set(copy[kind].items())}")


# Jump bars: each section's offset is where that section's first item is in the list's own paging.
def first_letter(name):
    name = (name or "").strip()
    for article in ("The ", "A ", "An "):
        if name.startswith(article):
            name = name[len(article):]
    return name[:1].upper()


def list_item(kind, offset):
    if kind == "albumsByArtist":
        page = ok("getAlbumList2", type="alphabeticalByArtist", size=1, offset=offset)["albumList2"].get("album", [])
    elif kind == "albums":
        page = ok("getAlbumList2", type="alphabeticalByName", size=1, offset=offset)["albumList2"].get("album", [])
    elif kind == "artists":
        page = ok("search3", query='""', artistCount=1, artistOffset=offset, albumCount=0, songCount=0)["searchResult3"].get("artist", [])
    else:
        page = ok("search3", query='""', artistCount=0, albumCount=0, songCount=1, songOffset=offset)["searchResult3"].get("song", [])
    check(len(page) == 1, f"{kind} item at {offset}")
    return page[0]


def item_name(kind, item):
    if kind == "songs":
        return item.get("displayAlbumArtist")
    return item.get("artist") if kind == "albumsByArtist" else item.get("name")


for kind, params in (("albums", {"list": "albums", "type": "alphabeticalByName"}), ("artists", {"list": "artists"}),
                     ("songs", {"list": "songs", "sort": "albumArtist"}), ("albumsByArtist", {"list": "albums", "type": "alphabeticalByArtist"})):
    index = ok("getAlphabetIndex", **params)["alphabetIndex"]
    sections = index.get("section", [])
    check(sections, f"{kind}: sections")
    expected = 0
    for section in sections:
        check(section["offset"] == expected and section["count"] > 0, f"{kind}: sections follow each other: {sections}")
        expected += section["count"]
    everything = truth["albums" if kind == "albumsByArtist" else kind]
    check(index["total"] == expected == len(everything), f"{kind}: total {index['total']} of {len(everything)}")
    for section in sections:
        item = list_item(kind, section["offset"])
        name = item_name(kind, item)
        letters = {first_letter(name), first_letter(item.get("sortName"))}
        if section["name"].isascii() and section["name"].isalpha():
            check(section["name"] in letters, f"{kind}: section {section['name']} jumps to {name!r}")
        if section["offset"] > 0:
            before = list_item(kind, section["offset"] - 1)
            before_name = item_name(kind, before)
            if section["name"].isascii() and section["name"].isalpha():
                check(section["name"] not in {first_letter(before_name), first_letter(before.get("sortName"))} or before_name == name,
                      f"{kind}: the item before section {section['name']} ({before_name!r}) is not in it")
check(call("getAlphabetIndex", list="albums", type="newest")["error"]["code"] == 0, "newest has no alphabet")
check(call("getAlphabetIndex", list="albums", type="byGenre")["error"]["code"] == 10, "byGenre needs its genre")
print(f"shelf sync client: {rounds} rounds in step, four jump bars")
