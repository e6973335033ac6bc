"""Sonic analysis end to end, with real encoded files made by ffmpeg and tagged by mutagen:
families of tracks that sound alike (a drum pattern with a bass line in A minor, slow decaying
chords in C major, a fast distorted saw lead, noise pads), each in variations of tempo, pitch,
level and seed, across MP3, FLAC, Opus, AAC and Vorbis, mono and stereo, 44.1 and 48 kHz.
`shelf analyze` listens to them; librosa (in .venv/audio) grades the descriptors on the same
decoded audio; the neighbours and paths are checked family by family; the OpenSubsonic
sonicSimilarity endpoints, getSimilarSongs and the native API are called on `shelf serve`; bad
files, a worker killed in the middle of a file and Ctrl-C in the middle of a run are survived.

Arguments: SHELF WORK [AUDIO_PYTHON]. One line per check: `ok   NAME` or `FAIL NAME: why`."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

import mutagen

from check_kit import HANG, check, failures, wait_until

SHELF, WORK = sys.argv[1], sys.argv[2]
AUDIO_PYTHON = sys.argv[3] if len(sys.argv) > 3 else ""
HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = os.path.join(WORK, "library")
MUSIC = os.path.join(WORK, "music")
ENV = {**os.environ, "XDG_CONFIG_HOME": "/nonexistent-shelf-test-config"}
SECONDS = 12

# (family, expression maker): each variation gets tempo, pitch, level and seed of its own.
FAMILIES = {
    "drums": lambda bpm, pitch, seed: (
        f"0.8*sin(2*PI*55*t)*exp(-mod(t\\,60/{bpm})*18)"
        f"+0.25*(random({seed})*2-1)*exp(-mod(t+30/{bpm}\\,60/{bpm})*60)"
        f"+0.3*sin(2*PI*{110 * pitch}*t)*(0.6+0.4*sin(2*PI*t*{bpm}/240))"),
    "chords": lambda bpm, pitch, seed: (
        f"(0.25*sin(2*PI*{261.63 * pitch}*t)+0.22*sin(2*PI*{329.63 * pitch}*t)+0.2*sin(2*PI*{392.0 * pitch}*t)"
        f"+0.1*sin(2*PI*{523.25 * pitch}*t))*exp(-mod(t\\,120/{bpm})*1.5)"),
    "saw": lambda bpm, pitch, seed: (
        f"0.9*max(-0.5\\,min(0.5\\,3*(2*mod({440 * pitch}*t\\,1)-1)))*(0.5+0.5*gt(mod(t\\,15/{bpm})\\,7/{bpm}))"
        f"+0.05*(random({seed})*2-1)"),
    "pads": lambda bpm, pitch, seed: (
        f"(random({seed})*2-1)*0.3*(0.6+0.4*sin(2*PI*t*{0.15 * pitch}))"),
}
FORMATS = [("mp3", ["-c:a", "libmp3lame", "-b:a", "192k"]), ("flac", ["-c:a", "flac"]), ("opus", ["-c:a", "libopus", "-b:a", "96k"]),
           ("m4a", ["-c:a", "aac", "-b:a", "160k"]), ("ogg", ["-c:a", "libvorbis", "-q:a", "4"])]
VARIATIONS = [(0, 1.0, 1.0), (-4, 1.02, 0.8), (4, 0.98, 0.6), (-2, 1.03, 0.9), (2, 0.97, 0.7), (6, 1.01, 0.5)]
BASE_BPM = {"drums": 128, "chords": 70, "saw": 150, "pads": 60}


def make(path, expression, rate, channels, level, codec):
    layout = "mono" if channels == 1 else "stereo"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"aevalsrc=exprs={expression}:s={rate}:d={SECONDS}",
                    "-af", f"volume={level},aformat=channel_layouts={layout}", *codec, path], check=True)


def tag(path, artist, title, album):
    audio = mutagen.File(path, easy=True)
    audio["artist"], audio["title"], audio["album"] = artist, title, album
    audio.save()


def cli(args, env=None):
    return subprocess.run([SHELF, "--library", LIBRARY, *args], capture_output=True, text=True, timeout=HANG, env={**ENV, **(env or {})})


def cli_json(args):
    result = cli([*args, "--json"])
    assert result.returncode == 0, f"shelf {' '.join(args)}: {result.stderr}"
    return json.loads(result.stdout)


families = {}  # path -> family
os.makedirs(MUSIC, exist_ok=True)
n = 0
for family, expression in FAMILIES.items():
    for index, (shift, pitch, level) in enumerate(VARIATIONS):
        suffix, codec = FORMATS[n % len(FORMATS)]
        rate, channels = (44100, 2) if n % 3 else (48000, 1)
        if suffix == "opus":
            rate = 48000
        folder = os.path.join(MUSIC, family)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{family}-{index}.{suffix}")
        make(path, expression(BASE_BPM[family] + shift, pitch, 7 + index * 13), rate, channels, level, codec)
        # Three drum tracks share an album and an artist: a mix should prefer the others.
        session = family == "drums" and index < 3
        tag(path, "Drummer" if session else f"{family.title()} {index}", f"{family} {index}", "Drum Session" if session else f"{family.title()} {index}")
        families[path] = family
        n += 1
# Bad input: an undecodable FLAC (frames overwritten), a truncated MP3, silence and half a second.
bad = os.path.join(MUSIC, "bad")
os.makedirs(bad, exist_ok=True)
make(os.path.join(bad, "broken.flac"), "sin(2*PI*300*t)", 44100, 2, 1.0, ["-c:a", "flac"])
with open(os.path.join(bad, "broken.flac"), "r+b") as f:
    size = f.seek(0, 2)
    f.seek(8192)
    f.write(bytes((i * 37 + 11) % 256 for i in range(size - 8192)))
make(os.path.join(bad, "truncated.mp3"), "sin(2*PI*300*t)", 44100, 2, 1.0, ["-c:a", "libmp3lame"])
with open(os.path.join(bad, "truncated.mp3"), "r+b") as f:
    f.truncate(f.seek(0, 2) * 3 // 10)
make(os.path.join(bad, "silent.flac"), "0", 44100, 2, 1.0, ["-c:a", "flac"])
subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=500:d=0.5", os.path.join(bad, "half-second.mp3")], check=True)

imported = cli_json(["import", MUSIC])
assert imported["added"] == len(families) + 4, imported
tracks = {t["path"]: t for t in cli_json(["tracks", "--limit", "1000"])["items"]}
ids = {path: tracks[path]["id"] for path in families}
by_id = {tracks[path]["id"]: family for path, family in families.items()}
first = {}


def first_analysis():
    report = cli_json(["analyze", "--workers", "2"])
    first["report"] = report
    assert report["analyzed"] == len(families) + 4 and report["skipped"] == 0, report
    failed = {os.path.basename(f["path"]): f for f in report["failed"]}
    assert set(failed) == {"broken.flac", "truncated.mp3", "silent.flac", "half-second.mp3"}, failed
    assert failed["broken.flac"]["status"] == "failed" and failed["broken.flac"]["reason"], failed
    assert failed["silent.flac"]["status"] == "silent" and failed["half-second.mp3"]["status"] == "short", failed
    assert failed["truncated.mp3"]["status"] == "short" and "too short" in failed["truncated.mp3"]["reason"], failed


def features_shown():
    doc = cli_json(["track", str(ids[os.path.join(MUSIC, "drums", "drums-0.mp3")])])
    sonic = doc["sonic"]
    assert sonic["version"] == 1 and sonic["key"] == "A" and sonic["mode"] == "minor", sonic
    assert abs(sonic["tempo"] - 128) / 128 < 0.04, sonic["tempo"]
    d = sonic["descriptors"]
    for name in ["tempoConfidence", "onsetRate", "zeroCrossingRate", "spectralCentroid", "spectralBandwidth", "spectralRolloff",
                 "spectralFlatness", "rms", "rmsSpread", "loudnessRange", "keyStrength"]:
        assert isinstance(d[name], (int, float)), name
    assert len(d["mfcc"]) == 13 and len(d["mfccSpread"]) == 13 and len(d["chroma"]) == 12, d
    assert -60 < d["rms"] < 0 and 20 < d["spectralCentroid"] < 11025, d
    chords = cli_json(["track", str(ids[os.path.join(MUSIC, "chords", "chords-0.flac")])])["sonic"]
    assert (chords["key"], chords["mode"]) == ("C", "major"), chords
    broken = cli_json(["track", str(tracks[os.path.join(bad, "broken.flac")]["id"])])
    assert broken["sonic"] is None and broken["analysis"]["status"] == "failed" and broken["analysis"]["reason"], broken["analysis"]


def librosa_agrees():
    if not os.access(AUDIO_PYTHON, os.X_OK):
        print("sonic_test: no .venv/audio with librosa (make test-full and make bench install it from PyPI); the librosa check was skipped", flush=True)
        return
    # One of each codec, mono and stereo, 44.1 and 48 kHz.
    chosen = [path for path in families if path.endswith(("-0.mp3", "-1.flac", "-2.opus", "-3.m4a", "-4.ogg", "-5.mp3", "-0.flac", "-1.opus"))]
    items = [{"path": path, "sonic": cli_json(["track", str(ids[path])])["sonic"]} for path in chosen]
    # A fresh venv's first run compiles librosa's numba kernels (about 20 s of CPU; they are cached
    # in the venv for the next run). NUMBA_DISABLE_JIT cannot save it: librosa's kernels then fail.
    result = subprocess.run([AUDIO_PYTHON, os.path.join(HERE, "sonic_judge.py")], input=json.dumps(items), capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(reports) == len(items), result.stdout
    for r in reports:
        name = os.path.basename(r["path"])
        for key in ["centroid", "bandwidth", "rolloff"]:
            assert r[key] <= 0.02, f"{name}: {key} off by {r[key]:.2%}"
        assert r["flatness"] <= 0.05 and r["zcr"] <= 0.05 and r["rmsDB"] <= 0.5, f"{name}: {r}"
        assert r["mfccCorrelation"] >= 0.99 and r["mfccSpreadCorrelation"] >= 0.95, f"{name}: {r}"
        assert r["chromaCosine"] >= 0.95, f"{name}: chroma cosine {r['chromaCosine']}"
        assert r["tempo"] <= 0.02, f"{name}: tempo {r['tempoOurs']} vs librosa {r['tempoLibrosa']}"


def neighbours_are_family():
    good = 0
    for path, family in families.items():
        matches = server.similar(ids[path], 5)
        assert len(matches) == 5, matches
        sims = [m["similarity"] for m in matches]
        assert sims == sorted(sims, reverse=True) and all(0 <= s < 1 for s in sims), sims
        same = sum(by_id[m["track"]["id"]] == family for m in matches)
        good += same >= 4
    assert good >= 0.9 * len(families), f"{good} of {len(families)} tracks have 4 of 5 neighbours in their family"


def similarity_is_symmetric_and_explained():
    a, b = ids[os.path.join(MUSIC, "drums", "drums-0.mp3")], ids[sorted(p for p in families if "/saw/" in p)[0]]
    def similarity(x, y):
        return next(m["similarity"] for m in server.similar(x, 500) if m["track"]["id"] == y)
    assert similarity(a, b) == similarity(b, a)
    # The command line answers as the API does.
    assert cli_json(["similar", str(a), "--count", "3", "--same-album"])["matches"] == server.similar(a, 3)
    top = cli_json(["similar", str(a), "--count", "3"])["matches"]
    assert all(m["why"] and len(m["why"]) <= 3 for m in top), top
    # Other albums and artists first: drums-0's session mates are left for the sound-only ranking.
    assert not any(m["track"]["album"] == "Drum Session" or m["track"]["artist"] == "Drummer" for m in top), top
    sound = server.similar(a, 3)
    assert any(m["track"]["album"] == "Drum Session" for m in sound), sound


def path_moves_step_by_step():
    start, end = ids[os.path.join(MUSIC, "drums", "drums-0.mp3")], ids[os.path.join(MUSIC, "chords", "chords-1.opus")]
    path = cli_json(["mix", "--from", str(start), "--to", str(end), "--count", "8"])["path"]
    steps = [p["track"]["id"] for p in path]
    assert steps[0] == start and steps[-1] == end and len(set(steps)) == len(steps) and 2 < len(steps) <= 8, steps
    assert path[0]["similarity"] == 1.0
    # Each step nearer the end than the one before, and no step as far as the whole jump.
    to_end = {m["track"]["id"]: m["similarity"] for m in server.similar(end, 500)}
    nearer = [to_end[s] for s in steps[:-1]]
    assert nearer == sorted(nearer) and len(set(nearer)) == len(nearer), nearer
    for x, y in zip(steps, steps[1:]):
        near = {m["track"]["id"]: m["similarity"] for m in server.similar(x, 500)}
        assert near[y] > to_end[start], f"step {x}→{y}: {near[y]} is no nearer than the jump {to_end[start]}"


def moves_and_retags_are_not_analysed_again():
    assert cli_json(["analyze"])["analyzed"] == 0
    moved = os.path.join(MUSIC, "moved")
    os.makedirs(moved)
    saw = sorted(p for p in families if "/saw/" in p)[1]
    shutil.move(saw, os.path.join(moved, os.path.basename(saw)))
    tag(sorted(p for p in families if "/pads/" in p)[0], "Someone Else", "Renamed", "Another Album")
    scan = cli_json(["import", MUSIC])
    assert scan["moved"] == 1 and scan["updated"] == 1, scan
    report = cli_json(["analyze"])
    assert report["analyzed"] == 0 and report["failed"] == [], report
    shutil.move(os.path.join(moved, os.path.basename(saw)), saw)
    cli_json(["import", MUSIC])


def features_are_small():
    import sqlite3
    with sqlite3.connect(os.path.join(LIBRARY, "library.sqlite")) as db:
        sizes = db.execute("SELECT max(length(features)), max(length(audio) + length(features) + 40) FROM sonic").fetchone()
    assert sizes[0] == 228 and sizes[1] <= 512, sizes


sys.path.insert(0, HERE)
import sonic_server_checks  # noqa: E402  (the server half, sharing this library)

for name, body in [
    ("analyze: 24 tracks of five codecs; undecodable, truncated, silent and 0.5 s files reported", first_analysis),
    ("track --json: sonic with the README's descriptors, key and mode; analysis of a failed file", features_shown),
    ("librosa agrees: centroid, bandwidth, roll-off within 2 %, MFCCs r ≥ 0.99, chroma cosine ≥ 0.95, tempo within 2 %", librosa_agrees),
]:
    check(name, body)

# The neighbours, paths and endpoints are asked of one `shelf serve` (a query is milliseconds;
# a debug `shelf` process a few hundred).
server = sonic_server_checks.open_server(SHELF, LIBRARY)
for name, body in [
    ("neighbours: ≥ 90 % of tracks have 4 of their 5 nearest in their own family", neighbours_are_family),
    ("similarity: symmetric, explained, other albums first", similarity_is_symmetric_and_explained),
    ("mix: start first, end last, no repeats, each step nearer the end, no step a jump", path_moves_step_by_step),
    ("analysis is per audio: a rerun, a move and a retag analyse nothing", moves_and_retags_are_not_analysed_again),
    ("storage: 228 bytes of features, under 512 a track with the key", features_are_small),
]:
    check(name, body)

sonic_server_checks.run(server, SHELF, LIBRARY, MUSIC, ids, tracks, families)
sys.exit(1 if failures else 0)
