// `overseer status` tells the person, under the table, about writes to held files that were
// undone and about agents stopped for running a tool without the lock hook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attentionLines } from '../../src/cli/status.js';
import type { JobRow } from '../../src/store/jobs.js';

const row = (o: Partial<JobRow>): JobRow => ({ id: 'j-1', lock_violations_json: null, failure_class: null, ...o }) as JobRow;

test('nothing to say: no lines', () => {
  assert.equal(attentionLines([row({})]), '');
});

test('an undone write and a hook bypass each get a line naming the job, the files and where to look', () => {
  const text = attentionLines([row({ id: 'j-a', lock_violations_json: JSON.stringify(['/p/shared.txt']) }), row({ id: 'j-b', failure_class: 'hook_bypassed' })]);
  assert.match(text, /! j-a wrote to files another agent held .*\/p\/shared\.txt — overseer events --job j-a/);
  assert.match(text, /! j-b was stopped: a tool call ran without the lock hook/);
});
