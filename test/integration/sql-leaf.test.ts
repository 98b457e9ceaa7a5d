// The leaf stores moved onto the asynchronous layer in step 3 of docs/store-plan.md (projects,
// provider limits, warnings, overlaps, job setup, messages, events, template stats), each on
// SQLite and PostgreSQL: what they write and read back, and what they decide — one open warning
// per (job, kind) and each overlap recorded once — with two connections raising or recording at
// once, and on PostgreSQL a raiser held behind the job's row lock until the first commits.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { SqlDb } from '../../src/store/sql/open.js';
import type { Q } from '../../src/store/sql/tx.js';
import { changeProject, getProject, projectExists, projectStats } from '../../src/store/sql/projects.js';
import { activeLimits, allLimits, getLimit, saveLimit, type LimitRecord } from '../../src/store/sql/limits.js';
import { clearJobWarnings, clearWarning, openWarnings, raiseWarning, setWarningReaction } from '../../src/store/sql/warnings.js';
import { addOverlaps, allOverlaps, clearJobOverlaps, openOverlaps, overlapJobs } from '../../src/store/sql/overlaps.js';
import { recordSetup, setSetupBase, setSetupSkip, setSetupStack, setupBase, setupReport, setupSkipped, setupStack } from '../../src/store/sql/setup.js';
import { addMessage, inbox, markMessagesRead } from '../../src/store/sql/messages.js';
import { appendEvent, latestEvents } from '../../src/store/sql/events.js';
import { templateSums } from '../../src/store/sql/templates.js';
import { dialectSuite } from '../helpers/sqlDialect.js';


const T = 1_764_000_000_000;
let seq = 0;

/** A job row with what the schema requires, its times set directly (insertJob takes only the creation time). */
async function job(q: Q, id: string, o: { status?: string; project?: string | null; template?: string | null; model?: string | null; cost?: number; turns?: number; started?: number | null; ended?: number | null; updated?: number; title?: string; branch?: string | null } = {}): Promise<void> {
  seq += 1;
  await sql`INSERT INTO jobs (id, seq, depth, title, prompt, provider, model, cwd, status, project, template, branch, cost_usd, turns, created_at, started_at, ended_at, updated_at)
    VALUES (${id}, ${seq}, 1, ${o.title ?? `job ${id}`}, 'do it', 'claude', ${o.model ?? null}, '/w', ${o.status ?? 'queued'}, ${o.project ?? null}, ${o.template ?? null}, ${o.branch ?? null},
      ${o.cost ?? 0}, ${o.turns ?? 0}, ${T}, ${o.started ?? null}, ${o.ended ?? null}, ${o.updated ?? T})`.execute(q);
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`leaf stores on ${dialect}`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-leaf-', other: true });

    test('projects: a change makes the row; archiving again keeps the first time; stats add up the jobs of rows and of names without a row', async () => {
      const q = layer.s.db;
      await job(q, 'p-1', { project: 'web', status: 'succeeded', cost: 0.5, updated: T + 10 });
      await job(q, 'p-2', { project: 'web', status: 'succeeded', cost: 0.25, updated: T + 30 });
      await job(q, 'p-3', { project: 'web', status: 'queued', updated: T + 20 });
      await job(q, 'p-4', { project: 'api', status: 'failed', cost: 1 });
      assert.equal(await projectExists(q, 'api'), true, 'a name jobs carry is a project');
      assert.equal(await projectExists(q, 'nope'), false);
      assert.equal(await getProject(q, 'web'), undefined);
      await changeProject(q, 'web', { archived: true, note: 'paused' }, T + 100);
      await changeProject(q, 'web', { archived: true, flagged: true }, T + 200);
      assert.deepEqual(await getProject(q, 'web'), { name: 'web', archived_at: T + 100, flagged: 1, note: 'paused', created_at: T + 100 });
      await changeProject(q, 'web', { archived: false, note: null }, T + 300);
      assert.deepEqual(await getProject(q, 'web'), { name: 'web', archived_at: null, flagged: 1, note: null, created_at: T + 100 });
      const stats = await projectStats(q);
      assert.deepEqual(stats.map((p) => p.name), ['api', 'web']);
      assert.deepEqual(stats[1], {
        name: 'web', archived_at: null, flagged: 1, note: null, created_at: T + 100, jobs: 3, by_status: { succeeded: 2, queued: 1 },
        cost_usd: 0.75, cost_unknown: 0, last_activity: T + 30,
      });
      assert.deepEqual(stats[0], {
        name: 'api', archived_at: null, flagged: 0, note: null, created_at: null, jobs: 1, by_status: { failed: 1 },
        cost_usd: 1, cost_unknown: 0, last_activity: T,
      });
    });

    test('provider limits: saved whole, replaced on the account (its provider, endpoint and key hash kept), closed rows are not active', async () => {
      const q = layer.s.db;
      const row: LimitRecord = {
        account: 'claude:abc', provider: 'claude', endpoint: 'https://api', key_hash: 'h1', phase: 'open', kind: 'rate_limit', status: 429,
        reason: 'slow down', opened_at: T, until_at: T + 5000, basis: 'retry_after', failures: 1, hits: 2, paused_json: '["j-1"]', updated_at: T,
      };
      await saveLimit(q, row);
      await saveLimit(q, { ...row, account: 'codex:x', provider: 'codex', phase: 'closed', kind: null, status: null, reason: null, opened_at: null, until_at: null, basis: null, failures: 0, hits: 0, paused_json: '[]' });
      assert.deepEqual(await getLimit(q, 'claude:abc'), row);
      assert.deepEqual((await activeLimits(q)).map((r) => r.account), ['claude:abc']);
      await saveLimit(q, { ...row, provider: 'other', endpoint: 'elsewhere', key_hash: 'h2', phase: 'closed', failures: 0, updated_at: T + 1 });
      const back = (await getLimit(q, 'claude:abc'))!;
      assert.deepEqual([back.provider, back.endpoint, back.key_hash, back.phase, back.failures, back.updated_at], ['claude', 'https://api', 'h1', 'closed', 0, T + 1]);
      assert.deepEqual(await activeLimits(q), []);
      assert.deepEqual((await allLimits(q)).map((r) => r.account), ['claude:abc', 'codex:x']);
    });

    test('warnings: one open per (job, kind) — raising it again is a no-op, after a clear it is raised anew; a job\'s end clears its own', async () => {
      const q = layer.s.db;
      await job(q, 'w-1', { status: 'running' });
      await job(q, 'w-2', { status: 'running' });
      const first = await raiseWarning(q, 'w-1', 'stalled', 'no output for 600 s', T);
      assert.ok(first);
      assert.deepEqual({ ...first, id: 0 }, { id: 0, job_id: 'w-1', kind: 'stalled', detail: 'no output for 600 s', raised_at: T, cleared_at: null, lead_seen_at: null, reaction: null });
      assert.equal(await raiseWarning(q, 'w-1', 'stalled', 'again', T + 1), undefined);
      const turns = (await raiseWarning(q, 'w-1', 'turns_high', '90 of 100 turns', T + 2))!;
      await raiseWarning(q, 'w-2', 'stalled', 'no output', T + 3);
      await setWarningReaction(q, first.id, 'message');
      assert.deepEqual((await openWarnings(q, 'w-1')).map((w) => [w.kind, w.reaction]), [['stalled', 'message'], ['turns_high', null]]);
      assert.equal(await clearWarning(q, 'w-1', 'stalled', T + 10), true);
      assert.equal(await clearWarning(q, 'w-1', 'stalled', T + 11), false, 'nothing open to clear');
      const again = (await raiseWarning(q, 'w-1', 'stalled', 'stalled again', T + 12))!;
      assert.ok(again.id > turns.id, 'a new row');
      assert.equal(await clearJobWarnings(q, 'w-1', T + 20), 2);
      assert.deepEqual((await openWarnings(q)).map((w) => w.job_id), ['w-2']);
    });

    test('warnings: two connections raising the same (job, kind) at once, 20 rounds: exactly one row each round', async () => {
      await job(layer.s.db, 'w-race', { status: 'running' });
      for (let round = 0; round < 20; round++) {
        const got = await Promise.all([layer.s.db, layer.other.db, layer.s.db, layer.other.db].map((q, i) => raiseWarning(q, 'w-race', 'stalled', `raiser ${i}`, T + round)));
        assert.equal(got.filter((w) => w !== undefined).length, 1, `round ${round}: ${JSON.stringify(got)}`);
        assert.equal((await openWarnings(layer.s.db, 'w-race')).length, 1);
        assert.equal(await clearWarning(layer.s.db, 'w-race', 'stalled', T + round), true);
      }
    });

    if (dialect === 'postgres') {
      test('warnings: a raiser whose transaction holds the job waits; after its commit the other sees the open warning and adds none', async () => {
        await job(layer.s.db, 'w-held', { status: 'running' });
        let release!: () => void;
        const gate = new Promise<void>((res) => (release = res));
        let second: Promise<unknown> | undefined;
        const holder = layer.s.db.transaction().execute(async (trx) => {
          assert.ok(await raiseWarning(trx, 'w-held', 'time_high', 'first', T));
          second = raiseWarning(layer.other.db, 'w-held', 'time_high', 'second', T + 1);
          await lockWaiter(layer.s);
          await gate;
        });
        release();
        await holder;
        assert.equal(await second!, undefined);
        assert.deepEqual((await openWarnings(layer.s.db, 'w-held')).map((w) => w.detail), ['first']);
      });
    }

    test('overlaps: each (pair, file) recorded once, whichever order the pair is given in and whoever records it at once; a job\'s end closes its pairs', async () => {
      const q = layer.s.db;
      await job(q, 'o-a', { status: 'running', title: 'edits a', branch: 'overseer/a' });
      await job(q, 'o-b', { status: 'running', title: 'edits b', branch: 'overseer/b' });
      await job(q, 'o-c', { status: 'running' });
      const one = await addOverlaps(q, { repoRoot: '/r', a: 'o-b', b: 'o-a', files: ['x.ts'], locksConflict: false, now: T });
      assert.deepEqual(one.map((r) => [r.job_a, r.job_b, r.file]), [['o-a', 'o-b', 'x.ts']]);
      const [p, r] = await Promise.all([
        addOverlaps(layer.s.db, { repoRoot: '/r', a: 'o-a', b: 'o-b', files: ['x.ts', 'y.ts', 'z.ts'], locksConflict: false, now: T + 1 }),
        addOverlaps(layer.other.db, { repoRoot: '/r', a: 'o-b', b: 'o-a', files: ['y.ts', 'z.ts', 'w.ts'], locksConflict: false, now: T + 1 }),
      ]);
      assert.deepEqual([...p, ...r].map((x) => x.file).sort(), ['w.ts', 'y.ts', 'z.ts'], 'each new file once, x.ts not again');
      await addOverlaps(q, { repoRoot: '/r', a: 'o-c', b: 'o-a', files: ['x.ts'], locksConflict: true, now: T + 2 });
      assert.deepEqual((await openOverlaps(q, 'o-b')).map((x) => x.file), ['x.ts', ...[...p, ...r].sort((m, n) => m.id - n.id).map((x) => x.file)]);
      assert.equal((await openOverlaps(q)).length, 5);
      assert.equal(await clearJobOverlaps(q, 'o-c', T + 3), 1);
      assert.deepEqual((await openOverlaps(q, 'o-c')), []);
      assert.equal((await allOverlaps(q, 2)).length, 2);
      assert.equal((await allOverlaps(q))[0]!.job_a, 'o-a', 'newest first');
      const jobs = await overlapJobs(q, ['o-a', 'o-b', 'gone']);
      assert.deepEqual(jobs.get('o-a'), { id: 'o-a', title: 'edits a', branch: 'overseer/a', status: 'running' });
      assert.equal(jobs.has('gone'), false);
    });

    test('job setup: each column set on its own, the row made by the first; absent reads as nothing', async () => {
      const q = layer.s.db;
      await job(q, 's-1');
      assert.equal(await setupSkipped(q, 's-1'), false);
      assert.equal(await setupReport(q, 's-1'), undefined);
      assert.equal(await setupBase(q, 's-1'), null);
      await setSetupBase(q, 's-1', 'job:j-base', T);
      await setSetupSkip(q, 's-1', T + 1);
      const report = { status: 'ok' as const, source: 'config' as const, copied: ['.env'], commands: [], duration_ms: 12 };
      await recordSetup(q, 's-1', report, T + 2);
      await setSetupStack(q, 's-1', { branch: 'overseer/base', jobId: 'j-base', merged: ['overseer/x'] }, T + 3);
      assert.equal(await setupSkipped(q, 's-1'), true);
      assert.deepEqual(await setupReport(q, 's-1'), report);
      assert.equal(await setupBase(q, 's-1'), 'job:j-base');
      assert.deepEqual(await setupStack(q, 's-1'), { branch: 'overseer/base', jobId: 'j-base', merged: ['overseer/x'] });
      assert.equal((await q.selectFrom('job_setup').select('updated_at').where('job_id', '=', 's-1').executeTakeFirst())?.updated_at, T + 3);
    });

    test('messages: ids from the insert, the inbox newest first (unread only when asked), read once keeps its first time', async () => {
      const q = layer.s.db;
      const a = await addMessage(q, { from: 'lead', to: 'm-1', text: 'one', now: T, delivered: true });
      const b = await addMessage(q, { from: 'j-x', to: 'm-1', text: 'two', now: T + 1, delivered: false });
      const c = await addMessage(q, { from: 'lead', to: 'm-2', text: 'elsewhere', now: T + 2, delivered: false });
      assert.ok(a < b && b < c);
      const box = await inbox(q, 'm-1', { unreadOnly: false, limit: 10 });
      assert.deepEqual(box.map((m) => [m.id, m.text, m.delivered_at]), [[b, 'two', null], [a, 'one', T]]);
      await markMessagesRead(q, [a], T + 5);
      await markMessagesRead(q, [a, b], T + 6);
      assert.deepEqual((await inbox(q, 'm-1', { unreadOnly: false, limit: 10 })).map((m) => m.read_at), [T + 6, T + 5]);
      assert.deepEqual(await inbox(q, 'm-1', { unreadOnly: true, limit: 10 }), []);
      assert.deepEqual((await inbox(q, 'm-2', { unreadOnly: true, limit: 1 })).map((m) => m.text), ['elsewhere']);
    });

    test('events: appended with their data as JSON; the latest of one job or of all, newest first, capped', async () => {
      const q = layer.s.db;
      await appendEvent(q, 'e-1', T, 'spawned');
      await appendEvent(q, 'e-2', T + 1, 'message', { from: 'lead', delivered: true });
      await appendEvent(q, 'e-1', T + 2, 'started', { attempt: 1 });
      const mine = await latestEvents(q, { jobId: 'e-1', limit: 10 });
      assert.deepEqual(mine.map((e) => [e.kind, e.data_json]), [['started', '{"attempt":1}'], ['spawned', null]]);
      const all = await latestEvents(q, { limit: 2 });
      assert.deepEqual(all.map((e) => [e.job_id, e.kind, e.at]), [['e-1', 'started', T + 2], ['e-2', 'message', T + 1]]);
    });

    test('template sums: numbers on both databases (PostgreSQL sums BIGINT into NUMERIC), per template and model, the default model last', async () => {
      const q = layer.s.db;
      await job(q, 't-1', { template: 'fix', model: 'opus', status: 'succeeded', cost: 1, turns: 10, started: T, ended: T + 60_000 });
      await job(q, 't-2', { template: 'fix', model: 'opus', status: 'failed', cost: 0.5, turns: 4, started: T, ended: T + 30_000 });
      await job(q, 't-3', { template: 'fix', model: null, status: 'cancelled', cost: 0, turns: 0 });
      await job(q, 't-4', { template: 'fix', model: 'opus', status: 'running', cost: 9, turns: 99, started: T });
      await job(q, 't-5', { template: 'docs', model: 'haiku', status: 'queued' });
      assert.deepEqual(await templateSums(q), [
        { template: 'docs', model: 'haiku', runs: 1, ended: 0, succeeded: 0, cost: 0, turns: 0, dur_ms: 0, timed: 0 },
        { template: 'fix', model: 'opus', runs: 3, ended: 2, succeeded: 1, cost: 1.5, turns: 14, dur_ms: 90_000, timed: 2 },
        { template: 'fix', model: null, runs: 1, ended: 1, succeeded: 0, cost: 0, turns: 0, dur_ms: 0, timed: 0 },
      ]);
    });
  });
}

/** Resolves when another session of the database waits for a lock (deadline 10 s). */
async function lockWaiter(s: SqlDb): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const r = await sql<{ c: number }>`SELECT count(*)::int AS c FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(s.db);
    if (r.rows[0]!.c >= 1) return;
    if (Date.now() > until) throw new Error('no session waited for a lock within 10 s');
    await new Promise((res) => setImmediate(res));
  }
}
