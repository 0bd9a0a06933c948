// Generated from VoiceEffect.Preset (Sources/MajlisProtocol/Media/VoiceEffect.swift) and the stages'
// constants (Equalizer, Reverb) by WebPresets: do not edit. After changing a preset, write it again:
//   MAJLIS_WRITE_WEB_PRESETS=1 swift test --filter WebPresetsTests

// The equalizer: peaking filters of width `q` at `bands` (Hz); a preset's `eq` is the response
// at each band (dB), `filters` the filter gains that make it (dB).
export const equalizer = { q: 1.6, bands: [31, 62, 125, 250, 500, 1000, 2000, 4000, 8000, 16000] };

// The reverb (Schroeder-Moorer, as Freeverb): comb and all-pass delays in samples at 44.1 kHz, a
// comb's feedback `feedback[0] + feedback[1] * roomSize` and damping `damping` times the room's, an
// all-pass's `allPass`; what goes in is scaled by `input` and the tail out by `output`.
export const reverbModel = {
  combs: [1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617], allPasses: [556, 441, 341, 225],
  feedback: [0.7, 0.28], damping: 0.4,
  allPass: 0.5, input: 0.03, output: 3,
};

// The voice effects by name: pitch (semitones), equalizer, reverb (room size, damping, wet share,
// and `tail`: seconds until its impulse response is 60 dB down) and a ring modulator (Hz).
export const effects = {
  none: null,
  deeper: { pitch: -4, eq: [0, 3, 4, 2, 0, 0, -1, -2, -2, 0], filters: [-0.48, 2.53, 3.44, 1.47, -0.32, 0.14, -0.75, -1.68, -1.79, 0.11] },
  brighter: { pitch: 2, eq: [0, -2, -2, -1, 0, 1, 3, 4, 4, 3], filters: [0.31, -1.79, -1.65, -0.74, -0.01, 0.58, 2.38, 3.2, 3.41, 2.78] },
  child: { pitch: 7, eq: [-6, -6, -4, -2, 0, 1, 2, 3, 2, 0], filters: [-5.19, -4.74, -2.95, -1.45, 0.17, 0.75, 1.5, 2.57, 1.66, -0.12] },
  elder: { pitch: -2, eq: [-4, -3, -1, 0, 1, 2, 0, -3, -5, -6], filters: [-3.63, -2.38, -0.59, 0.01, 0.76, 1.96, 0.16, -2.47, -4.4, -5.74], reverb: { roomSize: 0.2, damping: 0.8, wet: 0.1, tail: 0.68 } },
  robot: { eq: [-6, -4, -2, 0, 2, 3, 3, 2, 0, -2], filters: [-5.52, -2.95, -1.48, 0.01, 1.64, 2.38, 2.39, 1.63, -0.16, -2.01], reverb: { roomSize: 0.1, damping: 0, wet: 0.15, tail: 0.81 }, ring: 60 },
  ktv: { eq: [0, 1, 2, 1, 0, 1, 2, 2, 1, 0], filters: [-0.16, 0.74, 1.79, 0.73, -0.32, 0.73, 1.64, 1.66, 0.76, -0.06], reverb: { roomSize: 0.7, damping: 0.4, wet: 0.35, tail: 1.75 } },
  studio: { eq: [-2, 0, 2, 1, 0, 0, 1, 2, 2, 1], filters: [-2.06, 0, 1.95, 0.74, -0.17, -0.17, 0.74, 1.68, 1.73, 0.89], reverb: { roomSize: 0.3, damping: 0.6, wet: 0.12, tail: 0.8 } },
  hall: { reverb: { roomSize: 0.95, damping: 0.3, wet: 0.45, tail: 5.23 } },
};
