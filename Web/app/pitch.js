// Pitch shifting for the voice, as the apps' pitch presets do it (deeper, brighter, child,
// elder). Two grains read the last moments of the input at `ratio` times its speed, each faded in
// and out (Hann) and half a grain apart, so together they play at an even level. Each new grain
// starts where it lines up best with what the other grain is playing (the waveform-similarity
// overlap-add of time stretchers), so a voice is not heard doubled or hollow. Runs in an
// AudioWorklet (pitch-worklet.js); plain JavaScript, so Node's test runner checks it too.
export class PitchShifter {
  constructor(sampleRate, { grain = 0.04, search = 0.006, compare = 0.005 } = {}) {
    this.grain = 2 * Math.round((sampleRate * grain) / 2); // even: the grains stay half a grain apart
    this.search = Math.round(sampleRate * search);
    this.compare = Math.round(sampleRate * compare);
    this.buffer = new Float32Array(2 * this.grain + 2 * this.search + this.compare + 4);
    this.written = 0;
    this.ratio = 1;
    this.taps = [
      { age: 0, start: this.search },
      { age: this.grain / 2, start: this.search },
    ];
  }

  // -12...12 semitones.
  set semitones(value) {
    this.ratio = Math.pow(2, Math.max(-12, Math.min(12, value)) / 12);
  }

  // Shifts `input` (a Float32Array, or null for silence) into `output` of the same length.
  process(input, output) {
    const size = this.buffer.length;
    for (let index = 0; index < output.length; index++) {
      const sample = input ? input[index] : 0;
      this.buffer[this.written % size] = sample;
      this.written++;
      if (this.ratio === 1) {
        output[index] = sample;
        continue;
      }
      let sum = 0;
      for (let which = 0; which < 2; which++) {
        const tap = this.taps[which];
        if (tap.age >= this.grain) this.restart(tap, this.taps[1 - which]);
        const phase = tap.age / this.grain;
        const gain = Math.sin(Math.PI * phase) ** 2;
        sum += gain * this.read(this.written - 1 - this.delay(tap));
        tap.age++;
      }
      output[index] = sum;
    }
  }

  // How far behind the newest sample `tap` reads now (it moves at `ratio` times real speed).
  delay(tap) {
    return Math.max(0, Math.min(this.buffer.length - this.compare - 2, tap.start + (1 - this.ratio) * tap.age));
  }

  // The input at absolute position `position` (fractional: between two samples, interpolated).
  read(position) {
    const size = this.buffer.length;
    const whole = Math.floor(position);
    const fraction = position - whole;
    const first = this.buffer[((whole % size) + size) % size];
    const second = this.buffer[(((whole + 1) % size) + size) % size];
    return first + fraction * (second - first);
  }

  // A new grain for `tap`: it starts as far back as its reading at `ratio` needs, moved by up to
  // `search` samples to where the sound before it is most like the sound before `other`'s. The
  // search looks at every second shift and every fourth sample first, then around the best one
  // closely (it runs inside one render quantum of the audio thread).
  restart(tap, other) {
    const nominal = this.ratio > 1 ? (this.ratio - 1) * this.grain + this.search : this.search;
    const newest = this.written - 1;
    const target = newest - this.delay(other);
    const likeness = (shift, step) => {
      const from = newest - nominal - shift;
      let product = 0;
      let energy = 1e-9;
      for (let back = 0; back < this.compare; back += step) {
        const value = this.read(from - back);
        product += value * this.read(target - back);
        energy += value * value;
      }
      return product / Math.sqrt(energy);
    };
    let best = 0;
    let bestScore = -Infinity;
    for (let shift = -this.search; shift <= this.search; shift += 2) {
      const score = likeness(shift, 4);
      if (score > bestScore) [best, bestScore] = [shift, score];
    }
    let closest = best;
    bestScore = -Infinity;
    for (let shift = Math.max(-this.search, best - 1); shift <= Math.min(this.search, best + 1); shift++) {
      const score = likeness(shift, 1);
      if (score > bestScore) [closest, bestScore] = [shift, score];
    }
    tap.age = 0;
    tap.start = nominal + closest;
  }
}
