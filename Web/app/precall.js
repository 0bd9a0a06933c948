// The check before joining (docs/web.md): the microphone's level, an echo test through the
// server's real media path, and that path's network figures with a grade. Both tests are the
// server's echo test over WebRTC (docs/protocol.md section 15): the page sends on one section and
// hears what it sent come back on another, `delay` ms later.

import { levelOf } from './sound.js';

// network.quality's levels (docs/protocol.md section 10), best first, and each figure's limits.
const grades = ['excellent', 'good', 'poor', 'bad'];
const limits = { loss: [1, 3, 8, 20], jitter: [30, 60, 100, 200], roundTrip: [150, 300, 500, 800] };

// The worst of what each figure says (loss in %, jitter and round trip in ms), as the server
// grades a member's network.
export function gradeNetwork(figures) {
  let worst = 0;
  for (const [name, bounds] of Object.entries(limits)) {
    const value = figures[name];
    if (value === null || value === undefined) continue;
    const index = bounds.findIndex((bound) => value < bound);
    worst = Math.max(worst, index === -1 ? grades.length : index);
  }
  return worst >= grades.length ? 'down' : grades[worst];
}

export class Precall {
  constructor(signal) {
    this.signal = signal;
    this.context = new AudioContext();
    this.meter = this.context.createAnalyser();
    this.meter.fftSize = 1024;
    this.echo = null; // {pc, element}
  }

  // The microphone, with the browser's clean-up on; resolves with 'ok', 'denied' or 'none'.
  async openMicrophone() {
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    } catch (error) {
      return error?.name === 'NotAllowedError' || error?.name === 'SecurityError' ? 'denied' : 'none';
    }
    this.context.createMediaStreamSource(this.stream).connect(this.meter);
    return 'ok';
  }

  // The level now, 0..1 (RMS), of the microphone or (`echo`) of the echo heard back.
  level(echo = false) {
    return levelOf(echo ? this.echo?.analyser : this.meter);
  }

  // A WebRTC echo test of `track`: what it carries comes back `delay` ms later on the answer's
  // receive section. Resolves with the connection and the echo's track.
  async connect(track, delay) {
    const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle', rtcpMuxPolicy: 'require' });
    pc.addTransceiver(track, { direction: 'sendonly' });
    const back = pc.addTransceiver('audio', { direction: 'recvonly' });
    await pc.setLocalDescription(await pc.createOffer());
    try {
      const answer = await this.signal.request('echo.start', { delay, sdp: pc.localDescription.sdp });
      await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    } catch (error) {
      pc.close();
      throw error;
    }
    return { pc, track: back.receiver.track };
  }

  // Starts the echo test: the person speaks and hears themselves `delay` ms later.
  async startEcho(delay = 3000) {
    await this.stop();
    this.context.resume();
    const { pc, track } = await this.connect(this.stream.getAudioTracks()[0], delay);
    const element = new Audio();
    element.srcObject = new MediaStream([track]);
    element.autoplay = true;
    element.play().catch(() => {});
    const analyser = this.context.createAnalyser();
    analyser.fftSize = 1024;
    this.context.createMediaStreamSource(element.srcObject).connect(analyser);
    this.echo = { pc, element, analyser };
  }

  async stop() {
    if (!this.echo) return;
    this.echo.element.srcObject = null;
    this.echo.pc.close();
    this.echo = null;
    await this.signal.request('echo.stop').catch(() => {});
  }

  // How many packets of the echo have come back so far (for the page's status and tests).
  async echoPackets() {
    return this.echo ? (await Precall.figures(this.echo.pc)).received : 0;
  }

  // The network between the page and the server, measured on a steady tone sent through the
  // echo test (not played): the round trip of the browser's ICE checks, and the loss and jitter
  // of what came back over `seconds` (there and back, so the loss of each way is taken as half of
  // it). Resolves with {roundTrip, loss, jitter, grade}, or grade 'down' when nothing came back.
  async checkNetwork(seconds = 4, delay = 2000) {
    await this.stop();
    const oscillator = this.context.createOscillator();
    const destination = this.context.createMediaStreamDestination();
    oscillator.frequency.value = 440;
    oscillator.connect(destination);
    oscillator.start();
    this.context.resume();
    const { pc } = await this.connect(destination.stream.getAudioTracks()[0], delay);
    this.echo = { pc, element: new Audio() };
    const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    try {
      let first = await Precall.figures(pc);
      for (const until = Date.now() + delay + 5000; first.received === 0 && Date.now() < until; first = await Precall.figures(pc)) await wait(100);
      if (first.received === 0) return { roundTrip: null, loss: null, jitter: null, grade: 'down' };
      await wait(seconds * 1000);
      const last = await Precall.figures(pc);
      const expected = last.received - first.received + last.lost - first.lost;
      const both = expected > 0 ? Math.max(0, last.lost - first.lost) / expected : 0;
      const figures = {
        roundTrip: last.roundTrip === null ? null : Math.round(last.roundTrip),
        loss: Math.round((1 - Math.sqrt(1 - Math.min(1, both))) * 1000) / 10,
        jitter: Math.round(last.jitter),
      };
      return { ...figures, grade: gradeNetwork(figures) };
    } finally {
      oscillator.stop();
      await this.stop();
    }
  }

  // From the connection's stats: packets received and lost on the echo, its jitter (ms), and
  // the mean round trip of the ICE checks on the selected candidate pair (ms; null before any
  // check was answered).
  static async figures(pc) {
    const result = { received: 0, lost: 0, jitter: 0, roundTrip: null };
    const stats = await pc.getStats();
    let selected = null;
    stats.forEach((report) => {
      if (report.type === 'inbound-rtp' && report.kind === 'audio') {
        result.received += report.packetsReceived || 0;
        result.lost += report.packetsLost || 0;
        result.jitter = Math.max(result.jitter, (report.jitter || 0) * 1000);
      }
      if (report.type === 'transport' && report.selectedCandidatePairId) selected = stats.get(report.selectedCandidatePairId);
    });
    if (selected?.responsesReceived > 0) result.roundTrip = (selected.totalRoundTripTime / selected.responsesReceived) * 1000;
    return result;
  }

  async close() {
    await this.stop();
    this.stream?.getTracks().forEach((track) => track.stop());
    this.context.close();
  }
}
