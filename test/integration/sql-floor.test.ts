// The floor's rows over the layer (src/store/sql/floor.ts), on SQLite and PostgreSQL: which jobs
// the floor brings (live, the N most recently ended, the failed or lock-violating ones of the
// window, and those only another row names), the totals with and without archived projects or a
// project named, and the dependency rows of waiting jobs with their dependencies' status — the same answer on both databases.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { SqlDb } from '../../src/store/sql/open.js';
import { insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { floorRows } from '../../src/store/sql/floor.js';
import { snapshot } from '../../src/store/sql/tx.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';


const NOW = 1_764_000_000_000;
const HOUR = 3_600_000;

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`the floor's rows on ${dialect}`, () => {
    const open = async (t: { after: (fn: () => Promise<void> | void) => void }): Promise<SqlDb> => (await openDialect(dialect, t)).s;

    test('live, recent, window and named jobs; totals over projects; dependency rows', async (t) => {
      const q = (await open(t)).db;
      await insertJob(q, newJob('run', { status: 'running', project: 'p1' }), NOW - HOUR);
      // Ended long ago: a lock holder (named only by its lock) and one outside every list.
      await insertJob(q, newJob('holder'), NOW - 50 * HOUR);
      await updateJob(q, 'holder', { status: 'succeeded', ended_at: NOW - 48 * HOUR, cost_usd: 1 }, NOW - 48 * HOUR);
      await insertJob(q, newJob('forgotten'), NOW - 50 * HOUR);
      await updateJob(q, 'forgotten', { status: 'failed', ended_at: NOW - 47 * HOUR }, NOW - 47 * HOUR);
      await insertJob(q, newJob('wait', { status: 'waiting', depends_on_json: '["run","forgotten"]' }), NOW - HOUR);
      // Three recent ends (the two most recent are DONE), one failed in the window, one that broke a lock.
      for (const [id, min] of [['e1', 30], ['e2', 20], ['e3', 10]] as const) {
        await insertJob(q, newJob(id), NOW - HOUR);
        await updateJob(q, id, { status: 'succeeded', ended_at: NOW - min * 60_000, cost_usd: 0.5 }, NOW - min * 60_000);
      }
      await insertJob(q, newJob('failed', { project: 'old' }), NOW - 2 * HOUR);
      await updateJob(q, 'failed', { status: 'failed', ended_at: NOW - 40 * 60_000, cost_usd: 2 }, NOW - 40 * 60_000);
      await insertJob(q, newJob('violator'), NOW - 2 * HOUR);
      await updateJob(q, 'violator', { status: 'succeeded', ended_at: NOW - 50 * 60_000, lock_violations_json: '["/x"]' }, NOW - 50 * 60_000);
      await q.insertInto('locks').values([
        { repo: '', rel_path: '/repo/a.ts', path: '/repo/a.ts', holder: 'holder', reason: null, ttl_s: 60, acquired_at: NOW - 1000, expires_at: NOW + 60_000 },
        { repo: '', rel_path: '/repo/b.ts', path: '/repo/b.ts', holder: 'forgotten', reason: null, ttl_s: 60, acquired_at: NOW - 9000, expires_at: NOW - 1 },
      ]).execute();

      const read = (o: { doneLimit: number; project?: string }) => snapshot(q, (r) => floorRows(r, { now: NOW, since: NOW - 24 * HOUR, ...o }));
      const rows = await read({ doneLimit: 2 });
      assert.deepEqual(rows.jobs.map((j) => j.id).sort(), ['e2', 'e3', 'failed', 'holder', 'run', 'violator', 'wait']);
      assert.deepEqual(rows.locks.map((l) => [l.path, l.holder]), [['/repo/a.ts', 'holder']], 'an expired lock is not shown');
      assert.deepEqual(rows.deps.map((d) => [d.job_id, d.dep_id, d.status]).sort(), [['wait', 'forgotten', 'failed'], ['wait', 'run', 'running']]);
      const totals = (r: typeof rows) => Object.fromEntries(r.counts.map((c) => [c.status, [c.n, Math.round(c.cost_usd * 100), Number(c.cost_unknown)]]));
      assert.deepEqual(totals(rows), { running: [1, 0, 0], waiting: [1, 0, 0], succeeded: [5, 250, 0], failed: [2, 200, 0] });
      assert.deepEqual(rows.archived, []);
      assert.equal((await read({ doneLimit: 0 })).jobs.some((j) => j.id === 'e3'), false, 'DONE 0: no recent ends but the window\'s');

      await q.insertInto('projects').values({ name: 'old', archived_at: NOW - HOUR, created_at: NOW - 9 * HOUR }).execute();
      const narrowed = await read({ doneLimit: 2 });
      assert.deepEqual(narrowed.archived, ['old']);
      assert.deepEqual(totals(narrowed), { running: [1, 0, 0], waiting: [1, 0, 0], succeeded: [5, 250, 0], failed: [1, 0, 0] }, 'an archived project\'s jobs are left out of the totals');
      assert.deepEqual(totals(await read({ doneLimit: 2, project: 'p1' })), { running: [1, 0, 0] });
    });
  });
}
