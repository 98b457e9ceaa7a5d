// The readers of jobs over the layer (src/store/sql/jobs.ts listJobs, attemptsOfJobs), on SQLite
// and PostgreSQL: every filter of list_agents (status, label, parent or the lead's own, an agent's
// subtree, a project, archived projects hidden, the page after a seq, the limit) gives the same
// jobs in creation order on both databases, and a page's attempts come back by job in order; the
// lead's resources list the newest jobs and note keys.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { SqlDb } from '../../src/store/sql/open.js';
import { attemptsOfJobs, insertAttempt, insertJob, listJobs, recentJobs, type JobFilter } from '../../src/store/sql/jobs.js';
import { recentNoteKeys, setNote } from '../../src/store/sql/notes.js';
import { depsTouching, historyJobsByIds, recentHistory } from '../../src/store/sql/history.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';


for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`job readers on ${dialect}`, () => {
    const open = async (t: { after: (fn: () => Promise<void> | void) => void }): Promise<SqlDb> => (await openDialect(dialect, t)).s;

    test('list_agents\' filters and pages; attempts of a page by job', async (t) => {
      const q = (await open(t)).db;
      await insertJob(q, newJob('a', { labels_json: '["ui","fast"]', project: 'p1' }), 1);
      await insertJob(q, newJob('b', { parent_id: 'a', depth: 2, status: 'running', labels_json: '["ui"]' }), 2);
      await insertJob(q, newJob('c', { parent_id: 'b', depth: 3, labels_json: '["uix"]', project: 'old' }), 3);
      await insertJob(q, newJob('d', { status: 'running' }), 4);
      await q.insertInto('projects').values({ name: 'old', archived_at: 5, created_at: 1 }).execute();
      const ids = async (f: Omit<JobFilter, 'limit'> & { limit?: number }): Promise<string[]> => (await listJobs(q, { limit: 50, ...f })).map((j) => j.id);
      assert.deepEqual(await ids({}), ['a', 'b', 'c', 'd']);
      assert.deepEqual(await ids({ status: 'running' }), ['b', 'd']);
      assert.deepEqual(await ids({ label: 'ui' }), ['a', 'b'], 'a label matches whole, not as a prefix');
      assert.deepEqual(await ids({ parentId: null }), ['a', 'd']);
      assert.deepEqual(await ids({ parentId: 'a' }), ['b']);
      assert.deepEqual(await ids({ subtreeOf: 'a' }), ['b', 'c']);
      assert.deepEqual(await ids({ subtreeOf: 'b', status: 'queued' }), ['c']);
      assert.deepEqual(await ids({ project: 'old' }), ['c']);
      assert.deepEqual(await ids({ hideArchived: true }), ['a', 'b', 'd']);
      const first = await listJobs(q, { limit: 2 });
      assert.deepEqual(await ids({ afterSeq: first.at(-1)!.seq, limit: 2 }), ['c', 'd']);

      const attempt = (job_id: string, n: number) => ({ job_id, n, kind: n === 1 ? 'initial' as const : 'retry' as const, status: 'failed', started_at: n, ended_at: n + 1, session_id: null, pid: null, exit_code: 1, signal: null, turns: n, cost_usd: 0, failure_class: null, error: null, diagnosis: null, transcript: `/t/${job_id}.${n}`, stderr: null });
      for (const [j, n] of [['b', 2], ['a', 1], ['b', 1]] as const) await insertAttempt(q, attempt(j, n));
      const by = await attemptsOfJobs(q, ['a', 'b', 'd']);
      assert.deepEqual([...by].map(([id, as]) => [id, as.map((a) => a.n)]), [['a', [1]], ['b', [1, 2]], ['d', []]]);
      assert.equal((await attemptsOfJobs(q, [])).size, 0);
    });

    test('the lead\'s resources: recent jobs and recently written note keys, newest first, under a prefix', async (t) => {
      const q = (await open(t)).db;
      for (const id of ['a', 'b', 'c']) await insertJob(q, newJob(id), 1);
      assert.deepEqual((await recentJobs(q, 2)).map((j) => [j.id, j.status]), [['c', 'queued'], ['b', 'queued']]);
      for (const [key, at] of [['plan/x', 3], ['plan/y', 1], ['other', 2], ['plan', 5]] as const) await setNote(q, { key, value: 'v', author: 'lead', now: at });
      assert.deepEqual(await recentNoteKeys(q, 10), ['plan', 'plan/x', 'other', 'plan/y']);
      assert.deepEqual(await recentNoteKeys(q, 10, 'plan/'), ['plan/x', 'plan/y']);
      assert.deepEqual(await recentNoteKeys(q, 1, 'plan'), ['plan']);
    });

    test('the dashboard\'s Timeline and Graph: a window of jobs oldest first, edges touching it at either end, jobs by id', async (t) => {
      const q = (await open(t)).db;
      await insertJob(q, newJob('a'), 1);
      await insertJob(q, newJob('b', { depends_on_json: '["a"]' }), 2);
      await insertJob(q, newJob('c', { parent_id: 'a' }), 3);
      await insertJob(q, newJob('d', { depends_on_json: '["b","c"]' }), 4);
      assert.deepEqual((await recentHistory(q, 2)).map((j) => j.id), ['c', 'd']);
      assert.deepEqual(await depsTouching(q, ['c']), [{ job_id: 'd', dep_id: 'c' }]);
      assert.deepEqual(await depsTouching(q, ['b']), [{ job_id: 'b', dep_id: 'a' }, { job_id: 'd', dep_id: 'b' }]);
      assert.deepEqual((await historyJobsByIds(q, ['d', 'a', 'nope'])).map((j) => j.id), ['a', 'd']);
      assert.deepEqual(await historyJobsByIds(q, []), []);
    });
  });
}
