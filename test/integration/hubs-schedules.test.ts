// Schedules across hubs (docs/decisions.md "Runs, workflows and debates across hubs"): two hubs
// (startTestHub) on one PostgreSQL database, one clock the test moves. Each hub hears each
// occurrence end, so both try to make the next occurrence; a due occurrence nobody owns (a dead
// hub's, released: claims.ts releaseOwned) is queued by the ticks of both. The writes are
// compare-and-set (advanceSchedule, queueDue), so each occurrence is queued once, runs once and is
// followed by one next occurrence.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { freshDatabase } from '../helpers/postgres.js';
import { makeTempDir } from '../helpers/claude.js';
import { eventually } from '../helpers/wait.js';
import type { Clock } from '../../src/clock.js';

const MIN = 60_000;

describe('schedules on two hubs (PostgreSQL)', { timeout: 180_000 }, () => {
  test('both hubs tick at the due time of an unowned occurrence and hear each end: each of three occurrences is queued once, runs once and has one successor', async (t) => {
    const pg = await freshDatabase();
    t.after(() => pg.drop());
    const dir = await makeTempDir('ovs-sched-hubs');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    let offset = 0;
    const clock: Clock = { now: () => Date.now() + offset };
    const hubs: TestHub[] = [];
    t.after(async () => { for (const h of hubs.reverse()) await h.stop({ keep: true }).catch(() => undefined); });
    for (const name of ['one', 'two']) {
      hubs.push(await startTestHub({ dir: join(dir, name), project: dir, clock, processes: new ScriptedLauncher(() => ({ resultText: 'ran' })), config: { databaseUrl: pg.url } }));
    }
    const [one, two] = hubs as [TestHub, TestHub];
    const db = one.hub.ctx.sql.db;
    const first = await one.call('spawn_agent', { prompt: 'a repeating task', at: new Date(clock.now() + MIN).toISOString(), every_s: 60, max_runs: 3 });
    const schedule = () => db.selectFrom('schedules').select(['status', 'runs', 'current_job']).where('id', '=', first.schedule_id).executeTakeFirstOrThrow();
    for (let n = 1; n <= 3; n++) {
      const s = await schedule();
      assert.equal(s.runs, n);
      const current = s.current_job!;
      const due = (await db.selectFrom('jobs').select('not_before').where('id', '=', current).executeTakeFirstOrThrow()).not_before!;
      // As a dead hub's waiting job is released: unowned, so either hub may queue and run it.
      await db.updateTable('jobs').set({ hub_id: null }).where('id', '=', current).execute();
      offset += due - clock.now() + 1000;
      await Promise.all([one.hub.schedules.tick(), two.hub.schedules.tick()]);
      await eventually(`occurrence ${n} succeeded`, async () => (await db.selectFrom('jobs').select('status').where('id', '=', current).executeTakeFirstOrThrow()).status === 'succeeded', 30_000);
      await eventually(`the series moved on from occurrence ${n}`, async () => { const x = await schedule(); return x.current_job !== current || x.status !== 'active'; }, 15_000);
    }
    await eventually('the series is done', async () => (await schedule()).status === 'done', 15_000);
    const jobs = await db.selectFrom('jobs').select(['id', 'occurrence', 'status', 'hub_id']).where('schedule_id', '=', first.schedule_id).orderBy('occurrence').execute();
    assert.deepEqual(jobs.map((j) => [j.occurrence, j.status]), [[1, 'succeeded'], [2, 'succeeded'], [3, 'succeeded']], 'three occurrences, one job each');
    for (const j of jobs) {
      const kinds = (await db.selectFrom('events').select('kind').where('job_id', '=', j.id).execute()).map((e) => e.kind);
      assert.equal(kinds.filter((k) => k === 'due').length, 1, `${j.id} was queued once: ${kinds.join(', ')}`);
      assert.equal(kinds.filter((k) => k === 'schedule_next').length, j.occurrence! < 3 ? 1 : 0, `${j.id} has one successor: ${kinds.join(', ')}`);
      assert.equal((await db.selectFrom('attempts').select('n').where('job_id', '=', j.id).execute()).length, 1, `${j.id} ran once`);
    }
    assert.ok(jobs.every((j) => j.hub_id === one.hub.hubId || j.hub_id === two.hub.hubId));
  });
});
