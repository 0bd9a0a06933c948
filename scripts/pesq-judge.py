#!/usr/bin/env python3
"""Scores degraded speech against a reference with PESQ wideband (the `pesq` package, ITU-T P.862.2).

usage: pesq-judge.py REFERENCE.wav DEGRADED.wav [DEGRADED.wav ...]
All files 16 kHz mono 16-bit. Each degraded file is first aligned to the reference by
cross-correlation (a call adds delay and leading silence). Prints one score per degraded file.
"""
import sys
import wave

import numpy as np
from pesq import pesq


def read(path):
    with wave.open(path) as w:
        if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit(f"{path}: need 16 kHz mono 16-bit")
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64) / 32768


def align(reference, degraded):
    n = 1
    while n < len(reference) + len(degraded):
        n *= 2
    correlation = np.fft.irfft(np.fft.rfft(degraded, n) * np.conj(np.fft.rfft(reference, n)), n)
    lag = int(np.argmax(correlation[: len(degraded)]))
    out = degraded[lag : lag + len(reference)]
    return np.pad(out, (0, len(reference) - len(out)))


reference = read(sys.argv[1])
for path in sys.argv[2:]:
    print(f"{pesq(16000, reference, align(reference, read(path)), 'wb'):.3f}")
