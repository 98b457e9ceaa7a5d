// pickRunnable (priority, then FIFO by seq, under the cap) and dependencyState.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { pickRunnable, dependencyState, type QueuedJob } from '../../src/domain/scheduler.js';

describe('pickRunnable', () => {
  test('nothing queued → nothing to start', () => {
    assert.deepEqual(pickRunnable([], 0, 8), []);
  });

  test('provider limits: a provider with no room is skipped (its slots go to others), one with room for one starts only its best job', () => {
    const q: QueuedJob[] = [
      { id: 'c1', priority: 0, seq: 1, provider: 'claude' },
      { id: 'c2', priority: 0, seq: 2, provider: 'claude' },
      { id: 'x1', priority: 0, seq: 3, provider: 'codex' },
      { id: 'x2', priority: 1, seq: 4, provider: 'codex' },
      { id: 'x3', priority: 0, seq: 5, provider: 'codex' },
    ];
    assert.deepEqual(pickRunnable(q, 0, 3, (p) => (p === 'claude' ? 'none' : 'all')), ['x2', 'x1', 'x3'], 'claude waits; codex takes the free slots');
    assert.deepEqual(pickRunnable(q, 0, 10, (p) => (p === 'codex' ? 'one' : 'all')), ['x2', 'c1', 'c2'], 'one codex probe: its best job');
    assert.deepEqual(pickRunnable(q, 0, 10, () => 'none'), []);
    assert.deepEqual(pickRunnable(q, 9, 10, () => 'all'), ['x2'], 'the cap still holds');
  });

  test('FIFO by seq among equal priorities, regardless of input order', () => {
    const q: QueuedJob[] = [
      { id: 'c', priority: 0, seq: 3 },
      { id: 'a', priority: 0, seq: 1 },
      { id: 'b', priority: 0, seq: 2 },
    ];
    assert.deepEqual(pickRunnable(q, 0, 10), ['a', 'b', 'c']);
  });

  test('higher priority first, then seq', () => {
    const q: QueuedJob[] = [
      { id: 'low-old', priority: 0, seq: 1 },
      { id: 'high-new', priority: 5, seq: 9 },
      { id: 'neg', priority: -1, seq: 0 },
      { id: 'high-old', priority: 5, seq: 4 },
      { id: 'mid', priority: 2, seq: 2 },
    ];
    assert.deepEqual(pickRunnable(q, 0, 10), ['high-old', 'high-new', 'mid', 'low-old', 'neg']);
  });

  test('starts at most cap − active jobs, the best ones', () => {
    const q: QueuedJob[] = [
      { id: 'a', priority: 0, seq: 1 },
      { id: 'b', priority: 1, seq: 2 },
      { id: 'c', priority: 0, seq: 3 },
      { id: 'd', priority: 1, seq: 4 },
    ];
    assert.deepEqual(pickRunnable(q, 1, 3), ['b', 'd']);
    assert.deepEqual(pickRunnable(q, 2, 3), ['b']);
  });

  test('at or over the cap → nothing', () => {
    const q: QueuedJob[] = [{ id: 'a', priority: 9, seq: 1 }];
    assert.deepEqual(pickRunnable(q, 3, 3), []);
    assert.deepEqual(pickRunnable(q, 5, 3), []);
    assert.deepEqual(pickRunnable(q, 0, 0), []);
  });

  test('fewer queued than free slots → all of them', () => {
    const q: QueuedJob[] = [{ id: 'a', priority: 0, seq: 2 }, { id: 'b', priority: 0, seq: 1 }];
    assert.deepEqual(pickRunnable(q, 0, 100), ['b', 'a']);
  });

  test('does not reorder the caller\'s array', () => {
    const q: QueuedJob[] = [{ id: 'z', priority: 0, seq: 9 }, { id: 'y', priority: 3, seq: 1 }];
    const copy = q.map((j) => ({ ...j }));
    pickRunnable(q, 0, 1);
    assert.deepEqual(q, copy);
  });
});

describe('dependencyState', () => {
  test('no dependencies → ready', () => {
    assert.equal(dependencyState([]), 'ready');
  });

  test('all succeeded → ready', () => {
    assert.equal(dependencyState([{ id: 'a', status: 'succeeded' }, { id: 'b', status: 'succeeded' }]), 'ready');
  });

  for (const s of ['queued', 'waiting', 'running', 'frozen', 'needs_input', 'interrupted']) {
    test(`a dependency that is ${s} → blocked`, () => {
      assert.equal(dependencyState([{ id: 'a', status: 'succeeded' }, { id: 'b', status: s }]), 'blocked');
    });
  }

  test('a failed dependency → failed, naming it', () => {
    assert.deepEqual(dependencyState([{ id: 'a', status: 'succeeded' }, { id: 'b', status: 'failed' }]), { failed: 'b', status: 'failed' });
  });

  test('a cancelled dependency → failed, naming it', () => {
    assert.deepEqual(dependencyState([{ id: 'x', status: 'cancelled' }]), { failed: 'x', status: 'cancelled' });
  });

  test('failure beats blocked, even when the blocked one comes first', () => {
    assert.deepEqual(
      dependencyState([{ id: 'r', status: 'running' }, { id: 'f', status: 'failed' }]),
      { failed: 'f', status: 'failed' },
    );
  });

  test('with several failed, names the first in order', () => {
    assert.deepEqual(
      dependencyState([{ id: 'c1', status: 'cancelled' }, { id: 'f1', status: 'failed' }]),
      { failed: 'c1', status: 'cancelled' },
    );
  });
});
