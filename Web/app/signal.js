// The signaling connection (docs/protocol.md): hello, requests with answers, events, keepalive,
// and reconnection with resume. Knows nothing of the page.

export class SignalError extends Error {
  // `host`: for `conflict` on a room another node of a cluster hosts, that node ({node, signaling}).
  constructor(code, message, host = null) {
    super(message);
    this.code = code;
    this.host = host;
  }
}

export class Signal {
  constructor(url, token, handlers) {
    this.url = url;
    this.token = token;
    this.handlers = handlers; // {event(frame), state(name, detail), rooms(list)}
    this.nextId = 1;
    this.pending = new Map();
    this.session = null;
    this.closedForGood = false;
    this.attempt = 0;
  }

  // Connects and says hello; resolves with the hello answer.
  async start() {
    return this.open(false);
  }

  open(resuming) {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      this.socket = socket;
      let greeted = false;
      socket.onopen = async () => {
        try {
          const args = { token: this.token, client: { sdk: 'majlis-web', version: '1', platform: navigator.userAgent.slice(0, 60) } };
          if (this.session) args.resume = this.session;
          const hello = await this.request('hello', args);
          greeted = true;
          this.session = hello.session;
          this.attempt = 0;
          this.heartbeat(hello.heartbeat || 20);
          this.handlers.state(resuming ? 'resumed' : 'open', hello);
          resolve(hello);
        } catch (error) {
          this.closedForGood = true;
          reject(error);
        }
      };
      socket.onmessage = (message) => this.receive(message.data);
      socket.onclose = (close) => {
        clearInterval(this.pinger);
        for (const { reject: fail } of this.pending.values()) fail(new SignalError('disconnected', 'the connection closed'));
        this.pending.clear();
        if (!greeted && !resuming) {
          reject(new SignalError('unreachable', close.reason || `cannot reach ${this.url}`));
          return;
        }
        // 4001 unauthorized, 4003 kicked, 4004 replaced, 1000 after bye: do not come back.
        if (this.closedForGood || [1000, 4001, 4003, 4004].includes(close.code)) {
          this.closedForGood = true;
          this.handlers.state('closed', { code: close.code, reason: close.reason });
          return;
        }
        this.handlers.state('reconnecting', { code: close.code });
        // 1001: the server goes away (it stops, or its node hands the room on): come back at once,
        // within 50 ms so a whole room does not arrive in the same instant.
        const delay = close.code === 1001 && this.attempt === 0
          ? Math.random() * 50
          : Math.min(10000, 500 * 2 ** this.attempt) * (0.75 + Math.random() / 2);
        this.attempt++;
        setTimeout(() => this.open(true).catch((error) => this.handlers.state('closed', { reason: error.message })), delay);
      };
    });
  }

  heartbeat(seconds) {
    clearInterval(this.pinger);
    this.pinger = setInterval(() => this.request('ping').catch(() => {}), Math.max(1000, seconds * 500));
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

  // Sends one request; resolves with its data or rejects with a SignalError.
  request(op, args = {}) {
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
        reject(new SignalError('disconnected', 'not connected'));
        return;
      }
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, op, args }));
    });
  }

  close() {
    this.closedForGood = true;
    clearInterval(this.pinger);
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.request('bye').catch(() => {});
    } else {
      this.socket?.close();
    }
  }
}
