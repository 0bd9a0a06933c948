// The reverb's answer to an impulse, by the same model as the SDK's (Reverb.swift; its constants
// come from presets.js, generated from the Swift ones): eight damped feedback combs in parallel,
// then four all-pass filters in series. The model is linear, so a convolver playing this answer
// is that reverb. Pure: tested by node --test (Tests/Web/presets.test.mjs).
import { reverbModel } from './presets.js';

// `seconds` of the wet path's answer at `sampleRate` for a room of `roomSize` and `damping`
// (0...1 each), as the SDK's reverb with a wet share of 1 plays it.
export function reverbResponse(sampleRate, { roomSize, damping }, seconds) {
  const scale = sampleRate / 44100;
  const length = Math.max(1, Math.round(sampleRate * seconds));
  const feedback = reverbModel.feedback[0] + reverbModel.feedback[1] * roomSize;
  const damp = reverbModel.damping * damping;
  const combs = reverbModel.combs.map((samples) => ({ buffer: new Float32Array(Math.floor(samples * scale)), index: 0, store: 0 }));
  const allPasses = reverbModel.allPasses.map((samples) => ({ buffer: new Float32Array(Math.floor(samples * scale)), index: 0 }));
  const response = new Float32Array(length);
  for (let index = 0; index < length; index++) {
    const input = index === 0 ? reverbModel.input : 0;
    let sum = 0;
    for (const comb of combs) {
      const output = comb.buffer[comb.index];
      comb.store = output * (1 - damp) + comb.store * damp;
      comb.buffer[comb.index] = input + comb.store * feedback;
      comb.index = (comb.index + 1) % comb.buffer.length;
      sum += output;
    }
    for (const pass of allPasses) {
      const delayed = pass.buffer[pass.index];
      pass.buffer[pass.index] = sum + delayed * reverbModel.allPass;
      pass.index = (pass.index + 1) % pass.buffer.length;
      sum = delayed - sum;
    }
    response[index] = sum * reverbModel.output;
  }
  return response;
}

// Seconds until `response` stays 60 dB under its peak, in 10 ms windows (as the generator
// measured each preset's `tail`).
export function tailSeconds(response, sampleRate) {
  const window = Math.round(sampleRate / 100);
  const peaks = [];
  for (let start = 0; start < response.length; start += window) {
    let peak = 0;
    for (let index = start; index < Math.min(start + window, response.length); index++) peak = Math.max(peak, Math.abs(response[index]));
    peaks.push(peak);
  }
  const loudest = Math.max(...peaks);
  let last = 0;
  peaks.forEach((peak, index) => {
    if (peak >= loudest / 1000) last = index;
  });
  return (last + 1) / 100;
}
