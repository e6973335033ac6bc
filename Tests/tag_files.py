"""Tags and reads audio files with mutagen, an independent writer and reader (Picard and beets
use it), so that what Shelf's TagLib path does to a file is graded by something else.

Usage: tag_files.py tag-id3 PATH VERSION   (VERSION 3 or 4: a Picard-like ID3v2 tag)
       tag_files.py dump PATH              (every frame as mutagen reads it, JSON on stdout)
       tag_files.py tag-full PATH FORMAT   (FORMAT id3v23, id3v24, flac, vorbis, opus, mp4, wavpack:
                                            everything Picard writes, as Picard spells it there)
       tag_files.py expected FORMAT        (what Shelf must read from such a file, JSON)
       tag_files.py dump-any PATH          (every tag of any format as mutagen reads it, JSON)
       tag_files.py tag-artists PATH NAME...  (the artist tag given several values and nothing else:
                                            Vorbis ARTIST repeated, ID3v2.4 TPE1 list, MP4 ©ART list)"""
import json
import sys

import mutagen

from mutagen.id3 import (COMM, ID3, TALB, TCON, TDRC, TIPL, TIT2, TMCL, TPE1, TPE2, TRCK, TSOP, TXXX, UFID, USLT)


def tag_id3(path, version):
    tags = ID3()
    tags.add(TIT2(encoding=3, text=["Get Lucky"]))
    tags.add(TPE1(encoding=3, text=["Daft Punk", "Pharrell Williams"]))
    tags.add(TPE2(encoding=3, text=["Daft Punk"]))
    tags.add(TSOP(encoding=3, text=["Punk, Daft"]))
    tags.add(TALB(encoding=3, text=["Random Access Memories"]))
    tags.add(TCON(encoding=3, text=["Disco", "Funk"]))
    tags.add(TDRC(encoding=3, text=["2013-05-17"]))
    tags.add(TRCK(encoding=3, text=["8/13"]))
    tags.add(TIPL(encoding=3, people=[["producer", "Thomas Bangalter"], ["engineer", "Mick Guzauski"], ["mix", "Mick Guzauski"]]))
    tags.add(TMCL(encoding=3, people=[["guitar", "Nile Rodgers"], ["bass", "Nathan East"]]))
    tags.add(TXXX(encoding=3, desc="MusicBrainz Album Id", text=["aa4fb7b2-8d0a-4e5b-a7d3-5b5e7a0d6f8e"]))
    tags.add(TXXX(encoding=3, desc="MusicBrainz Artist Id", text=["056e4f3e-d505-4dad-8ec1-d04f521cbb56", "149e6720-4e4a-41a4-afca-6d29083fc091"]))
    tags.add(TXXX(encoding=3, desc="REPLAYGAIN_TRACK_GAIN", text=["-9.87 dB"]))
    tags.add(TXXX(encoding=3, desc="REPLAYGAIN_TRACK_PEAK", text=["0.988525"]))
    tags.add(TXXX(encoding=3, desc="Something Only One App Reads", text=["keep me"]))
    tags.add(UFID(owner="http://musicbrainz.org", data=b"6cd4b3d3-1a39-4d6b-9b4b-d5b2a2bd0f58"))
    tags.add(COMM(encoding=3, lang="eng", desc="", text=["first pressing"]))
    tags.add(USLT(encoding=3, lang="eng", desc="", text="Like the legend of the phoenix"))
    if version == 3:
        # As Picard does for 2.3: the 2.4-only frames become their 2.3 forms first (TIPL and TMCL
        # one IPLS, TDRC a TYER/TDAT pair), which mutagen's save leaves to the caller.
        tags.update_to_v23()
    tags.save(path, v2_version=version)


def dump(path):
    tags = ID3(path)
    frames = {key: str(frame) if not hasattr(frame, "people") else frame.people for key, frame in sorted(tags.items())}
    print(json.dumps({"version": list(tags.version[:2]), "frames": frames}, ensure_ascii=False, sort_keys=True))


# One release as MusicBrainz gives it. The artist credit is the display string; the lists are what
# Picard writes beside it.
TRACK = {
    "title": "Get Lucky",
    "artist": "Daft Punk feat. Pharrell Williams & Nile Rodgers",
    "artists": ["Daft Punk", "Pharrell Williams", "Nile Rodgers"],
    "albumArtist": "Daft Punk",
    "albumArtists": ["Daft Punk"],
    "album": "Random Access Memories",
    "genres": ["Disco", "Funk"],
    "composers": ["Thomas Bangalter", "Guy-Manuel de Homem-Christo"],
    "moods": ["Happy"],
    "lyricists": ["Pharrell Williams"],
    "producers": ["Thomas Bangalter", "Guy-Manuel de Homem-Christo"],
    "engineers": ["Peter Franco"],
    "mixers": ["Mick Guzauski"],
    "performers": [["guitar", "Nile Rodgers"], ["bass guitar", "Nathan East"]],
    "musicBrainz": {
        "recordingID": "6cd4b3d3-1a39-4d6b-9b4b-d5b2a2bd0f58",
        "releaseTrackID": "0f9b1b6e-7d8e-4b0c-9f4a-2d3c4b5a6e7f",
        "releaseID": "aa4fb7b2-8d0a-4e5b-a7d3-5b5e7a0d6f8e",
        "releaseGroupID": "7c3218d7-75e0-4e8c-971f-f097b6c308c5",
        "artistIDs": ["056e4f3e-d505-4dad-8ec1-d04f521cbb56", "149e6720-4e4a-41a4-afca-6d29083fc091",
                      "e1c5c5d3-7a41-4a68-9d7e-5b8b5c5c2c33"],
        "albumArtistIDs": ["056e4f3e-d505-4dad-8ec1-d04f521cbb56"],
        "workIDs": ["2b6d4a9e-1c3f-4e4b-8a5d-9c7e6f5a4b3c"],
        "acoustID": "e1b0f8d4-2a3c-4b5d-9e6f-7a8b9c0d1e2f",
    },
    "replayGain": {"trackGain": -9.87, "trackPeak": 0.988525, "albumGain": -8.5, "albumPeak": 1.0},
    "originalDate": "2013-05-17",
    "releaseDate": "2013-05-20",
    "releaseTypes": ["album"],
    "releaseStatus": "official",
    "labels": ["Columbia", "Daft Life"],
    "catalogNumbers": ["88883716861"],
    "barcode": "888837168612",
    "isrcs": ["USQX91300108"],
    "bpm": 116,
    "discSubtitle": "Side B",
    "media": "CD",
    "releaseCountry": "XW",
}
UNKNOWN = "keep me"


def vorbis_fields():
    """The Vorbis comment Picard writes (FLAC, Ogg Vorbis, Opus)."""
    t, mb, rg = TRACK, TRACK["musicBrainz"], TRACK["replayGain"]
    return {
        "TITLE": [t["title"]], "ARTIST": [t["artist"]], "ARTISTS": t["artists"], "ALBUMARTIST": [t["albumArtist"]],
        "ALBUMARTISTS": t["albumArtists"], "ALBUM": [t["album"]], "GENRE": t["genres"], "COMPOSER": t["composers"],
        "MOOD": t["moods"], "LYRICIST": t["lyricists"], "PRODUCER": t["producers"], "ENGINEER": t["engineers"],
        "MIXER": t["mixers"], "PERFORMER": [f"{name} ({part})" for part, name in t["performers"]],
        "MUSICBRAINZ_TRACKID": [mb["recordingID"]], "MUSICBRAINZ_RELEASETRACKID": [mb["releaseTrackID"]],
        "MUSICBRAINZ_ALBUMID": [mb["releaseID"]], "MUSICBRAINZ_RELEASEGROUPID": [mb["releaseGroupID"]],
        "MUSICBRAINZ_ARTISTID": mb["artistIDs"], "MUSICBRAINZ_ALBUMARTISTID": mb["albumArtistIDs"],
        "MUSICBRAINZ_WORKID": mb["workIDs"], "ACOUSTID_ID": [mb["acoustID"]],
        "REPLAYGAIN_TRACK_GAIN": [f"{rg['trackGain']:.2f} dB"], "REPLAYGAIN_TRACK_PEAK": [f"{rg['trackPeak']:.6f}"],
        "REPLAYGAIN_ALBUM_GAIN": [f"{rg['albumGain']:.2f} dB"], "REPLAYGAIN_ALBUM_PEAK": [f"{rg['albumPeak']:.6f}"],
        "ORIGINALDATE": [t["originalDate"]], "DATE": [t["releaseDate"]], "RELEASETYPE": t["releaseTypes"],
        "RELEASESTATUS": [t["releaseStatus"]], "LABEL": t["labels"], "CATALOGNUMBER": t["catalogNumbers"],
        "BARCODE": [t["barcode"]], "ISRC": t["isrcs"], "BPM": [str(t["bpm"])], "DISCSUBTITLE": [t["discSubtitle"]],
        "MEDIA": [t["media"]], "RELEASECOUNTRY": [t["releaseCountry"]], "TRACKNUMBER": ["8"], "TRACKTOTAL": ["13"],
        "SOMETHING_ONLY_ONE_APP_READS": [UNKNOWN],
    }


def tag_vorbis(audio, opus=False):
    fields = vorbis_fields()
    if opus:
        # opusenc and foobar2000 write R128 gains for Opus: Q7.8 dB relative to -23 LUFS.
        rg = TRACK["replayGain"]
        for key in ["REPLAYGAIN_TRACK_GAIN", "REPLAYGAIN_ALBUM_GAIN"]:
            del fields[key]
        fields["R128_TRACK_GAIN"] = [str(round((rg["trackGain"] - 5) * 256))]
        fields["R128_ALBUM_GAIN"] = [str(round((rg["albumGain"] - 5) * 256))]
    if audio.tags is None:
        audio.add_tags()
    for key, values in fields.items():
        audio.tags[key] = values
    audio.save()


def tag_id3_full(path, version):
    from mutagen.id3 import (TBPM, TCOM, TDOR, TEXT, TIPL, TMCL, TMED, TMOO, TPUB, TSRC, TSST)
    t, mb, rg = TRACK, TRACK["musicBrainz"], TRACK["replayGain"]
    tags = ID3()
    tags.add(TIT2(encoding=3, text=[t["title"]]))
    tags.add(TPE1(encoding=3, text=[t["artist"]]))
    tags.add(TXXX(encoding=3, desc="ARTISTS", text=t["artists"]))
    tags.add(TPE2(encoding=3, text=[t["albumArtist"]]))
    tags.add(TXXX(encoding=3, desc="ALBUMARTISTS", text=t["albumArtists"]))
    tags.add(TALB(encoding=3, text=[t["album"]]))
    tags.add(TCON(encoding=3, text=t["genres"]))
    tags.add(TCOM(encoding=3, text=t["composers"]))
    tags.add(TMOO(encoding=3, text=t["moods"]))
    tags.add(TEXT(encoding=3, text=t["lyricists"]))
    people = [["producer", p] for p in t["producers"]] + [["engineer", e] for e in t["engineers"]] + [["mix", m] for m in t["mixers"]]
    tags.add(TIPL(encoding=3, people=people))
    tags.add(TMCL(encoding=3, people=[[part, name] for part, name in t["performers"]]))
    tags.add(UFID(owner="http://musicbrainz.org", data=mb["recordingID"].encode()))
    for desc, key in [("MusicBrainz Release Track Id", "releaseTrackID"), ("MusicBrainz Album Id", "releaseID"),
                      ("MusicBrainz Release Group Id", "releaseGroupID"), ("Acoustid Id", "acoustID")]:
        tags.add(TXXX(encoding=3, desc=desc, text=[mb[key]]))
    for desc, key in [("MusicBrainz Artist Id", "artistIDs"), ("MusicBrainz Album Artist Id", "albumArtistIDs"),
                      ("MusicBrainz Work Id", "workIDs")]:
        tags.add(TXXX(encoding=3, desc=desc, text=mb[key]))
    tags.add(TXXX(encoding=3, desc="REPLAYGAIN_TRACK_GAIN", text=[f"{rg['trackGain']:.2f} dB"]))
    tags.add(TXXX(encoding=3, desc="REPLAYGAIN_TRACK_PEAK", text=[f"{rg['trackPeak']:.6f}"]))
    tags.add(TXXX(encoding=3, desc="REPLAYGAIN_ALBUM_GAIN", text=[f"{rg['albumGain']:.2f} dB"]))
    tags.add(TXXX(encoding=3, desc="REPLAYGAIN_ALBUM_PEAK", text=[f"{rg['albumPeak']:.6f}"]))
    tags.add(TDOR(encoding=3, text=[t["originalDate"]]))
    tags.add(TDRC(encoding=3, text=[t["releaseDate"]]))
    tags.add(TXXX(encoding=3, desc="MusicBrainz Album Type", text=t["releaseTypes"]))
    tags.add(TXXX(encoding=3, desc="MusicBrainz Album Status", text=[t["releaseStatus"]]))
    tags.add(TPUB(encoding=3, text=t["labels"]))
    tags.add(TXXX(encoding=3, desc="CATALOGNUMBER", text=t["catalogNumbers"]))
    tags.add(TXXX(encoding=3, desc="BARCODE", text=[t["barcode"]]))
    tags.add(TSRC(encoding=3, text=t["isrcs"]))
    tags.add(TBPM(encoding=3, text=[str(t["bpm"])]))
    tags.add(TSST(encoding=3, text=[t["discSubtitle"]]))
    tags.add(TMED(encoding=3, text=[t["media"]]))
    tags.add(TXXX(encoding=3, desc="MusicBrainz Album Release Country", text=[t["releaseCountry"]]))
    tags.add(TRCK(encoding=3, text=["8/13"]))
    tags.add(TXXX(encoding=3, desc="Something Only One App Reads", text=[UNKNOWN]))
    if version == 3:
        tags.update_to_v23()
    tags.save(path, v2_version=version)


def tag_mp4(path):
    from mutagen.mp4 import MP4, MP4FreeForm
    t, mb, rg = TRACK, TRACK["musicBrainz"], TRACK["replayGain"]
    audio = MP4(path)
    if audio.tags is None:
        audio.add_tags()
    tags = audio.tags
    tags["\xa9nam"] = [t["title"]]
    tags["\xa9ART"] = [t["artist"]]
    tags["aART"] = [t["albumArtist"]]
    tags["\xa9alb"] = [t["album"]]
    tags["\xa9gen"] = t["genres"]
    tags["\xa9wrt"] = t["composers"]
    tags["\xa9day"] = [t["releaseDate"]]
    tags["tmpo"] = [t["bpm"]]
    tags["trkn"] = [(8, 13)]

    def free(name, values):
        tags["----:com.apple.iTunes:" + name] = [MP4FreeForm(v.encode()) for v in values]

    free("ARTISTS", t["artists"])
    free("ALBUMARTISTS", t["albumArtists"])
    free("MOOD", t["moods"])
    free("LYRICIST", t["lyricists"])
    free("PRODUCER", t["producers"])
    free("ENGINEER", t["engineers"])
    free("MIXER", t["mixers"])
    free("MusicBrainz Track Id", [mb["recordingID"]])
    free("MusicBrainz Release Track Id", [mb["releaseTrackID"]])
    free("MusicBrainz Album Id", [mb["releaseID"]])
    free("MusicBrainz Release Group Id", [mb["releaseGroupID"]])
    free("MusicBrainz Artist Id", mb["artistIDs"])
    free("MusicBrainz Album Artist Id", mb["albumArtistIDs"])
    free("MusicBrainz Work Id", mb["workIDs"])
    free("Acoustid Id", [mb["acoustID"]])
    # foobar2000 spells these in lower case.
    free("replaygain_track_gain", [f"{rg['trackGain']:.2f} dB"])
    free("replaygain_track_peak", [f"{rg['trackPeak']:.6f}"])
    free("replaygain_album_gain", [f"{rg['albumGain']:.2f} dB"])
    free("replaygain_album_peak", [f"{rg['albumPeak']:.6f}"])
    free("ORIGINALDATE", [t["originalDate"]])
    free("MusicBrainz Album Type", t["releaseTypes"])
    free("MusicBrainz Album Status", [t["releaseStatus"]])
    free("LABEL", t["labels"])
    free("CATALOGNUMBER", t["catalogNumbers"])
    free("BARCODE", [t["barcode"]])
    free("ISRC", t["isrcs"])
    free("DISCSUBTITLE", [t["discSubtitle"]])
    free("MEDIA", [t["media"]])
    free("MusicBrainz Album Release Country", [t["releaseCountry"]])
    free("Something Only One App Reads", [UNKNOWN])
    audio.save()


def tag_wavpack(path):
    from mutagen.wavpack import WavPack
    audio = WavPack(path)
    if audio.tags is None:
        audio.add_tags()
    fields = vorbis_fields()
    # APEv2 as Picard writes it: mostly the Vorbis names, a few of its own.
    renames = {"ALBUMARTIST": "Album Artist", "DATE": "Year", "TRACKNUMBER": "Track",
               "RELEASETYPE": "MUSICBRAINZ_ALBUMTYPE", "RELEASESTATUS": "MUSICBRAINZ_ALBUMSTATUS"}
    fields["TRACKNUMBER"] = ["8/13"]
    del fields["TRACKTOTAL"]
    for key, values in fields.items():
        audio.tags[renames.get(key, key.title() if key in ("TITLE", "ARTIST", "ALBUM", "GENRE", "COMPOSER") else key)] = values
    audio.save()


def tag_full(path, fmt):
    if fmt in ("id3v23", "id3v24"):
        tag_id3_full(path, 3 if fmt == "id3v23" else 4)
    elif fmt == "flac":
        from mutagen.flac import FLAC
        tag_vorbis(FLAC(path))
    elif fmt == "vorbis":
        from mutagen.oggvorbis import OggVorbis
        tag_vorbis(OggVorbis(path))
    elif fmt == "opus":
        from mutagen.oggopus import OggOpus
        tag_vorbis(OggOpus(path), opus=True)
    elif fmt == "mp4":
        tag_mp4(path)
    elif fmt == "wavpack":
        tag_wavpack(path)
    else:
        sys.exit(f"unknown format {fmt}")


def expected(fmt):
    """Shelf's track fields for a file tagged by tag_full, where the format keeps less."""
    t = dict(TRACK)
    contributors = [{"role": "lyricist", "name": n} for n in t["lyricists"]]
    contributors += [{"role": "producer", "name": n} for n in t["producers"]]
    contributors += [{"role": "engineer", "name": n} for n in t["engineers"]]
    contributors += [{"role": "mixer", "name": n} for n in t["mixers"]]
    performers = [{"role": "performer", "subRole": part, "name": name} for part, name in t["performers"]]
    if fmt in ("id3v23", "id3v24"):
        # Performers come from TMCL (2.3: the one IPLS frame), ordered by instrument.
        contributors += sorted(performers, key=lambda c: c["subRole"])
    if fmt == "id3v23":
        # TDOR becomes a year (TORY); TMOO and TSST have no 2.3 frame and are dropped by the
        # conversion.
        t["originalDate"] = t["originalDate"][:4]
        t["moods"] = []
        t["discSubtitle"] = None
    elif fmt == "id3v24" or fmt == "mp4":
        pass  # Picard writes no performers into MP4.
    else:
        contributors += performers
    t["contributors"] = contributors
    for key in ["lyricists", "producers", "engineers", "mixers", "performers"]:
        del t[key]
    if fmt == "opus":
        rg = t["replayGain"]
        t["replayGain"] = {"trackGain": round((rg["trackGain"] - 5) * 256) / 256 + 5, "trackPeak": rg["trackPeak"],
                           "albumGain": round((rg["albumGain"] - 5) * 256) / 256 + 5, "albumPeak": rg["albumPeak"]}
    return t


def dump_any(path):
    audio = mutagen.File(path)
    out = {}
    for key, value in sorted((audio.tags or {}).items()):
        if hasattr(value, "people"):
            out[key] = value.people
        elif hasattr(value, "text") and isinstance(value.text, list):
            out[key] = [str(v) for v in value.text]
        elif hasattr(value, "data") and hasattr(value, "owner"):
            out[key] = value.data.decode("utf-8", "replace")
        elif isinstance(value, list):
            out[key] = [bytes(v).decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v) for v in value]
        else:
            out[key] = str(value)
    print(json.dumps(out, ensure_ascii=False, sort_keys=True))


def tag_artists(path, names):
    audio = mutagen.File(path)
    if audio.tags is None:
        audio.add_tags()
    if path.endswith(".mp3"):
        audio.tags.add(TPE1(encoding=3, text=names))
        audio.tags.add(TIT2(encoding=3, text=["Duet"]))
        audio.save(v2_version=4)
        return
    if path.endswith(".m4a"):
        audio.tags["\xa9ART"] = names
        audio.tags["\xa9nam"] = ["Duet"]
    else:
        audio.tags["ARTIST"] = names
        audio.tags["TITLE"] = ["Duet"]
    audio.save()


def tag_names(path, artist, album, title, extra):
    """Artist, album and title as Picard writes them, and any NAME=VALUE pairs (Vorbis names)."""
    audio = mutagen.File(path)
    if audio.tags is None:
        audio.add_tags()
    if path.endswith(".mp3"):
        audio.tags.add(TPE1(encoding=3, text=[artist]))
        audio.tags.add(TALB(encoding=3, text=[album]))
        audio.tags.add(TIT2(encoding=3, text=[title]))
        for pair in extra:
            name, value = pair.split("=", 1)
            audio.tags.add(TXXX(encoding=3, desc=name, text=[value]))
        audio.save(v2_version=4)
        return
    audio.tags["ARTIST"] = [artist]
    audio.tags["ALBUM"] = [album]
    audio.tags["TITLE"] = [title]
    for pair in extra:
        name, value = pair.split("=", 1)
        audio.tags[name] = [value]
    audio.save()


def tag_lyrics(path, pairs):
    """Lyrics as taggers write them: one ID3v2 USLT frame per LANG=TEXT pair, or a repeated
    Vorbis LYRICS field (languages dropped: Vorbis comments have none)."""
    audio = mutagen.File(path)
    if audio.tags is None:
        audio.add_tags()
    texts = [pair.split("=", 1) for pair in pairs]
    if path.endswith(".mp3"):
        for lang, text in texts:
            audio.tags.add(USLT(encoding=3, lang=lang, desc="", text=text))
        audio.save(v2_version=4)
        return
    audio.tags["LYRICS"] = [text for _, text in texts]
    audio.save()


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "tag-id3":
        tag_id3(sys.argv[2], int(sys.argv[3]))
    elif command == "dump":
        dump(sys.argv[2])
    elif command == "tag-full":
        tag_full(sys.argv[2], sys.argv[3])
    elif command == "expected":
        print(json.dumps(expected(sys.argv[2]), ensure_ascii=False, sort_keys=True))
    elif command == "dump-any":
        dump_any(sys.argv[2])
    elif command == "tag-artists":
        tag_artists(sys.argv[2], sys.argv[3:])
    elif command == "tag-lyrics":
        tag_lyrics(sys.argv[2], sys.argv[3:])
    elif command == "tag-names":
        tag_names(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:])
    else:
        sys.exit(f"unknown command {command}")
