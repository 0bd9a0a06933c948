// What the page does to sound in the browser, with Web Audio: the microphone's way out (a voice
// effect, music from a file mixed in) and the room's way in (each seat placed around the listener
// for headphones, with an HRTF panner). The browser's own echo cancellation, noise suppression
// and gain act on the microphone before this (Media.start's `processing`). Pitch is shifted in an
// AudioWorklet (pitch-worklet.js), which browsers offer only to secure pages (https, or this
// machine); elsewhere the effects that change pitch are not offered.

import { effects, equalizer } from './presets.js';
import { reverbResponse } from './reverb.js';

// The level (0..1, RMS) an AnalyserNode hears now; 0 without one.
export function levelOf(analyser) {
  if (!analyser) return 0;
  const samples = new Float32Array(analyser.fftSize);
  analyser.getFloatTimeDomainData(samples);
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

// The voice effects and the stages' constants, generated from the SDK's (presets.js).
export { effects };
export const bands = equalizer.bands;

// Where seat `index` of `count` is heard from: on an arc in front of the listener, the first seat
// on the left, the last on the right, 1.5 m away (the apps' layout). Web Audio's axes: x to the
// right, z towards the listener's back.
export function seatPosition(index, count) {
  const azimuth = count > 1 ? 75 - (index * 150) / (count - 1) : 0;
  const radians = (azimuth * Math.PI) / 180;
  return { x: -Math.sin(radians) * 1.5, y: 0, z: -Math.cos(radians) * 1.5, azimuth };
}

// The reverb's impulse response as a buffer (reverb.js: the SDK's model, played by a convolver).
function roomResponse(context, reverb) {
  const response = reverbResponse(context.sampleRate, reverb, reverb.tail);
  const buffer = context.createBuffer(1, response.length, context.sampleRate);
  buffer.getChannelData(0).set(response);
  return buffer;
}

export class Sound {
  constructor(context) {
    this.context = context;
    this.effect = 'none';
    this.spatial = false;
    this.music = null; // {buffer, source, name, startedAt, offset, playing}
    this.sendVolume = 1;
    this.localVolume = 1;
    // The way out: microphone → effect → (+ music) → outgoing track.
    this.input = context.createGain();
    this.output = context.createMediaStreamDestination();
    this.musicSend = context.createGain();
    this.musicLocal = context.createGain();
    this.musicSend.connect(this.output);
    this.musicLocal.connect(context.destination);
    // The microphone's level meter (fed by Media.micLevel with the raw microphone).
    this.meter = context.createAnalyser();
    this.meter.fftSize = 1024;
    this.chain = [];
    this.effectTurn = 0; // the latest setEffect call
    this.setEffect('none');
    // The pitch shifter's processor, loaded once: resolves true, or false where the browser has
    // no AudioWorklet (a page that is not secure) or cannot load it.
    this.pitchReady = context.audioWorklet
      ? context.audioWorklet.addModule(new URL('./pitch-worklet.js', import.meta.url)).then(() => true, () => false)
      : Promise.resolve(false);
  }

  // Whether the effects that change pitch can be made here; resolves once it is known.
  canShiftPitch() {
    return this.pitchReady;
  }

  // The microphone's stream goes through the graph; returns the track to send.
  attachMicrophone(stream) {
    this.microphone?.disconnect();
    this.microphone = stream ? this.context.createMediaStreamSource(stream) : null;
    this.microphone?.connect(this.input);
    return this.output.stream.getAudioTracks()[0];
  }

  // The microphone's level now, 0..1 (RMS), for the level meter.
  level() {
    return levelOf(this.meter);
  }

  // Builds the chain for effect `name` (an effect that changes pitch waits for the shifter to load).
  async setEffect(name) {
    const effect = effects[name] === undefined ? null : effects[name];
    const turn = ++this.effectTurn;
    const pitch = effect?.pitch && (await this.pitchReady);
    if (turn !== this.effectTurn) return; // another effect was chosen meanwhile
    this.effect = effects[name] === undefined ? 'none' : name;
    this.input.disconnect();
    for (const node of this.chain) node.disconnect();
    this.chain = [];
    let last = this.input;
    const add = (node) => {
      last.connect(node);
      this.chain.push(node);
      last = node;
      return node;
    };
    if (pitch) {
      const shifter = new AudioWorkletNode(this.context, 'majlis-pitch', {
        numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1], channelCount: 1, channelCountMode: 'explicit',
      });
      shifter.parameters.get('semitones').value = effect.pitch;
      add(shifter);
    }
    if (effect?.filters) {
      // The filter gains the SDK's equalizer solved for the preset's curve.
      effect.filters.forEach((gain, index) => {
        const filter = this.context.createBiquadFilter();
        filter.type = 'peaking';
        filter.frequency.value = bands[index];
        filter.Q.value = equalizer.q;
        filter.gain.value = gain;
        add(filter);
      });
    }
    if (effect?.ring) {
      const ring = this.context.createGain();
      ring.gain.value = 0;
      const oscillator = this.context.createOscillator();
      oscillator.frequency.value = effect.ring;
      oscillator.connect(ring.gain);
      oscillator.start();
      this.chain.push(oscillator);
      add(ring);
    }
    if (effect?.reverb) {
      const dry = this.context.createGain();
      dry.gain.value = 1 - effect.reverb.wet / 2;
      // Not normalized: the response carries the model's own gain, as the SDK plays it.
      const convolver = this.context.createConvolver();
      convolver.normalize = false;
      convolver.buffer = roomResponse(this.context, effect.reverb);
      const wet = this.context.createGain();
      wet.gain.value = effect.reverb.wet;
      last.connect(dry);
      last.connect(convolver);
      convolver.connect(wet);
      this.chain.push(dry, convolver, wet);
      dry.connect(this.output);
      wet.connect(this.output);
      return;
    }
    last.connect(this.output);
  }

  // Music from a file the person picked: decoded, then played into what the room hears (and
  // here), `loop`ing or not.
  async loadMusic(file) {
    const buffer = await this.context.decodeAudioData(await file.arrayBuffer());
    this.stopMusic();
    this.music = { buffer, name: file.name, offset: 0, playing: false, source: null, startedAt: 0 };
  }

  playMusic(loop = true) {
    if (!this.music || this.music.playing) return;
    const source = this.context.createBufferSource();
    source.buffer = this.music.buffer;
    source.loop = loop;
    source.connect(this.musicSend);
    source.connect(this.musicLocal);
    source.onended = () => {
      if (this.music?.source === source) Object.assign(this.music, { playing: false, offset: 0, source: null });
    };
    source.start(0, this.music.offset % this.music.buffer.duration);
    Object.assign(this.music, { source, playing: true, startedAt: this.context.currentTime - this.music.offset });
  }

  pauseMusic() {
    if (!this.music?.playing) return;
    const { source } = this.music;
    Object.assign(this.music, { offset: this.context.currentTime - this.music.startedAt, playing: false, source: null });
    source.stop();
  }

  stopMusic() {
    if (this.music?.source) this.music.source.stop();
    if (this.music) Object.assign(this.music, { playing: false, offset: 0, source: null });
  }

  // Volumes 0..4 (1 as it is) of the music the room hears and of what is played here.
  setMusicVolumes(send, local) {
    this.sendVolume = send;
    this.localVolume = local;
    this.musicSend.gain.value = send;
    this.musicLocal.gain.value = local;
  }

  // A seat's sound, from its track, to the speakers: placed (spatial) or straight.
  attachSeat(seat, stream) {
    const source = this.context.createMediaStreamSource(stream);
    const panner = this.context.createPanner();
    panner.panningModel = 'HRTF';
    panner.distanceModel = 'inverse';
    panner.refDistance = 1;
    return { seat, source, panner };
  }

  // Places every seat (spatial) or none; `seats` is [{seat, source, panner, element}], `count` the room's seats.
  place(seats, count) {
    for (const entry of seats) {
      entry.source.disconnect();
      entry.panner.disconnect();
      if (this.spatial) {
        const at = seatPosition(entry.seat, count);
        entry.panner.positionX.value = at.x;
        entry.panner.positionY.value = at.y;
        entry.panner.positionZ.value = at.z;
        entry.source.connect(entry.panner);
        entry.panner.connect(this.context.destination);
      }
      // Without spatial sound the seat's <audio> element plays it; with it, the panner does.
      if (entry.element) entry.element.muted = this.spatial;
    }
  }
}
