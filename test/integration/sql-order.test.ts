// List reads whose order reaches a person are ordered in SQL: PostgreSQL returns rows in no set
// order (here, the order they were written), SQLite in its index's order (here, by id). A job's
// dependencies and the statuses of given jobs come oldest first (by seq) on both databases, whatever
// the order they were given in or the order of their ids; a holder's locked paths come by path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { depsOf, insertJob, statusOf } from '../../src/store/sql/jobs.js';
import { lockedPathsOf } from '../../src/store/sql/branches.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';
import { idStatus } from '../helpers/state.js';

for (const dialect of ['sqlite', 'postgres'] as const) {
  test(`${dialect}: depsOf and statusOf oldest first, lockedPathsOf by path`, async (t) => {
    const { s } = await openDialect(dialect, t);
    const q = s.db;
    // Ids sort opposite to creation; the dependencies are written newest first.
    await insertJob(q, newJob('j-z1', { status: 'succeeded' }), 1);
    await insertJob(q, newJob('j-m2', { status: 'failed' }), 2);
    await insertJob(q, newJob('j-a3', { status: 'cancelled' }), 3);
    await insertJob(q, newJob('j-w4', { status: 'waiting', depends_on_json: JSON.stringify(['j-a3', 'j-m2', 'j-z1']) }), 4);
    assert.deepEqual(idStatus(await depsOf(q, 'j-w4')), [{ id: 'j-z1', status: 'succeeded' }, { id: 'j-m2', status: 'failed' }, { id: 'j-a3', status: 'cancelled' }]);
    assert.deepEqual(idStatus(await statusOf(q, ['j-a3', 'j-m2', 'j-z1'])).map((r) => r.id), ['j-z1', 'j-m2', 'j-a3']);
    for (const path of ['/repo/z.ts', '/repo/b.ts', '/repo/m.ts']) {
      await q.insertInto('locks').values({ path, repo: '', rel_path: path, holder: 'j-w4', reason: null, ttl_s: 600, acquired_at: 1, expires_at: 10_000 }).execute();
    }
    assert.deepEqual(await lockedPathsOf(q, 'j-w4'), ['/repo/b.ts', '/repo/m.ts', '/repo/z.ts']);
  });
}
