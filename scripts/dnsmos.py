#!/usr/bin/env python3
"""Prints the DNSMOS scores (ITU-T P.835 as Microsoft's DNS challenge models them: speech SIG,
background BAK, overall OVRL, 1 to 5) of each 16-bit WAV file given, one JSON object a line.
Needs PyPI's speechmos, which runs the models offline (pip install speechmos librosa onnxruntime).

usage: scripts/dnsmos.py FILE.wav...
"""
import json
import sys
import wave

import numpy as np


def main(paths):
    if not paths:
        raise SystemExit(__doc__)
    import librosa
    from speechmos import dnsmos

    for path in paths:
        with wave.open(path, 'rb') as file:
            rate, channels = file.getframerate(), file.getnchannels()
            data = file.readframes(file.getnframes())
        samples = np.frombuffer(data, dtype='<i2').astype(np.float32).reshape(-1, channels).mean(axis=1) / 32768
        if rate != 16000:
            samples = librosa.resample(samples, orig_sr=rate, target_sr=16000)
        scores = dnsmos.run(np.clip(samples, -1, 1), sr=16000)
        print(json.dumps({'file': path, 'sig': round(float(scores['sig_mos']), 3), 'bak': round(float(scores['bak_mos']), 3),
                          'ovrl': round(float(scores['ovrl_mos']), 3)}))


if __name__ == '__main__':
    main(sys.argv[1:])
