// The pitch shifter (pitch.js) as an AudioWorklet processor, 'majlis-pitch': one channel in and
// out, shifted by its `semitones` parameter (-12...12).
import { PitchShifter } from './pitch.js';

class PitchProcessor extends AudioWorkletProcessor {
  static get parameterDescriptors() {
    return [{ name: 'semitones', defaultValue: 0, minValue: -12, maxValue: 12, automationRate: 'k-rate' }];
  }

  constructor() {
    super();
    this.shifter = new PitchShifter(sampleRate);
  }

  process(inputs, outputs, parameters) {
    const output = outputs[0]?.[0];
    if (!output) return true;
    this.shifter.semitones = parameters.semitones[0];
    this.shifter.process(inputs[0]?.[0] ?? null, output);
    return true;
  }
}

registerProcessor('majlis-pitch', PitchProcessor);
