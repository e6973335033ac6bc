"""librosa as the independent judge of Shelf's sonic descriptors: each file is decoded by the
ffmpeg program (the same FFmpeg resampler and downmix Shelf's worker calls in-process) to mono
32-bit float at 22,050 Hz, librosa computes the descriptors with the definitions docs/sonic.md
gives, and each is compared with what `shelf track --json` stored. Reads
[{"path":…, "sonic":{…}}, …] on stdin; prints one JSON object per file with the measured gaps."""

import json
import subprocess
import sys

import librosa
import numpy as np

SR = 22050


def decode(path):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-ac", "1", "-ar", str(SR), "-f", "f32le", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype=np.float32)[: int(480 * SR)]


def rel(a, b):
    return float(abs(a - b) / max(abs(b), 1e-9))


def judge(path, sonic):
    y = decode(path)
    d = sonic["descriptors"]
    S = np.abs(librosa.stft(y, n_fft=2048, hop_length=512))
    centroid = librosa.feature.spectral_centroid(S=S, sr=SR)[0]
    bandwidth = librosa.feature.spectral_bandwidth(S=S, sr=SR)[0]
    rolloff = librosa.feature.spectral_rolloff(S=S, sr=SR)[0]
    flatness = librosa.feature.spectral_flatness(S=S)[0]
    zcr = librosa.feature.zero_crossing_rate(y)[0]
    rms = 20 * np.log10(np.maximum(librosa.feature.rms(y=y)[0], 1e-5))
    mfcc = librosa.feature.mfcc(y=y, sr=SR, n_mfcc=13)
    chroma = librosa.feature.chroma_stft(S=S ** 2, sr=SR, tuning=0.0).mean(axis=1)
    onset = librosa.onset.onset_strength(y=y, sr=SR)
    tempo = float(librosa.feature.tempo(onset_envelope=onset, sr=SR)[0])
    ours = np.array(d["chroma"])
    ratio = d["tempo"] / tempo
    return {
        "path": path,
        "centroid": rel(d["spectralCentroid"], centroid.mean()),
        "bandwidth": rel(d["spectralBandwidth"], bandwidth.mean()),
        "rolloff": rel(d["spectralRolloff"], rolloff.mean()),
        "flatness": rel(d["spectralFlatness"], flatness.mean()),
        "zcr": rel(d["zeroCrossingRate"], zcr.mean()),
        "rmsDB": float(abs(d["rms"] - rms.mean())),
        "mfccCorrelation": float(np.corrcoef(np.array(d["mfcc"]), mfcc.mean(axis=1))[0, 1]),
        "mfccSpreadCorrelation": float(np.corrcoef(np.array(d["mfccSpread"]), mfcc.std(axis=1))[0, 1]),
        "chromaCosine": float(ours @ chroma / (np.linalg.norm(ours) * np.linalg.norm(chroma) + 1e-12)),
        "tempo": float(min(abs(ratio - 1), abs(ratio - 2) / 2, abs(ratio - 0.5) * 2)),
        "tempoOurs": d["tempo"], "tempoLibrosa": tempo,
    }


for item in json.load(sys.stdin):
    print(json.dumps(judge(item["path"], item["sonic"])), flush=True)
