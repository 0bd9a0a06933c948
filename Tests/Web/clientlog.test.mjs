// The page's own log (Web/app/clientlog.js): bounded, by time, and without credentials.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientLog, redact } from '../../Web/app/clientlog.js';

test('credentials are taken out of a line before it is kept', () => {
  const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvbWFyIn0.c2lnbmF0dXJl';
  assert.equal(redact(`open ws://h/v1/signal?token=${token}`), 'open ws://h/v1/signal?token=[redacted]');
  assert.equal(redact(`{"token":"abc","room":"salon"}`), '{"token":"[redacted]","room":"salon"}');
  assert.equal(redact(`hello ${token} there`), 'hello [redacted] there');
  assert.equal(redact('secret: hunter2, room salon'), 'secret: [redacted], room salon');
});

test('the newest lines are kept within the capacity, and read by time', () => {
  let now = 1_000;
  const log = new ClientLog(300, () => now);
  for (let index = 0; index < 20; index += 1) {
    log.record(`line ${index}`);
    now += 10;
  }
  assert.ok(log.bytes <= 300);
  const all = log.text(0);
  assert.ok(all.includes('line 19') && !all.includes('line 0\n'));
  assert.deepEqual(log.text(1_180, 1_190).trim().split('\n').map((line) => line.endsWith('info line 18')), [true]);
  log.record('two\nlines', 'warning');
  assert.ok(log.text(0).endsWith('warning two lines\n'));
});

test('a request is answered once however often it is told, and again after a failure', async () => {
  const log = new ClientLog();
  log.record('joined');
  const delivered = [];
  let fail = true;
  const signal = { token: 't', request: async (op, args) => { if (fail) throw Object.assign(new Error('cut'), { code: 'disconnected' }); delivered.push([op, args]); } };
  globalThis.fetch = async (path, init) => ({
    status: init.method === 'POST' ? 201 : 204,
    ok: true,
    headers: { get: (name) => (name === 'Location' ? '/v1/uploads/u1' : name === 'Upload-Offset' ? String(init.body?.size ?? 0) : null) },
  });
  await log.answer({ id: 'l1', since: 0 }, signal);
  assert.equal(delivered.length, 0);
  assert.ok(log.text(0).includes('log l1 not delivered: disconnected cut'));
  fail = false;
  await Promise.all([log.answer({ id: 'l1', since: 0 }, signal), log.answer({ id: 'l1', since: 0 }, signal)]);
  assert.deepEqual(delivered, [['log.deliver', { id: 'l1', media: 'u1' }]]);
});
