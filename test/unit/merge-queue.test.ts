// The merge queue's order (src/branches/queue.ts): fewest overlapping queued branches first, then the
// fewest shared files, then the smallest diff, then the oldest; the conflict guard's records count.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { orderQueue } from '../../src/branches/queue.js';

const c = (jobId: string, files: string[], lines: number, endedAt = 0) => ({ jobId, files, lines, endedAt });

describe('orderQueue', () => {
  test('no overlap first, smallest first among equals; overlapping pairs last, with their shared files', () => {
    const q = orderQueue([c('big', ['x'], 50), c('a', ['s', 'y'], 3), c('small', ['z'], 1), c('d', ['s'], 9)]);
    assert.deepEqual(q.map((i) => i.candidate.jobId), ['small', 'big', 'a', 'd']);
    assert.deepEqual(q[2]!.overlaps, [{ jobId: 'd', files: ['s'] }]);
    assert.deepEqual(q[0]!.overlaps, []);
  });

  test('a branch overlapping two others goes after one overlapping one, whatever its size', () => {
    const q = orderQueue([c('hub', ['p', 'q'], 1), c('p', ['p'], 10), c('q', ['q'], 20)]);
    assert.deepEqual(q.map((i) => i.candidate.jobId), ['p', 'q', 'hub']);
  });

  test('the conflict guard\'s records count as overlaps even when the files differ now; pairs with a job not queued do not', () => {
    const q = orderQueue([c('a', ['a'], 1), c('b', ['b'], 2), c('c', ['c'], 3)], [{ a: 'a', b: 'c', file: 'was-both.txt' }, { a: 'b', b: 'gone', file: 'b' }]);
    assert.deepEqual(q.map((i) => i.candidate.jobId), ['b', 'a', 'c']);
    assert.deepEqual(q[1]!.overlaps, [{ jobId: 'c', files: ['was-both.txt'] }]);
  });

  test('ties: fewer files, then the older, then the id', () => {
    const q = orderQueue([c('y', ['1', '2'], 4, 5), c('x', ['3'], 4, 9), c('w', ['4'], 4, 1), c('v', ['5'], 4, 1)]);
    assert.deepEqual(q.map((i) => i.candidate.jobId), ['v', 'w', 'x', 'y']);
  });
});
