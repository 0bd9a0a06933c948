#!/usr/bin/env python3
"""Draws the spectrogram of each WAV file given as FILE.png beside it: time left to right, 0 to
24 kHz bottom to top (or the file's Nyquist), level in colour from 90 dB under the loudest (black)
to the loudest (pale yellow), with a faint line every 4 kHz. Needs numpy only.

usage: scripts/spectrogram.py FILE.wav...
"""
import struct
import sys
import wave
import zlib

import numpy as np

# Colour anchors from quiet to loud (dark violet, red, orange, pale yellow).
ANCHORS = np.array([[0, 0, 4], [87, 16, 110], [188, 55, 84], [249, 142, 9], [252, 255, 164]], dtype=float)


def read(path):
    with wave.open(path, 'rb') as file:
        rate, channels, width = file.getframerate(), file.getnchannels(), file.getsampwidth()
        data = file.readframes(file.getnframes())
    if width != 2:
        raise SystemExit(f'{path}: only 16-bit PCM')
    samples = np.frombuffer(data, dtype='<i2').astype(float) / 32768
    return rate, samples.reshape(-1, channels).mean(axis=1)


def spectrogram(samples, size=1024, hop=240):
    if len(samples) < size:
        samples = np.pad(samples, (0, size - len(samples)))
    window = np.hanning(size)
    frames = np.lib.stride_tricks.sliding_window_view(samples, size)[::hop] * window
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    level = 10 * np.log10(power + 1e-12)
    return np.clip((level - level.max() + 90) / 90, 0, 1).T[::-1]  # rows: high frequencies first


def colour(image):
    position = image * (len(ANCHORS) - 1)
    low = np.floor(position).astype(int).clip(0, len(ANCHORS) - 2)
    part = (position - low)[..., None]
    return (ANCHORS[low] * (1 - part) + ANCHORS[low + 1] * part).astype(np.uint8)


def png(path, pixels):
    height, width, _ = pixels.shape
    raw = b''.join(b'\x00' + pixels[row].tobytes() for row in range(height))

    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, 'wb') as file:
        file.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0))
                   + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))


def main(paths):
    if not paths:
        raise SystemExit(__doc__)
    for path in paths:
        rate, samples = read(path)
        image = colour(spectrogram(samples))
        rows = image.shape[0]
        for hertz in range(4000, rate // 2, 4000):
            row = rows - 1 - int(hertz / (rate / 2) * (rows - 1))
            image[row] = (image[row].astype(int) + 60).clip(0, 255).astype(np.uint8)
        out = path.rsplit('.', 1)[0] + '.png'
        png(out, image)
        print(out)


if __name__ == '__main__':
    main(sys.argv[1:])
