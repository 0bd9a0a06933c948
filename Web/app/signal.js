// The signaling connection (docs/protocol.md): hello, requests with answers, events, keepalive,
// and reconnection with resume, to the nodes of a cluster in turn. What to do and when is
// decided by the connection core (connection.js); this file carries it out with a WebSocket and
// timers. Knows nothing of the page.

import { Connection, attemptTimeout } from './connection.js';

export class SignalError extends Error {
  // `host`: for `conflict` on a room another node of a cluster hosts, that node ({node, signaling}).
  constructor(code, message, host = null) {
    super(message);
    this.code = code;
    this.host = host;
  }
}

// How long a request made while the connection is down waits for it to come back (and the
// page to say the room is back), by default.
const waitForConnection = 15000;

export class Signal {
  // `options.device`: which of the user's devices this is (docs/protocol.md section 4), so its
  // connection lives beside the user's others.
  constructor(url, token, handlers, options = {}) {
    this.core = new Connection(url);
    this.token = token;
    this.device = options.device || null;
    this.handlers = handlers; // {event(frame), state(name, detail)}: 'open', 'reconnecting', 'resumed', 'closed'
    this.nextId = 1;
    this.pending = new Map();
    this.socket = null;
    this.usable = false; // connected, and the page says its rooms are back (requests may go)
    this.waiters = new Set();
    this.first = null;
  }

  get url() {
    return this.core.url;
  }

  // Connects and says hello; resolves with the hello answer.
  start() {
    return new Promise((resolve, reject) => {
      this.first = { resolve, reject };
      this.open(this.core.start());
      this.ticker = setInterval(() => this.tick(), 500);
    });
  }

  open(url) {
    let socket;
    try {
      socket = new WebSocket(url);
    } catch {
      // Refused before it started (an address the page may not connect to): a failed attempt.
      this.socket = null;
      setTimeout(() => this.ended(null, 1006), 0);
      return;
    }
    this.socket = socket;
    socket.greeted = false;
    const giveUp = setTimeout(() => {
      if (!socket.greeted) this.abandon(socket);
    }, attemptTimeout);
    socket.onopen = async () => {
      const args = { token: this.token, client: { sdk: 'majlis-web', version: '1', platform: navigator.userAgent.slice(0, 60) } };
      if (this.core.session) args.resume = this.core.session;
      if (this.device) args.device = this.device;
      let hello;
      try {
        hello = await this.request('hello', args, undefined, socket);
      } catch (error) {
        // The server closes after a refused hello (4001); a hello that failed otherwise is a
        // failed attempt.
        socket.refusal = error;
        this.abandon(socket);
        return;
      }
      clearTimeout(giveUp);
      if (this.socket !== socket) return;
      socket.greeted = true;
      const again = this.core.greeted(hello, Date.now());
      if (this.first) {
        this.first.resolve(hello);
        this.first = null;
      }
      this.handlers.state(again ? 'resumed' : 'open', hello);
    };
    socket.onmessage = (message) => {
      if (this.socket !== socket) return;
      this.core.heard(Date.now());
      this.receive(message.data);
    };
    socket.onclose = (close) => {
      clearTimeout(giveUp);
      this.ended(socket, close.code, close.reason);
    };
  }

  // Leaves `socket` at once (a dead network: its close would wait for a handshake that never
  // comes) and goes on as if it closed.
  abandon(socket) {
    socket.onclose = null;
    socket.onmessage = null;
    socket.close();
    this.ended(socket, 1006);
  }

  // The current socket (or attempt) ended: fail what waited on it, then reconnect or stop as the
  // core decides.
  ended(socket, code, reason = '') {
    if (socket !== this.socket) return;
    this.socket = null;
    this.usable = false;
    for (const { reject } of this.pending.values()) reject(new SignalError('disconnected', 'the connection closed'));
    this.pending.clear();
    const wasOpen = this.core.phase === 'open';
    const refusal = socket?.refusal;
    const final = ['unauthorized', 'token_expired'].includes(refusal?.code) ? refusal : null;
    const decision = this.core.closed(code, Date.now(), final?.message);
    if (decision.end) {
      clearInterval(this.ticker);
      for (const waiter of this.waiters) waiter.fail();
      if (this.first) {
        this.first.reject(refusal || new SignalError('unreachable', reason || `cannot reach ${this.core.url}`));
        this.first = null;
        return;
      }
      this.handlers.state('closed', { code, reason: reason || decision.end.reason });
      return;
    }
    if (wasOpen) this.handlers.state('reconnecting', { code });
    this.retry = setTimeout(() => this.open(decision.retry.url), decision.retry.delay);
  }

  // Twice a second: a ping when one is due; a connection silent too long is taken for dead.
  tick() {
    const socket = this.socket;
    const due = this.core.due(Date.now());
    if (due === 'dead' && socket) this.abandon(socket);
    if (due === 'ping') this.request('ping').then((pong) => this.core.learn(pong.nodes)).catch(() => {});
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame.re !== undefined && this.pending.has(frame.re)) {
      const { resolve, reject } = this.pending.get(frame.re);
      this.pending.delete(frame.re);
      if (frame.ok) resolve(frame.data || {});
      else reject(new SignalError(frame.error?.code || 'internal', frame.error?.message || 'request failed', frame.error?.host || null));
    } else if (frame.ev) {
      this.handlers.event(frame);
    }
  }

  // Sends one request now; resolves with its data or rejects with a SignalError
  // (`disconnected` when there is no connection, or it closed before the answer).
  request(op, args = {}, rid = undefined, socket = this.socket) {
    return new Promise((resolve, reject) => {
      if (!socket || socket !== this.socket || socket.readyState !== WebSocket.OPEN) {
        reject(new SignalError('disconnected', 'not connected'));
        return;
      }
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      socket.send(JSON.stringify(rid ? { id, op, args, rid } : { id, op, args }));
    });
  }

  // Sends one request as soon as the session is usable, within `within` ms: made while the
  // connection is down, it waits for it; lost with a connection, it is sent again with the same
  // `rid`, so the server does it once (docs/protocol.md section 1).
  async send(op, args = {}, within = waitForConnection) {
    const rid = `w${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    const deadline = Date.now() + within;
    for (;;) {
      await this.whenUsable(deadline);
      try {
        return await this.request(op, args, rid);
      } catch (error) {
        if (error.code !== 'disconnected' || Date.now() >= deadline) throw error;
      }
    }
  }

  whenUsable(deadline) {
    if (this.usable) return Promise.resolve();
    if (this.core.phase === 'closed') return Promise.reject(new SignalError('disconnected', 'not connected'));
    return new Promise((resolve, reject) => {
      const waiter = {
        go: () => {
          clearTimeout(waiter.timer);
          this.waiters.delete(waiter);
          resolve();
        },
        fail: () => {
          clearTimeout(waiter.timer);
          this.waiters.delete(waiter);
          reject(new SignalError('disconnected', 'not connected'));
        },
      };
      waiter.timer = setTimeout(waiter.fail, Math.max(0, deadline - Date.now()));
      this.waiters.add(waiter);
    });
  }

  // The page has its rooms back (joined, or recovered after a reconnect): requests may go.
  setUsable() {
    if (!this.socket) return;
    this.usable = true;
    for (const waiter of [...this.waiters]) waiter.go();
  }

  close() {
    this.core.close();
    clearInterval(this.ticker);
    clearTimeout(this.retry);
    for (const waiter of [...this.waiters]) waiter.fail();
    const socket = this.socket;
    if (socket?.readyState === WebSocket.OPEN) {
      this.request('bye').catch(() => {});
    } else {
      socket?.close();
    }
  }
}
