#!/usr/bin/env python3
"""Scores degraded speech against a reference with PESQ wideband (the `pesq` package, ITU-T P.862.2).

usage: pesq-judge.py REFERENCE.wav DEGRADED.wav [DEGRADED.wav ...]
All files 16 kHz mono 16-bit. Each degraded file is first aligned to the reference (a call adds delay and
leading silence): by the loudness envelopes, then refined by the waveform. Prints one score per degraded file.
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


def correlate(signal, pattern):
    """c[k] = sum over i of signal[k + i] * pattern[i], for k in 0..<len(signal)."""
    n = 1
    while n < len(signal) + len(pattern):
        n *= 2
    return np.fft.irfft(np.fft.rfft(signal, n) * np.conj(np.fft.rfft(pattern, n)), n)[: len(signal)]


STEP = 16  # envelope steps of 1 ms
REFINE = 320  # the waveform refines the envelope's lag by up to 20 ms either way


def envelope(samples):
    steps = len(samples) // STEP
    return np.abs(samples[: steps * STEP]).reshape(steps, STEP).mean(axis=1)


def align(reference, degraded):
    """The envelopes find the delay; the waveform refines it. A waveform alone is ambiguous when
    the reference repeats itself and playout moved by a millisecond between the repeats: then
    the second repeat heard against the first one spoken can correlate best, and half the
    reference is judged against silence."""
    shape = envelope(reference)
    coarse = int(np.argmax(correlate(envelope(degraded), shape - shape.mean()))) * STEP
    start = max(0, coarse - REFINE)
    window = degraded[start : coarse + REFINE + len(reference)]
    lag = start + int(np.argmax(correlate(window, reference)[: coarse + REFINE - start + 1]))
    out = degraded[lag : lag + len(reference)]
    return np.pad(out, (0, len(reference) - len(out)))


reference = read(sys.argv[1])
for path in sys.argv[2:]:
    print(f"{pesq(16000, reference, align(reference, read(path)), 'wb'):.3f}")
