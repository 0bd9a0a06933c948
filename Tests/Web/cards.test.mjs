// The web app's card registry (Web/app/cards.js): a card it knows is decoded; a thousand it does
// not, of random type codes and payloads, are each shown by their fallback, and none throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCards, fallbackText } from '../../Web/app/cards.js';

function registry() {
  const cards = createCards();
  cards.register('room_invite', (payload) => (typeof payload?.room === 'string' ? { room: payload.room } : null));
  cards.register('broken', () => { throw new Error('cannot read'); });
  return cards;
}

const message = (fields) => ({ conversation: 'g', seq: 1, from: { id: 'omar', name: 'Omar' }, ts: 1, clientMsgId: 'c', ...fields });

test('a known card is decoded, text is text, a revoked message is revoked', () => {
  const cards = registry();
  assert.deepEqual(cards.content(message({ type: 'text', text: 'مرحبا' })), { kind: 'text', text: 'مرحبا' });
  assert.deepEqual(cards.content(message({ type: 'room_invite', payload: { room: 'salon' }, fallback: 'Join salon' })), { kind: 'card', card: { room: 'salon' } });
  assert.deepEqual(cards.content(message({ type: 'room_invite', payload: { room: 7 }, fallback: 'Join salon' })), { kind: 'fallback', text: 'Join salon' });
  assert.deepEqual(cards.content(message({ type: 'broken', fallback: 'A broken card' })), { kind: 'fallback', text: 'A broken card' });
  assert.deepEqual(cards.content(message({ type: 'room_invite', revokedBy: 'omar' })), { kind: 'revoked' });
  assert.equal(fallbackText(message({ type: 'paper_boat', text: 'a note', fallback: '' })), 'a note');
  assert.equal(fallbackText(message({ type: 'paper_boat' })), 'paper_boat');
});

test('a thousand unknown cards are each shown by their fallback', () => {
  const cards = registry();
  let seed = 54;
  const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
  const alphabet = [...'abcdefghijklmnopqrstuvwxyz_.-0123456789مرحبا東京カード😀'];
  const text = (length) => Array.from({ length }, () => alphabet[next() % alphabet.length]).join('');
  const json = (depth) => {
    switch (next() % (depth > 2 ? 4 : 7)) {
      case 0: return null;
      case 1: return next() - 1e9;
      case 2: return text(next() % 20);
      case 3: return next() % 2 === 0;
      case 4: return Array.from({ length: next() % 4 }, () => json(depth + 1));
      case 5: return { room: json(depth + 1), __proto__: json(depth + 1) };
      default: return Object.fromEntries(Array.from({ length: next() % 4 }, (_, i) => [`k${i}`, json(depth + 1)]));
    }
  };
  let shown = 0;
  for (let index = 0; index < 1000; index++) {
    let type = text(1 + (next() % 63));
    if (cards.types().includes(type) || type === 'text') type += 'x';
    const fallback = `card ${index}: ${text(next() % 30)}`;
    const content = cards.content(message({ type, text: next() % 3 === 0 ? text(10) : undefined, payload: json(0), fallback }));
    if (content.kind === 'fallback' && content.text === fallback) shown++;
  }
  assert.equal(shown, 1000);
});
