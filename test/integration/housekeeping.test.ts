// `overseer backup` and `overseer gc` as a person types them, against a real hub that is busy (a
// job running, one waiting on it and on an old one), on the hub's database (SQLite, or PostgreSQL
// under test:pg): the dry run changes nothing; --apply forgets only what ended before the age and
// nothing waits on or still has to ship; the job rows stay; the running and waiting jobs finish
// afterwards as if nothing happened; the backup is a consistent copy taken while the hub writes.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { startTestHub, testDatabaseUrl, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { buildCli } from '../helpers/cli.js';
import { gate } from '../helpers/gate.js';
import { count, job, attempts, rows } from '../helpers/state.js';
import { waitForJob } from '../helpers/wait.js';

let h: TestHub;
const g = gate();
const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';
const DAY = 24 * 60 * 60 * 1000;

before(async () => {
  buildCli();
  h = await startTestHub({
    processes: new ScriptedLauncher(async (prompt) => {
      if (task(prompt) === 'live') await g.wait;
      return { resultText: `did ${task(prompt)}` };
    }),
  });
});
after(async () => { g.open(); await h?.stop(); });

const waitForStatus = (_: TestHub, id: string, status: string) => waitForJob(h.hub, id, (j) => j.status === status);
const eventsOf = (id: string): Promise<number> => count(h.hub, sql`SELECT COUNT(*) AS n FROM events WHERE job_id = ${id}`);

describe('housekeeping: overseer gc and overseer backup on a busy hub', () => {
  test('gc forgets only old ended jobs nothing needs; the crew runs on; backup copies while the hub writes', async () => {
    const ids = { old1: '', old2: '', old3: '', live: '', waiting: '' };
    for (const name of ['old1', 'old2', 'old3'] as const) {
      ids[name] = (await h.call('spawn_agent', { prompt: `TASK:${name}` })).job_id;
      await waitForStatus(h, ids[name], 'succeeded');
    }
    ids.live = (await h.call('spawn_agent', { prompt: 'TASK:live' })).job_id;
    await waitForStatus(h, ids.live, 'running');
    // Waits for the live job and for old2: old2's result still feeds a job to come.
    ids.waiting = (await h.call('spawn_agent', { prompt: 'TASK:waiting', depends_on: [ids.live, ids.old2] })).job_id;
    const db = h.hub.ctx.sql.db;
    const longAgo = Date.now() - 40 * DAY;
    await db.updateTable('jobs').set({ ended_at: longAgo }).where('id', 'in', [ids.old1, ids.old2, ids.old3]).execute();
    // old3 has a branch that never merged: work waiting to ship.
    await db.updateTable('jobs').set({ worktree: 1, branch: 'overseer/old3' }).where('id', '=', ids.old3).execute();
    await db.insertInto('messages').values({ from_id: ids.old1, to_id: 'lead', text: 'done long ago', created_at: longAgo, delivered_at: longAgo, read_at: longAgo } as never).execute();
    const transcript = (await attempts(h.hub, ids.old1))[0]!.transcript;
    assert.ok(existsSync(transcript), 'the old job has its transcript file');
    const before = { old1: await eventsOf(ids.old1), old2: await eventsOf(ids.old2), old3: await eventsOf(ids.old3), live: await eventsOf(ids.live) };
    assert.ok(before.old1 > 0 && before.live > 0, JSON.stringify(before));

    const dry = await runOverseer(h.home, ['gc', '--older-than', '30d', '--json']);
    assert.equal(dry.code, 0, dry.stdout + dry.stderr);
    const plan = JSON.parse(dry.stdout);
    assert.equal(plan.applied, false);
    assert.equal(plan.counts.jobs, 1, 'only old1: old2 feeds a waiting job, old3 has an unmerged branch, live and waiting are live');
    assert.equal(plan.counts.events, before.old1);
    assert.equal(plan.counts.messages, 1);
    assert.ok(plan.transcript_files >= 1 && plan.transcript_bytes > 0, dry.stdout);
    assert.equal(await eventsOf(ids.old1), before.old1, 'a dry run removes nothing');
    assert.ok(existsSync(transcript));
    const text = await runOverseer(h.home, ['gc']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /1 job\(s\) ended before .* merge\.\nwould remove: \d+ log events, 1 delivered message\(s\), .*transcript file\(s\) \([\d.]+ [KM]B\)\.\nkept: every job row .*\nstate: [\d.]+ [KM]B\. Dry run: nothing was removed\. Run again with --apply to remove it\./);

    const applied = await runOverseer(h.home, ['gc', '--older-than', '30d', '--apply', '--json']);
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    const done = JSON.parse(applied.stdout);
    assert.deepEqual(done.counts, plan.counts, 'it removed what the dry run said');
    assert.equal(await eventsOf(ids.old1), 0);
    assert.ok(!existsSync(transcript), 'the transcript file is gone');
    assert.equal((await job(h.hub, ids.old1)).result, 'did old1', 'the job row stays, with its result');
    assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS n FROM messages WHERE from_id = ${ids.old1}`), 0);
    assert.deepEqual([await eventsOf(ids.old2), await eventsOf(ids.old3)], [before.old2, before.old3], 'what something still needs is untouched');
    assert.ok(await eventsOf(ids.live) >= before.live);

    // Backup while the live job runs and the hub writes (SQLite only: PostgreSQL is pg_dump's job).
    const copy = join(h.dir, 'backup.db');
    const b = await runOverseer(h.home, ['backup', copy, '--json']);
    const url = testDatabaseUrl(h.home);
    if (url) {
      assert.equal(b.code, 2, b.stdout + b.stderr);
      assert.match(b.stderr, /the state is in PostgreSQL \(postgres:\/\/[^)]*\): back it up with PostgreSQL's own tool, e\.g\. pg_dump --format=custom/);
      assert.ok(!b.stderr.includes(decodeURIComponent(new URL(url).password)), 'no password shown');
      assert.match(b.stderr, /:\*\*\*@/);
    } else {
      assert.equal(b.code, 0, b.stdout + b.stderr);
      const out = JSON.parse(b.stdout);
      const c = new Database(copy, { readonly: true });
      try {
        assert.equal((c.prepare('SELECT COUNT(*) AS n FROM jobs').get() as { n: number }).n, out.jobs);
        assert.equal(out.jobs, (await rows(h.hub, sql<{ id: string }>`SELECT id FROM jobs`)).length);
      } finally {
        c.close();
      }
      const again = await runOverseer(h.home, ['backup', copy]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /backup\.db exists: name a new file, or pass --force to replace it/);
    }

    // The crew carries on: the live job ends, the waiting one runs on old2's result.
    g.open();
    await waitForStatus(h, ids.live, 'succeeded');
    await waitForStatus(h, ids.waiting, 'succeeded');
  });

  test('bad input: an age that is not one, or too recent, is refused and nothing changes', async () => {
    const n = await count(h.hub, sql`SELECT COUNT(*) AS n FROM events`);
    const bad = await runOverseer(h.home, ['gc', '--older-than', 'soon', '--apply']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--older-than "soon" is not an age: give how long ago a job must have ended \("30d", "12h", "2w"\) or an ISO time/);
    const recent = await runOverseer(h.home, ['gc', '--older-than', '5m', '--apply']);
    assert.equal(recent.code, 2);
    assert.match(recent.stderr, /less than an hour ago is too recent for gc/);
    assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS n FROM events`), n, 'nothing removed');
  });
});
