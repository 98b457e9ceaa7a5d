// `overseer status` tells the person, under the table, what needs them (requests, warnings,
// failures, workflows), writes to held files that were undone and agents stopped for running a
// tool without the lock hook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attentionLines, filterRows, needsYouLines, totalsLine } from '../../src/cli/status.js';
import type { NeedsYouItem } from '../../src/floor/types.js';
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

test('filters keep a status, a label, the children of a job or of the lead; totals count states and cost', () => {
  const rows = [
    row({ id: 'j-1', status: 'running', labels_json: '["ui"]', parent_id: null, cost_usd: 0.5, cost_unknown: 0 }),
    row({ id: 'j-2', status: 'failed', labels_json: '[]', parent_id: 'j-1', cost_usd: 0.25, cost_unknown: 0 }),
    row({ id: 'j-3', status: 'succeeded', labels_json: '["ui"]', parent_id: 'j-1', cost_usd: 0, cost_unknown: 1 }),
  ];
  assert.deepEqual(filterRows(rows, { status: 'failed' }).map((r) => r.id), ['j-2']);
  assert.deepEqual(filterRows(rows, { label: 'ui' }).map((r) => r.id), ['j-1', 'j-3']);
  assert.deepEqual(filterRows(rows, { parent: 'j-1' }).map((r) => r.id), ['j-2', 'j-3']);
  assert.deepEqual(filterRows(rows, { parent: 'lead' }).map((r) => r.id), ['j-1']);
  assert.equal(totalsLine(rows), '3 jobs: 1 running · 0 frozen · 0 queued · 1 succeeded · 1 failed · 0 cancelled or interrupted · $0.7500 spent (some unpriced)');
});

test('what needs the person, one line each with the command: requests, warnings, failures, workflows; lock violations left to the lines above', () => {
  const item = (o: Partial<NeedsYouItem>): NeedsYouItem => ({ kind: 'warning', key: 'k', job_id: 'j-1', title: 'Parser', text: 't', at: 0, command: 'c', ...o });
  assert.deepEqual(needsYouLines([
    item({ kind: 'permission', request_id: 'r-1', text: 'Bash: rm -rf build', command: 'overseer respond r-1 --approve|--reject' }),
    item({ kind: 'warning', text: 'stalled: no output for 600 s', command: 'overseer logs j-1' }),
    item({ kind: 'failed', job_id: 'j-2', title: 'Docs', text: 'check_failed: npm test exited 1', command: 'overseer logs j-2' }),
    item({ kind: 'workflow_blocked', job_id: null, workflow_id: 'wf-1', title: 'Auth', text: 'blocked: max_cycles', command: 'overseer events --limit 20' }),
    item({ kind: 'lock_violation', text: 'wrote to files another agent held', command: 'overseer events --job j-1' }),
  ]), [
    '? permission r-1 from j-1 "Parser": Bash: rm -rf build — overseer respond r-1 --approve|--reject',
    '! j-1 "Parser" stalled: no output for 600 s — overseer logs j-1',
    '! j-2 "Docs" failed: check_failed: npm test exited 1 — overseer logs j-2',
    '! workflow wf-1 "Auth" blocked: max_cycles — overseer events --limit 20',
  ]);
});
