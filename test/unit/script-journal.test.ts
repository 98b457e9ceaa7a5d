// A script run's journal on a real SQLite file (src/scripts/journal.ts, migration 24): calls get
// their seq in issue order, keep their carrier and outcome, survive reopening the database, and
// read back as the replay needs them; a call ends once.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../src/store/db.js';
import { ScriptJournal } from '../../src/scripts/journal.js';
import { canonicalJson, ScriptReplay } from '../../src/domain/scriptReplay.js';

const dir = mkdtempSync(join(tmpdir(), 'ovs-journal-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(db: ReturnType<typeof openDb>, id: string): void {
  db.prepare(`INSERT INTO runs (id, title, file, content, format, rules_json, status, note, deadline_at, created_at, updated_at, ended_at, kind)
    VALUES (?, 't', NULL, 'return 1', 'js', '{}', 'running', NULL, NULL, 1, 1, NULL, 'script')`).run(id);
}

describe('script journal', () => {
  test('calls are journaled as they happen and read back after the database is reopened', () => {
    const file = join(dir, 'state.db');
    let db = openDb(file);
    run(db, 'r-1');
    const j = new ScriptJournal(db);
    const a1 = canonicalJson(['review a']);
    const a2 = canonicalJson(['review b', { model: 'auto' }]);
    assert.equal(j.begin({ run_id: 'r-1', kind: 'agent', args_json: a1, label: 'a', phase: 'Review', started_at: 10 }), 1);
    assert.equal(j.begin({ run_id: 'r-1', kind: 'agent', args_json: a2, label: 'b', phase: 'Review', started_at: 11 }), 2);
    assert.equal(j.begin({ run_id: 'r-1', kind: 'approve', args_json: canonicalJson(['ship?']), label: null, phase: null, started_at: 12 }), 3);
    j.carriedBy('r-1', 1, { job_id: 'j-1' });
    j.carriedBy('r-1', 2, { job_id: 'j-2' });
    j.carriedBy('r-1', 3, { request_id: 'q-1' });
    j.end('r-1', 1, { status: 'done', outcome: 'looks fine', at: 20 });
    j.end('r-1', 1, { status: 'failed', outcome: { name: 'X', message: 'late' }, at: 21 });
    j.log('r-1', 'phase', 'Review', 9);
    j.log('r-1', 'log', '2 reviews started', 12);
    db.close();

    db = openDb(file);
    const k = new ScriptJournal(db);
    const calls = k.calls('r-1');
    assert.deepEqual(calls.map((c) => [c.seq, c.kind, c.status, c.job_id, c.request_id, c.outcome_json]), [
      [1, 'agent', 'done', 'j-1', null, '"looks fine"'],
      [2, 'agent', 'running', 'j-2', null, null],
      [3, 'approve', 'running', null, 'q-1', null],
    ], 'a call ends once: the late failure did not overwrite the outcome');
    assert.deepEqual(k.callOfJob('j-2'), { run_id: 'r-1', seq: 2 });
    assert.deepEqual(k.logOf('r-1').map((l) => [l.kind, l.text]), [['phase', 'Review'], ['log', '2 reviews started']]);

    const replay = new ScriptReplay(k.replayable('r-1'), 'recover');
    assert.equal(replay.next('agent', a2).from, 'job', 'the running call is attached to its job');
    assert.equal(replay.next('agent', a1).from, 'journal');
    db.close();
  });

  test('two runs number their calls apart', () => {
    const db = openDb(join(dir, 'two.db'));
    run(db, 'r-a');
    run(db, 'r-b');
    const j = new ScriptJournal(db);
    const c = { kind: 'agent' as const, args_json: '["x"]', label: null, phase: null, started_at: 1 };
    assert.deepEqual([j.begin({ ...c, run_id: 'r-a' }), j.begin({ ...c, run_id: 'r-b' }), j.begin({ ...c, run_id: 'r-a' })], [1, 1, 2]);
    db.close();
  });

  test('replaced calls are history: ended if they never did, never replayed; a reopened workflow call runs again with its new source', () => {
    const db = openDb(join(dir, 'replaced.db'));
    run(db, 'r-r');
    const j = new ScriptJournal(db);
    const c = { run_id: 'r-r', kind: 'agent' as const, label: null, phase: null, started_at: 1 };
    j.begin({ ...c, args_json: '["a"]' });
    j.begin({ ...c, args_json: '["b"]' });
    j.begin({ ...c, kind: 'workflow', args_json: '["w"]', scope: '', source: 'return 1' });
    j.begin({ ...c, args_json: '["n"]', scope: '/w:abc#0' });
    j.end('r-r', 1, { status: 'done', outcome: 'A', at: 2 });
    j.end('r-r', 3, { status: 'done', outcome: 1, at: 3 });
    j.replace('r-r', [1, 2], 9);
    const rows = j.calls('r-r');
    assert.deepEqual(rows.slice(0, 2).map((r) => [r.status, r.replaced, r.outcome_json, r.ended_at]), [
      ['done', 1, '"A"', 2],
      ['failed', 1, JSON.stringify({ name: 'Replaced', message: 'a resume of the run no longer waits for this call' }), 9],
    ]);
    assert.deepEqual(j.replayable('r-r').map((e) => [e.seq, e.scope]), [[3, ''], [4, '/w:abc#0']]);
    j.reopen('r-r', 3, 'return 2');
    const w = j.calls('r-r')[2]!;
    assert.deepEqual([w.status, w.outcome_json, w.ended_at, w.source], ['running', null, null, 'return 2']);
    db.close();
  });
});
