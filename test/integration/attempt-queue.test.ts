// pg-boss as the attempt queue (src/store/sql/queue.ts, issue 30): a job sent inside the layer's
// transaction is invisible to another process's fetch until that transaction commits, and gone with
// a rollback; a fetched job is handed to one fetcher only (SKIP LOCKED), across two pg-boss
// instances on one database. Real PostgreSQL, two separate pools (as a hub and a worker would be).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { sql } from 'kysely';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { ATTEMPT_QUEUE, bossDb, cancelAttempt, ensureQueue, openAttemptQueue, sendAttempt } from '../../src/store/sql/queue.js';
import { queueName } from '../../src/domain/placement.js';
import { freshDatabase } from '../helpers/postgres.js';

const log = pino({ level: 'silent' });

/** A fresh database with Overseer's schema, opened through the layer; gone after the test. */
async function ground(t: TestContext): Promise<{ d: { url: string }; s: SqlDb }> {
  const home = mkdtempSync(join(tmpdir(), 'overseer-queue-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const d = await freshDatabase();
  t.after(() => d.drop());
  const s = await openSql({ home, databaseUrl: d.url });
  t.after(() => s.close());
  return { d, s };
}

test('a job sent in a transaction is fetched only after the commit; a rolled-back one never; each job goes to one fetcher', async (t) => {
  const { d, s } = await ground(t);
  const t0 = Date.now();
  const hubBoss = await openAttemptQueue({ url: d.url, log });
  t.after(() => hubBoss.stop({ graceful: false, wait: true }));
  const workerBoss = await openAttemptQueue({ url: d.url, log });
  t.after(() => workerBoss.stop({ graceful: false, wait: true }));
  t.diagnostic(`two pg-boss instances started on a fresh database (schema created by the first) in ${Date.now() - t0} ms`);

  // The send inside a layer transaction, beside a write of ours; the worker fetches while it is open.
  let id: string | null = null;
  let seenInside: unknown[] = ['not fetched'];
  await s.db.transaction().execute(async (trx) => {
    await sql`INSERT INTO hubs (id, host, pid, state_dir, version, started_at, heartbeat_at) VALUES ('h-q', 'box', 1, '/s', 't', 0, 0)`.execute(trx);
    id = await hubBoss.send(ATTEMPT_QUEUE, { jobId: 'j-1', attempt: 1 }, { db: bossDb(trx) });
    seenInside = await workerBoss.fetch(ATTEMPT_QUEUE);
  });
  assert.ok(id, 'sent');
  assert.deepEqual(seenInside, [], 'nothing to fetch before the commit');
  const after = await workerBoss.fetch(ATTEMPT_QUEUE);
  assert.deepEqual(after.map((j) => [j.id, j.data]), [[id, { jobId: 'j-1', attempt: 1 }]], 'fetched after the commit');
  assert.deepEqual(await hubBoss.fetch(ATTEMPT_QUEUE), [], 'an active job is not handed out twice');

  // A rollback takes the job with it.
  await assert.rejects(s.db.transaction().execute(async (trx) => {
    await hubBoss.send(ATTEMPT_QUEUE, { jobId: 'j-2', attempt: 1 }, { db: bossDb(trx) });
    throw new Error('the spawn failed');
  }), /the spawn failed/);
  assert.deepEqual(await workerBoss.fetch(ATTEMPT_QUEUE), [], 'a rolled-back send left no job');

  // 40 jobs, two fetchers at once: each job once.
  const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => hubBoss.send(ATTEMPT_QUEUE, { jobId: `j-${i + 10}` })));
  const got: string[] = [];
  const drain = async (b: typeof hubBoss): Promise<void> => {
    for (;;) {
      const jobs = await b.fetch(ATTEMPT_QUEUE, { batchSize: 3 });
      if (!jobs.length) return;
      got.push(...jobs.map((j) => j.id));
    }
  };
  const f0 = Date.now();
  await Promise.all([drain(hubBoss), drain(workerBoss)]);
  t.diagnostic(`40 jobs fetched by two instances in ${Date.now() - f0} ms`);
  assert.deepEqual([...got].sort(), [...ids].sort(), 'every job once');
  const ours = await sql<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'pgboss'`.execute(s.db);
  assert.ok(ours.rows[0]!.n > 0, 'pg-boss keeps its tables in its own schema');
});

test('sendAttempt: one waiting queue job per job, only into a queue made first; a cancelled one is never fetched', async (t) => {
  const { d, s } = await ground(t);
  const boss = await openAttemptQueue({ url: d.url, log });
  t.after(() => boss.stop({ graceful: false, wait: true }));
  const q = queueName('claude', 'gpu-box', ['gpu']);
  await assert.rejects(s.db.transaction().execute((trx) => sendAttempt(trx, boss, q, { jobId: 'j-0', attempt: 1 }, 60)), /ensureQueue before the transaction/);
  await ensureQueue(boss, q);
  await ensureQueue(boss, q); // idempotent
  const first = await s.db.transaction().execute((trx) => sendAttempt(trx, boss, q, { jobId: 'j-1', attempt: 1 }, 60));
  const again = await s.db.transaction().execute((trx) => sendAttempt(trx, boss, q, { jobId: 'j-1', attempt: 1 }, 60));
  assert.ok(first);
  assert.equal(again, null, 'a second send for a job already waiting is a no-op');
  const other = await s.db.transaction().execute((trx) => sendAttempt(trx, boss, q, { jobId: 'j-2', attempt: 1 }, 60));
  assert.ok(other);
  await s.db.transaction().execute((trx) => cancelAttempt(trx, boss, q, other!));
  const got = await boss.fetch<{ jobId: string; attempt: number }>(q, { batchSize: 10 });
  assert.deepEqual(got.map((j) => j.data), [{ jobId: 'j-1', attempt: 1 }]);
});
