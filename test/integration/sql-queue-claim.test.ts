// A worker's claim of an attempt it fetched from the queue (claimQueuedAttempt, src/store/sql/jobs.ts;
// docs/workers-plan.md §3), on SQLite and PostgreSQL: only a queued job placed in the queue, only
// under the queue job its row names (or none named), owned by the worker's hub from then on with the
// worker's name and lease epoch; a cancelled job and a hub-placed job are never claimed; on
// PostgreSQL (where workers run), two workers on two connections racing for each of 20 jobs: each job starts once.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { openSql } from '../../src/store/sql/open.js';
import { attemptsOf, claimQueuedAttempt, getJob, insertJob } from '../../src/store/sql/jobs.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';

const files = (n: number) => ({ transcript: `/t/${n}`, stderr: `/e/${n}` });
const claim = (over: Partial<Parameters<typeof claimQueuedAttempt>[1]> & { jobId: string; queueId: string }) =>
  ({ now: 1000, tokenHash: `h-${over.jobId}-${over.worker ?? 'w1'}`, hubId: 'h-worker', worker: 'w1', epoch: 3, files, ...over });

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`a worker's claim from the queue on ${dialect}`, () => {
    test('only a queued queue job, under its own queue job; the worker owns it after', async (t) => {
      const { s } = await openDialect(dialect, t);
      const q = s.db;
      await insertJob(q, newJob('j-q', { placement: 'queue', queue_name: 'att_claude', queue_id: 'qa', hub_id: 'h-spawner' } as never), 1);
      await insertJob(q, newJob('j-hub', { placement: 'hub' } as never), 2);
      await insertJob(q, newJob('j-none'), 3);
      await insertJob(q, newJob('j-cancelled', { placement: 'queue', queue_id: 'qc', status: 'cancelled' } as never), 4);
      await insertJob(q, newJob('j-unnamed', { placement: 'queue' } as never), 5);

      assert.equal(await claimQueuedAttempt(q, claim({ jobId: 'j-q', queueId: 'q-stale' })), undefined, 'a stale queue job does not claim');
      assert.equal(await claimQueuedAttempt(q, claim({ jobId: 'j-hub', queueId: 'x' })), undefined, 'a hub job is never a worker\'s');
      assert.equal(await claimQueuedAttempt(q, claim({ jobId: 'j-none', queueId: 'x' })), undefined, 'nor one placed before placement existed');
      assert.equal(await claimQueuedAttempt(q, claim({ jobId: 'j-cancelled', queueId: 'qc' })), undefined, 'a cancelled job is not started');
      assert.equal(await claimQueuedAttempt(q, claim({ jobId: 'j-missing', queueId: 'x' })), undefined);
      assert.equal((await getJob(q, 'j-q'))!.status, 'queued', 'nothing changed by the refused claims');
      assert.deepEqual(await attemptsOf(q, 'j-q'), []);

      const won = await claimQueuedAttempt(q, claim({ jobId: 'j-q', queueId: 'qa' }));
      assert.deepEqual(won && [won.n, won.kind, won.job.status], [1, 'initial', 'running']);
      const j = (await getJob(q, 'j-q'))!;
      assert.deepEqual([j.status, j.hub_id, j.worker, Number(j.worker_epoch), j.token_hash, j.started_at], ['running', 'h-worker', 'w1', 3, 'h-j-q-w1', 1000]);
      assert.deepEqual((await attemptsOf(q, 'j-q')).map((a) => [a.n, a.status, a.transcript]), [[1, 'running', '/t/1']]);
      assert.equal(await claimQueuedAttempt(q, claim({ jobId: 'j-q', queueId: 'qa', hubId: 'h-other', worker: 'w2' })), undefined, 'claimed once');
      assert.equal((await getJob(q, 'j-q'))!.worker, 'w1');
      assert.ok(await claimQueuedAttempt(q, claim({ jobId: 'j-unnamed', queueId: 'any' })), 'a row that names no queue job is claimed by the one fetched');
    });

    // Workers need PostgreSQL (overseer worker refuses a SQLite state), so the race is there; SQLite's one writer is proven for claimJob in sql-jobs.
    if (dialect === 'postgres') test('two workers on two connections race for 20 jobs: each starts once', async (t) => {
      const { s, home, url } = await openDialect(dialect, t);
      const other = await openSql({ home, databaseUrl: url });
      t.after(() => other.close());
      const ids = Array.from({ length: 20 }, (_, i) => `j-r${i}`);
      for (const [i, id] of ids.entries()) await insertJob(s.db, newJob(id, { placement: 'queue', queue_id: `q${i}` } as never), i + 1);
      const race = async (db: typeof s.db, worker: string): Promise<string[]> => {
        const won: string[] = [];
        for (const [i, id] of ids.entries()) if (await claimQueuedAttempt(db, claim({ jobId: id, queueId: `q${i}`, worker, hubId: `h-${worker}` }))) won.push(id);
        return won;
      };
      const [a, b] = await Promise.all([race(s.db, 'a'), race(other.db, 'b')]);
      assert.deepEqual([...a, ...b].sort(), [...ids].sort(), `each job claimed once (a ${a.length}, b ${b.length})`);
      for (const id of ids) assert.equal((await attemptsOf(s.db, id)).length, 1, `${id}: one attempt`);
      t.diagnostic(`worker a won ${a.length}, worker b ${b.length}`);
    });
  });
}
