// The web app's reverb is the SDK's: its model, run in JavaScript on each preset's room, rings as
// long as the SDK's reverb rang when presets.js was generated from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { effects, equalizer } from '../../Web/app/presets.js';
import { reverbResponse, tailSeconds } from '../../Web/app/reverb.js';

test("each preset's reverb rings as long as the SDK's", () => {
  const rooms = Object.entries(effects).filter(([, effect]) => effect?.reverb);
  assert.ok(rooms.length >= 5);
  for (const [name, { reverb }] of rooms) {
    const measured = tailSeconds(reverbResponse(48000, reverb, reverb.tail * 1.5 + 0.1), 48000);
    assert.ok(Math.abs(measured - reverb.tail) <= 0.02, `${name}: ${measured} s here, ${reverb.tail} s in the SDK`);
  }
});

test("a bigger room rings longer, and softer walls shorten the tail", () => {
  const tail = (roomSize, damping) => tailSeconds(reverbResponse(48000, { roomSize, damping }, 12), 48000);
  assert.ok(tail(0.9, 0.3) > tail(0.5, 0.3));
  assert.ok(tail(0.5, 0.9) <= tail(0.5, 0.1));
});

test('every equalized preset has a filter gain per band', () => {
  for (const [name, effect] of Object.entries(effects)) {
    if (!effect?.eq) continue;
    assert.equal(effect.eq.length, equalizer.bands.length, name);
    assert.equal(effect.filters.length, equalizer.bands.length, name);
  }
});
