// The conversations page's state (Web/app/conversations.js): listed, synced without gaps, sent
// and settled, and moved by the messaging events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  initialConversations, applyList, applyDetails, addMessages, addPending, settlePending, applyEvent, ordered, totalUnread, titleOf,
  typingIn, readersOf, lastSeq, directPeers, applyPresence, presenceOf,
} from '../../Web/app/conversations.js';

const summary = (id, fields = {}) => ({
  id, kind: 'direct', peer: 'omar', role: 'member', memberCount: 2, lastSeq: 0, readSeq: 0, unread: 0, muted: false, pinned: false,
  createdAt: 1, updatedAt: 1, ...fields,
});
const message = (conversation, seq, from = 'omar', fields = {}) => ({
  conversation, seq, from: { id: from, name: from }, type: 'text', text: `m${seq}`, ts: 100 + seq, clientMsgId: `c${seq}`, ...fields,
});

function state() {
  const s = initialConversations();
  s.me = 'huda';
  applyList(s, { conversations: [summary('d-1', { lastSeq: 2, unread: 2, updatedAt: 102 }), summary('g-1', { kind: 'group', title: 'رحلة', pinned: true })] });
  addMessages(s, 'd-1', [message('d-1', 2), message('d-1', 1)]);
  return s;
}

test('the list is pinned first, then newest; unread counts add up but muted ones', () => {
  const s = state();
  assert.deepEqual(ordered(s).map((c) => c.id), ['g-1', 'd-1']);
  assert.equal(totalUnread(s), 2);
  assert.equal(titleOf(s.conversations.get('g-1')), 'رحلة');
  assert.equal(titleOf(s.conversations.get('d-1')), 'omar');
  s.conversations.get('d-1').muted = true;
  assert.equal(totalUnread(s), 0);
});

test('messages are kept in order once each; a gap asks for a sync; an unknown conversation a refresh', () => {
  const s = state();
  assert.deepEqual(s.messages.get('d-1').map((m) => m.seq), [1, 2]);
  assert.equal(applyEvent(s, { ev: 'msg.new', data: message('d-1', 3) }, 0), null);
  assert.equal(s.conversations.get('d-1').unread, 3);
  assert.deepEqual(applyEvent(s, { ev: 'msg.new', data: message('d-1', 6) }, 0), { sync: 'd-1' });
  addMessages(s, 'd-1', [message('d-1', 4), message('d-1', 5), message('d-1', 6)]);
  assert.deepEqual(s.messages.get('d-1').map((m) => m.seq), [1, 2, 3, 4, 5, 6]);
  assert.equal(lastSeq(s, 'd-1'), 6);
  assert.deepEqual(applyEvent(s, { ev: 'msg.new', data: message('d-9', 1) }, 0), { refresh: true });
});

test('a send is pending until its message comes; held and rejected show so', () => {
  const s = state();
  addPending(s, { clientMsgId: 'mine', to: 'omar', draft: { text: 'hi' } });
  settlePending(s, 'mine', { conversation: 'd-1', seq: 3 });
  assert.equal(s.pending.length, 1);
  addMessages(s, 'd-1', [message('d-1', 3, 'huda', { clientMsgId: 'mine' })]);
  assert.equal(s.pending.length, 0);
  assert.equal(s.conversations.get('d-1').readSeq, 3);
  addPending(s, { clientMsgId: 'stranger', to: 'sara', draft: { text: 'hello?' } });
  settlePending(s, 'stranger', { conversation: 'd-2', held: 'h-1' });
  assert.equal(s.pending[0].status, 'held');
  applyEvent(s, { ev: 'msg.rejected', data: { conversation: 'd-2', clientMsgId: 'stranger', reason: 'spam' } }, 0);
  assert.equal(s.pending[0].status, 'rejected');
  addPending(s, { clientMsgId: 'down', to: 'omar', draft: { text: 'x' } });
  settlePending(s, 'down', null, 'no connection');
  assert.equal(s.pending[1].status, 'failed');
});

test('typing expires; read marks count the other members who read', () => {
  const s = state();
  applyEvent(s, { ev: 'msg.typing', data: { conversation: 'd-1', user: 'omar', until: 0 } }, 1000);
  assert.deepEqual(typingIn(s, 'd-1', 2000), ['omar']);
  assert.deepEqual(typingIn(s, 'd-1', 8000), []);
  applyDetails(s, { conversation: summary('d-1', { lastSeq: 2 }), members: [{ user: 'huda', readSeq: 2 }, { user: 'omar', readSeq: 1 }] });
  assert.equal(readersOf(s, 'd-1', 2), 0);
  applyEvent(s, { ev: 'msg.read', data: { conversation: 'd-1', user: 'omar', seq: 2 } }, 0);
  assert.equal(readersOf(s, 'd-1', 2), 1);
  applyEvent(s, { ev: 'msg.read', data: { conversation: 'd-1', user: 'huda', seq: 2 } }, 0);
  assert.equal(s.conversations.get('d-1').unread, 0);
  applyEvent(s, { ev: 'conv.removed', data: { conversation: 'd-1', by: 'huda', reason: 'left' } }, 0);
  assert.equal(s.conversations.has('d-1'), false);
});

test('contacts show online, last seen or nothing; presence.changed moves it', () => {
  const s = state();
  assert.deepEqual(directPeers(s), ['omar']);
  assert.equal(presenceOf(s, 'omar'), null);
  applyPresence(s, [{ user: 'omar', online: true }, { nonsense: 1 }]);
  assert.deepEqual(presenceOf(s, 'omar'), { status: 'online' });
  assert.equal(applyEvent(s, { ev: 'presence.changed', data: { user: 'omar', online: false, lastSeen: 500 } }, 0), null);
  assert.deepEqual(presenceOf(s, 'omar'), { status: 'offline', lastSeen: 500 });
  applyEvent(s, { ev: 'presence.changed', data: { user: 'omar', online: false, hidden: true } }, 0);
  assert.equal(presenceOf(s, 'omar'), null);
});
