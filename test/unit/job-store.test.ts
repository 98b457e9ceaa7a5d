// The job rows' properties the layer tests (test/integration/sql-jobs.test.ts, sql-job-lookups,
// sql-job-readers) do not check, on the layer's functions (src/store/sql/jobs.ts, messages.ts,
// events.ts) over SQLite and PostgreSQL: every field of a job and an attempt round-trips with its
// defaults; seq counts up; duplicate ids, token hashes and attempts are refused, as is a
// dependency on an unknown job (its job row kept out); an update leaves other columns and jobs
// alone and ignores an id; the tree's breadth-first order; dependencies' later status; events'
// last N, oldest first; nearby ids without duplicates; message ids increasing and their delivery times.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { NewJob, AttemptRow } from '../../src/store/jobs.js';
import type { Q } from '../../src/store/sql/tx.js';
import {
  addEvent, attemptsOf, depsOf, descendants, getJob, insertAttempt, insertJob, lastAttempt, nearbyIds, statusOf, updateJob,
} from '../../src/store/sql/jobs.js';
import { latestEvents } from '../../src/store/sql/events.js';
import { addMessage, markDelivered, undelivered } from '../../src/store/sql/messages.js';
import { newJob as job } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';
import { idStatus } from '../helpers/state.js';

function attempt(jobId: string, n: number, over: Partial<AttemptRow> = {}): AttemptRow {
  return {
    job_id: jobId, n, kind: n === 1 ? 'initial' : 'retry', status: 'running', started_at: 1000 + n, ended_at: null,
    session_id: null, pid: null, exit_code: null, signal: null, turns: 0, cost_usd: 0, failure_class: null,
    error: null, diagnosis: null, transcript: `/t/${jobId}/${n}.jsonl`, ...over,
  };
}

/** root → a → b → c (three levels under root), plus root → a2 and an unrelated tree other → o1. */
async function tree(q: Q): Promise<void> {
  await insertJob(q, job('root', { depth: 1 }), 1);
  await insertJob(q, job('a', { parent_id: 'root', depth: 2 }), 2);
  await insertJob(q, job('other', { depth: 1 }), 3);
  await insertJob(q, job('b', { parent_id: 'a', depth: 3 }), 4);
  await insertJob(q, job('a2', { parent_id: 'root', depth: 2 }), 5);
  await insertJob(q, job('c', { parent_id: 'b', depth: 4 }), 6);
  await insertJob(q, job('o1', { parent_id: 'other', depth: 2 }), 7);
}

const ids = (rows: { id: string }[]): string[] => rows.map((r) => r.id);
const byId = <T extends { id: string }>(rows: T[]): T[] => [...rows].sort((x, y) => x.id.localeCompare(y.id));

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`job rows on ${dialect}: what the layer tests leave out`, () => {
    const open = async (t: { after: (fn: () => Promise<void> | void) => void }): Promise<Q> => (await openDialect(dialect, t)).s.db;

    test('insertJob + getJob round-trips every given field and sets the defaults; seq counts up; an unknown id is undefined', async (t) => {
      const q = await open(t);
      const j: NewJob = job('j-1', {
        model: 'opus', work_dir: '/wt/j-1', repo_root: '/repo', worktree: 1, branch: 'overseer/j-1-x', base_commit: 'abc123',
        priority: 3, max_turns: 20, budget_usd: 1.5, timeout_s: 600, context_json: '{"k":"v"}', template: 'tpl',
        checks_json: '["npm test"]', retry: 'analyze', labels_json: '["x","y"]', token_hash: 'h1',
      });
      await insertJob(q, j, 12345);
      const row = await getJob(q, 'j-1');
      assert.ok(row);
      for (const [k, v] of Object.entries(j)) assert.deepEqual(row[k as keyof typeof row], v, k);
      assert.deepEqual([row.seq, row.created_at, row.updated_at, row.turns, row.cost_usd, row.started_at, row.ended_at, row.error, row.pid],
        [1, 12345, 12345, 0, 0, null, null, null, null]);
      await insertJob(q, job('y'), 2);
      await insertJob(q, job('z'), 3);
      assert.deepEqual(await Promise.all(['j-1', 'y', 'z'].map(async (id) => (await getJob(q, id))!.seq)), [1, 2, 3]);
      assert.equal(await getJob(q, 'nope'), undefined);
    });

    test('duplicate ids and duplicate token hashes are refused', async (t) => {
      const q = await open(t);
      await insertJob(q, job('dup', { token_hash: 'tok' }), 1);
      await assert.rejects(insertJob(q, job('dup'), 2), /UNIQUE|PRIMARY KEY|duplicate key/);
      await assert.rejects(insertJob(q, job('other', { token_hash: 'tok' }), 2), /UNIQUE|duplicate key/);
      assert.equal(await getJob(q, 'other'), undefined);
    });

    test('an update sets its fields and updated_at and leaves the rest and other jobs; an id field is ignored', async (t) => {
      const q = await open(t);
      await insertJob(q, job('u'), 100);
      await insertJob(q, job('p'), 100);
      await updateJob(q, 'u', { status: 'running', pid: 4242, started_at: 150, cost_usd: 0.25 }, 200);
      const r = (await getJob(q, 'u'))!;
      assert.deepEqual([r.status, r.pid, r.started_at, r.cost_usd, r.updated_at, r.created_at, r.title], ['running', 4242, 150, 0.25, 200, 100, 'title of u']);
      const p = (await getJob(q, 'p'))!;
      assert.deepEqual([p.status, p.updated_at], ['queued', 100], 'another job is untouched');
      await updateJob(q, 'u', {}, 130);
      assert.equal((await getJob(q, 'u'))!.updated_at, 130, 'no fields: only updated_at');
      await updateJob(q, 'u', { id: 'renamed', title: 'new' }, 140);
      assert.equal(await getJob(q, 'renamed'), undefined);
      assert.equal((await getJob(q, 'u'))!.title, 'new');
    });

    test('descendants: breadth first, three levels deep, not the root; none for a leaf or an unknown id', async (t) => {
      const q = await open(t);
      await tree(q);
      assert.deepEqual(ids(await descendants(q, 'root')), ['a', 'a2', 'b', 'c']);
      assert.deepEqual(ids(await descendants(q, 'a')), ['b', 'c']);
      assert.deepEqual(ids(await descendants(q, 'other')), ['o1']);
      assert.deepEqual(ids(await descendants(q, 'c')), []);
      assert.deepEqual(ids(await descendants(q, 'unknown')), []);
    });

    test('dependencies: depsOf follows later status changes; statusOf of none is empty; an unknown dependency is refused and its job row kept out', async (t) => {
      const q = await open(t);
      await insertJob(q, job('A'), 1);
      await insertJob(q, job('C', { depends_on_json: '["A"]' }), 2);
      await updateJob(q, 'A', { status: 'failed' }, 3);
      assert.deepEqual(idStatus(await depsOf(q, 'C')), [{ id: 'A', status: 'failed' }]);
      assert.deepEqual(idStatus(await depsOf(q, 'A')), []);
      await insertJob(q, job('B', { status: 'cancelled' }), 4);
      assert.deepEqual(await statusOf(q, []), []);
      assert.deepEqual(byId(idStatus(await statusOf(q, ['B', 'C', 'nope']))), [{ id: 'B', status: 'cancelled' }, { id: 'C', status: 'queued' }]);
      await assert.rejects(insertJob(q, job('D', { depends_on_json: '["ghost"]' }), 5), /FOREIGN KEY|foreign key/);
      assert.equal(await getJob(q, 'D'), undefined, 'the job row is rolled back with its edge');
    });

    test('nearbyIds: no duplicates when a prefix match is also recent, five by default; none in an empty store', async (t) => {
      const q = await open(t);
      assert.deepEqual(await nearbyIds(q, 'j-1234'), []);
      for (let i = 0; i < 8; i++) await insertJob(q, job(`j-${i}${i}aaaa`), i);
      const near = await nearbyIds(q, 'j-77zzzz');
      assert.equal(near.length, 5);
      assert.equal(near[0], 'j-77aaaa');
      assert.equal(new Set(near).size, near.length);
    });

    test('attempts: every field round-trips with the defaults, in order of n; the same (job, n) twice is refused; none for an unknown job', async (t) => {
      const q = await open(t);
      await insertJob(q, job('J'), 1);
      await insertAttempt(q, attempt('J', 2));
      await insertAttempt(q, attempt('J', 1, { status: 'failed', ended_at: 50, failure_class: 'crashed' }));
      const all = await attemptsOf(q, 'J');
      assert.deepEqual(all.map((a) => a.n), [1, 2]);
      assert.deepEqual(all[0], { ...attempt('J', 1, { status: 'failed', ended_at: 50, failure_class: 'crashed' }), input_tokens: 0, output_tokens: 0, cost_unknown: 0, cache_read_tokens: 0, cache_creation_tokens: 0, stderr: null });
      assert.equal((await lastAttempt(q, 'J'))?.n, 2);
      assert.equal(await lastAttempt(q, 'none'), undefined);
      assert.deepEqual(await attemptsOf(q, 'none'), []);
      await assert.rejects(insertAttempt(q, attempt('J', 1)), /UNIQUE|PRIMARY KEY|duplicate key/);
    });

    test('events: JSON data or NULL; the last N of a job, oldest first', async (t) => {
      const q = await open(t);
      await addEvent(q, 'J', 1, 'status', { to: 'running' });
      await addEvent(q, 'J', 2, 'note');
      await addEvent(q, 'K', 3, 'status', { to: 'queued' });
      await addEvent(q, 'J', 4, 'status', { to: 'succeeded' });
      const oldestFirst = async (limit: number) => (await latestEvents(q, { jobId: 'J', limit })).reverse();
      assert.deepEqual((await oldestFirst(200)).map((e) => [e.at, e.kind, e.data_json]), [
        [1, 'status', '{"to":"running"}'], [2, 'note', null], [4, 'status', '{"to":"succeeded"}'],
      ]);
      assert.deepEqual((await oldestFirst(2)).map((e) => e.at), [2, 4]);
    });

    test('messages: ids increase; delivery times are the ones given, per recipient', async (t) => {
      const q = await open(t);
      const m1 = await addMessage(q, { from: 'lead', to: 'J', text: 'first', now: 10, delivered: false });
      const m2 = await addMessage(q, { from: 'K', to: 'J', text: 'second', now: 11, delivered: false });
      const m3 = await addMessage(q, { from: 'lead', to: 'J', text: 'already there', now: 12, delivered: true });
      await addMessage(q, { from: 'lead', to: 'K', text: 'for K', now: 13, delivered: false });
      assert.ok(m1 < m2 && m2 < m3, 'ids increase');
      assert.deepEqual((await undelivered(q, 'J')).map((m) => [m.id, m.from_id, m.text, m.delivered_at]), [[m1, 'lead', 'first', null], [m2, 'K', 'second', null]]);
      await markDelivered(q, [m1], 20);
      await markDelivered(q, [m2], 21);
      assert.deepEqual(await undelivered(q, 'J'), []);
      assert.equal((await undelivered(q, 'K')).length, 1, "another recipient's message stays undelivered");
      const delivered = await q.selectFrom('messages').select(['id', 'delivered_at']).where('to_id', '=', 'J').orderBy('id').execute();
      assert.deepEqual(delivered, [{ id: m1, delivered_at: 20 }, { id: m2, delivered_at: 21 }, { id: m3, delivered_at: 12 }]);
    });
  });
}
