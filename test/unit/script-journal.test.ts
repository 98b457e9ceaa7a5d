// A script run's journal on a real SQLite file through the layer (src/store/sql/scripts.ts,
// src/scripts/journal.ts, migration 24): calls get their seq in issue order, keep their carrier
// and outcome, survive reopening the database, and read back as the replay needs them; a call
// ends once. (Both databases and concurrent writers: test/integration/sql-scripts.test.ts.)
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../src/store/db.js';
import { sqlOver } from '../../src/store/sql/open.js';
import { addLog, beginCall, callOfJob, callsOf, carryCall, endCall, insertScriptRun, logOf, reopenCall, replaceCalls } from '../../src/store/sql/scripts.js';
import { replayable } from '../../src/scripts/journal.js';
import { canonicalJson, ScriptReplay } from '../../src/domain/scriptReplay.js';

const dir = mkdtempSync(join(tmpdir(), 'ovs-journal-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function open(file: string): { db: ReturnType<typeof openDb>; q: ReturnType<typeof sqlOver>['db'] } {
  const db = openDb(file);
  return { db, q: sqlOver(db).db };
}

const run = (q: ReturnType<typeof sqlOver>['db'], id: string): Promise<void> => insertScriptRun(q, { id, title: 't', file: null, content: 'return 1', rules_json: '{}', now: 1 });

describe('script journal', () => {
  test('calls are journaled as they happen and read back after the database is reopened', async () => {
    const file = join(dir, 'state.db');
    let { db, q } = open(file);
    await run(q, 'r-1');
    const a1 = canonicalJson(['review a']);
    const a2 = canonicalJson(['review b', { model: 'auto' }]);
    assert.equal(await beginCall(q, { run_id: 'r-1', kind: 'agent', args_json: a1, label: 'a', phase: 'Review', started_at: 10, job_id: 'j-1' }), 1);
    assert.equal(await beginCall(q, { run_id: 'r-1', kind: 'agent', args_json: a2, label: 'b', phase: 'Review', started_at: 11 }), 2);
    assert.equal(await beginCall(q, { run_id: 'r-1', kind: 'approve', args_json: canonicalJson(['ship?']), label: null, phase: null, started_at: 12, request_id: 'q-1' }), 3);
    await carryCall(q, 'r-1', 2, { job_id: 'j-2' });
    assert.equal(await endCall(q, 'r-1', 1, { status: 'done', outcome: 'looks fine', at: 20 }), true);
    assert.equal(await endCall(q, 'r-1', 1, { status: 'failed', outcome: { name: 'X', message: 'late' }, at: 21 }), false, 'a call ends once');
    await addLog(q, 'r-1', 'phase', 'Review', 9);
    await addLog(q, 'r-1', 'log', '2 reviews started', 12);
    db.close();

    ({ db, q } = open(file));
    const calls = await callsOf(q, 'r-1');
    assert.deepEqual(calls.map((c) => [c.seq, c.kind, c.status, c.job_id, c.request_id, c.outcome_json]), [
      [1, 'agent', 'done', 'j-1', null, '"looks fine"'],
      [2, 'agent', 'running', 'j-2', null, null],
      [3, 'approve', 'running', null, 'q-1', null],
    ], 'a call ends once: the late failure did not overwrite the outcome');
    assert.deepEqual(await callOfJob(q, 'j-2'), { run_id: 'r-1', seq: 2 });
    assert.deepEqual((await logOf(q, 'r-1')).map((l) => [l.n, l.kind, l.text]), [[1, 'phase', 'Review'], [2, 'log', '2 reviews started']]);
    assert.deepEqual((await logOf(q, 'r-1', 1)).map((l) => l.text), ['2 reviews started'], 'the last lines');

    const replay = new ScriptReplay(await replayable(q, 'r-1'), 'recover');
    assert.equal(replay.next('agent', a2).from, 'job', 'the running call is attached to its job');
    assert.equal(replay.next('agent', a1).from, 'journal');
    db.close();
  });

  test('two runs number their calls apart; a call is carried by its job and answered once', async () => {
    const { db, q } = open(join(dir, 'two.db'));
    await run(q, 'r-a');
    await run(q, 'r-b');
    const c = { kind: 'agent' as const, args_json: '["x"]', label: null, phase: null, started_at: 1 };
    assert.deepEqual([await beginCall(q, { ...c, run_id: 'r-a' }), await beginCall(q, { ...c, run_id: 'r-b' }), await beginCall(q, { ...c, run_id: 'r-a' })], [1, 1, 2]);
    assert.equal(await beginCall(q, { ...c, run_id: 'r-a' }), 3);
    await carryCall(q, 'r-a', 3, { job_id: 'j-3' });
    assert.equal(await endCall(q, 'r-a', 3, { status: 'done', outcome: 1, at: 2 }), true);
    assert.equal(await endCall(q, 'r-a', 3, { status: 'failed', outcome: 2, at: 3 }), false);
    assert.deepEqual((await callsOf(q, 'r-a')).map((x) => [x.seq, x.status, x.job_id, x.outcome_json]), [[1, 'running', null, null], [2, 'running', null, null], [3, 'done', 'j-3', '1']]);
    db.close();
  });

  test('replaced calls are history: ended if they never did, never replayed; a reopened workflow call runs again with its new source', async () => {
    const { db, q } = open(join(dir, 'replaced.db'));
    await run(q, 'r-r');
    const c = { run_id: 'r-r', kind: 'agent' as const, label: null, phase: null, started_at: 1 };
    await beginCall(q, { ...c, args_json: '["a"]' });
    await beginCall(q, { ...c, args_json: '["b"]' });
    await beginCall(q, { ...c, kind: 'workflow', args_json: '["w"]', scope: '', source: 'return 1' });
    await beginCall(q, { ...c, args_json: '["n"]', scope: '/w:abc#0' });
    await endCall(q, 'r-r', 1, { status: 'done', outcome: 'A', at: 2 });
    await endCall(q, 'r-r', 3, { status: 'done', outcome: 1, at: 3 });
    await replaceCalls(q, 'r-r', [1, 2], 9);
    const rows = await callsOf(q, 'r-r');
    assert.deepEqual(rows.slice(0, 2).map((r) => [r.status, r.replaced, r.outcome_json, r.ended_at]), [
      ['done', 1, '"A"', 2],
      ['failed', 1, JSON.stringify({ name: 'Replaced', message: 'a resume of the run no longer waits for this call' }), 9],
    ]);
    assert.deepEqual((await replayable(q, 'r-r')).map((e) => [e.seq, e.scope]), [[3, ''], [4, '/w:abc#0']]);
    await reopenCall(q, 'r-r', 3, 'return 2');
    const w = (await callsOf(q, 'r-r'))[2]!;
    assert.deepEqual([w.status, w.outcome_json, w.ended_at, w.source], ['running', null, null, 'return 2']);
    db.close();
  });
});
