// Script runs in the floor model and the watch's view model: a failed run in NEEDS YOU (within
// the window), an approve() request marked with its run; the SCRIPT RUNS rows (collapsed,
// expanded with calls and log), the filter, and what each key does on a run or a call row.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildFloor, type FloorInput } from '../../src/floor/model.js';
import type { FloorRun, FloorRunCall } from '../../src/floor/types.js';
import type { FullRequestRow } from '../../src/store/sql/requests.js';
import { buildRows, parseFilter } from '../../src/tui/rows.js';
import { keyAction, type Keys } from '../../src/tui/keys.js';
import { runCallLine, runLine } from '../../src/tui/format.js';
import { floor, NOW } from '../helpers/floor.js';

const H = 3600_000;
const keys = (o: Partial<Keys> = {}): Keys => ({ upArrow: false, downArrow: false, pageUp: false, pageDown: false, home: false, end: false, return: false, escape: false, ctrl: false, ...o });

function call(seq: number, o: Partial<FloorRunCall> = {}): FloorRunCall {
  return { seq, kind: 'agent', label: `review ${seq}`, phase: 'Review', status: 'done', job_id: `j-${seq}`, job_title: `review ${seq}`, job_status: 'succeeded', request_id: null, cost_usd: 0.01, ...o };
}

function run(id: string, o: Partial<FloorRun> = {}): FloorRun {
  return {
    run_id: id, kind: 'script', title: `run ${id}`, status: 'running', paused: false, phase: 'Review', counts: { done: 1, running: 1, failed: 0 }, cost_usd: 0.02,
    budget_usd: 5, error: null, waiting_request: null, created_at: NOW - H, ended_at: null,
    calls: [call(1), call(2, { status: 'running', job_status: 'running' })], log: [{ at: NOW - 1000, kind: 'phase', text: 'Review' }, { at: NOW - 500, kind: 'log', text: 'two started' }], ...o,
  };
}

const input = (o: Partial<FloorInput>): FloorInput => ({ jobs: [], requests: [], warnings: [], workflows: [], milestones: [], locks: [], lockWaits: [], deps: [], hub: null, cap: 8, source: 'database', ...o });

describe('script runs in the floor model', () => {
  test('a failed run is in NEEDS YOU within the window, with its error and command; the runs pass through', () => {
    const f = buildFloor(input({
      runs: [run('r-live'), run('r-bad', { status: 'failed', error: 'TypeError (line 4): x is not a function', ended_at: NOW - H }), run('r-old', { status: 'failed', error: 'old', ended_at: NOW - 30 * H }), run('r-ok', { status: 'succeeded', ended_at: NOW - H })],
    }), NOW);
    assert.deepEqual(f.runs!.map((r) => r.run_id), ['r-live', 'r-bad', 'r-old', 'r-ok']);
    const items = f.needs_you.filter((n) => n.kind === 'run_failed');
    assert.deepEqual(items.map((n) => [n.key, n.run_id, n.text, n.command]), [['run:r-bad', 'r-bad', 'TypeError (line 4): x is not a function', 'overseer run r-bad']]);
    assert.equal(f.totals.needs_you, 1);
  });

  test('the request an approve() waits on names its run', () => {
    const req: FullRequestRow = {
      id: 'q-1', job_id: 'lead', kind: 'approval', summary: 'Merge it?', plan_json: null, options_json: null, status: 'pending', decision: null, answer: null, comment: null,
      created_at: NOW - 1000, answered_at: null, tool_name: null, tool_input_json: null, expires_at: null, answered_by: null, who: 'person', lead_seen_at: null,
    };
    const f = buildFloor(input({ requests: [req], runs: [run('r-1', { waiting_request: 'q-1' })] }), NOW);
    assert.equal(f.needs_you[0]!.run_id, 'r-1');
    assert.equal(f.needs_you[0]!.title, 'run r-1 "run r-1"');
    assert.match(f.needs_you[0]!.text, /^for you only: Merge it\?/);
  });

  test('a project\'s floor has no script runs (they belong to none)', () => {
    assert.deepEqual(buildFloor(input({ runs: [run('r-1')], project: 'web' }), NOW).runs, []);
  });
});

describe('script runs in the watch', () => {
  const f = floor({ runs: [run('r-a'), run('r-b', { status: 'cancelled', error: 'not needed', counts: { done: 1, running: 0, failed: 1 } })] });

  test('one row per run, collapsed; expanded: its calls, then its last log lines', () => {
    assert.deepEqual(buildRows(f).map((r) => r.key), ['heading:runs', 'run:r-a', 'run:r-b']);
    const rows = buildRows(f, { expanded: new Set(['r-a']) });
    assert.deepEqual(rows.map((r) => r.key), ['heading:runs', 'run:r-a', 'call:r-a:1', 'call:r-a:2', 'runlog:r-a:0', 'runlog:r-a:1', 'run:r-b']);
    assert.equal(rows[0]!.kind === 'heading' && rows[0]!.count, 2, 'the heading counts runs, not their calls');
    assert.deepEqual(buildRows(f, { filter: parseFilter('status:cancelled') }).map((r) => r.key), ['heading:runs', 'run:r-b']);
    assert.deepEqual(buildRows(f, { filter: parseFilter('label:run:r-a') }).map((r) => r.key), ['heading:runs', 'run:r-a']);
  });

  test('the lines: status, pause, calls, cost of budget, phase; a call with its agent and cost', () => {
    assert.match(runLine(run('r-a', { paused: true }), false, 120), /^▸ run r-a +running · paused +1 done 1 running 0 failed +\$0\.0200\/\$5\.00 +phase Review +r-a$/);
    assert.match(runCallLine(call(2, { status: 'running', job_status: 'running' }), 100), /^ +#2 review 2 +running +j-2 +\$0\.0100 +Review$/);
    assert.match(runCallLine(call(3, { kind: 'approve', label: 'Merge?', job_id: null, job_title: null, job_status: null, request_id: 'q-9', status: 'running' }), 100), /#3 approve Merge\? +running +request q-9/);
  });

  test('keys: Enter expands, p/u pause and unpause, c cancels the run or one running call; refusals on what has ended', () => {
    const rows = buildRows(f, { expanded: new Set(['r-a', 'r-b']) });
    const row = (key: string) => rows.find((r) => r.key === key);
    const ref = { run_id: 'r-a', title: 'run r-a' };
    assert.deepEqual(keyAction('', keys({ return: true }), row('run:r-a')), { kind: 'expand', run: ref });
    assert.deepEqual(keyAction('p', keys(), row('run:r-a')), { kind: 'run_pause', run: ref, paused: true });
    assert.deepEqual(keyAction('u', keys(), row('run:r-a')), { kind: 'run_pause', run: ref, paused: false });
    assert.deepEqual(keyAction('c', keys(), row('run:r-a')), { kind: 'run_cancel', run: ref });
    assert.deepEqual(keyAction('c', keys(), row('call:r-a:2')), { kind: 'call_cancel', run: ref, seq: 2, what: 'call #2 (review 2)' });
    assert.deepEqual(keyAction('c', keys(), row('call:r-a:1')), { kind: 'refuse', message: 'call #1 (review 1) has ended (done): nothing to cancel' });
    assert.deepEqual(keyAction('c', keys(), row('run:r-b')), { kind: 'refuse', message: 'run r-b has ended (cancelled): nothing to cancel' });
    assert.equal(keyAction('m', keys(), row('run:r-a')).kind, 'refuse', 'a run is not an agent');
    assert.deepEqual(keyAction('f', keys(), row('call:r-a:2')), { kind: 'follow', job: { job_id: 'j-2', title: 'review 2' } }, 'the job keys act on a call\'s agent');
    assert.equal(keyAction('', keys({ return: true }), row('runlog:r-a:0')).kind, 'refuse', 'a log line is not selectable');
  });
});
