// Voice over WebRTC to the Majlis server (docs/protocol.md section 13): one PeerConnection, the
// microphone up on the first audio section, one receive-only section per seat. The server's
// answer says which section carries which seat; renegotiate when the seat count changes. What the
// page does to sound (voice effects, music, spatial seats) is in sound.js.

import { Sound, levelOf } from './sound.js';
import { receiveStereo } from './sdp.js';

export class Media {
  constructor(signal, room, onChange) {
    this.signal = signal;
    this.room = room;
    this.onChange = onChange; // (state) => void
    this.seatOfMid = new Map();
    this.analysers = new Map(); // seat -> AnalyserNode
    this.elements = new Map(); // seat -> <audio>
    this.micOn = false;
    this.state = 'new';
    this.processing = true;
    this.seatSounds = []; // [{seat, source, panner, element}]
  }

  // `processing` false turns off echo cancellation, noise suppression and gain control (for
  // music, or for measuring the audio as it is). Resolves with the microphone's state: 'ok',
  // 'denied' (the person or the browser refused it) or 'none' (no microphone, or none usable).
  async start(seatCount, processing = true) {
    this.processing = processing;
    const microphone = await this.openMicrophone();
    // Stopped (the room left) while the microphone opened: it closes again, nothing else starts.
    if (this.stopped) {
      this.stream?.getTracks().forEach((track) => track.stop());
      return microphone;
    }
    this.context = new AudioContext();
    this.sound = new Sound(this.context);
    this.openPeer();
    await this.negotiate(seatCount);
    return microphone;
  }

  // A PeerConnection sending what `route` chose (the microphone as it is at first).
  openPeer() {
    const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle', rtcpMuxPolicy: 'require' });
    this.pc = pc;
    const track = this.sender?.track || this.micTrack;
    this.sender = pc.addTransceiver(track || 'audio', { direction: track ? 'sendonly' : 'inactive' }).sender;
    pc.ontrack = (event) => this.attach(event.transceiver.mid, event.track);
    pc.onconnectionstatechange = () => {
      if (this.pc !== pc) return;
      this.state = pc.connectionState;
      this.onChange(this.state);
      if (this.state === 'failed') this.renew(this.seats).catch(() => {});
    };
  }

  // A new transport, for `seatCount` seats: after a reconnect (the server may be a restarted
  // process, or the room's new node, neither of which knows the old one), or when the old one
  // failed. A new PeerConnection, not an ICE restart of the old one: a browser's ICE restart
  // keeps its DTLS association, and a server that never saw it needs a new handshake.
  async renew(seatCount) {
    if (!this.pc || this.stopped) return;
    const old = this.pc;
    for (const placed of this.seatSounds) {
      placed.source.disconnect();
      placed.panner.disconnect();
      placed.element.srcObject = null;
    }
    this.seatSounds = [];
    this.analysers.clear();
    this.elements.clear();
    this.seatOfMid = new Map();
    this.renewals = (this.renewals || 0) + 1;
    this.openPeer();
    old.close();
    await this.negotiate(seatCount);
  }

  // The microphone, with the browser's echo cancellation, noise suppression and gain on or off
  // (`this.processing`); resolves with its state as `start` does.
  async openMicrophone() {
    let microphone = 'ok';
    this.stream?.getTracks().forEach((track) => track.stop());
    this.stream = await (navigator.mediaDevices?.getUserMedia({
      audio: { echoCancellation: this.processing, noiseSuppression: this.processing, autoGainControl: this.processing },
    }) ?? Promise.reject(new Error('no media devices'))).catch((error) => {
      microphone = error?.name === 'NotAllowedError' || error?.name === 'SecurityError' ? 'denied' : 'none';
      return null;
    });
    this.micTrack = this.stream?.getAudioTracks()[0] || null;
    if (!this.micTrack && microphone === 'ok') microphone = 'none';
    if (this.micTrack) this.micTrack.enabled = this.micOn;
    return microphone;
  }

  // The browser's echo cancellation, noise suppression and gain: on or off, from now on.
  async setProcessing(on) {
    if (on === this.processing) return;
    this.processing = on;
    await this.openMicrophone();
    await this.route();
  }

  // What is sent: the microphone as it is, or (with a voice effect or music) through the graph.
  async route() {
    if (!this.sender || !this.micTrack) return;
    const shaped = this.sound.effect !== 'none' || this.sound.music?.playing;
    const track = shaped ? this.sound.attachMicrophone(this.stream) : this.micTrack;
    if (this.sender.track !== track) await this.sender.replaceTrack(track);
  }

  async setEffect(name) {
    await this.sound.setEffect(name);
    await this.route();
  }

  async loadMusic(file) {
    await this.sound.loadMusic(file);
  }

  async playMusic() {
    if (this.stopped) return;
    this.context.resume();
    this.sound.playMusic();
    await this.route();
  }

  async pauseMusic() {
    this.sound.pauseMusic();
    await this.route();
  }

  async stopMusic() {
    this.sound.stopMusic();
    await this.route();
  }

  // Seats placed around the listener (for headphones), or not.
  setSpatial(on) {
    this.sound.spatial = on;
    this.sound.place(this.seatSounds, this.seats);
  }

  // The microphone's level now (0..1), before any effect, whether or not it is on: the meter
  // hears a copy of the track that is never switched off, so a person checks it before speaking.
  micLevel() {
    if (!this.micTrack || !this.sound || this.stopped) return 0;
    if (this.meterTrack?.readyState !== 'live' || this.meteredTrack !== this.micTrack) {
      this.meterSource?.disconnect();
      this.meterTrack?.stop();
      this.meteredTrack = this.micTrack;
      this.meterTrack = this.micTrack.clone();
      this.meterTrack.enabled = true;
      this.meterSource = this.context.createMediaStreamSource(new MediaStream([this.meterTrack]));
      this.meterSource.connect(this.sound.meter);
    }
    return this.sound.level();
  }

  // Offers (again) for `seatCount` seats, on the same transport; one offer at a time, each on
  // the PeerConnection current when its turn comes.
  negotiate(seatCount) {
    this.seats = seatCount;
    const turn = (this.offering || Promise.resolve()).catch(() => {}).then(() => this.offer(seatCount));
    this.offering = turn;
    return turn;
  }

  async offer(seatCount) {
    const pc = this.pc;
    if (this.stopped || !pc || pc.signalingState === 'closed') return;
    const receivers = pc.getTransceivers().slice(1);
    for (let index = receivers.length; index < seatCount; index++) pc.addTransceiver('audio', { direction: 'recvonly' });
    const offer = await pc.createOffer();
    await pc.setLocalDescription({ type: 'offer', sdp: receiveStereo(offer.sdp) });
    const answer = await this.signal.request('webrtc.offer', { room: this.room, sdp: pc.localDescription.sdp });
    if (this.pc !== pc || this.stopped) return;
    this.seatOfMid = new Map(answer.tracks.map((track) => [track.mid, track.seat]));
    if (this.sound) this.sound.place(this.seatSounds, seatCount);
    await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    for (const transceiver of pc.getTransceivers()) {
      if (transceiver.receiver.track && this.seatOfMid.has(transceiver.mid)) this.attach(transceiver.mid, transceiver.receiver.track);
    }
  }

  attach(mid, track) {
    const seat = this.seatOfMid.get(mid);
    if (seat === undefined || this.analysers.has(seat) || this.stopped) return;
    const stream = new MediaStream([track]);
    const element = new Audio();
    element.srcObject = stream;
    element.autoplay = true;
    element.play().catch(() => {});
    this.elements.set(seat, element);
    const analyser = this.context.createAnalyser();
    analyser.fftSize = 2048;
    this.context.createMediaStreamSource(stream).connect(analyser);
    this.analysers.set(seat, analyser);
    const placed = { ...this.sound.attachSeat(seat, stream), element };
    this.seatSounds.push(placed);
    this.sound.place([placed], this.seats);
  }

  // The level (0..1, RMS) heard from seat `seat` right now.
  level(seat) {
    return levelOf(this.analysers.get(seat));
  }

  // How many RTP packets have arrived on seat `seat`'s track so far.
  async packetsReceived(seat) {
    const transceiver = this.pc?.getTransceivers().find((t) => this.seatOfMid.get(t.mid) === seat);
    if (!transceiver) return 0;
    let packets = 0;
    (await transceiver.receiver.getStats()).forEach((report) => {
      if (report.type === 'inbound-rtp') packets += report.packetsReceived;
    });
    return packets;
  }

  setMic(on) {
    this.micOn = on;
    if (this.micTrack) this.micTrack.enabled = on;
  }

  resumeAudio() {
    if (this.stopped) return;
    this.context?.resume();
    for (const element of this.elements.values()) element.play().catch(() => {});
  }

  stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.meterTrack?.stop();
    this.pc?.close();
    this.stream?.getTracks().forEach((track) => track.stop());
    this.context?.close();
  }
}
