// The page's connection core (Web/app/connection.js) on a fake clock: where and when it
// reconnects, when a silent connection is dead, and how a room is got back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Connection, RoomRecovery, reconnectDelays, giveUpAfter, roomRetryEvery, roomWaitFor,
} from '../../Web/app/connection.js';

const half = () => 0.5; // no jitter: delays exactly as listed

function open(url = 'ws://a/v1/signal', nodes = undefined, now = 0) {
  const connection = new Connection(url, half);
  assert.equal(connection.start(), url);
  assert.equal(connection.greeted({ session: 's1', heartbeat: 20, nodes }, now), false);
  return connection;
}

test('a first connection that cannot be made is not retried: the join form says so', () => {
  const connection = new Connection('ws://a/v1/signal', half);
  connection.start();
  assert.deepEqual(connection.closed(1006, 10), { end: { code: 1006, reason: 'unreachable', unreachable: true } });
  assert.equal(connection.phase, 'closed');
});

test('a lone server that restarts: back at once on 1001, then rounds of 250, 500, 1000 and 2000 ms', () => {
  const connection = open();
  let now = 1000;
  const going = connection.closed(1001, now);
  assert.equal(going.retry.url, 'ws://a/v1/signal');
  assert.ok(going.retry.delay <= 50, `${going.retry.delay}`);
  const delays = [];
  for (let attempt = 0; attempt < 6; attempt++) {
    now += 100;
    const next = connection.closed(1006, now);
    assert.equal(next.retry.url, 'ws://a/v1/signal');
    delays.push(next.retry.delay);
  }
  assert.deepEqual(delays, [500, 1000, 2000, 2000, 2000, 2000]);
  // Back: a reconnect (resumed), and the rounds start over for the next drop.
  assert.equal(connection.greeted({ session: 's1', heartbeat: 20 }, now), true);
  assert.deepEqual(connection.closed(1006, now + 1), { retry: { url: 'ws://a/v1/signal', delay: reconnectDelays[0] } });
});

test('a dropped connection (not 1001) waits the first delay, jittered within a quarter either way', () => {
  for (const random of [0, 0.999]) {
    const connection = new Connection('ws://a/v1/signal', () => random);
    connection.start();
    connection.greeted({ session: 's', heartbeat: 20 }, 0);
    const { delay } = connection.closed(1006, 5).retry;
    assert.ok(delay >= 0.75 * reconnectDelays[0] && delay <= 1.25 * reconnectDelays[0], `${delay}`);
  }
});

test('a node that dies: every other node of the cluster is tried at once, then the rounds go on from the first', () => {
  const connection = open('ws://a/v1/signal', [{ id: 'a', signaling: 'ws://a/v1/signal' }, { id: 'b', signaling: 'ws://b/v1/signal' }]);
  connection.learn([{ id: 'c', signaling: 'ws://c/v1/signal' }, { id: 'x' }]);
  assert.deepEqual(connection.candidates, ['ws://a/v1/signal', 'ws://b/v1/signal', 'ws://c/v1/signal']);
  const tried = [connection.closed(1006, 0).retry];
  for (let attempt = 0; attempt < 4; attempt++) tried.push(connection.closed(1006, 10 * attempt).retry);
  assert.deepEqual(tried.map((step) => step.url), ['ws://a/v1/signal', 'ws://b/v1/signal', 'ws://c/v1/signal', 'ws://a/v1/signal', 'ws://b/v1/signal']);
  assert.deepEqual(tried.map((step) => step.delay), [250, 0, 0, 500, 0]);
  // Node b answers: from now on the session is there, and a drop comes back there first.
  assert.equal(connection.greeted({ session: 's2', heartbeat: 20 }, 100), true);
  assert.equal(connection.url, 'ws://b/v1/signal');
  assert.equal(connection.closed(1006, 200).retry.url, 'ws://b/v1/signal');
});

test('final close codes and refused hellos end the session; two minutes of failures too', () => {
  for (const code of [1000, 4001, 4003, 4004]) {
    const connection = open();
    assert.equal(connection.closed(code, 5).end.code, code);
    assert.equal(connection.phase, 'closed');
  }
  const refused = open();
  refused.closed(1006, 0);
  assert.deepEqual(refused.closed(1006, 10, 'token expired'), { end: { code: 1006, reason: 'token expired', unreachable: false } });

  const patient = open();
  patient.closed(1006, 0);
  assert.ok(patient.closed(1006, giveUpAfter).retry);
  assert.deepEqual(patient.closed(1006, giveUpAfter + 1), { end: { code: 1006, reason: 'unreachable', unreachable: true } });
});

test('pings every half heartbeat; a connection silent for two of them and a second is dead', () => {
  const connection = open('ws://a/v1/signal', undefined, 0);
  assert.equal(connection.due(9999), null);
  assert.equal(connection.due(10000), 'ping');
  assert.equal(connection.due(10500), null);
  connection.heard(10010);
  assert.equal(connection.due(20010), 'ping');
  // Nothing heard since 10,010 ms: dead at 10,010 + 21,000.
  assert.equal(connection.due(31009), 'ping');
  assert.equal(connection.due(31010), 'dead');
  // A short heartbeat never pings more than once a second.
  const fast = new Connection('ws://a', half);
  fast.start();
  fast.greeted({ session: 's', heartbeat: 1 }, 0);
  assert.equal(fast.interval, 1000);
  // Not open: nothing is due.
  connection.closed(1006, 40000);
  assert.equal(connection.due(90000), null);
});

test('a room gets back: sync; join when the server let the member go; a room between nodes is waited for', () => {
  const recovery = new RoomRecovery(null, 0);
  assert.equal(recovery.next(), 'room.sync');
  assert.deepEqual(recovery.failed('not_in_room', 10), { retry: 0 });
  assert.equal(recovery.next(), 'room.join');
  assert.deepEqual(recovery.failed('conflict', 100), { retry: roomRetryEvery });
  assert.deepEqual(recovery.failed('conflict', roomWaitFor), { retry: roomRetryEvery });
  assert.deepEqual(recovery.failed('conflict', roomWaitFor + 1), { give: 'move' });
  assert.deepEqual(recovery.failed('disconnected', 5), { give: 'later' });
  assert.deepEqual(recovery.failed('banned', 5), { give: 'fail' });
  assert.deepEqual(recovery.failed('room_not_found', 5), { give: 'fail' });
});

function room({ mode = 'request', role = 'member', seats }) {
  return { room: { mode }, role, seats };
}
const empty = (index) => ({ index, state: 'empty', muted: false, micOn: false });
const taken = (index, user, micOn = true, muted = false) => ({ index, state: 'occupied', user, micOn, muted });

test('the seat and microphone as they were: kept seats left alone, lost ones taken again where the room allows', () => {
  // Not seated before: nothing to do.
  assert.deepEqual(new RoomRecovery(null, 0).seatSteps(room({ seats: [empty(0)] }), 'me'), []);
  // The seat was kept (a restored room puts the microphone on): back as it was.
  const off = new RoomRecovery({ index: 1, micOn: false }, 0);
  assert.deepEqual(off.seatSteps(room({ seats: [empty(0), taken(1, 'me', true)] }), 'me'), [['mic.set', { on: false }]]);
  assert.deepEqual(off.seatSteps(room({ seats: [empty(0), taken(1, 'me', false)] }), 'me'), []);
  // Muted by the host meanwhile: the microphone is the host's to give back.
  const on = new RoomRecovery({ index: 1, micOn: true }, 0);
  assert.deepEqual(on.seatSteps(room({ seats: [empty(0), taken(1, 'me', false, true)] }), 'me'), []);
  // Lost: taken again in an open-seat room, or by a moderator; not where the host must approve.
  assert.deepEqual(on.seatSteps(room({ mode: 'free', seats: [empty(0), empty(1)] }), 'me'), [['seat.take', { index: 1 }], ['mic.set', { on: true }]]);
  assert.deepEqual(on.seatSteps(room({ role: 'owner', seats: [empty(0), empty(1)] }), 'me'), [['seat.take', { index: 1 }], ['mic.set', { on: true }]]);
  assert.deepEqual(on.seatSteps(room({ seats: [empty(0), empty(1)] }), 'me'), []);
  // Someone else sits there now, or the room has fewer seats: nothing.
  assert.deepEqual(on.seatSteps(room({ mode: 'free', seats: [empty(0), taken(1, 'omar')] }), 'me'), []);
  assert.deepEqual(on.seatSteps(room({ mode: 'free', seats: [empty(0)] }), 'me'), []);
});
