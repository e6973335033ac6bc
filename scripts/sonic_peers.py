"""The peers of `shelf-bench sonic`: librosa computing the descriptors Shelf computes (the same
definitions, from the file: decode, resample to 22,050 Hz mono, STFT, mel, MFCC, chroma, onset
envelope, tempo), and essentia's MusicExtractor (low-level, rhythm and tonal statistics, as the
extractor always computes them), on the same files. Each tool is warmed on a short file first
(numba compiles librosa's kernels once), then each file is timed in CPU seconds of this process
and its children (a decoder librosa starts counts). Prints one JSON object per tool and file."""

import json
import resource
import sys
import time

import numpy as np


def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def with_librosa(path):
    import librosa
    sr = 22050
    y, _ = librosa.load(path, sr=sr, mono=True, duration=480)
    S = np.abs(librosa.stft(y, n_fft=2048, hop_length=512))
    librosa.feature.spectral_centroid(S=S, sr=sr)
    librosa.feature.spectral_bandwidth(S=S, sr=sr)
    librosa.feature.spectral_rolloff(S=S, sr=sr)
    librosa.feature.spectral_flatness(S=S)
    librosa.feature.zero_crossing_rate(y)
    librosa.feature.rms(y=y)
    librosa.feature.mfcc(y=y, sr=sr, n_mfcc=13)
    librosa.feature.chroma_stft(S=S ** 2, sr=sr, tuning=0.0)
    onset = librosa.onset.onset_strength(y=y, sr=sr)
    librosa.feature.tempo(onset_envelope=onset, sr=sr)
    librosa.onset.onset_detect(onset_envelope=onset, sr=sr)
    return len(y) / sr


def with_essentia(path):
    import essentia
    import essentia.standard as es
    essentia.log.infoActive = False
    features, _ = es.MusicExtractor(lowlevelStats=["mean", "stdev"], rhythmStats=["mean", "stdev"], tonalStats=["mean", "stdev"])(path)
    return float(features["metadata.audio_properties.length"])


warmup, files = sys.argv[1], sys.argv[2:]
for name, tool in [("librosa", with_librosa), ("essentia", with_essentia)]:
    try:
        tool(warmup)
    except Exception as error:  # noqa: BLE001 (a peer that cannot run is reported, not fatal)
        print(json.dumps({"tool": name, "error": str(error)}), flush=True)
        continue
    for path in files:
        start, wall = cpu(), time.monotonic()
        seconds = tool(path)
        print(json.dumps({"tool": name, "file": path, "cpuSeconds": cpu() - start, "wallSeconds": time.monotonic() - wall,
                          "audioSeconds": seconds}), flush=True)
