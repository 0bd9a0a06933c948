// Voice over WebRTC to the Majlis server (docs/protocol.md section 13): one PeerConnection, the
// microphone up on the first audio section, one receive-only section per seat. The server's
// answer says which section carries which seat; renegotiate when the seat count changes.

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
  }

  // `processing` false turns off echo cancellation, noise suppression and gain control (for
  // music, or for measuring the audio as it is). Resolves with the microphone's state: 'ok',
  // 'denied' (the person or the browser refused it) or 'none' (no microphone, or none usable).
  async start(seatCount, processing = true) {
    let microphone = 'ok';
    this.stream = await (navigator.mediaDevices?.getUserMedia({
      audio: { echoCancellation: processing, noiseSuppression: processing, autoGainControl: processing },
    }) ?? Promise.reject(new Error('no media devices'))).catch((error) => {
      microphone = error?.name === 'NotAllowedError' || error?.name === 'SecurityError' ? 'denied' : 'none';
      return null;
    });
    this.micTrack = this.stream?.getAudioTracks()[0] || null;
    if (!this.micTrack && microphone === 'ok') microphone = 'none';
    if (this.micTrack) this.micTrack.enabled = this.micOn;
    this.context = new AudioContext();
    this.pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle', rtcpMuxPolicy: 'require' });
    this.pc.addTransceiver(this.micTrack || 'audio', { direction: this.micTrack ? 'sendonly' : 'inactive' });
    this.pc.ontrack = (event) => this.attach(event.transceiver.mid, event.track);
    this.pc.onconnectionstatechange = () => {
      this.state = this.pc.connectionState;
      this.onChange(this.state);
      if (this.state === 'failed') this.negotiate(this.seats, true).catch(() => {});
    };
    await this.negotiate(seatCount);
    return microphone;
  }

  // Offers (again) for `seatCount` seats; `restart` asks for a new ICE and DTLS transport.
  async negotiate(seatCount, restart = false) {
    this.seats = seatCount;
    const receivers = this.pc.getTransceivers().slice(1);
    for (let index = receivers.length; index < seatCount; index++) this.pc.addTransceiver('audio', { direction: 'recvonly' });
    const offer = await this.pc.createOffer({ iceRestart: restart });
    await this.pc.setLocalDescription(offer);
    const answer = await this.signal.request('webrtc.offer', { room: this.room, sdp: this.pc.localDescription.sdp });
    this.seatOfMid = new Map(answer.tracks.map((track) => [track.mid, track.seat]));
    await this.pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    for (const transceiver of this.pc.getTransceivers()) {
      if (transceiver.receiver.track && this.seatOfMid.has(transceiver.mid)) this.attach(transceiver.mid, transceiver.receiver.track);
    }
  }

  attach(mid, track) {
    const seat = this.seatOfMid.get(mid);
    if (seat === undefined || this.analysers.has(seat)) return;
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
  }

  // The level (0..1, RMS) heard from seat `seat` right now.
  level(seat) {
    const analyser = this.analysers.get(seat);
    if (!analyser) return 0;
    const samples = new Float32Array(analyser.fftSize);
    analyser.getFloatTimeDomainData(samples);
    let sum = 0;
    for (const sample of samples) sum += sample * sample;
    return Math.sqrt(sum / samples.length);
  }

  // The frequency (Hz) of the strongest component heard from seat `seat` right now.
  peakFrequency(seat) {
    const analyser = this.analysers.get(seat);
    if (!analyser) return 0;
    const bins = new Float32Array(analyser.frequencyBinCount);
    analyser.getFloatFrequencyData(bins);
    let best = 0;
    for (let index = 1; index < bins.length; index++) if (bins[index] > bins[best]) best = index;
    return (best * this.context.sampleRate) / analyser.fftSize;
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
    this.context?.resume();
    for (const element of this.elements.values()) element.play().catch(() => {});
  }

  stop() {
    this.pc?.close();
    this.stream?.getTracks().forEach((track) => track.stop());
    this.context?.close();
  }
}
