// JobStore on a real temp-file database opened with openDb (all migrations applied).
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, tx, type Db } from '../../src/store/db.js';
import { JobStore, type NewJob, type AttemptRow } from '../../src/store/jobs.js';

let dir = '';
let n = 0;
let db: Db;
let store: JobStore;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'overseer-jobstore-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  db = openDb(join(dir, `jobs-${++n}.db`));
  store = new JobStore(db);
});
afterEach(() => {
  db.close();
});

function job(id: string, over: Partial<NewJob> = {}): NewJob {
  return {
    id,
    parent_id: null,
    depth: 1,
    title: `title of ${id}`,
    prompt: `prompt of ${id}`,
    provider: 'claude',
    model: null,
    cwd: '/repo',
    work_dir: null,
    repo_root: null,
    worktree: 0,
    branch: null,
    base_commit: null,
    priority: 0,
    max_turns: null,
    budget_usd: null,
    timeout_s: null,
    context_json: null,
    template: null,
    checks_json: '[]',
    retry: 'none',
    labels_json: '[]',
    depends_on_json: '[]',
    status: 'queued',
    session_id: `sess-${id}`,
    token_hash: null,
    workflow_id: null,
    phase: null,
    cycle: null,
    json_schema: null,
    ...over,
  };
}

function attempt(jobId: string, n: number, over: Partial<AttemptRow> = {}): AttemptRow {
  return {
    job_id: jobId, n, kind: n === 1 ? 'initial' : 'retry', status: 'running', started_at: 1000 + n, ended_at: null,
    session_id: null, pid: null, exit_code: null, signal: null, turns: 0, cost_usd: 0, failure_class: null,
    error: null, diagnosis: null, transcript: `/t/${jobId}/${n}.jsonl`, ...over,
  };
}

/** root → a → b → c (three levels under root), plus root → a2 and an unrelated tree other → o1. */
function tree(): void {
  store.insertJob(job('root', { depth: 1 }), 1);
  store.insertJob(job('a', { parent_id: 'root', depth: 2 }), 2);
  store.insertJob(job('other', { depth: 1 }), 3);
  store.insertJob(job('b', { parent_id: 'a', depth: 3 }), 4);
  store.insertJob(job('a2', { parent_id: 'root', depth: 2 }), 5);
  store.insertJob(job('c', { parent_id: 'b', depth: 4 }), 6);
  store.insertJob(job('o1', { parent_id: 'other', depth: 2 }), 7);
}

const ids = (rows: { id: string }[]): string[] => rows.map((r) => r.id);

describe('jobs', () => {
  test('insertJob + get round-trips every given field and sets the defaults', () => {
    const j = job('j-1', {
      model: 'opus', work_dir: '/wt/j-1', repo_root: '/repo', worktree: 1, branch: 'overseer/j-1-x', base_commit: 'abc123',
      priority: 3, max_turns: 20, budget_usd: 1.5, timeout_s: 600, context_json: '{"k":"v"}', template: 'tpl',
      checks_json: '["npm test"]', retry: 'analyze', labels_json: '["x","y"]', token_hash: 'h1',
    });
    store.insertJob(j, 12345);
    const row = store.get('j-1');
    assert.ok(row);
    for (const [k, v] of Object.entries(j)) assert.deepEqual(row[k as keyof typeof row], v, k);
    assert.equal(row.seq, 1);
    assert.equal(row.created_at, 12345);
    assert.equal(row.updated_at, 12345);
    assert.equal(row.turns, 0);
    assert.equal(row.cost_usd, 0);
    assert.equal(row.started_at, null);
    assert.equal(row.ended_at, null);
    assert.equal(row.error, null);
    assert.equal(row.pid, null);
  });

  test('get of an unknown id → undefined', () => {
    assert.equal(store.get('nope'), undefined);
  });

  test('seq increments with each insert', () => {
    store.insertJob(job('x'), 1);
    store.insertJob(job('y'), 2);
    store.insertJob(job('z'), 3);
    assert.deepEqual(['x', 'y', 'z'].map((id) => store.get(id)!.seq), [1, 2, 3]);
  });

  test('duplicate ids and duplicate token hashes are refused', () => {
    store.insertJob(job('dup', { token_hash: 'tok' }), 1);
    assert.throws(() => store.insertJob(job('dup'), 2), /UNIQUE|PRIMARY KEY/);
    assert.throws(() => store.insertJob(job('other', { token_hash: 'tok' }), 2), /UNIQUE/);
  });

  test('update sets the fields and updated_at, leaves the rest', () => {
    store.insertJob(job('u'), 100);
    store.update('u', { status: 'running', pid: 4242, started_at: 150, cost_usd: 0.25 }, 200);
    const r = store.get('u')!;
    assert.equal(r.status, 'running');
    assert.equal(r.pid, 4242);
    assert.equal(r.started_at, 150);
    assert.equal(r.cost_usd, 0.25);
    assert.equal(r.updated_at, 200);
    assert.equal(r.created_at, 100);
    assert.equal(r.title, 'title of u');
  });

  test('update with undefined values stores NULL', () => {
    store.insertJob(job('u', { model: 'sonnet' }), 100);
    store.update('u', { error: 'bad', failure_class: 'crashed', pid: 1 }, 110);
    assert.equal(store.get('u')!.error, 'bad');
    store.update('u', { error: undefined, failure_class: undefined, pid: undefined, model: undefined }, 120);
    const r = store.get('u')!;
    assert.equal(r.error, null);
    assert.equal(r.failure_class, null);
    assert.equal(r.pid, null);
    assert.equal(r.model, null);
    assert.equal(r.updated_at, 120);
  });

  test('update with no fields only touches updated_at; an id field is ignored', () => {
    store.insertJob(job('u'), 100);
    store.update('u', {}, 130);
    assert.equal(store.get('u')!.updated_at, 130);
    store.update('u', { id: 'renamed', title: 'new' }, 140);
    assert.equal(store.get('renamed'), undefined);
    assert.equal(store.get('u')!.title, 'new');
  });

  test('update of one job does not touch another', () => {
    store.insertJob(job('p'), 1);
    store.insertJob(job('q'), 1);
    store.update('p', { status: 'failed' }, 5);
    assert.equal(store.get('q')!.status, 'queued');
    assert.equal(store.get('q')!.updated_at, 1);
  });

  test('byStatus and countByStatus', () => {
    store.insertJob(job('s1', { status: 'queued' }), 1);
    store.insertJob(job('s2', { status: 'running' }), 1);
    store.insertJob(job('s3', { status: 'queued' }), 1);
    store.insertJob(job('s4', { status: 'succeeded' }), 1);
    assert.deepEqual(ids(store.byStatus('queued')), ['s1', 's3']);
    assert.deepEqual(ids(store.byStatus('running', 'succeeded')), ['s2', 's4']);
  });
});

describe('tree queries', () => {
  test('descendants: three levels deep, breadth first, not including the root', () => {
    tree();
    assert.deepEqual(ids(store.descendants('root')), ['a', 'a2', 'b', 'c']);
    assert.deepEqual(ids(store.descendants('a')), ['b', 'c']);
    assert.deepEqual(ids(store.descendants('other')), ['o1']);
    assert.deepEqual(ids(store.descendants('c')), []);
    assert.deepEqual(ids(store.descendants('unknown')), []);
  });

  test('inSubtree: self, descendants at every level, not ancestors, siblings or other trees', () => {
    tree();
    assert.equal(store.inSubtree('root', 'root'), true);
    assert.equal(store.inSubtree('root', 'a'), true);
    assert.equal(store.inSubtree('root', 'b'), true);
    assert.equal(store.inSubtree('root', 'c'), true);
    assert.equal(store.inSubtree('a', 'c'), true);
    assert.equal(store.inSubtree('c', 'a'), false, 'an ancestor is not inside');
    assert.equal(store.inSubtree('a', 'a2'), false, 'a sibling is not inside');
    assert.equal(store.inSubtree('root', 'o1'), false);
    assert.equal(store.inSubtree('other', 'c'), false);
    assert.equal(store.inSubtree('root', 'missing'), false);
  });
});

describe('dependencies', () => {
  test('depsOf follows job_deps (dependents: src/store/sql/jobs.ts, test/integration/sql-jobs.test.ts)', () => {
    store.insertJob(job('A', { status: 'succeeded' }), 1);
    store.insertJob(job('B', { status: 'running' }), 2);
    store.insertJob(job('C', { status: 'waiting', depends_on_json: JSON.stringify(['A', 'B']) }), 3);
    store.insertJob(job('D', { status: 'waiting', depends_on_json: JSON.stringify(['A']) }), 4);
    const deps = store.depsOf('C').sort((x, y) => x.id.localeCompare(y.id));
    assert.deepEqual(deps, [{ id: 'A', status: 'succeeded' }, { id: 'B', status: 'running' }]);
    assert.deepEqual(store.depsOf('A'), []);
  });

  test('depsOf reflects later status changes', () => {
    store.insertJob(job('A'), 1);
    store.insertJob(job('C', { depends_on_json: '["A"]' }), 2);
    store.update('A', { status: 'failed' }, 3);
    assert.deepEqual(store.depsOf('C'), [{ id: 'A', status: 'failed' }]);
  });

  test('depsOfIds returns id + status, empty for none', () => {
    store.insertJob(job('A', { status: 'cancelled' }), 1);
    store.insertJob(job('B'), 1);
    assert.deepEqual(store.depsOfIds([]), []);
    assert.deepEqual(store.depsOfIds(['A', 'B', 'nope']).sort((x, y) => x.id.localeCompare(y.id)), [
      { id: 'A', status: 'cancelled' }, { id: 'B', status: 'queued' },
    ]);
  });

  test('a dependency on an unknown job is refused (foreign keys on), and tx keeps the job row out', () => {
    assert.throws(() => tx(db, () => store.insertJob(job('C', { depends_on_json: '["ghost"]' }), 1)), /FOREIGN KEY/);
    assert.equal(store.get('C'), undefined);
  });
});

describe('list', () => {
  function seed(): void {
    tree(); // root(1) a(2) other(3) b(4) a2(5) c(6) o1(7), all queued
    store.update('a', { status: 'running', labels_json: '["frontend","urgent"]' }, 10);
    store.update('b', { status: 'running', labels_json: '["backend"]' }, 10);
    store.update('o1', { labels_json: '["urgent"]' }, 10);
  }

  test('no filters → everything in seq order, up to limit', () => {
    seed();
    assert.deepEqual(ids(store.list({ limit: 100 })), ['root', 'a', 'other', 'b', 'a2', 'c', 'o1']);
    assert.deepEqual(ids(store.list({ limit: 2 })), ['root', 'a']);
  });

  test('by status', () => {
    seed();
    assert.deepEqual(ids(store.list({ status: 'running', limit: 100 })), ['a', 'b']);
    assert.deepEqual(ids(store.list({ status: 'failed', limit: 100 })), []);
  });

  test('by label (exact element of labels_json)', () => {
    seed();
    assert.deepEqual(ids(store.list({ label: 'urgent', limit: 100 })), ['a', 'o1']);
    assert.deepEqual(ids(store.list({ label: 'backend', limit: 100 })), ['b']);
    assert.deepEqual(ids(store.list({ label: 'urg', limit: 100 })), [], 'no substring match');
  });

  test('parentId null → top-level jobs only; a parent id → its direct children', () => {
    seed();
    assert.deepEqual(ids(store.list({ parentId: null, limit: 100 })), ['root', 'other']);
    assert.deepEqual(ids(store.list({ parentId: 'root', limit: 100 })), ['a', 'a2']);
  });

  test('subtreeOf → all descendants (not the root itself)', () => {
    seed();
    assert.deepEqual(ids(store.list({ subtreeOf: 'root', limit: 100 })), ['a', 'b', 'a2', 'c']);
    assert.deepEqual(ids(store.list({ subtreeOf: 'a', limit: 100 })), ['b', 'c']);
  });

  test('filters combine', () => {
    seed();
    assert.deepEqual(ids(store.list({ subtreeOf: 'root', status: 'running', limit: 100 })), ['a', 'b']);
    assert.deepEqual(ids(store.list({ subtreeOf: 'root', label: 'urgent', limit: 100 })), ['a']);
    assert.deepEqual(ids(store.list({ parentId: null, status: 'running', limit: 100 })), []);
  });

  test('afterSeq cursor + limit pages through without gaps or repeats', () => {
    seed();
    const seen: string[] = [];
    let after: number | undefined;
    for (let page = 0; page < 10; page++) {
      const rows = store.list({ afterSeq: after, limit: 3 });
      if (rows.length === 0) break;
      assert.ok(rows.length <= 3);
      seen.push(...ids(rows));
      after = rows.at(-1)!.seq;
    }
    assert.deepEqual(seen, ['root', 'a', 'other', 'b', 'a2', 'c', 'o1']);
    assert.deepEqual(ids(store.list({ afterSeq: 5, limit: 100 })), ['c', 'o1']);
  });
});

describe('nearbyIds', () => {
  test('same 4-char prefix first (newest first), then the most recent others, capped', () => {
    for (const [i, id] of ['j-ab0001', 'j-cd0002', 'j-ab0003', 'j-ef0004', 'j-gh0005', 'j-ij0006'].entries()) store.insertJob(job(id), i);
    const near = store.nearbyIds('j-abffff', 4);
    assert.deepEqual(near, ['j-ab0003', 'j-ab0001', 'j-ij0006', 'j-gh0005']);
  });

  test('no duplicates when a prefix match is also recent; default cap 5', () => {
    for (let i = 0; i < 8; i++) store.insertJob(job(`j-${i}${i}aaaa`), i);
    const near = store.nearbyIds('j-77zzzz');
    assert.equal(near.length, 5);
    assert.equal(near[0], 'j-77aaaa');
    assert.equal(new Set(near).size, near.length);
  });

  test('empty store → empty', () => {
    assert.deepEqual(store.nearbyIds('j-1234'), []);
  });
});

describe('attempts', () => {
  test('insert, list in order, lastAttempt', () => {
    store.insertJob(job('J'), 1);
    store.insertAttempt(attempt('J', 2));
    store.insertAttempt(attempt('J', 1, { status: 'failed', ended_at: 50, failure_class: 'crashed' }));
    const all = store.attempts('J');
    assert.deepEqual(all.map((a) => a.n), [1, 2]);
    assert.deepEqual(all[0], { ...attempt('J', 1, { status: 'failed', ended_at: 50, failure_class: 'crashed' }), input_tokens: 0, output_tokens: 0, cost_unknown: 0, cache_read_tokens: 0, cache_creation_tokens: 0, stderr: null });
    assert.equal(store.lastAttempt('J')?.n, 2);
    assert.equal(store.lastAttempt('none'), undefined);
    assert.deepEqual(store.attempts('none'), []);
  });

  test('the same (job, n) twice is refused', () => {
    store.insertJob(job('J'), 1);
    store.insertAttempt(attempt('J', 1));
    assert.throws(() => store.insertAttempt(attempt('J', 1)), /UNIQUE|PRIMARY KEY/);
  });
});

describe('events', () => {
  test('addEvent stores JSON data (or NULL); events returns the last N oldest first', () => {
    store.addEvent('J', 1, 'status', { to: 'running' });
    store.addEvent('J', 2, 'note');
    store.addEvent('K', 3, 'status', { to: 'queued' });
    store.addEvent('J', 4, 'status', { to: 'succeeded' });
    const all = store.events('J');
    assert.deepEqual(all.map((e) => [e.at, e.kind, e.data_json]), [
      [1, 'status', '{"to":"running"}'], [2, 'note', null], [4, 'status', '{"to":"succeeded"}'],
    ]);
    assert.deepEqual(store.events('J', 2).map((e) => e.at), [2, 4]);
  });
});

describe('messages', () => {
  test('undelivered, then markDelivered', () => {
    const m1 = store.addMessage('lead', 'J', 'first', 10, false);
    const m2 = store.addMessage('K', 'J', 'second', 11, false);
    const m3 = store.addMessage('lead', 'J', 'already there', 12, true);
    store.addMessage('lead', 'K', 'for K', 13, false);
    assert.ok(m1 < m2 && m2 < m3, 'ids increase');
    const und = store.undeliveredMessages('J');
    assert.deepEqual(und.map((m) => [m.id, m.from_id, m.text, m.delivered_at]), [[m1, 'lead', 'first', null], [m2, 'K', 'second', null]]);
    store.markDelivered([m1], 20);
    assert.deepEqual(store.undeliveredMessages('J').map((m) => m.id), [m2]);
    store.markDelivered([m2], 21);
    assert.deepEqual(store.undeliveredMessages('J'), []);
    assert.equal(store.undeliveredMessages('K').length, 1);
    const delivered = db.prepare('SELECT id, delivered_at FROM messages WHERE to_id = ? ORDER BY id').all('J');
    assert.deepEqual(delivered, [{ id: m1, delivered_at: 20 }, { id: m2, delivered_at: 21 }, { id: m3, delivered_at: 12 }]);
  });

  test('markDelivered of nothing is a no-op', () => {
    store.addMessage('lead', 'J', 'x', 1, false);
    store.markDelivered([], 5);
    assert.equal(store.undeliveredMessages('J').length, 1);
  });
});
