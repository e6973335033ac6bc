"""Tags and reads audio files with mutagen, an independent writer and reader (Picard and beets
use it), so that what Shelf's TagLib path does to a file is graded by something else.

Usage: tag_files.py tag-id3 PATH VERSION   (VERSION 3 or 4: a Picard-like ID3v2 tag)
       tag_files.py dump PATH              (every frame as mutagen reads it, JSON on stdout)"""
import json
import sys

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


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "tag-id3":
        tag_id3(sys.argv[2], int(sys.argv[3]))
    elif command == "dump":
        dump(sys.argv[2])
    else:
        sys.exit(f"unknown command {command}")
