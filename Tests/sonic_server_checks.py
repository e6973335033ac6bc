"""The server half of sonic_test.py: the OpenSubsonic sonicSimilarity endpoints (JSON and XML),
getSimilarSongs by song, album and artist, the native API, the background analysis surviving a
worker killed in the middle of a file, and Ctrl-C in the middle of `shelf analyze`."""

import json
import os
import signal
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

from check_kit import HANG, ShelfServe, check, wait_until

PASSWORD = "ann's secret"
NS = "{http://subsonic.org/restapi}"


ENV = {**os.environ, "XDG_CONFIG_HOME": "/nonexistent-shelf-test-config"}


def cli(shelf, library, args, extra=None, **kwargs):
    return subprocess.run([shelf, "--library", library, *args], capture_output=True, text=True, timeout=HANG, env={**ENV, **(extra or {})},
                          **kwargs)


def cli_json(shelf, library, args):
    result = cli(shelf, library, [*args, "--json"])
    assert result.returncode == 0, f"shelf {' '.join(args)}: {result.stderr}"
    return json.loads(result.stdout)


class Server(ShelfServe):
    """`shelf serve` on a free loopback port with its log kept; `get` signs in with ann's API key."""

    def __init__(self, shelf, library, key, args=(), extra=None):
        self.key = key
        self.serve(shelf, library, {**ENV, **(extra or {})}, args)

    def get(self, path, method="GET"):
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {self.key}"}, method=method)
        try:
            with urllib.request.urlopen(request, timeout=HANG) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def similar(self, track, count, sound_only=True):
        """`/api/tracks/{id}/similar`'s matches (by sound alone unless told)."""
        status, doc = self.get(f"/api/tracks/{track}/similar?count={count}" + ("&sameAlbum=true" if sound_only else ""))
        assert status == 200, doc
        return doc["matches"]

    def rest(self, name, f="json", **params):
        query = urllib.parse.urlencode({"u": "ann", "p": PASSWORD, "v": "1.16.1", "c": "sonic-test", "f": f, **params})
        with urllib.request.urlopen(f"{self.base}/rest/{name}?{query}", timeout=HANG) as response:
            body = response.read()
        return json.loads(body)["subsonic-response"] if f == "json" else ET.fromstring(body)


def open_server(shelf, library):
    """Adds ann (an admin) and her API key, and starts `shelf serve`."""
    added = cli(shelf, library, ["user", "add", "ann", "--admin", "--password-stdin"], input=PASSWORD + "\n")
    assert added.returncode == 0, added.stderr
    return Server(shelf, library, cli_json(shelf, library, ["user", "key", "ann"])["key"])


def run(server, shelf, library, music, ids, tracks, families):
    env = ENV

    def cli_json_(args):
        return cli_json(shelf, library, args)

    def make(path, frequency):
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"sine=f={frequency}:d=8", "-c:a", "flac", path], check=True)

    drums = ids[os.path.join(music, "drums", "drums-0.mp3")]
    chords = ids[os.path.join(music, "chords", "chords-1.opus")]
    broken = tracks[os.path.join(music, "bad", "broken.flac")]["id"]
    family_of = {ids[path]: family for path, family in families.items()}

    def extension_advertised():
        extensions = server.rest("getOpenSubsonicExtensions")["openSubsonicExtensions"]
        assert {"name": "sonicSimilarity", "versions": [1]} in extensions, extensions

    def similar_tracks_json_and_xml():
        doc = server.rest("getSonicSimilarTracks", id=f"tr-{drums}", count=5)
        matches = doc["sonicMatch"]
        assert len(matches) == 5, doc
        sims = [m["similarity"] for m in matches]
        assert sims == sorted(sims, reverse=True) and all(0 < s < 1 for s in sims), sims
        assert all(m["entry"]["id"].startswith("tr-") and m["entry"]["title"] for m in matches)
        # Other albums first: drums-0's two session mates give way to the other three drum tracks.
        assert sum(family_of.get(int(m["entry"]["id"][3:])) == "drums" for m in matches) == 3, matches
        root = server.rest("getSonicSimilarTracks", f="xml", id=f"tr-{drums}", count=5)
        xml = root.findall(f"{NS}sonicMatch")
        assert root.get("status") == "ok" and [float(x.get("similarity")) for x in xml] == sims, ET.tostring(root)[:500]
        assert [x.find(f"{NS}entry").get("id") for x in xml] == [m["entry"]["id"] for m in matches]
        every = server.rest("getSonicSimilarTracks", id=f"tr-{drums}", count=500)["sonicMatch"]
        assert len(every) == len(families) - 1, len(every)
        assert server.rest("getSonicSimilarTracks", id=f"tr-{drums}", count=501)["status"] == "failed"

    def not_analysed_and_unknown():
        doc = server.rest("getSonicSimilarTracks", id=f"tr-{broken}")
        assert doc["status"] == "ok" and doc["sonicMatch"] == [], doc
        missing = server.rest("getSonicSimilarTracks", id="tr-999999")
        assert missing["status"] == "failed" and missing["error"]["code"] == 70, missing
        path = server.rest("findSonicPath", startSongId=f"tr-{broken}", endSongId=f"tr-{drums}")
        assert path["status"] == "ok" and path["sonicMatch"] == [], path

    def sonic_path():
        doc = server.rest("findSonicPath", startSongId=f"tr-{drums}", endSongId=f"tr-{chords}", count=6)
        steps = [m["entry"]["id"] for m in doc["sonicMatch"]]
        assert steps[0] == f"tr-{drums}" and steps[-1] == f"tr-{chords}" and len(set(steps)) == len(steps) and 2 < len(steps) <= 6, steps
        assert doc["sonicMatch"][0]["similarity"] == 1.0
        root = server.rest("findSonicPath", f="xml", startSongId=f"tr-{drums}", endSongId=f"tr-{chords}", count=6)
        assert [x.find(f"{NS}entry").get("id") for x in root.findall(f"{NS}sonicMatch")] == steps

    def similar_songs_by_song_album_and_artist():
        song = server.rest("getSong", id=f"tr-{drums}")["song"]
        for element, name in [("similarSongs", "getSimilarSongs"), ("similarSongs2", "getSimilarSongs2")]:
            for seed in [song["id"], song["albumId"], song["artistId"]]:
                doc = server.rest(name, id=seed, count=4)
                songs = doc[element]["song"]
                assert 0 < len(songs) <= 4 and seed not in [s["id"] for s in songs], (name, seed, doc)
            by_song = server.rest(name, id=song["id"], count=3)[element]["song"]
            assert sum(family_of.get(int(s["id"][3:])) == "drums" for s in by_song) >= 2, by_song

    def native_api():
        status, doc = server.get(f"/api/tracks/{drums}/similar?count=3")
        assert status == 200 and len(doc["matches"]) == 3 and all(m["why"] and m["traits"] for m in doc["matches"]), doc
        assert doc["matches"][0]["track"]["id"] != drums
        status, doc = server.get(f"/api/mix?from={drums}&to={chords}&count=6")
        assert status == 200 and doc["path"][0]["track"]["id"] == drums and doc["path"][-1]["track"]["id"] == chords, doc
        album = server.rest("getSong", id=f"tr-{drums}")["song"]["albumId"]
        status, doc = server.get(f"/api/similar?album={album[3:]}&count=5&exclude={chords}")
        assert status == 200 and 0 < len(doc["matches"]) <= 5 and chords not in [m["track"]["id"] for m in doc["matches"]], doc
        status, doc = server.get("/api/analysis")
        assert status == 200 and doc["done"] == len(families) and doc["failed"] == 4 and doc["pending"] == 0 and not doc["enabled"], doc
        status, doc = server.get("/api/mix?from=abc&to=1")
        assert status == 400, doc

    for name, body in [
        ("subsonic: sonicSimilarity version 1 advertised once tracks are analysed", extension_advertised),
        ("subsonic: getSonicSimilarTracks in JSON and XML, most similar first, count up to 500", similar_tracks_json_and_xml),
        ("subsonic: a song not analysed gets an empty list, an unknown one error 70", not_analysed_and_unknown),
        ("subsonic: findSonicPath starts with the start song and ends with the end song", sonic_path),
        ("subsonic: getSimilarSongs(2) by song, album and artist ID, from the sonic neighbours", similar_songs_by_song_album_and_artist),
        ("api: /api/tracks/{id}/similar with why, /api/mix, /api/similar for an album, /api/analysis", native_api),
    ]:
        check(name, body)
    server.stop()

    # New tracks for the background run: one of them holds its worker until the test kills it.
    fresh = os.path.join(music, "fresh")
    os.makedirs(fresh)
    for index, frequency in enumerate([310, 370, 430]):
        make(os.path.join(fresh, f"fresh-{index}.flac"), frequency)
    cli_json_(["import", fresh])
    hold = os.path.join(tempfile.mkdtemp(), "held")

    def killed_worker():
        background = Server(shelf, library, server.key, ["--analysis"], {"SHELF_ANALYZE_HOLD": "fresh-1.flac", "SHELF_ANALYZE_HOLD_FILE": hold})
        try:
            pid = int(wait_until("the worker to reach fresh-1.flac", lambda: os.path.exists(hold) and open(hold).read().strip()))
            os.kill(pid, signal.SIGKILL)
            # The run goes on with a new worker; the server answers all along.
            done = wait_until("the background run to finish",
                              lambda: (lambda d: d if d["pending"] == 0 and not d["running"] else None)(background.get("/api/analysis")[1]))
            assert done["done"] == len(families) + 2 and done["failed"] == 5 and done["enabled"], done
            assert background.rest("ping")["status"] == "ok"
            assert "worker died" in background.text() or "died" in background.text(), background.text()[-2000:]
        finally:
            background.stop()
        analysis = cli_json_(["track", str(cli_json_(["tracks", "--filter", "path:fresh-1.flac"])["items"][0]["id"])])["analysis"]
        assert analysis["status"] == "failed" and "worker died on this file (signal 9" in analysis["reason"], analysis
        assert cli_json_(["analyze"])["analyzed"] == 0  # not retried

    def interrupted_run():
        for index, frequency in enumerate([520, 610]):
            make(os.path.join(fresh, f"late-{index}.flac"), frequency)
        cli_json_(["import", fresh])
        os.remove(hold)
        run = subprocess.Popen([shelf, "--library", library, "analyze", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**env, "SHELF_ANALYZE_HOLD": "late-1.flac", "SHELF_ANALYZE_HOLD_FILE": hold})
        pid = int(wait_until("the worker to reach late-1.flac", lambda: os.path.exists(hold) and open(hold).read().strip()))
        # Ctrl-C at a terminal reaches the whole foreground group: the command and its worker.
        run.send_signal(signal.SIGINT)
        os.kill(pid, signal.SIGINT)
        out, err = run.communicate(timeout=HANG)
        assert run.returncode != 0 and "cancelled" in out + err, (run.returncode, out, err)
        late = cli_json_(["tracks", "--filter", "path:late-1.flac"])["items"][0]["id"]
        assert cli_json_(["track", str(late)])["analysis"] is None
        report = cli_json_(["analyze"])
        assert report["analyzed"] >= 1 and report["failed"] == [], report
        assert cli_json_(["track", str(late)])["analysis"]["status"] == "ok"

    check("serve --analysis: a worker killed in the middle of a file; the file failed with its reason, the run and the server go on", killed_worker)
    check("analyze: Ctrl-C in the middle of a file records nothing for it; the next run analyses it", interrupted_run)
