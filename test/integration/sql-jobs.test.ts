// The job engine's rows over the Kysely layer (src/store/sql/jobs.ts), on SQLite and PostgreSQL:
// a job's insert with its dependencies, updates that clear what they are given as undefined,
// conditional updates, attempts, events, the job tree; and the claim, the one decision here: two
// dispatchers on two connections race over 50 queued jobs and every job starts exactly once.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlOver } from '../../src/store/sql/open.js';
import { openDb } from '../../src/store/db.js';
import { transact } from '../../src/store/sql/tx.js';
import {
  addEvent, attemptsOf, claimAttempt, countByStatus, dependents, depsOf, descendants, getJob, insertJob, jobsByStatus, lastAttempt,
  statusOf, updateAttempt, updateJob, updateJobIf, updateWithEvent,
} from '../../src/store/sql/jobs.js';
import { tokenEpoch } from '../../src/store/jobs.js';
import { recordAttemptSpend } from '../../src/money/record.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';
import { raceWorkers } from '../helpers/workerRace.js';
import { idStatus } from '../helpers/state.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`job rows on ${dialect}`, () => {
    const open = (t: { after: (fn: () => Promise<void> | void) => void }) => openDialect(dialect, t);

    test('insert, update, conditional update, attempts, events and the job tree', async (t) => {
      const { s } = await open(t);
      const q = s.db;
      await insertJob(q, newJob('j-a', { status: 'succeeded' }), 100);
      await insertJob(q, newJob('j-b', { parent_id: 'j-a', depth: 2, depends_on_json: '["j-a"]', status: 'waiting', project: 'p1' }), 200);
      await insertJob(q, newJob('j-c', { parent_id: 'j-b', depth: 3 }), 300);
      const b = (await getJob(q, 'j-b'))!;
      assert.equal(b.seq, 2);
      assert.equal(b.created_at, 200);
      assert.equal(b.project, 'p1');
      assert.equal(b.turns, 0, 'counters start at 0');
      assert.equal(typeof b.created_at, 'number', 'BIGINT arrives as a number');
      assert.deepEqual(idStatus(await depsOf(q, 'j-b')), [{ id: 'j-a', status: 'succeeded' }]);
      assert.deepEqual((await dependents(q, 'j-a')).map((j) => j.id), ['j-b']);
      assert.deepEqual((await descendants(q, 'j-a')).map((j) => j.id), ['j-b', 'j-c']);
      assert.deepEqual(idStatus(await statusOf(q, ['j-c', 'j-none'])), [{ id: 'j-c', status: 'queued' }]);
      assert.deepEqual((await jobsByStatus(q, 'queued', 'waiting')).map((j) => j.id), ['j-b', 'j-c']);
      assert.equal(await countByStatus(q, 'queued', 'succeeded'), 2);

      const epoch = tokenEpoch();
      await updateJob(q, 'j-c', { status_message: 'busy', token_hash: 'h1', error: undefined }, 400);
      assert.ok(tokenEpoch() > epoch, 'a token write moves the epoch');
      const c = (await getJob(q, 'j-c'))!;
      assert.equal(c.status_message, 'busy');
      assert.equal(c.error, null, 'undefined is written as NULL');
      assert.equal(c.updated_at, 400);
      assert.equal(await updateJobIf(q, 'j-c', ['waiting'], { status: 'queued' }, 500), false, 'not waiting: unchanged');
      assert.equal(await updateJobIf(q, 'j-b', ['waiting'], { status: 'queued' }, 500), true);
      assert.equal((await getJob(q, 'j-b'))!.status, 'queued');

      const first = await claimAttempt(q, { jobId: 'j-c', now: 600, tokenHash: 'h2', files: (n) => ({ transcript: `/t/${n}`, stderr: `/e/${n}` }) });
      assert.deepEqual(first && { n: first.n, kind: first.kind, status: first.job.status, started: first.job.started_at, token: first.job.token_hash }, { n: 1, kind: 'initial', status: 'running', started: 600, token: 'h2' });
      assert.equal(await claimAttempt(q, { jobId: 'j-c', now: 601, tokenHash: 'h3', files: () => ({ transcript: '', stderr: '' }) }), undefined, 'running: no second claim');
      await updateAttempt(q, 'j-c', 1, { status: 'failed', ended_at: 700, cost_usd: 0.5, diagnosis: undefined });
      await updateJob(q, 'j-c', { status: 'queued' }, 700);
      const again = await claimAttempt(q, { jobId: 'j-c', now: 800, tokenHash: 'h4', files: (n) => ({ transcript: `/t/${n}`, stderr: `/e/${n}` }) });
      assert.equal(again?.kind, 'retry');
      assert.equal(again?.job.started_at, 600, 'started_at is the first start');
      assert.deepEqual((await attemptsOf(q, 'j-c')).map((a) => [a.n, a.status, a.cost_usd, a.transcript]), [[1, 'failed', 0.5, '/t/1'], [2, 'running', 0, '/t/2']]);
      assert.equal((await lastAttempt(q, 'j-c'))?.n, 2);
      // A running attempt's spending: its row, and the job's totals summed over its attempts, in one batch.
      await recordAttemptSpend(q, 'j-c', 2, { turns: 3, costUsd: 0.25, costUnknown: true, tokens: { input: 10, output: 5, cachedInput: 2, cacheCreation: 1 } }, 850);
      const spent = (await getJob(q, 'j-c'))!;
      assert.deepEqual([spent.turns, spent.cost_usd, spent.input_tokens, spent.output_tokens, spent.cache_read_tokens, spent.cache_creation_tokens, spent.cost_unknown, spent.updated_at],
        [3, 0.75, 10, 5, 2, 1, 1, 850]);

      await addEvent(q, 'j-c', 900, 'note', { x: 1 });
      await updateWithEvent(q, 'j-c', { status: 'cancelled' }, 901, 'ended', { status: 'cancelled' });
      const events = await q.selectFrom('events').select(['kind', 'data_json', 'at']).where('job_id', '=', 'j-c').orderBy('id').execute();
      assert.deepEqual(events.map((e) => e.kind), ['started', 'started', 'note', 'ended']);
      assert.equal(events[2]!.data_json, '{"x":1}');
    });

    test('two dispatchers on two connections race over 50 queued jobs: every job starts exactly once', { timeout: 120_000 }, async (t) => {
      const { s, home, url } = await open(t);
      const q = s.db;
      const ids = Array.from({ length: 50 }, (_, i) => `j-q${String(i).padStart(2, '0')}`);
      for (const id of ids) await insertJob(q, newJob(id), 1);
      const won = await raceWorkers(join(import.meta.dirname, '..', 'helpers', 'claimRacer.ts'), ['d1', 'd2'], { home, url, ids });
      const d1 = won.get('d1')!;
      const d2 = won.get('d2')!;
      t.diagnostic(`d1 started ${d1.length}, d2 started ${d2.length}`);
      const all = [...d1, ...d2];
      assert.equal(all.length, 50, `the starts add up to 50 (${d1.length} + ${d2.length})`);
      assert.deepEqual([...new Set(all)].sort(), ids, 'no job was started twice');
      const attempts = await q.selectFrom('attempts').select(['job_id', 'n', 'transcript']).execute();
      assert.equal(attempts.length, 50, 'every job has exactly one attempt');
      assert.ok(attempts.every((a) => a.n === 1));
      for (const a of attempts) {
        const winner = d1.includes(a.job_id) ? 'd1' : 'd2';
        assert.equal(a.transcript, `/dev/null/${winner}/1`, 'the attempt is the winner\'s');
        assert.equal((await getJob(q, a.job_id))!.token_hash, `${winner}-${a.job_id}`);
      }
      const started = await q.selectFrom('events').select('job_id').where('kind', '=', 'started').execute();
      assert.equal(started.length, 50);
    });
  });
}

describe('batches in the mixed period (SQLite, the hub\'s shared connection)', () => {
  test('a synchronous write arriving in a promise continuation never lands inside a batch; inside an awaited transaction the guard refuses it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'overseer-sql-batch-'));
    dirs.push(home);
    const raw = openDb(join(home, 'state.db'));
    const s = sqlOver(raw);
    try {
      await insertJob(s.db, newJob('j-a'), 1);
      const syncWrite = (): string => {
        try {
          raw.prepare('INSERT INTO events (job_id, at, kind) VALUES (?, ?, ?)').run('j-a', 2, 'sync');
          return 'written';
        } catch (err) {
          return (err as Error).message;
        }
      };
      // A continuation that writes at every microtask hop while the batch runs: none lands inside it.
      const during: string[] = [];
      let spinning = true;
      const spin = (): void => { during.push(syncWrite()); if (spinning && during.length < 500) queueMicrotask(spin); };
      queueMicrotask(spin);
      await updateWithEvent(s.db, 'j-a', { status_message: 'x' }, 3, 'batched');
      spinning = false;
      assert.ok(during.length > 1, 'the writer ran while the batch was in flight');
      assert.deepEqual([...new Set(during)], ['written']);
      // The same continuation against an awaited transaction: refused, not silently joined.
      let refused = '';
      await transact(s.db, async (trx) => {
        queueMicrotask(() => { refused = syncWrite(); });
        await addEvent(trx, 'j-a', 4, 'awaited');
        await addEvent(trx, 'j-a', 5, 'awaited');
      });
      assert.match(refused, /synchronous write ran while an asynchronous transaction was open/);
      const kinds = (raw.prepare('SELECT kind FROM events ORDER BY id').all() as { kind: string }[]).map((r) => r.kind);
      assert.deepEqual([...new Set(kinds)].sort(), ['awaited', 'batched', 'sync']);
    } finally {
      await s.close();
      raw.close();
    }
  });
});
