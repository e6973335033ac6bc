#!/usr/bin/env python3
"""Write (once) a folder of real audio files of real sizes, laid out and tagged the way a user's
library looks, for the import benchmark (`shelf-bench import --realistic`).

    .venv/bin/python scripts/realistic_files.py --dir DIR [--files N] [--seed S]
        [--seconds SECONDS] [--mix mp3=25,aac=20,opus=43,flac16=10,flac24=2]

Layout: DIR/Artist NNN/Album NNN (YEAR)/NN Title.ext, 8-14 tracks an album (the last album takes
what is left), one format per album:

    mp3     MP3 320 kbit/s CBR (libmp3lame), ID3v2.4 (+ ID3v1, as Picard writes by default)
    aac     AAC 256 kbit/s (ffmpeg's aac) in MP4 (.m4a, moov first), iTunes atoms
    opus    Opus ~160 kbit/s VBR (libopus) in Ogg (.opus), Vorbis comments
    flac16  FLAC 16-bit/44.1 kHz, Vorbis comments
    flac24  FLAC 24-bit/96 kHz, Vorbis comments

--mix weighs the formats by album (the first albums take one of each format so that even a
small set has them all). Every track is a 2 s lead unique to the file followed by SECONDS
(default 240) of a shared body; the body is pink noise at a low level under three sine tones,
which FLAC compresses about as well as music (~25 MB for 4 minutes at 16/44.1, ~100 MB at 24/96).

Tags are written with mutagen as Picard writes them: title, artist, album, albumartist, track
number and total, disc number and total, date, genre, MusicBrainz recording (track), release
(album), artist and album-artist IDs (random UUIDs) and ReplayGain track/album gain and peak
(Opus files also carry R128_TRACK_GAIN/R128_ALBUM_GAIN, as ReplayGain scanners write for Opus).
About a third of the files, whole albums at a time, carry an embedded front cover of
500 KB-2 MB (a handful of distinct JPEGs of 1400-3000 px, reused across albums); about half of
the other albums have a cover.jpg beside them, and about one track in five a synced .lrc.

How it stays fast on two cores: per format ONE body is encoded once and cached under
.DIR-bodies/ beside DIR; each file then costs only the encoding of its 2 s lead (a sine at a frequency of
its own, so the start of every file's audio, and so its audio identity, differs) and a copy:
 - MP3, Ogg Opus and MP4 AAC: ffmpeg's concat demuxer with -c copy (lead + body, no re-encode);
   the muxers rewrite the Xing header / granule positions / sample tables, so durations are right.
 - FLAC: concat with -c copy does not work (STREAMINFO keeps the lead's 2 s length and MD5, and
   the body's frame numbers restart at 0, which breaks seeking). Instead the body is cached as a
   template FLAC whose first K frames are silence of exactly the lead's length (K fixed 4096-sample
   blocks); a file is the template's STREAMINFO (MD5 recomputed over lead + body PCM, frame sizes
   patched), a padding block, the freshly encoded lead's K frames and the template's frames from
   frame K on, byte for byte, so frame numbers run on and the file is a valid FLAC with a true MD5.
Two worker processes do the files. At the end the first file of each format is checked: its
duration (ffprobe), a full decode without errors, and for FLAC the decoded audio's MD5 against
STREAMINFO.

Idempotent: DIR/.complete-N marks a finished set of N files (it holds the summary, which is then
printed again at once). An interrupted run resumes: files are written under .DIR-work/ beside DIR and
renamed into place only when complete, and DIR/.plan.json records what each path should hold, so
files from a run with other parameters are removed and redone, finished ones are kept. Everything
is deterministic from --seed (default 43). The caches beside DIR, and hidden DIR/.plan.json and
DIR/.complete-N are not part of the set (importers skip hidden entries).

stdout, last line: {"files", "bytes" (audio files + cover.jpg + .lrc), "audioBytes",
"withPictures", "formats" {ext: count}, "mix" {format: files}, "albums", "plainAlbums" (album
folders, relative to DIR, without embedded pictures), "coverJpg", "lrc", "seed", "seconds"
(wall time of the run that wrote the set), "cached" (true when the marker was found)}.
Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures as cf
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

# Bump when the recipe changes: cached bodies and every file are then redone.
VERSION = 1

FFMPEG = shutil.which("ffmpeg") or "/usr/bin/ffmpeg"
FFPROBE = shutil.which("ffprobe") or "/usr/bin/ffprobe"
WORKERS = 2
LEAD_SECONDS = 2.0
FLAC_BLOCK = 4096
PICTURES = 8  # distinct JPEGs in the pool
PICTURE_BYTES = (500_000, 2_000_000)

FORMATS = {
    "mp3": {
        "ext": "mp3", "rate": 44100, "bits": 16, "label": "MP3 320k CBR",
        "codec": ["-c:a", "libmp3lame", "-b:a", "320k"], "mux": ["-id3v2_version", "0", "-write_xing", "1"],
    },
    "aac": {
        "ext": "m4a", "rate": 44100, "bits": 16, "label": "AAC 256k (.m4a)",
        "codec": ["-c:a", "aac", "-b:a", "256k"], "mux": ["-movflags", "+faststart"],
    },
    "opus": {
        "ext": "opus", "rate": 48000, "bits": 16, "label": "Opus 160k",
        # bitexact: the Ogg serial comes from -serial_offset (set per file) instead of a random one
        "codec": ["-c:a", "libopus", "-b:a", "160k"], "mux": ["-fflags", "+bitexact"],
    },
    "flac16": {
        "ext": "flac", "rate": 44100, "bits": 16, "label": "FLAC 16/44.1",
        "codec": ["-c:a", "flac", "-frame_size", str(FLAC_BLOCK)], "mux": [],
    },
    "flac24": {
        "ext": "flac", "rate": 96000, "bits": 24, "label": "FLAC 24/96",
        "codec": ["-c:a", "flac", "-frame_size", str(FLAC_BLOCK), "-sample_fmt", "s32", "-bits_per_raw_sample", "24"],
        "mux": [],
    },
}
FORMAT_ORDER = list(FORMATS)
# Album weights. With 4-minute tracks an average of 5 MB a file cannot be reached with these
# formats (Opus alone is ~4.5 MB, MP3 320k ~9.7 MB, FLAC 16/44.1 ~25 MB, 24/96 ~100 MB); this mix,
# mostly lossy with some FLAC and a few 24/96 albums, comes to ~10-11 MB a file. Use --mix
# or --seconds to move it.
DEFAULT_MIX = {"mp3": 25, "aac": 20, "opus": 43, "flac16": 10, "flac24": 2}

GENRES = ["Rock", "Pop", "Jazz", "Electronic", "Hip-Hop", "Classical", "Folk", "Metal", "Soul", "Ambient",
          "Blues", "Reggae", "Indie", "Country", "Punk"]
WORDS = ["Night", "River", "Glass", "Summer", "Echo", "Paper", "Silver", "Road", "Ghost", "Light", "Winter",
         "Heart", "Static", "Ocean", "Dust", "Fire", "Garden", "Signal", "Mirror", "Shadow", "Morning", "Velvet",
         "Engine", "Harbor", "Falling", "Golden", "Wire", "Stone", "Rain", "Orbit", "Lantern", "Hollow", "Neon",
         "Crown", "Wild", "Quiet", "Electric", "Broken", "Distant", "Satellite", "Canyon", "Tide", "Ember"]


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, stdout=kwargs.pop("stdout", subprocess.PIPE), stderr=subprocess.PIPE, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:12])} ...: exit {result.returncode}: {result.stderr.decode(errors='replace')[-1500:]}")
    return result


def atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.rf-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def key_of(value) -> str:
    return hashlib.sha1(json.dumps([VERSION, value], sort_keys=True).encode()).hexdigest()[:12]


# ----------------------------------------------------------------------------- the plan


def weighted(rng: random.Random, mix: dict[str, float]) -> str:
    names = [name for name in FORMAT_ORDER if mix.get(name, 0) > 0]
    return rng.choices(names, weights=[mix[name] for name in names])[0]


def make_plan(files: int, seed: int, mix: dict[str, float], seconds: float) -> dict:
    """Everything about the set, from the seed alone: albums, tracks, tags, pictures, sidecars.
    The plan for N files is a prefix of the plan for more (only the last album may be cut)."""
    rng = random.Random(seed)

    def mbid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    def title() -> str:
        return " ".join(rng.sample(WORDS, rng.choice([1, 2, 2, 3, 3, 4])))

    pictures = []
    for k in range(PICTURES):
        side = rng.randrange(1400, 3001, 100)
        pictures.append({"id": k, "side": side, "target": rng.randrange(600_000, 1_850_000, 1000), "seed": rng.randrange(1 << 30)})
    first = [name for name in FORMAT_ORDER if mix.get(name, 0) > 0]
    rng.shuffle(first)

    albums, tracks = [], []
    artist_no, artist_left, artist_id = 0, 0, ""
    index, pictured = 0, 0
    last_picture = -1
    while index < files:
        if artist_left == 0:
            artist_no += 1
            artist_left = rng.choice([1, 1, 2, 2, 3, 4])
            artist_id = mbid()
        artist_left -= 1
        number = len(albums) + 1
        count = min(rng.randint(8, 14), files - index)
        fmt = first[number - 1] if number <= len(first) else weighted(rng, mix)
        year = rng.randint(1962, 2024)
        date = f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" if rng.random() < 0.6 else str(year)
        embed = pictured + count * rng.random() <= (index + count) / 3
        cover_jpg = (not embed) and rng.random() < 0.5
        picture = None
        if embed or cover_jpg:
            picture = rng.choice([k for k in range(PICTURES) if k != last_picture])
            last_picture = picture
        artist = f"Artist {artist_no:03d}"
        album_name = f"Album {number:03d}"
        folder = f"{artist}/{album_name} ({year})"
        album = {
            "folder": folder, "format": fmt, "artist": artist, "album": album_name, "date": date,
            "genre": rng.choice(GENRES), "albumId": mbid(), "artistId": artist_id, "embed": embed,
            "coverJpg": cover_jpg, "picture": picture, "tracks": count,
            "albumGain": round(rng.uniform(-11.0, -4.0), 2), "albumPeak": round(rng.uniform(0.9, 1.0), 6),
        }
        albums.append(album)
        if embed:
            pictured += count
        for n in range(1, count + 1):
            name = title()
            track = {
                "index": index, "album": number - 1, "format": fmt,
                "path": f"{folder}/{n:02d} {name}.{FORMATS[fmt]['ext']}",
                "title": name, "track": n, "trackId": mbid(),
                "trackGain": round(album["albumGain"] + rng.uniform(-2.0, 2.0), 2),
                "trackPeak": round(rng.uniform(0.75, album["albumPeak"]), 6),
                # distinct for every file of the set: 0.75 Hz apart from 180 Hz on
                "leadHz": round(180 + 0.75 * index, 2),
                "lrc": rng.random() < 0.2,
            }
            tracks.append(track)
            index += 1
    return {"files": files, "seed": seed, "mix": mix, "seconds": seconds, "pictures": pictures,
            "albums": albums, "tracks": tracks}


# ----------------------------------------------------------------------------- cached pieces


def noise_graph(rate: int, seconds: float) -> str:
    a = 0.05
    sines = "".join(f"sine=f={f}:r={rate}:d={seconds}[s{i}];" for i, f in enumerate((220, 277.18, 329.63)))
    return (f"anoisesrc=c=pink:r={rate}:a={a}:seed=11:d={seconds}[n1];"
            f"anoisesrc=c=pink:r={rate}:a={a}:seed=12:d={seconds}[n2];"
            "[n1][n2]amerge=inputs=2,pan=stereo|c0=0.8*c0+0.2*c1|c1=0.2*c0+0.8*c1[n];" + sines +
            "[s0][s1][s2]amix=inputs=3:normalize=0,volume=0.15,pan=stereo|c0=c0|c1=c0[s];"
            "[n][s]amix=inputs=2:normalize=0[out]")


def raw_format(bits: int) -> list[str]:
    return ["-c:a", "pcm_s24le", "-f", "s24le"] if bits == 24 else ["-c:a", "pcm_s16le", "-f", "s16le"]


def raw_input(rate: int, bits: int) -> list[str]:
    return ["-f", "s24le" if bits == 24 else "s16le", "-ar", str(rate), "-ac", "2"]


def flac_lead_samples(rate: int) -> int:
    blocks = -(-round(LEAD_SECONDS * rate) // FLAC_BLOCK)
    return blocks * FLAC_BLOCK


class Cache:
    """Paths of the cached pieces, beside DIR (.DIR-bodies/), never inside it: the peers' scanners
    would import the bodies as songs of their own."""

    def __init__(self, root: Path, seconds: float):
        self.dir = root.parent / f".{root.name}-bodies"
        self.seconds = seconds

    def pcm(self, rate: int, bits: int) -> Path:
        return self.dir / f"pcm-{rate}-{bits}-{self.seconds:g}s-{key_of([noise_graph(rate, self.seconds), bits])}.raw"

    def body(self, fmt: str) -> Path:
        spec = FORMATS[fmt]
        return self.dir / f"{fmt}-{self.seconds:g}s-{key_of([spec, self.pcm(spec['rate'], spec['bits']).name])}.{spec['ext']}"

    def template_info(self, fmt: str) -> Path:
        return self.body(fmt).with_suffix(".json")

    def picture(self, spec: dict) -> Path:
        return self.dir / f"cover-{spec['id']}-{key_of(spec)}.jpg"


def build_pcm(path: str, rate: int, bits: int, seconds: float) -> str:
    tmp = path + ".rf-tmp"
    run([FFMPEG, "-v", "error", "-y", "-filter_complex", noise_graph(rate, seconds), "-map", "[out]",
         "-ar", str(rate), "-ac", "2", *raw_format(bits), tmp])
    os.replace(tmp, path)
    return path


def build_body(fmt: str, pcm: str, path: str) -> str:
    """A lossy body: the PCM encoded once."""
    spec = FORMATS[fmt]
    tmp = f"{path}.rf-tmp.{spec['ext']}"
    run([FFMPEG, "-v", "error", "-y", *raw_input(spec["rate"], spec["bits"]), "-i", pcm, *spec["codec"],
         *spec["mux"], "-map_metadata", "-1", tmp])
    os.replace(tmp, path)
    return path


def flac_blocks(data: bytes) -> tuple[dict, int]:
    """STREAMINFO fields (and its 34 bytes) and the offset of the first frame of a FLAC file."""
    if data[:4] != b"fLaC":
        raise ValueError("not a FLAC stream")
    offset, info = 4, None
    while True:
        head = data[offset]
        length = int.from_bytes(data[offset + 1:offset + 4], "big")
        if head & 0x7F == 0:
            raw = data[offset + 4:offset + 4 + 34]
            bits = int.from_bytes(raw[10:18], "big")
            info = {"raw": raw, "minFrame": int.from_bytes(raw[4:7], "big"), "maxFrame": int.from_bytes(raw[7:10], "big"),
                    "samples": bits & ((1 << 36) - 1), "md5": raw[18:34]}
        offset += 4 + length
        if head & 0x80:
            return info, offset


def build_template(fmt: str, pcm: str, path: str, info_path: str) -> str:
    """A FLAC body: K blocks of silence (the lead's slot) then the PCM, at fixed 4096-sample blocks;
    the byte offset of frame K and the body frames' sizes go into a JSON beside it."""
    spec = FORMATS[fmt]
    lead = flac_lead_samples(spec["rate"])
    frame_bytes = 2 * spec["bits"] // 8
    tmp = f"{path}.rf-tmp.flac"
    proc = subprocess.Popen([FFMPEG, "-v", "error", "-y", *raw_input(spec["rate"], spec["bits"]), "-i", "-",
                             *spec["codec"], "-map_metadata", "-1", tmp], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(bytes(lead * frame_bytes))
        with open(pcm, "rb") as source:
            shutil.copyfileobj(source, proc.stdin, 1 << 20)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    error = proc.stderr.read()
    if proc.wait() != 0:
        raise RuntimeError(f"template {fmt}: {error.decode(errors='replace')[-1500:]}")
    probe = json.loads(run([FFPROBE, "-v", "error", "-select_streams", "a:0", "-show_entries",
                            "packet=pos,size,duration", "-of", "json", tmp]).stdout)["packets"]
    blocks = lead // FLAC_BLOCK
    if any(int(p["duration"]) != FLAC_BLOCK for p in probe[:-1]):
        raise RuntimeError(f"template {fmt}: the encoder did not keep {FLAC_BLOCK}-sample blocks")
    body = probe[blocks:]
    data = open(tmp, "rb").read(65536)
    streaminfo, _ = flac_blocks(data)
    pcm_samples = os.path.getsize(pcm) // frame_bytes
    if streaminfo["samples"] != lead + pcm_samples:
        raise RuntimeError(f"template {fmt}: {streaminfo['samples']} samples, expected {lead + pcm_samples}")
    info = {"leadSamples": lead, "bodyOffset": int(body[0]["pos"]), "bodyMinFrame": min(int(p["size"]) for p in body),
            "bodyMaxFrame": max(int(p["size"]) for p in body), "streaminfo": streaminfo["raw"].hex(), "pcm": pcm}
    atomic_write(Path(info_path), json.dumps(info).encode())
    os.replace(tmp, path)
    return path


def build_picture(spec: dict, path: str) -> str:
    """A JPEG of side x side px whose size is near spec['target'] (and within 500 KB-2 MB): a
    colour field (sine waves) under upscaled noise; the detail (the noise's resolution) and the
    quality are searched. (ffmpeg's `gradients` source is not deterministic, hence geq.)"""
    side, target = spec["side"], spec["target"]
    wave = random.Random(spec["seed"])

    def channel() -> str:
        return (f"'128+90*sin(X/{wave.uniform(20, 90):.1f}+{wave.uniform(0, 6):.2f})"
                f"*cos(Y/{wave.uniform(20, 90):.1f}-X/{wave.uniform(40, 200):.1f})'")

    waves = f"r={channel()}:g={channel()}:b={channel()}"
    tmp = path + ".rf-tmp.jpg"
    best = None
    # The size grows with the noise's resolution and falls with the quality number: per quality,
    # climb the resolutions until the target is passed; a lower quality only if none fitted.
    for q in (3, 5, 8, 12):
        for base in (120, 180, 260, 360, 500, 700, 1000):
            graph = (f"color=c=black:s={base}x{base},format=rgb24,geq={waves},"
                     f"noise=alls=60:allf=u:all_seed={spec['seed']},scale={side}:{side}:flags=bicubic,"
                     f"noise=alls=1:allf=u:all_seed={spec['seed'] + 1}")
            run([FFMPEG, "-v", "error", "-y", "-f", "lavfi", "-i", graph, "-frames:v", "1", "-q:v", str(q),
                 "-pix_fmt", "yuvj420p", tmp])
            size = os.path.getsize(tmp)
            if PICTURE_BYTES[0] <= size <= PICTURE_BYTES[1] and (best is None or abs(size - target) < abs(best[0] - target)):
                best = (size, q, base)
                shutil.copyfile(tmp, path + ".rf-best")
            if size > target:
                break
        if best:
            break
    os.unlink(tmp)
    if best is None:
        raise RuntimeError(f"no JPEG of {side} px came out between {PICTURE_BYTES[0]} and {PICTURE_BYTES[1]} bytes")
    os.replace(path + ".rf-best", path)
    return path


# ----------------------------------------------------------------------------- one file


def write_flac(job: dict, out: Path, work: Path) -> None:
    spec = FORMATS[job["format"]]
    info = json.loads(Path(job["templateInfo"]).read_text())
    lead = info["leadSamples"]
    raw, leadflac = work / f"lead-{job['index']}.raw", work / f"lead-{job['index']}.flac"
    graph = (f"sine=f={job['leadHz']}:r={spec['rate']},atrim=end_sample={lead},"
             "aformat=channel_layouts=stereo,asetnsamples=n=%d:p=0,asplit=2[a][b]" % FLAC_BLOCK)
    run([FFMPEG, "-v", "error", "-y", "-threads", "1", "-filter_complex", graph,
         "-map", "[a]", *raw_format(spec["bits"]), str(raw),
         "-map", "[b]", *spec["codec"], "-map_metadata", "-1", str(leadflac)])
    lead_pcm = raw.read_bytes()
    lead_data = leadflac.read_bytes()
    lead_info, audio = flac_blocks(lead_data)
    if lead_info["samples"] != lead or lead_info["md5"] != hashlib.md5(lead_pcm).digest():
        raise RuntimeError(f"{job['path']}: the lead FLAC does not match its PCM")
    digest = hashlib.md5(lead_pcm)
    with open(info["pcm"], "rb") as source:
        while chunk := source.read(1 << 22):
            digest.update(chunk)
    si = bytearray.fromhex(info["streaminfo"])
    si[4:7] = min(lead_info["minFrame"], info["bodyMinFrame"]).to_bytes(3, "big")
    si[7:10] = max(lead_info["maxFrame"], info["bodyMaxFrame"]).to_bytes(3, "big")
    si[18:34] = digest.digest()
    # Room for the tags and the picture, so mutagen writes them in place (no move of the audio);
    # what is left over stays as padding, as after a Picard save.
    padding = 12288 + (len(job["pictureBytes"]) if job.get("pictureBytes") else 0)
    with open(out, "wb") as target, open(job["body"], "rb") as template:
        target.write(b"fLaC" + bytes([0]) + (34).to_bytes(3, "big") + bytes(si))
        target.write(bytes([0x80 | 1]) + padding.to_bytes(3, "big") + bytes(padding))
        target.write(lead_data[audio:])
        template.seek(info["bodyOffset"])
        remaining = os.fstat(template.fileno()).st_size - info["bodyOffset"]
        target.flush()
        offset = info["bodyOffset"]
        while remaining > 0:
            try:
                copied = os.copy_file_range(template.fileno(), target.fileno(), remaining, offset)
            except (AttributeError, OSError):
                template.seek(offset)
                shutil.copyfileobj(template, target, 1 << 20)
                break
            if copied == 0:
                break
            offset += copied
            remaining -= copied
    raw.unlink()
    leadflac.unlink()


def write_lossy(job: dict, out: Path, work: Path) -> None:
    spec = FORMATS[job["format"]]
    lead = work / f"lead-{job['index']}.{spec['ext']}"
    listing = work / f"lead-{job['index']}.txt"
    run([FFMPEG, "-v", "error", "-y", "-threads", "1", "-f", "lavfi", "-i",
         f"sine=f={job['leadHz']}:r={spec['rate']}:d={LEAD_SECONDS}", "-ac", "2", *spec["codec"], *spec["mux"],
         "-map_metadata", "-1", str(lead)])

    def quoted(path) -> str:
        return "'" + str(path).replace("'", "'\\''") + "'"

    listing.write_text(f"file {quoted(lead)}\nfile {quoted(job['body'])}\n")
    serial = ["-serial_offset", str(int(hashlib.sha1(job["path"].encode()).hexdigest()[:7], 16))] if spec["ext"] == "opus" else []
    run([FFMPEG, "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", str(listing), "-c", "copy",
         "-map_metadata", "-1", *spec["mux"], *serial, str(out)])
    lead.unlink()
    listing.unlink()


def tag(job: dict, path: Path) -> None:
    t = job["tags"]
    picture = job.get("pictureBytes")
    fmt = job["format"]
    rg = {
        "REPLAYGAIN_TRACK_GAIN": f"{t['trackGain']:.2f} dB", "REPLAYGAIN_TRACK_PEAK": f"{t['trackPeak']:.6f}",
        "REPLAYGAIN_ALBUM_GAIN": f"{t['albumGain']:.2f} dB", "REPLAYGAIN_ALBUM_PEAK": f"{t['albumPeak']:.6f}",
    }
    if fmt == "mp3":
        from mutagen.id3 import APIC, ID3, TALB, TCON, TDRC, TIT2, TPE1, TPE2, TPOS, TRCK, TXXX, UFID

        tags = ID3()
        tags.add(TIT2(encoding=3, text=t["title"]))
        tags.add(TPE1(encoding=3, text=t["artist"]))
        tags.add(TALB(encoding=3, text=t["album"]))
        tags.add(TPE2(encoding=3, text=t["albumartist"]))
        tags.add(TRCK(encoding=3, text=f"{t['track']}/{t['tracks']}"))
        tags.add(TPOS(encoding=3, text="1/1"))
        tags.add(TDRC(encoding=3, text=t["date"]))
        tags.add(TCON(encoding=3, text=t["genre"]))
        tags.add(UFID(owner="http://musicbrainz.org", data=t["trackId"].encode()))
        for desc, value in (("MusicBrainz Album Id", t["albumId"]), ("MusicBrainz Artist Id", t["artistId"]),
                            ("MusicBrainz Album Artist Id", t["artistId"]), *rg.items()):
            tags.add(TXXX(encoding=3, desc=desc, text=value))
        if picture:
            tags.add(APIC(encoding=3, mime="image/jpeg", type=3, desc="", data=picture))
        tags.save(str(path), v2_version=4, v1=2)
    elif fmt == "aac":
        from mutagen.mp4 import MP4, MP4Cover, MP4FreeForm

        audio = MP4(str(path))
        if audio.tags is None:
            audio.add_tags()
        audio.tags.update({
            "\xa9nam": [t["title"]], "\xa9ART": [t["artist"]], "\xa9alb": [t["album"]], "aART": [t["albumartist"]],
            "trkn": [(t["track"], t["tracks"])], "disk": [(1, 1)], "\xa9day": [t["date"]], "\xa9gen": [t["genre"]],
        })
        freeform = {"MusicBrainz Track Id": t["trackId"], "MusicBrainz Album Id": t["albumId"],
                    "MusicBrainz Artist Id": t["artistId"], "MusicBrainz Album Artist Id": t["artistId"],
                    **{name.lower(): value for name, value in rg.items()}}
        for name, value in freeform.items():
            audio.tags[f"----:com.apple.iTunes:{name}"] = [MP4FreeForm(value.encode())]
        if picture:
            audio.tags["covr"] = [MP4Cover(picture, imageformat=MP4Cover.FORMAT_JPEG)]
        audio.save()
    else:
        from mutagen.flac import FLAC, Picture
        from mutagen.oggopus import OggOpus

        audio = FLAC(str(path)) if fmt.startswith("flac") else OggOpus(str(path))
        if audio.tags is None:
            audio.add_tags()
        fields = {
            "TITLE": t["title"], "ARTIST": t["artist"], "ALBUM": t["album"], "ALBUMARTIST": t["albumartist"],
            "TRACKNUMBER": str(t["track"]), "TRACKTOTAL": str(t["tracks"]), "TOTALTRACKS": str(t["tracks"]),
            "DISCNUMBER": "1", "DISCTOTAL": "1", "TOTALDISCS": "1", "DATE": t["date"], "GENRE": t["genre"],
            "MUSICBRAINZ_TRACKID": t["trackId"], "MUSICBRAINZ_ALBUMID": t["albumId"],
            "MUSICBRAINZ_ARTISTID": t["artistId"], "MUSICBRAINZ_ALBUMARTISTID": t["artistId"], **rg,
        }
        if fmt == "opus":
            # Q7.8 dB relative to -23 LUFS (ReplayGain's reference is 5 dB louder)
            fields["R128_TRACK_GAIN"] = str(round((t["trackGain"] - 5) * 256))
            fields["R128_ALBUM_GAIN"] = str(round((t["albumGain"] - 5) * 256))
        for name, value in fields.items():
            audio.tags[name] = [value]
        pic = None
        if picture:
            pic = Picture()
            pic.type, pic.mime, pic.desc, pic.data = 3, "image/jpeg", "", picture
            pic.width = pic.height = job["pictureSide"]
            pic.depth = 24
        if fmt == "opus":
            if pic:
                audio.tags["METADATA_BLOCK_PICTURE"] = [base64.b64encode(pic.write()).decode("ascii")]
            audio.save()
        else:
            if pic:
                audio.add_picture(pic)
            audio.save(padding=lambda info: info.padding if info.padding >= 0 else 8192)


def make_file(job: dict) -> dict:
    """Worker: one track, written under .work/ and renamed into place when complete."""
    work = Path(job["work"])
    out = work / f"track-{job['index']}.{FORMATS[job['format']]['ext']}"
    if job.get("picture"):
        job["pictureBytes"] = Path(job["picture"]).read_bytes()
    if job["format"].startswith("flac"):
        write_flac(job, out, work)
    else:
        write_lossy(job, out, work)
    tag(job, out)
    final = Path(job["final"])
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(out, final)
    return {"index": job["index"], "bytes": final.stat().st_size}


def lrc_text(track: dict, album: dict, seed: int, seconds: float) -> str:
    rng = random.Random(f"{seed}-lrc-{track['index']}")
    length = LEAD_SECONDS + seconds
    lines = [f"[ar:{album['artist']}]", f"[al:{album['album']}]", f"[ti:{track['title']}]",
             f"[length:{int(length // 60):02d}:{int(length % 60):02d}]", ""]
    at = rng.uniform(8, 16)
    while at < length - 5:
        words = " ".join(rng.choice(WORDS).lower() for _ in range(rng.randint(3, 8)))
        lines.append(f"[{int(at // 60):02d}:{at % 60:05.2f}]{words[0].upper()}{words[1:]}")
        at += rng.uniform(2.5, 7.0)
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- checks


def check(path: Path, fmt: str, expected: float) -> str:
    probe = json.loads(run([FFPROBE, "-v", "error", "-show_entries", "format=duration", "-of", "json", str(path)]).stdout)
    duration = float(probe["format"]["duration"])
    if abs(duration - expected) > 0.3:
        raise RuntimeError(f"{path}: ffprobe duration {duration:.3f} s, expected {expected:.3f} s")
    spec = FORMATS[fmt]
    if fmt.startswith("flac"):
        from mutagen.flac import FLAC

        decoded = run([FFMPEG, "-v", "error", "-i", str(path), *raw_format(spec["bits"]), "-"])
        if decoded.stderr.strip():
            raise RuntimeError(f"{path}: decode: {decoded.stderr.decode(errors='replace')[:500]}")
        streaminfo = FLAC(str(path)).info
        if hashlib.md5(decoded.stdout).hexdigest() != f"{streaminfo.md5_signature:032x}":
            raise RuntimeError(f"{path}: decoded audio does not match the STREAMINFO MD5")
        extra = f", MD5 matches, mutagen {streaminfo.length:.3f} s"
    else:
        decoded = run([FFMPEG, "-v", "error", "-i", str(path), "-f", "null", "-"])
        if decoded.stderr.strip():
            raise RuntimeError(f"{path}: decode: {decoded.stderr.decode(errors='replace')[:500]}")
        extra = ""
    return f"{duration:.3f} s, decodes cleanly{extra}"


# ----------------------------------------------------------------------------- main


def parse_mix(text: str | None) -> dict[str, float]:
    if not text:
        return dict(DEFAULT_MIX)
    mix = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name.strip() not in FORMATS:
            raise SystemExit(f"--mix: unknown format {name!r} (one of {', '.join(FORMATS)})")
        mix[name.strip()] = float(weight)
    if not any(v > 0 for v in mix.values()):
        raise SystemExit("--mix: no format has a positive weight")
    return mix


def summarise(root: Path, plan: dict, elapsed: float) -> dict:
    formats: dict[str, int] = {}
    mix: dict[str, int] = {}
    audio = extra = pictured = 0
    for track in plan["tracks"]:
        ext = FORMATS[track["format"]]["ext"]
        formats[ext] = formats.get(ext, 0) + 1
        mix[track["format"]] = mix.get(track["format"], 0) + 1
        audio += (root / track["path"]).stat().st_size
        if plan["albums"][track["album"]]["embed"]:
            pictured += 1
        if track["lrc"]:
            extra += (root / track["path"]).with_suffix(".lrc").stat().st_size
    for album in plan["albums"]:
        if album["coverJpg"]:
            extra += (root / album["folder"] / "cover.jpg").stat().st_size
    return {
        "files": len(plan["tracks"]), "bytes": audio + extra, "audioBytes": audio, "withPictures": pictured,
        "formats": formats, "mix": mix, "albums": len(plan["albums"]),
        "plainAlbums": [a["folder"] for a in plan["albums"] if not a["embed"]],
        "coverJpg": sum(1 for a in plan["albums"] if a["coverJpg"]), "lrc": sum(1 for t in plan["tracks"] if t["lrc"]),
        "seed": plan["seed"], "seconds": round(elapsed, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--seconds", type=float, default=240.0, help="length of the shared body (a file is 2 s more)")
    parser.add_argument("--mix", help="album weights, e.g. mp3=25,aac=20,opus=43,flac16=10,flac24=2")
    args = parser.parse_args()
    if args.files < 1:
        parser.error("--files must be at least 1")
    started = time.monotonic()
    root = args.dir.resolve()
    mix = parse_mix(args.mix)
    plan = make_plan(args.files, args.seed, mix, args.seconds)
    cache = Cache(root, args.seconds)
    plan_key = key_of([args.files, args.seed, mix, args.seconds])
    marker = root / f".complete-{args.files}"
    if marker.exists():
        try:
            stored = json.loads(marker.read_text())
        except ValueError:
            stored = {}
        if stored.get("planKey") == plan_key:
            summary = stored["summary"]
            summary["cached"] = True
            log(f"{root}: the set of {args.files} files is complete (marker {marker.name})")
            print(json.dumps(summary))
            return 0
    root.mkdir(parents=True, exist_ok=True)
    cache.dir.mkdir(parents=True, exist_ok=True)
    for old in root.glob(".complete-*"):
        old.unlink()
    work = root.parent / f".{root.name}-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    # Temporaries of an interrupted run: partly built cached pieces and sidecars.
    for stale in [*cache.dir.glob("*.rf-tmp*"), *cache.dir.glob("*.rf-best"), *root.glob(".*.rf-tmp")]:
        stale.unlink()
    for album in plan["albums"]:
        for stale in (root / album["folder"]).glob(".*.rf-tmp"):
            stale.unlink()

    # What each path should hold; a path kept from an earlier run must have held the same.
    def entry_key(track: dict) -> str:
        album = plan["albums"][track["album"]]
        picture = plan["pictures"][album["picture"]] if album["embed"] else None
        return key_of([track, {k: v for k, v in album.items() if k not in ("coverJpg",)}, picture,
                       cache.body(track["format"]).name])

    wanted: dict[str, str] = {}
    for track in plan["tracks"]:
        wanted[track["path"]] = entry_key(track)
        if track["lrc"]:
            album = plan["albums"][track["album"]]
            wanted[str(Path(track["path"]).with_suffix(".lrc"))] = key_of(lrc_text(track, album, args.seed, args.seconds))
    for album in plan["albums"]:
        if album["coverJpg"]:
            wanted[f"{album['folder']}/cover.jpg"] = key_of(plan["pictures"][album["picture"]])
    manifest = root / ".plan.json"
    try:
        previous = json.loads(manifest.read_text()).get("entries", {})
    except (OSError, ValueError):
        previous = {}
    removed = 0
    for path, key in previous.items():
        if wanted.get(path) != key and (root / path).exists():
            (root / path).unlink()
            removed += 1
            for parent in list(Path(path).parents)[:-1]:
                try:
                    (root / parent).rmdir()
                except OSError:
                    break
    if removed:
        log(f"removed {removed} files of an earlier run with other parameters")
    # An existing path not recorded with the same key is of unknown provenance: redo it.
    keep = {path for path, key in wanted.items() if previous.get(path) == key and (root / path).exists()}
    atomic_write(manifest, json.dumps({"version": VERSION, "entries": wanted}).encode())

    albums = plan["albums"]
    used = sorted({a["format"] for a in albums}, key=FORMAT_ORDER.index)
    counts = {fmt: sum(a["tracks"] for a in albums if a["format"] == fmt) for fmt in used}
    log(f"plan: {args.files} files in {len(albums)} albums (seed {args.seed}); by format: " +
        ", ".join(f"{FORMATS[f]['label']} {counts[f]} files/{sum(1 for a in albums if a['format'] == f)} albums" for f in used))
    todo = [t for t in plan["tracks"] if t["path"] not in keep]
    if len(todo) < len(plan["tracks"]):
        log(f"resuming: {len(plan['tracks']) - len(todo)} files already written")

    with cf.ProcessPoolExecutor(max_workers=WORKERS) as pool:
        # 1. the shared PCM, then the bodies and the pictures (cached under .bodies/)
        jobs = []
        for fmt in used:
            spec = FORMATS[fmt]
            pcm = cache.pcm(spec["rate"], spec["bits"])
            if not pcm.exists() and all(j[1] != str(pcm) for j in jobs):
                jobs.append((build_pcm, str(pcm), spec["rate"], spec["bits"], args.seconds))
        if jobs:
            log(f"writing {len(jobs)} body PCM stream(s) of {args.seconds:g} s")
            for future in [pool.submit(*job) for job in jobs]:
                future.result()
        jobs = []
        for fmt in used:
            spec = FORMATS[fmt]
            body, pcm = cache.body(fmt), str(cache.pcm(spec["rate"], spec["bits"]))
            if fmt.startswith("flac"):
                if not (body.exists() and cache.template_info(fmt).exists()):
                    jobs.append((build_template, fmt, pcm, str(body), str(cache.template_info(fmt))))
            elif not body.exists():
                jobs.append((build_body, fmt, pcm, str(body)))
        needed = sorted({a["picture"] for a in albums if a["picture"] is not None})
        for k in needed:
            if not cache.picture(plan["pictures"][k]).exists():
                jobs.append((build_picture, plan["pictures"][k], str(cache.picture(plan["pictures"][k]))))
        if jobs:
            log(f"encoding {len(jobs)} cached piece(s): bodies and pictures")
            for future in [pool.submit(*job) for job in jobs]:
                future.result()
        sizes = {fmt: cache.body(fmt).stat().st_size for fmt in used}
        log("bodies: " + ", ".join(f"{FORMATS[f]['label']} {sizes[f] / 1e6:.1f} MB" for f in used))
        if needed:
            log("pictures: " + ", ".join(f"#{k} {plan['pictures'][k]['side']} px "
                                         f"{cache.picture(plan['pictures'][k]).stat().st_size / 1e3:.0f} KB" for k in needed))
        estimate = sum(sizes[t["format"]] for t in plan["tracks"]) + sum(
            a["tracks"] * cache.picture(plan["pictures"][a["picture"]]).stat().st_size for a in albums if a["embed"])
        log(f"estimated size of the set: {estimate / 1e9:.2f} GB ({estimate / len(plan['tracks']) / 1e6:.1f} MB a file)")

        # 2. the sidecars (cheap, here)
        for album in albums:
            (root / album["folder"]).mkdir(parents=True, exist_ok=True)
            path = f"{album['folder']}/cover.jpg"
            if album["coverJpg"] and path not in keep:
                atomic_write(root / path, cache.picture(plan["pictures"][album["picture"]]).read_bytes())
        for track in plan["tracks"]:
            path = str(Path(track["path"]).with_suffix(".lrc"))
            if track["lrc"] and path not in keep:
                atomic_write(root / path, lrc_text(track, albums[track["album"]], args.seed, args.seconds).encode())

        # 3. the files
        def job_for(track: dict) -> dict:
            album = albums[track["album"]]
            picture = plan["pictures"][album["picture"]] if album["embed"] else None
            fmt = track["format"]
            return {
                "index": track["index"], "format": fmt, "path": track["path"], "final": str(root / track["path"]),
                "work": str(work), "body": str(cache.body(fmt)), "templateInfo": str(cache.template_info(fmt)),
                "leadHz": track["leadHz"], "picture": str(cache.picture(picture)) if picture else None,
                "pictureSide": picture["side"] if picture else None,
                "tags": {"title": track["title"], "artist": album["artist"], "albumartist": album["artist"],
                         "album": album["album"], "track": track["track"], "tracks": album["tracks"], "date": album["date"],
                         "genre": album["genre"], "trackId": track["trackId"], "albumId": album["albumId"],
                         "artistId": album["artistId"], "trackGain": track["trackGain"], "trackPeak": track["trackPeak"],
                         "albumGain": album["albumGain"], "albumPeak": album["albumPeak"]},
            }

        if todo:
            log(f"writing {len(todo)} files with {WORKERS} workers")
        begun = time.monotonic()
        futures = [pool.submit(make_file, job_for(t)) for t in todo]
        done, step = 0, max(1, len(todo) // 20)
        try:
            for future in cf.as_completed(futures):
                future.result()
                done += 1
                if done % step == 0 or done == len(todo):
                    spent = time.monotonic() - begun
                    log(f"  {done}/{len(todo)} files, {spent:.0f} s, {spent / done:.2f} s a file, "
                        f"~{spent / done * (len(todo) - done):.0f} s to go")
        except BaseException:
            for future in futures:
                future.cancel()
            raise

        # 4. checks: the first file of each format
        expected = {}
        for fmt in used:
            rate = FORMATS[fmt]["rate"]
            expected[fmt] = (flac_lead_samples(rate) / rate if fmt.startswith("flac") else LEAD_SECONDS) + args.seconds
        firsts = {}
        for track in plan["tracks"]:
            firsts.setdefault(track["format"], track)
        checks = {fmt: pool.submit(check, root / t["path"], fmt, expected[fmt]) for fmt, t in firsts.items()}
        for fmt, future in checks.items():
            log(f"check {FORMATS[fmt]['label']}: {firsts[fmt]['path']}: {future.result()}")

    shutil.rmtree(work, ignore_errors=True)
    summary = summarise(root, plan, time.monotonic() - started)
    for fmt in used:
        files = [root / t["path"] for t in plan["tracks"] if t["format"] == fmt]
        sizes = sorted(p.stat().st_size for p in files)
        log(f"{FORMATS[fmt]['label']}: {len(files)} files, {min(sizes) / 1e6:.1f}-{max(sizes) / 1e6:.1f} MB "
            f"(median {sizes[len(sizes) // 2] / 1e6:.1f} MB)")
    log(f"set: {summary['files']} files, {summary['bytes'] / 1e9:.2f} GB "
        f"({summary['bytes'] / summary['files'] / 1e6:.1f} MB a file), {summary['withPictures']} with embedded "
        f"pictures, {summary['coverJpg']} cover.jpg, {summary['lrc']} .lrc, {summary['seconds']} s")
    atomic_write(marker, json.dumps({"planKey": plan_key, "summary": summary}).encode())
    summary["cached"] = False
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted: run again to resume")
        sys.exit(130)
    except RuntimeError as error:
        log(f"error: {error}")
        sys.exit(1)
