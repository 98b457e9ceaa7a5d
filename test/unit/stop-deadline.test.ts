// A hub's stop has a deadline (src/hubproc/stopDeadline.ts): a stop stuck past it ends the
// process anyway (its state directory may be gone); one that finishes in time is left alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withDeadline } from '../../src/hubproc/stopDeadline.js';

test('a stop that never settles is cut at the deadline, not before', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let late = 0;
  void withDeadline(() => new Promise<void>(() => undefined), 11_000, () => late++);
  t.mock.timers.tick(10_999);
  assert.equal(late, 0);
  t.mock.timers.tick(1);
  assert.equal(late, 1);
});

test('a stop that finishes in time is not cut afterwards, and a failing one is not either', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let late = 0;
  await withDeadline(async () => undefined, 5_000, () => late++);
  await assert.rejects(withDeadline(async () => { throw new Error('close failed'); }, 5_000, () => late++), /close failed/);
  t.mock.timers.tick(60_000);
  assert.equal(late, 0);
});
