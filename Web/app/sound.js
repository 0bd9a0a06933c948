// What the page does to sound in the browser, with Web Audio: the microphone's way out (a voice
// effect, music from a file mixed in) and the room's way in (each seat placed around the listener
// for headphones, with an HRTF panner). The browser's own echo cancellation, noise suppression
// and gain act on the microphone before this (Media.start's `processing`). Pitch is shifted in an
// AudioWorklet (pitch-worklet.js), which browsers offer only to secure pages (https, or this
// machine); elsewhere the effects that change pitch are not offered.

// The level (0..1, RMS) an AnalyserNode hears now; 0 without one.
export function levelOf(analyser) {
  if (!analyser) return 0;
  const samples = new Float32Array(analyser.fftSize);
  analyser.getFloatTimeDomainData(samples);
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

// Ten bands, as the apps' equalizer: 31 Hz to 16 kHz.
export const bands = [31, 62, 125, 250, 500, 1000, 2000, 4000, 8000, 16000];

// The voice effects: pitch (semitones), equalizer gains (dB), a reverb (seconds of tail, wet
// share) and a ring modulator (Hz), as the apps' presets of the same names.
export const effects = {
  none: null,
  deeper: { pitch: -4, eq: [0, 3, 4, 2, 0, 0, -1, -2, -2, 0] },
  brighter: { pitch: 2, eq: [0, -2, -2, -1, 0, 1, 3, 4, 4, 3] },
  child: { pitch: 7, eq: [-6, -6, -4, -2, 0, 1, 2, 3, 2, 0] },
  elder: { pitch: -2, eq: [-4, -3, -1, 0, 1, 2, 0, -3, -5, -6], reverb: { seconds: 0.5, wet: 0.1 } },
  robot: { eq: [-6, -4, -2, 0, 2, 3, 3, 2, 0, -2], reverb: { seconds: 0.3, wet: 0.15 }, ring: 60 },
  ktv: { eq: [0, 1, 2, 1, 0, 1, 2, 2, 1, 0], reverb: { seconds: 2.2, wet: 0.35 } },
  studio: { eq: [-2, 0, 2, 1, 0, 0, 1, 2, 2, 1], reverb: { seconds: 0.8, wet: 0.12 } },
  hall: { reverb: { seconds: 3.5, wet: 0.45 } },
};

// Where seat `index` of `count` is heard from: on an arc in front of the listener, the first seat
// on the left, the last on the right, 1.5 m away (the apps' layout). Web Audio's axes: x to the
// right, z towards the listener's back.
export function seatPosition(index, count) {
  const azimuth = count > 1 ? 75 - (index * 150) / (count - 1) : 0;
  const radians = (azimuth * Math.PI) / 180;
  return { x: -Math.sin(radians) * 1.5, y: 0, z: -Math.cos(radians) * 1.5, azimuth };
}

// A decaying noise tail `seconds` long (both channels), as a reverb's impulse response.
function roomResponse(context, seconds) {
  const length = Math.max(1, Math.round(context.sampleRate * seconds));
  const buffer = context.createBuffer(2, length, context.sampleRate);
  for (let channel = 0; channel < 2; channel++) {
    const data = buffer.getChannelData(channel);
    for (let index = 0; index < length; index++) data[index] = (Math.random() * 2 - 1) * Math.pow(1 - index / length, 3);
  }
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
    if (effect?.eq) {
      effect.eq.forEach((gain, index) => {
        const filter = this.context.createBiquadFilter();
        filter.type = 'peaking';
        filter.frequency.value = bands[index];
        filter.Q.value = 1.6;
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
      const convolver = this.context.createConvolver();
      convolver.buffer = roomResponse(this.context, effect.reverb.seconds);
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
