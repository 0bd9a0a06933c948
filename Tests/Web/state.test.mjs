// The web app's state module (Web/app/state.js) under Node's own test runner: `node --test Tests/Web`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  initialState, applySnapshot, applyEvent, expectOwnChange, mySeat, micLive, addChat, roomIdFor, ownChangeWindow, nodePage,
} from '../../Web/app/state.js';

function member(id, role = 'member', extra = {}) {
  return { id, name: id[0].toUpperCase() + id.slice(1), avatar: '', role, chatMuted: false, joinedAt: 0, ...extra };
}

function seat(index, user, extra = {}) {
  return user ? { index, state: 'occupied', user, muted: false, micOn: true, ...extra } : { index, state: 'empty', muted: false, micOn: false, ...extra };
}

// Huda owns room "r" (4 seats, ask to speak); Omar (us) sits on seat 2; Layla listens.
function joined({ role = 'member' } = {}) {
  const state = initialState();
  state.me = { id: 'omar', name: 'Omar' };
  applySnapshot(state, {
    room: { id: 'r', title: 'R', owner: 'huda', mode: 'request', seatCount: 4, announcement: '', chatMutedAll: false, createdAt: 0, memberCount: 3, maxMembers: 0 },
    seq: 10,
    seats: [seat(0, 'huda'), seat(1, 'omar'), seat(2), seat(3)],
    members: [member('huda', 'owner', { seat: 0 }), member('omar', role, { seat: 1 }), member('layla')],
    attributes: {},
    me: { role, seat: 1, chatMuted: false },
    requests: [],
    chat: { lastMsgId: 0 },
  });
  return state;
}

let seq = 10;
function event(ev, data, sequenced = true) {
  return sequenced ? { ev, room: 'r', seq: ++seq, data } : { ev, room: 'r', data };
}

test('member counts follow joins and leaves in a small room, and a repeated join counts once', () => {
  seq = 10;
  const state = joined();
  applyEvent(state, event('member.joined', { member: member('zaid') }), 'r', 0);
  assert.equal(state.room.memberCount, 4);
  applyEvent(state, event('member.updated', { member: member('zaid') }), 'r', 0);
  assert.deepEqual(applyEvent(state, event('member.left', { user: 'layla', reason: 'left' }), 'r', 0).notices, [['left', { name: 'Layla' }]]);
  assert.equal(state.room.memberCount, 3);
  // Removed by a moderator, or gone with the connection: said so, not that they left.
  applyEvent(state, event('member.joined', { member: member('layla') }), 'r', 0);
  assert.deepEqual(applyEvent(state, event('member.left', { user: 'layla', reason: 'kicked' }), 'r', 0).notices, [['leftKicked', { name: 'Layla' }]]);
  applyEvent(state, event('member.joined', { member: member('layla') }), 'r', 0);
  assert.deepEqual(applyEvent(state, event('member.left', { user: 'layla', reason: 'timeout' }), 'r', 0).notices, [['leftTimeout', { name: 'Layla' }]]);
  assert.deepEqual([...state.members.keys()].sort(), ['huda', 'omar', 'zaid']);
  // A busy room's batch says the exact count.
  applyEvent(state, event('members.changed', { joined: [member('a'), member('b')], joinedCount: 9, left: [], memberCount: 12 }), 'r', 0);
  assert.equal(state.room.memberCount, 12);
});

test('a gap in seq asks for a resync and changes nothing; an old event is ignored', () => {
  seq = 10;
  const state = joined();
  const gap = applyEvent(state, { ev: 'member.joined', room: 'r', seq: 13, data: { member: member('zaid') } }, 'r', 0);
  assert.equal(gap.resync, true);
  assert.equal(state.members.has('zaid'), false);
  assert.equal(state.seq, 10);
  const old = applyEvent(state, { ev: 'member.left', room: 'r', seq: 9, data: { user: 'layla' } }, 'r', 0);
  assert.equal(old.changed, false);
  assert.equal(state.members.has('layla'), true);
  // Another room's events are not ours.
  assert.equal(applyEvent(state, { ev: 'member.left', room: 'other', seq: 11, data: { user: 'layla' } }, 'r', 0).changed, false);
});

test('what the host does to us is told to us; what we do ourselves is not', () => {
  seq = 10;
  const state = joined();
  let out = applyEvent(state, event('seat.updated', { seats: [seat(1, 'omar', { muted: true })] }), 'r', 1000);
  assert.deepEqual(out.notices, [['notice.hostMuted']]);
  assert.equal(micLive(state), false);
  out = applyEvent(state, event('seat.updated', { seats: [seat(1, 'omar', { muted: false })] }), 'r', 1000);
  assert.deepEqual(out.notices, [['notice.hostUnmuted']]);
  assert.equal(micLive(state), true);
  // Our own mic switch: no notice; the host turning mics off (mute-all, members may unmute): a notice.
  expectOwnChange(state, 'mic', 1000);
  out = applyEvent(state, event('seat.updated', { seats: [seat(1, 'omar', { micOn: false })] }), 'r', 1500);
  assert.deepEqual(out.notices, []);
  applyEvent(state, event('seat.updated', { seats: [seat(1, 'omar', { micOn: true })] }), 'r', 1600);
  out = applyEvent(state, event('seat.updated', { seats: [seat(1, 'omar', { micOn: false })] }), 'r', 1000 + ownChangeWindow + 1);
  assert.deepEqual(out.notices, [['notice.micTurnedOff']]);
  // Taken off the seat by the host, and a seat locked under us.
  out = applyEvent(state, event('seat.updated', { seats: [seat(1)] }), 'r', 20_000);
  assert.deepEqual(out.notices, [['notice.offSeat']]);
  assert.equal(mySeat(state), null);
  applyEvent(state, event('seat.updated', { seats: [seat(2, 'omar')] }), 'r', 20_000);
  out = applyEvent(state, event('seat.updated', { seats: [{ index: 2, state: 'locked', muted: false, micOn: false }] }), 'r', 20_000);
  assert.deepEqual(out.notices, [['notice.seatLockedUnderYou']]);
  // Leaving or switching ourselves: no notice.
  applyEvent(state, event('seat.updated', { seats: [seat(3, 'omar')] }), 'r', 20_000);
  expectOwnChange(state, 'seat', 30_000);
  out = applyEvent(state, event('seat.updated', { seats: [seat(3), seat(2, 'omar')] }), 'r', 30_001);
  assert.deepEqual(out.notices, []);
});

test('roles given and taken are told, and the new owner to everyone', () => {
  seq = 10;
  const state = joined();
  let out = applyEvent(state, event('member.updated', { member: member('omar', 'admin') }), 'r', 0);
  assert.deepEqual(out.notices, [['notice.youAreAdmin']]);
  assert.equal(state.role, 'admin');
  out = applyEvent(state, event('member.updated', { member: member('omar', 'member') }), 'r', 0);
  assert.deepEqual(out.notices, [['notice.youAreNoLongerAdmin']]);
  out = applyEvent(state, event('member.updated', { member: member('layla', 'owner') }), 'r', 0);
  assert.deepEqual(out.notices, [['notice.newOwner', { name: 'Layla' }]]);
  out = applyEvent(state, event('member.updated', { member: member('omar', 'owner') }), 'r', 0);
  assert.deepEqual(out.notices, [['notice.youAreOwner']]);
});

test('chat mutes, kicks with a ban, requests and seat count changes', () => {
  seq = 10;
  const state = joined();
  assert.deepEqual(applyEvent(state, event('you.chatMuted', { until: 99 }, false), 'r', 0).notices, [['notice.chatMuted']]);
  assert.equal(state.chatMuted, true);
  state.request = { id: 'q1' };
  assert.deepEqual(applyEvent(state, event('request.accepted', { requestId: 'q1', index: 2 }, false), 'r', 0).notices, [['accepted']]);
  assert.equal(state.request, null);
  const grown = applyEvent(state, event('room.updated', { room: { ...state.room, seatCount: 6 } }), 'r', 0);
  assert.equal(grown.negotiate, 6);
  assert.equal(state.seats.length, 6);
  assert.equal(state.seats[5].state, 'empty');
  const kicked = applyEvent(state, event('you.kicked', { by: 'huda', until: 1234 }, false), 'r', 0);
  assert.equal(kicked.stopMedia, true);
  assert.deepEqual(state.ended, ['kickedUntil', { until: 1234 }]);
});

test('chat history and live messages merge in order without duplicates', () => {
  const state = joined();
  addChat(state, [{ msgId: 3 }, { msgId: 1 }]);
  addChat(state, [{ msgId: 2 }, { msgId: 3 }]);
  assert.deepEqual(state.chat.map((message) => message.msgId), [1, 2, 3]);
});

test('room ids: a valid id stays, a title in any script makes a stable id of its own', () => {
  assert.deepEqual(roomIdFor(' majlis '), { id: 'majlis', title: null });
  const arabic = roomIdFor('مجلس الأصدقاء');
  assert.match(arabic.id, /^r-[0-9a-f]{16}$/);
  assert.equal(arabic.title, 'مجلس الأصدقاء');
  assert.deepEqual(roomIdFor('مجلس الأصدقاء'), arabic);
  assert.notEqual(roomIdFor('朋友们的房间').id, arabic.id);
  assert.equal(Array.from(roomIdFor('字'.repeat(300)).title).length, 128);
  // Case and spacing do not make another room; the title is kept as typed.
  assert.equal(roomIdFor('friday  salon').id, roomIdFor('Friday Salon').id);
  assert.equal(roomIdFor('Friday Salon').title, 'Friday Salon');
  assert.notEqual(roomIdFor('Friday Salon').id, roomIdFor('Friday Salons').id);
});

test('every word the pages use exists in every language', async () => {
  const { missingKeys, hasKey } = await import('../../Web/app/i18n.js');
  assert.deepEqual(Object.values(missingKeys()).flat(), []);
  const { readFileSync } = await import('node:fs');
  const source = (file) => readFileSync(new URL(`../../Web/app/${file}`, import.meta.url), 'utf8');
  const used = new Set();
  for (const file of ['main.js', 'console.js']) for (const match of source(file).matchAll(/\bt\('([A-Za-z.]+)'/g)) used.add(match[1]);
  for (const match of source('state.js').matchAll(/\[\s*'([A-Za-z.]+)'\s*(?:,\s*\{|\])/g)) used.add(match[1]);
  for (const mode of ['request', 'free']) used.add(`modeLabel.${mode}`);
  const missing = [...used].filter((key) => !hasKey(key));
  assert.deepEqual(missing, []);
});

test('counts take each language\'s plural forms (Arabic has six)', async () => {
  const { translator } = await import('../../Web/app/i18n.js');
  const arabic = translator('ar');
  assert.deepEqual([0, 1, 2, 3, 10, 11, 99, 100, 102].map((n) => arabic('memberCount', { n })),
    ['لا أحد هنا', 'حاضر واحد', 'حاضران', '3 حاضرين', '10 حاضرين', '11 حاضرًا', '99 حاضرًا', '100 حاضر', '102 حاضر']);
  assert.equal(translator('en')('memberCount', { n: 1 }), '1 here');
  assert.equal(translator('zh')('memberCount', { n: 3 }), '3 人');
});

test('a room on another node of a cluster is joined on that node\'s page', () => {
  assert.equal(nodePage('ws://10.0.0.2:8082/v1/signal', 'majlis'), 'http://10.0.0.2:8082/?room=majlis');
  assert.equal(nodePage('wss://node2.example.com/v1/signal', 'r-1', { lang: 'ar', name: 'Huda S' }), 'https://node2.example.com/?room=r-1&lang=ar&name=Huda+S');
  assert.equal(nodePage('ws://10.0.0.2:8082/v1/signal', 'majlis', { lang: null }), 'http://10.0.0.2:8082/?room=majlis');
  assert.equal(nodePage('not an address', 'majlis'), null);
  assert.equal(nodePage('http://10.0.0.2:8082/', 'majlis'), null, 'only a signaling address');
});
