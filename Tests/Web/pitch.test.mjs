// The web app's pitch shifter (Web/app/pitch.js) under Node's own test runner: a tone moves by
// the semitones set, at the level it came in, and nothing moves at 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PitchShifter } from '../../Web/app/pitch.js';

const rate = 48000;

function tone(frequency, seconds) {
  return Float32Array.from({ length: rate * seconds }, (_, index) => 0.3 * Math.sin((2 * Math.PI * frequency * index) / rate));
}

// Runs `input` through a shifter in render quanta of 128 samples, as an AudioWorklet does.
function shift(input, semitones) {
  const shifter = new PitchShifter(rate);
  shifter.semitones = semitones;
  const output = new Float32Array(input.length);
  for (let start = 0; start < input.length; start += 128) {
    shifter.process(input.subarray(start, start + 128), output.subarray(start, start + 128));
  }
  return output;
}

// The power of `samples` at `frequency` (Goertzel).
function power(samples, frequency) {
  const coefficient = 2 * Math.cos((2 * Math.PI * frequency) / rate);
  let previous = 0;
  let before = 0;
  for (const sample of samples) {
    const now = sample + coefficient * previous - before;
    before = previous;
    previous = now;
  }
  return previous * previous + before * before - coefficient * previous * before;
}

function strongest(samples, from, to) {
  let best = from;
  for (let frequency = from; frequency <= to; frequency += 0.5) if (power(samples, frequency) > power(samples, best)) best = frequency;
  return best;
}

const rms = (samples) => Math.sqrt(samples.reduce((sum, sample) => sum + sample * sample, 0) / samples.length);

for (const semitones of [-12, -4, 2, 7, 12]) {
  test(`a 233 Hz tone moves by ${semitones} semitones, at an even level`, () => {
    const output = shift(tone(233, 1.5), semitones).subarray(rate / 2);
    const expected = 233 * Math.pow(2, semitones / 12);
    const heard = strongest(output, expected * 0.8, expected * 1.25);
    assert.ok(Math.abs(12 * Math.log2(heard / expected)) < 0.2, `heard ${heard} Hz, expected ${expected}`);
    // Every 10 ms of the output within 1.5 dB of the input's level: the grains add in phase.
    const levels = [];
    for (let start = 0; start + 480 <= output.length; start += 480) levels.push(20 * Math.log10(rms(output.subarray(start, start + 480)) / (0.3 / Math.SQRT2)));
    assert.ok(Math.min(...levels) > -1.5 && Math.max(...levels) < 1.5, `levels from ${Math.min(...levels)} to ${Math.max(...levels)} dB`);
  });
}

test('at 0 semitones the input passes as it is', () => {
  const input = tone(440, 0.2);
  assert.deepEqual(shift(input, 0), input);
});
