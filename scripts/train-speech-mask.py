#!/usr/bin/env python3
"""Trains the noise suppressor's speech mask (Sources/MajlisAudio/Processing/SpeechMask.swift) and
writes its weights as Swift (SpeechMaskWeights.swift).

usage: train-speech-mask.py [--out FILE.swift] [--work DIR]
       train-speech-mask.py --gains FILE.wav [--weights FILE.swift]

Everything is made on this machine: voices by espeak-ng (English voices and variants at many pitches
and speeds, and other languages for the talk behind), noises by numpy (talk of 3-8 people, pink,
white, brown, mains hum, speech-shaped), mixed at -5 to 20 dB under the voice, some clean, some noise
starting part way. The target is each band's share of the voice in the mixture, sqrt(voice/mixture);
the network learns it with a squared error on square roots, an error that takes voice away counting
three times (clean speech must come through untouched). The sentences the project's tests and
benchmarks speak, and the talk of their babble, are not in the training set.

--gains prints the gains of the weights in FILE.swift (default: the tree's) for a 48 kHz mono 16-bit
WAV file, a line of 22 band gains each 10 ms: SpeechMaskTests compares them with the Swift copy.
Needs numpy and scipy (scripts/install-deps --test puts them in .venv), and espeak-ng for training.
"""
import argparse
import base64
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import time
import wave
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.signal import lfilter, resample_poly

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WEIGHTS = os.path.join(ROOT, "Sources/MajlisAudio/Processing/SpeechMaskWeights.swift")

# The suppressor's spectra: 20 ms square-root Hann windows every 10 ms at 48 kHz, 1,024-point
# transforms, power over silence's (-96 dBFS white noise).
WINDOW, HOP, SIZE = 960, 480, 1024
BINS = SIZE // 2 + 1
ANALYSIS = np.sqrt(0.5 - 0.5 * np.cos(2 * np.pi * np.arange(WINDOW) / WINDOW))
SILENCE = (10 ** (-96 / 20) * 32768) ** 2 * (WINDOW / 2)
# As SpeechMask.swift: the bands' edges, the context, the average's memory, the minimum's span,
# and the features' centre and scale.
EDGES = np.array([0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 2000, 2400, 2800, 3200, 4000, 4800, 5600,
                  6800, 8000, 9600, 12000, 15600, 20000], float)
BANDS = len(EDGES)
CONTEXT, MEMORY, MINIMUM_SPAN = 8, 0.98, 100
CENTRE, SCALE = 8.0, 3.0
HIDDEN = 256


def band_weights():
    weights = np.zeros((BINS, BANDS))
    for k in range(BINS):
        f = k * 48000 / SIZE
        if f >= EDGES[-1]:
            weights[k, -1] = 1
            continue
        b = np.searchsorted(EDGES, f, side="right") - 1
        t = (f - EDGES[b]) / (EDGES[b + 1] - EDGES[b])
        weights[k, b] += 1 - t
        weights[k, b + 1] += t
    return weights


BAND_WEIGHTS = band_weights()


def spectra(x):
    """The suppressor's transforms of x: the first frame holds 480 zeros, then x's first 480."""
    x = np.concatenate([np.zeros(HOP), x])
    count = (len(x) - WINDOW) // HOP + 1
    index = np.arange(WINDOW)[None, :] + HOP * np.arange(count)[:, None]
    return np.fft.rfft(x[index] * ANALYSIS, SIZE)


def band_levels(power):
    """log10 of each band's power, power over silence's already."""
    return np.log10(power @ BAND_WEIGHTS)


def shifted(levels, by):
    """levels moved `by` frames later, the first frame standing for those before it."""
    if by == 0:
        return levels
    if by >= len(levels):
        return np.repeat(levels[:1], len(levels), 0)
    return np.vstack([np.repeat(levels[:1], by, 0), levels[:-by]])


def features(levels):
    parts = [shifted(levels, c) for c in range(CONTEXT)]
    parts.append(lfilter([1 - MEMORY], [1, -MEMORY], levels, axis=0, zi=MEMORY * levels[:1])[0])
    least = levels.copy()
    for c in range(1, MINIMUM_SPAN):
        least = np.minimum(least, shifted(levels, c))
    parts.append(least)
    return (np.hstack(parts) - CENTRE) / SCALE


def run(layers, x):
    for i, (w, b) in enumerate(layers):
        x = x @ w + b
        x = np.tanh(x) if i < len(layers) - 1 else 1 / (1 + np.exp(-x))
    return x


# Speech. Sentences of our own; none of them is one the tests speak.
TEXTS = """Please pass me the tea, it is getting cold on the table.
Our meeting starts at nine, so do not be late tomorrow morning.
She told me the story of her grandfather and the old boat.
Can you hear me now, or should I move closer to the microphone?
The market was crowded with people buying fruit and spices.
I think the new song is better than the one they played last week.
Welcome everyone, tonight we talk about travel and adventure.
He opened the window and the cold wind filled the small room.
Numbers like seventeen, forty two and ninety nine are easy to say.
My brother works in a hospital and comes home very late.
The children played football in the street until it got dark.
We should book the tickets before the prices go up again.
Thank you for joining, please raise your hand if you want to speak.
The river runs through the valley and into the quiet sea.
Reading a good book on a rainy day is my favourite thing.
Who wants to sing the next song? Take the second seat please.
It was a long journey, but the view from the mountain was worth it.
Turn left at the bakery, then walk straight past the mosque.
The teacher asked a question and nobody knew the answer.
I lost my keys again, have you seen them anywhere in the kitchen?
Seven hundred people watched the concert from the beach.
Let us start with a short introduction from each guest.
The phone rang twice, then stopped before I could answer it.
Fresh bread, sweet dates and strong coffee make a fine breakfast.
The airport was closed because of the storm last night.
Everybody laughed when the cat jumped onto the piano.
Please mute your microphone when you are not speaking.
Her voice was soft, yet everyone in the hall could hear her.
The price of petrol has changed three times this month.
We will meet again next Friday at the same time.
Sharp scissors, thick paper, and a steady hand are all you need.
Is this seat free, or is somebody already sitting here?
The scientist explained how the stars are born and how they die.
Quickly, the fox jumped over the fence and vanished in the field.
A thousand thanks to our host for this wonderful evening.
My favourite colours are blue, green, and a little bit of yellow.
They built a bridge across the river in only six months.
Listen carefully, the answer is hidden in the first sentence.
I would like to order a pizza with olives and extra cheese.
The museum opens at ten and closes at six in the evening.
Shh, the baby is sleeping, please whisper if you must talk.
Fishing ships sail at sunrise and come back before the heat.
On Thursday the shops close early for the holiday.
Did you finish your homework, or are you still working on it?
The orchestra tuned their instruments while the audience waited.
Which way is the station, and how long does it take to walk?
Success comes to those who keep trying when things are hard.
Zebras, giraffes and lions live together on the wide plains.
Good evening, this is the news at eight o'clock.
We measured the temperature every hour through the whole night.""".split("\n")
OTHER_LANGUAGES = [
    ("ar", "مرحبا بكم في المجلس، تفضلوا بالجلوس واستمعوا إلى الحديث الليلة"),
    ("ar", "الطقس جميل اليوم ونريد أن نخرج إلى الحديقة مع الأطفال"),
    ("fr", "Bonjour à tous, nous allons parler de musique et de voyages ce soir."),
    ("de", "Der Zug kommt heute später, weil es auf der Strecke geschneit hat."),
    ("es", "Mañana vamos a la playa si no llueve, y después comemos juntos."),
    ("tr", "Bu akşam hepimiz birlikte şarkı söyleyeceğiz ve çay içeceğiz."),
    ("hi", "आज शाम हम सब मिलकर संगीत सुनेंगे और बातें करेंगे"),
    ("id", "Selamat malam semuanya, mari kita mulai acara ini bersama."),
    ("ru", "Сегодня вечером мы будем говорить о книгах и фильмах."),
    ("fa", "امشب درباره سفر و غذاهای خوشمزه صحبت می کنیم"),
    ("ur", "آج رات ہم سب مل کر گانے گائیں گے"),
    ("cmn", "今天晚上我们一起聊天，唱歌，听音乐。"),
    ("ms", "Kita akan bercakap tentang makanan dan perjalanan malam ini."),
]
ACCENTS = ["en-us", "en", "en-gb-scotland", "en-029", "en-us-nyc", "en-gb-x-rp", "en-gb-x-gbclan"]
VARIANTS = ["", "+f1", "+f2", "+f3", "+f4", "+f5", "+m1", "+m2", "+m3", "+m4", "+m5", "+m6", "+m7", "+m8",
            "+klatt", "+klatt2", "+klatt3", "+klatt4", "+anika", "+belinda", "+linda", "+john", "+max", "+paul",
            "+grandma", "+grandpa", "+edward", "+iven", "+Andy", "+Annie", "+Alicia", "+david", "+benjamin",
            "+aunty"]


def speak(job):
    voice, pitch, speed, text, path = job
    subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", path, text],
                   check=True, stderr=subprocess.DEVNULL)
    with wave.open(path) as w:
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)
    os.remove(path)
    if rate != 22050:
        sys.exit(f"espeak-ng spoke at {rate} Hz, not 22050")
    return resample_poly(x, 320, 147)


def voices(count, seed, others):
    """`count` clips of two sentences each, every one in another voice; `others`: a share of them in
    other languages (the talk behind)."""
    rnd = random.Random(seed)
    work = tempfile.mkdtemp()
    jobs = []
    for i in range(count):
        if rnd.random() < others:
            language, text = rnd.choice(OTHER_LANGUAGES)
            voice = language + rnd.choice(["", "+f2", "+m3", "+klatt", "+f4", "+m6"])
        else:
            voice = rnd.choice(ACCENTS) + rnd.choice(VARIANTS)
            text = " ".join(rnd.sample(TEXTS, 2))
        jobs.append((voice, rnd.randint(15, 85), rnd.randint(120, 200), text, f"{work}/{i}.wav"))
    with ThreadPoolExecutor(4) as pool:
        clips = list(pool.map(speak, jobs))
    os.rmdir(work)
    return clips


def active_level(x):
    """RMS of the 20 ms frames within 40 dB of the loudest (as SyntheticSound.activeLevel)."""
    frames = x[: len(x) // 960 * 960].reshape(-1, 960)
    energy = (frames ** 2).mean(1)
    return np.sqrt(energy[energy > energy.max() * 1e-4].mean())


def noise(kind, count, talkers, rng):
    if kind == "babble":
        mixed = np.zeros(count)
        for _ in range(rng.integers(3, 9)):
            voice = talkers[rng.integers(len(talkers))]
            voice = voice / max(active_level(voice), 1)
            start = rng.integers(len(voice))
            mixed += np.tile(voice, count // len(voice) + 2)[start:start + count]
        return mixed
    white = rng.standard_normal(count)
    if kind == "pink":
        return lfilter([0.049922035, -0.095993537, 0.050612699, -0.004408786],
                       [1, -2.494956002, 2.017265875, -0.522189400], white)
    if kind == "brown":
        return lfilter([1], [1, -0.995], white)
    if kind == "hum":
        t = np.arange(count) / 48000
        f = rng.choice([50, 60, 100, 120])
        return sum(np.sin(2 * np.pi * f * h * t + rng.uniform(0, 6)) / h for h in range(1, 8)) + 0.1 * white
    if kind == "speech-shaped":
        return lfilter([1], [1, -0.9], white)
    return white


KINDS = ["babble"] * 5 + ["pink", "white", "brown", "hum", "speech-shaped", "none", "none"]


def mixtures(speech, talkers, seed):
    """Each clip of speech in a noise: the band levels of the mixture, and the targets."""
    rng = np.random.default_rng(seed)
    levels, targets = [], []
    for clip in speech:
        lead = int(rng.uniform(0.3, 1.5) * 48000)
        s = np.concatenate([np.zeros(lead), clip, np.zeros(int(rng.uniform(0, 0.6) * 48000))])
        s = s / active_level(s) * (10 ** (rng.uniform(-42, -12) / 20) * 32768)
        kind = KINDS[rng.integers(len(KINDS))]
        n = np.zeros(len(s))
        if kind != "none":
            n = noise(kind, len(s), talkers, rng)
            n = n / np.sqrt((n ** 2).mean()) * active_level(s) / 10 ** (rng.uniform(-5, 20) / 20)
            if rng.random() < 0.2:
                n[: rng.integers(len(s))] *= rng.choice([0, 0.3])
        # A microphone's own hiss, -90 to -70 dBFS.
        n = n + rng.standard_normal(len(s)) * 10 ** (rng.uniform(-90, -70) / 20) * 32768
        voice = np.abs(spectra(s)) ** 2 @ BAND_WEIGHTS
        mixed = np.abs(spectra(s + n)) ** 2 @ BAND_WEIGHTS + SILENCE * BAND_WEIGHTS.sum(0)
        levels.append(np.log10(mixed))
        targets.append(np.minimum(1, np.sqrt(voice / mixed)))
    return levels, targets


def train(x, y, seed, epochs=20, batch=256, against=3.0, log=print):
    """Adam on the squared error of square roots; taking voice away counts `against` times."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))
    held, used = order[:20000], order[20000:]
    sizes = [x.shape[1], HIDDEN, HIDDEN, y.shape[1]]
    weights = [(rng.standard_normal((a, b)) * np.sqrt(1 / a)).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
    biases = [np.zeros(b, np.float32) for b in sizes[1:]]
    params = weights + biases
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    rate, step, started = 1e-3, 0, time.time()
    for epoch in range(epochs):
        rng.shuffle(used)
        if epoch in (int(epochs * 0.6), int(epochs * 0.85)):
            rate *= 0.3
        for start in range(0, len(used) - batch, batch):
            pick = used[start:start + batch]
            values = [x[pick]]
            for i in range(3):
                z = values[-1] @ weights[i] + biases[i]
                values.append(np.tanh(z) if i < 2 else 1 / (1 + np.exp(-z)))
            out = values[-1]
            root = np.sqrt(out + 1e-8)
            error = root - np.sqrt(y[pick])
            grad = 2 * error * np.where(error < 0, against, 1.0) / (2 * root) / out.size * out * (1 - out)
            grads_w, grads_b = [None] * 3, [None] * 3
            for i in (2, 1, 0):
                grads_w[i] = values[i].T @ grad
                grads_b[i] = grad.sum(0)
                if i > 0:
                    grad = (grad @ weights[i].T) * (1 - values[i] ** 2)
            step += 1
            for j, (p, g) in enumerate(zip(params, grads_w + grads_b)):
                first[j] = 0.9 * first[j] + 0.1 * g
                second[j] = 0.999 * second[j] + 0.001 * g * g
                p -= rate * (first[j] / (1 - 0.9 ** step)) / (np.sqrt(second[j] / (1 - 0.999 ** step)) + 1e-8)
        out = run(list(zip(weights, biases)), x[held])
        loss = ((np.sqrt(out) - np.sqrt(y[held])) ** 2).mean()
        log(f"epoch {epoch + 1}/{epochs}: held-out error {loss:.4f} ({time.time() - started:.0f} s)")
    return list(zip(weights, biases))


def write_swift(layers, path):
    blob = b""
    for i, (w, b) in enumerate(layers):
        kind = 0 if i < len(layers) - 1 else 1
        blob += struct.pack("<III", kind, *w.shape) + w.astype("<f2").tobytes() + b.astype("<f2").tobytes()
    text = base64.b64encode(blob).decode()
    lines = "\n".join("        " + text[i:i + 120] for i in range(0, len(text), 120))
    shape = " -> ".join([str(layers[0][0].shape[0])] + [str(w.shape[1]) for w, _ in layers])
    with open(path, "w") as f:
        f.write("// Written by scripts/train-speech-mask.py; not edited by hand.\n\n"
                f"/// The speech mask's trained weights (`SpeechMaskModel` reads them): {shape}.\n"
                "enum SpeechMaskWeights {\n    static let base64 = \"\"\"\n" + lines + "\n        \"\"\"\n}\n")


def read_swift(path):
    text = re.search(r'"""(.*?)"""', open(path).read(), re.S).group(1)
    blob = base64.b64decode("".join(text.split()))
    layers, position = [], 0
    while position < len(blob):
        kind, inputs, outputs = struct.unpack_from("<III", blob, position)
        if kind > 1:
            sys.exit(f"{path}: a layer of kind {kind}, which this script does not run")
        position += 12
        w = np.frombuffer(blob, "<f2", inputs * outputs, position).reshape(inputs, outputs).astype(np.float32)
        position += 2 * inputs * outputs
        b = np.frombuffer(blob, "<f2", outputs, position).astype(np.float32)
        position += 2 * outputs
        layers.append((w, b))
    return layers


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=WEIGHTS)
    parser.add_argument("--work", help="keeps the voices and mixtures made here, and reuses them")
    parser.add_argument("--gains", help="a 48 kHz mono 16-bit WAV file: print its band gains")
    parser.add_argument("--weights", default=WEIGHTS)
    args = parser.parse_args()
    if args.gains:
        with wave.open(args.gains) as w:
            if w.getframerate() != 48000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
                sys.exit(f"{args.gains}: need 48 kHz mono 16-bit")
            x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)
        power = np.abs(spectra(x)) ** 2 + SILENCE
        for row in run(read_swift(args.weights), features(band_levels(power))):
            print(" ".join(f"{g:.6f}" for g in row))
        return
    work = args.work or tempfile.mkdtemp()
    corpus = os.path.join(work, "voices.npz")
    if os.path.exists(corpus):
        saved = np.load(corpus, allow_pickle=True)
        speech, talkers = list(saved["speech"]), list(saved["talkers"])
    else:
        speech, talkers = voices(300, 1, 0), voices(300, 2, 0.4)
        np.savez(corpus, speech=np.array(speech, dtype=object), talkers=np.array(talkers, dtype=object))
    print(f"voices: {sum(map(len, speech)) / 48000 / 60:.0f} min of speech, {len(talkers)} talkers", flush=True)
    xs, ys = [], []
    for seed in range(21, 26):
        levels, targets = mixtures(speech, talkers, seed)
        xs += [features(level).astype(np.float32) for level in levels]
        ys += [target.astype(np.float32) for target in targets]
        print(f"mixtures of seed {seed} made", flush=True)
    x, y = np.vstack(xs), np.vstack(ys)
    print(f"{len(x)} frames of {x.shape[1]} features", flush=True)
    layers = train(x, y, seed=0, log=lambda line: print(line, flush=True))
    write_swift(layers, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
