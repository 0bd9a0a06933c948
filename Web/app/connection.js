// What the page's connection to the server decides, apart from the sockets and timers that carry
// it out (signal.js, main.js): where to connect next and when, when a silent connection is dead,
// and how a room is got back after a reconnect (sync, join again, wait for a room between nodes,
// take the seat again). Pure: no page, no network, no clock of its own (`now` is passed in), so it
// runs under `node --test` on a fake clock as it runs in the browser. It decides as the SDK's
// signaling client and `VoiceRoom.recover` do (docs/sdk.md), so every client survives the same
// things: a server restart, a node's death, a network cut.

// Delays before each round of reconnect attempts, in ms (the last repeats), each ±25%. A server
// restart takes 1-2 s on a 2-core machine (docs/deploy.md section 9): with these a page is back
// at most about 2.5 s after the server is, at one attempt every 2 s per page while it is down.
export const reconnectDelays = [250, 500, 1000, 2000];
// A page gives up reconnecting after this long and says the connection is lost (as the SDK).
export const giveUpAfter = 120000;
// An attempt that has not been greeted after this long is abandoned (a node that died with its
// machine does not refuse: its connections hang until TCP gives up, tens of seconds).
export const attemptTimeout = 5000;
// Close codes after which the page does not come back: 1000 after `bye`, 4001 unauthorized,
// 4003 kicked, 4004 replaced by a newer connection of the same user (docs/protocol.md section 1).
export const finalCloseCodes = [1000, 4001, 4003, 4004];
// A room between nodes of a cluster (`conflict`: its node cannot be reached, as when it has just
// died and its lease has not lapsed, 2.5 s at most) is asked for every quarter second for 15 s.
export const roomRetryEvery = 250;
export const roomWaitFor = 15000;

export class Connection {
  constructor(url, random = Math.random) {
    this.url = url; // where the next connection goes
    this.candidates = [url]; // that, then every node the cluster named
    this.random = random;
    this.phase = 'idle'; // 'connecting' (the first), 'open', 'reconnecting', 'closed'
    this.session = null;
    this.interval = 10000; // between pings: half the hello's heartbeat
    this.lastHeard = 0;
    this.lastPing = 0;
    this.since = 0; // when the connection was lost
    this.round = 0;
    this.tried = 0; // candidates tried in this round
  }

  // The first connection: where to open it.
  start() {
    this.phase = 'connecting';
    return this.url;
  }

  // `hello` was answered: the session is open. Returns whether this was a reconnect.
  greeted(hello, now) {
    const again = this.phase === 'reconnecting';
    this.phase = 'open';
    this.session = hello.session;
    this.interval = Math.max(1000, (hello.heartbeat || 20) * 500);
    this.lastHeard = now;
    this.lastPing = now;
    this.round = 0;
    this.tried = 0;
    this.learn(hello.nodes);
    return again;
  }

  // The live nodes of a cluster (from `hello` or `ping`): places to go when this one goes away.
  learn(nodes) {
    for (const node of nodes || []) {
      if (typeof node?.signaling === 'string' && !this.candidates.includes(node.signaling)) this.candidates.push(node.signaling);
    }
  }

  // Anything arrived on the open connection.
  heard(now) {
    this.lastHeard = now;
  }

  // What the open connection needs now: 'ping' (one is due), 'dead' (nothing heard for two
  // pings' time and a second: the network is gone though the socket does not know it) or null.
  due(now) {
    if (this.phase !== 'open') return null;
    if (now - this.lastHeard >= 2 * this.interval + 1000) return 'dead';
    if (now - this.lastPing >= this.interval) {
      this.lastPing = now;
      return 'ping';
    }
    return null;
  }

  // The connection closed, or an attempt failed (`code` as the socket gave it; `refused`: the
  // server answered the hello with an error that will not change by trying again). Returns
  // {retry: {url, delay}} or {end: {code, reason}}.
  closed(code, now, refused = null) {
    if (this.phase === 'closed' || this.phase === 'idle') return { end: { code } };
    if (finalCloseCodes.includes(code) || refused || this.phase === 'connecting') {
      const first = this.phase === 'connecting';
      this.phase = 'closed';
      return { end: { code, reason: refused || (first ? 'unreachable' : ''), unreachable: first && !refused } };
    }
    if (this.phase === 'open') {
      this.phase = 'reconnecting';
      this.since = now;
      this.round = 0;
      this.tried = 0;
      // 1001: the server goes away (it stops, or its node hands the room on): come back at
      // once, within 50 ms so a whole room does not arrive in the same instant.
      const delay = code === 1001 ? this.random() * 50 : this.jittered(reconnectDelays[0]);
      return { retry: { url: this.url, delay } };
    }
    // An attempt failed: the next node at once, until every one was tried this round; then the
    // next round's delay, starting again from the node that was tried first.
    if (now - this.since > giveUpAfter) {
      this.phase = 'closed';
      return { end: { code, reason: 'unreachable', unreachable: true } };
    }
    const index = this.candidates.indexOf(this.url);
    this.url = this.candidates[(index + 1) % this.candidates.length];
    this.tried = (this.tried + 1) % this.candidates.length;
    if (this.tried !== 0) return { retry: { url: this.url, delay: 0 } };
    this.round += 1;
    return { retry: { url: this.url, delay: this.jittered(reconnectDelays[Math.min(this.round, reconnectDelays.length - 1)]) } };
  }

  // The page ends the session (`bye`).
  close() {
    this.phase = 'closed';
  }

  jittered(delay) {
    return delay * (0.75 + this.random() / 2);
  }
}

// Getting a room back after a reconnect, as `VoiceRoom.recover` does: sync; join again when the
// server let the membership go (a restart past the grace, a room that moved to another node);
// while the room is between nodes, ask again every quarter second for 15 s; then take again the
// seat this member held, and switch its microphone back on, where the room allows it.
export class RoomRecovery {
  // `held`: the seat this member held when the connection was lost ({index, micOn}) or null.
  constructor(held, now) {
    this.held = held;
    this.since = now;
    this.op = 'room.sync';
  }

  // The op to send now.
  next() {
    return this.op;
  }

  // The op failed with `code`: {retry: delay} (send `next()` after it), {give: 'move'} (the
  // room is on a node this one cannot reach: go there), {give: 'fail'}, or {give: 'later'} (the
  // connection went again: the next reconnect starts a recovery of its own).
  failed(code, now) {
    if (code === 'disconnected') return { give: 'later' };
    if (code === 'not_in_room') {
      this.op = 'room.join';
      return { retry: 0 };
    }
    if (code === 'conflict') return now - this.since > roomWaitFor ? { give: 'move' } : { retry: roomRetryEvery };
    return { give: 'fail' };
  }

  // The room is back (`state`, as state.js keeps it, for user `me`): the steps that give this
  // member its seat and its microphone as it was, in order ([op, args]): a restored seat comes back
  // with the microphone on, which this member may have had off.
  seatSteps(state, me) {
    const held = this.held;
    if (!held) return [];
    const seated = state.seats.find((seat) => seat.user === me);
    if (seated) return seated.micOn === held.micOn || seated.muted ? [] : [['mic.set', { on: held.micOn }]];
    const seat = state.seats[held.index];
    const moderator = ['owner', 'admin'].includes(state.role);
    if (!seat || seat.state !== 'empty' || (state.room.mode === 'request' && !moderator)) return [];
    return [['seat.take', { index: held.index }], ['mic.set', { on: held.micOn }]];
  }
}
