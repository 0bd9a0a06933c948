// The pre-call check's grading (Web/app/precall.js) under Node's own test runner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gradeNetwork } from '../../Web/app/precall.js';

test('the grade is the worst of what loss, jitter and round trip say, at network.quality\'s limits', () => {
  assert.equal(gradeNetwork({ loss: 0, jitter: 2, roundTrip: 3 }), 'excellent');
  assert.equal(gradeNetwork({ loss: 0.99, jitter: 29, roundTrip: 149 }), 'excellent');
  assert.equal(gradeNetwork({ loss: 1, jitter: 2, roundTrip: 3 }), 'good');
  assert.equal(gradeNetwork({ loss: 0, jitter: 60, roundTrip: 3 }), 'poor');
  assert.equal(gradeNetwork({ loss: 5, jitter: 2, roundTrip: 320 }), 'poor');
  assert.equal(gradeNetwork({ loss: 0, jitter: 2, roundTrip: 500 }), 'bad');
  assert.equal(gradeNetwork({ loss: 20, jitter: 2, roundTrip: 3 }), 'down');
});

test('a figure not measured does not lower the grade', () => {
  assert.equal(gradeNetwork({ loss: 0.5, jitter: 10, roundTrip: null }), 'excellent');
  assert.equal(gradeNetwork({ loss: 9, jitter: 10, roundTrip: null }), 'bad');
});
