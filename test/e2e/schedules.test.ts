// End-to-end (a real hub, real claude children on the fake model): schedules and repeats
// (docs/schedules.md). The hub's clock is injected and moved forward by the test (no real
// waits): a job with `at` does not start before its time, even when its dependency is done
// first, and starts after it; a schedule fires after a hub restart on the same state directory
// with the clock moved past its time; a repeating job (every_s, max_runs 2) runs twice and
// stops, its next run shown meanwhile; a failed run stops its series; cancel_schedule cancels
// a waiting run; bad input is refused before anything is created.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { startFakeAnthropic, type FakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import { readFloor } from '../../src/floor/source.js';
import { schedulesLine } from '../../src/runs/scheduleText.js';
import type { Clock } from '../../src/clock.js';
import { overseer } from '../helpers/cli.js';
import { sql, type RawBuilder } from 'kysely';
import { attempts, events, job as jobRow, row } from '../helpers/state.js';

const scripts: Record<string, Script> = {
  quick: [finishStep('ran on time'), { text: 'done' }],
  fails: [{ tools: [{ name: 'mcp__overseer__finish', input: { result: 'could not do it', outcome: 'failure' } }] }, { text: 'done' }],
};

/** The system clock plus an offset the test moves forward. */
function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => { offset += ms; } };
}

const MIN = 60_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const count = async (h: TestHub, q: RawBuilder<{ c: number | string }>): Promise<number> => Number((await row(h.hub, q))!.c);

let fake: FakeAnthropic;
const cleanups: (() => Promise<void>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); await fake?.close(); });

async function hub(clock: Clock, dir?: string): Promise<TestHub> {
  fake ??= await startFakeAnthropic({ scripts });
  const h = await startTestHub({ fake, clock, ...(dir ? { dir } : {}) });
  cleanups.push(() => h.stop());
  return h;
}

describe('schedules', () => {
  test('a job with at waits for its time, also when its dependency is done first, and runs once the clock passes it', { timeout: 120_000 }, async () => {
    const clock = movableClock();
    const h = await hub(clock);
    const dep = await h.call('spawn_agent', { prompt: '@script:quick first', title: 'dependency' });
    const runAt = clock.now() + 30 * MIN;
    const job = await h.call('spawn_agent', { prompt: '@script:quick later', title: 'later', at: iso(runAt), depends_on: [dep.job_id] });
    assert.equal(job.status, 'waiting');
    assert.equal(job.run_at, iso(runAt));
    assert.match(job.schedule_id, /^s-/);
    assert.equal(await h.hub.idle(), false, 'a hub with scheduled work is not idle');

    await waitForJob(h.hub, dep.job_id, (j) => j.status === 'succeeded', 60_000);
    // The dependency is done: the job still waits for its time, whatever the timer does.
    await h.hub.schedules.tick();
    const got = await h.call('get_agent', { job_id: job.job_id });
    assert.equal(got.status, 'waiting');
    assert.equal(got.run_at, iso(runAt));
    assert.equal(got.schedule.next_run_at, iso(runAt));
    assert.equal(got.schedule.repeat, 'once');
    assert.equal(h.hub.schedules.wakeAt, runAt, 'the timer is armed for its time');
    const listed = (await h.call('list_agents', { status: 'waiting' })).agents;
    assert.deepEqual(listed.map((a: any) => [a.job_id, a.run_at]), [[job.job_id, iso(runAt)]]);
    const floor = await readFloor(h.hub.ctx.sql.db, { now: clock.now(), hub: null, cap: 8, source: 'hub' });
    const row = floor.queued.find((f) => f.job_id === job.job_id)!;
    assert.equal(row.why_waiting, `scheduled: runs at ${iso(runAt)}`);
    assert.equal(row.run_at, runAt);
    assert.equal((await attempts(h.hub, job.job_id)).length, 0, 'never started');

    // One minute short of its time: still waiting. Past it: it runs.
    clock.advance(29 * MIN);
    await h.hub.schedules.tick();
    assert.equal((await jobRow(h.hub, job.job_id)).status, 'waiting');
    clock.advance(1 * MIN + 1000);
    await h.hub.schedules.tick();
    const done = await waitForJob(h.hub, job.job_id, (j) => j.status === 'succeeded', 60_000);
    assert.ok(done.started_at! >= runAt, `started ${iso(done.started_at!)}, due ${iso(runAt)}`);
    assert.equal(done.result, 'ran on time');
    const sched = (await h.call('list_schedules', { schedule_id: job.schedule_id })).schedules[0];
    assert.equal(sched.status, 'done');
    assert.match(sched.stop_reason, /runs once/);
    assert.deepEqual(sched.occurrences.map((o: any) => [o.n, o.job_id, o.status]), [[1, job.job_id, 'succeeded']]);
  });

  test('the hub\'s own timer starts a job at its time (nobody calls tick)', { timeout: 60_000 }, async () => {
    const clock = movableClock();
    const h = await hub(clock);
    const runAt = clock.now() + 1500;
    const job = await h.call('spawn_agent', { prompt: '@script:quick by the timer', at: iso(runAt) });
    await h.hub.schedules.idle();
    assert.equal(h.hub.schedules.wakeAt, runAt);
    const done = await waitForJob(h.hub, job.job_id, (j) => j.status === 'succeeded', 30_000);
    assert.ok(done.started_at! >= runAt, `started ${iso(done.started_at!)}, due ${iso(runAt)}`);
    await h.hub.schedules.idle();
    assert.equal(h.hub.schedules.wakeAt, undefined, 'nothing else to wake for');
  });

  test('a schedule fires after a hub restart: the new hub, its clock past the time, runs it once', { timeout: 120_000 }, async () => {
    const clock = movableClock();
    const h1 = await hub(clock);
    const runAt = clock.now() + 60 * MIN;
    const job = await h1.call('spawn_agent', { prompt: '@script:quick after restart', at: iso(runAt) });
    await h1.stop({ keep: true });

    // The clock moves past the time while no hub runs; a new hub on the same state directory.
    clock.advance(2 * 60 * MIN);
    const h2 = await hub(clock, h1.dir);
    const done = await waitForJob(h2.hub, job.job_id, (j) => j.status === 'succeeded', 60_000);
    assert.ok(done.started_at! >= runAt);
    assert.equal((await attempts(h2.hub, job.job_id)).length, 1, 'it ran once');
    const due = (await events(h2.hub, job.job_id)).filter((e) => e.kind === 'due').map((e) => JSON.parse(e.data_json!) as { run_at: string; late_ms: number });
    assert.equal(due.length, 1);
    assert.equal(due[0]!.run_at, iso(runAt));
    assert.ok(due[0]!.late_ms >= 60 * MIN, `late by ${due[0]!.late_ms} ms`);
    assert.equal((await h2.call('list_schedules', {})).schedules[0].status, 'done');
  });

  test('a run that ended while no hub listened: the next hub queues the next run once, at the grid time after now (missed times not made up)', { timeout: 120_000 }, async () => {
    const clock = movableClock();
    const h1 = await hub(clock);
    const first = await h1.call('spawn_agent', { prompt: '@script:quick', every_s: 60, max_runs: 5 });
    // As if the hub died between the run's end and the next run's creation: nobody listens.
    h1.hub.schedules.close();
    await waitForJob(h1.hub, first.job_id, (j) => j.status === 'succeeded', 60_000);
    assert.equal(await count(h1, sql`SELECT COUNT(*) AS c FROM jobs WHERE schedule_id = ${first.schedule_id}`), 1);
    await h1.stop({ keep: true });

    clock.advance(10 * MIN + 5000); // ten grid times missed
    const h2 = await hub(clock, h1.dir);
    const s = (await h2.call('list_schedules', { schedule_id: first.schedule_id })).schedules[0];
    assert.equal(s.status, 'active');
    assert.equal(s.runs, 2, 'one next run, not ten');
    const firstAt = Date.parse(first.run_at);
    const expected = firstAt + Math.ceil((clock.now() - firstAt) / MIN) * MIN;
    assert.equal(s.next_run_at, iso(expected));
    assert.ok(Date.parse(s.next_run_at) > clock.now() && Date.parse(s.next_run_at) <= clock.now() + MIN);
    assert.equal((await jobRow(h2.hub, s.current_job_id)).status, 'waiting');
    await h2.call('cancel_schedule', { schedule_id: first.schedule_id });
  });

  test('a repeating job (every_s 60, max_runs 2) runs twice and stops, its next run shown meanwhile', { timeout: 120_000 }, async () => {
    const clock = movableClock();
    const h = await hub(clock);
    const first = await h.call('spawn_agent', { prompt: '@script:quick tick', title: 'repeat', every_s: 60, max_runs: 2 });
    const firstAt = Date.parse(first.run_at);
    const r1 = await waitForJob(h.hub, first.job_id, (j) => j.status === 'succeeded', 60_000);
    assert.ok(r1.started_at! >= firstAt);

    // Meanwhile: the next run waits for its time, shown in list_schedules, get_agent, the floor and status.
    const s = (await h.call('list_schedules', {})).schedules;
    assert.equal(s.length, 1);
    assert.equal(s[0].schedule_id, first.schedule_id);
    assert.equal(s[0].status, 'active');
    assert.equal(s[0].runs, 2);
    assert.equal(s[0].next_run_at, iso(firstAt + MIN));
    const secondId = s[0].current_job_id as string;
    assert.notEqual(secondId, first.job_id, 'each run is a job of its own');
    const second = await h.call('get_agent', { job_id: secondId });
    assert.equal(second.status, 'waiting');
    assert.equal(second.run_at, iso(firstAt + MIN));
    assert.deepEqual([second.schedule.occurrence, second.schedule.max_runs], [2, 2]);
    const firstNow = await h.call('get_agent', { job_id: first.job_id });
    assert.equal(firstNow.schedule.next_job_id, secondId);
    assert.equal(firstNow.schedule.next_run_at, iso(firstAt + MIN));
    assert.match((await schedulesLine(h.hub.ctx.sql.db))!, new RegExp(`^schedules: ${first.schedule_id} "repeat" every 60 s, runs 2/2, next run ${iso(firstAt + MIN).replace(/[.]/g, '\\.')} \\(${secondId}\\)`));

    clock.advance(MIN);
    await h.hub.schedules.tick();
    await waitForJob(h.hub, secondId, (j) => j.status === 'succeeded', 60_000);
    const end = (await h.call('list_schedules', { schedule_id: first.schedule_id })).schedules[0];
    assert.equal(end.status, 'done');
    assert.equal(end.stop_reason, 'max_runs reached (2 runs)');
    assert.equal(end.next_run_at, null);
    assert.deepEqual(end.occurrences.map((o: any) => [o.n, o.status]), [[1, 'succeeded'], [2, 'succeeded']]);
    assert.equal(await count(h, sql`SELECT COUNT(*) AS c FROM jobs WHERE schedule_id = ${first.schedule_id}`), 2, 'no third run');
    assert.equal((await schedulesLine(h.hub.ctx.sql.db)), undefined, 'no active schedule left to show');
  });

  test('a failed run stops its series and says so; cancel_schedule cancels a run waiting for its time', { timeout: 120_000 }, async () => {
    const clock = movableClock();
    const h = await hub(clock);
    const bad = await h.call('spawn_agent', { prompt: '@script:fails', every_s: 3600 });
    await waitForJob(h.hub, bad.job_id, (j) => j.status === 'failed', 60_000);
    const stopped = (await h.call('list_schedules', { schedule_id: bad.schedule_id })).schedules[0];
    assert.equal(stopped.status, 'stopped');
    assert.match(stopped.stop_reason, new RegExp(`^run 1 \\(${bad.job_id}\\) failed \\(reported_failure\\).*the series stops`));
    assert.equal(await count(h, sql`SELECT COUNT(*) AS c FROM jobs WHERE schedule_id = ${bad.schedule_id}`), 1, 'no next run after a failure');

    const later = await h.call('spawn_agent', { prompt: '@script:quick', cron: '*/5 * * * *', at: iso(clock.now() + 10 * MIN) });
    assert.equal(later.status, 'waiting');
    const c = await h.call('cancel_schedule', { schedule_id: later.schedule_id, reason: 'not needed' });
    assert.equal(c.status, 'cancelled');
    assert.equal(c.stop_reason, 'cancelled: not needed');
    assert.match(c.note, /was cancelled/);
    assert.equal((await jobRow(h.hub, later.job_id)).status, 'cancelled');
    await h.hub.schedules.idle();
    assert.equal(h.hub.schedules.wakeAt, undefined, 'nothing left to wake for');
    const again = await h.call('cancel_schedule', { schedule_id: later.schedule_id });
    assert.match(again.note, /had already ended \(cancelled\)/);
    const unknown = await h.callRaw('cancel_schedule', { schedule_id: 's-nope' });
    assert.match(unknown.text, /No schedule "s-nope"\. Recent schedules: /);
  });

  test('the CLI: overseer spawn --at --every --max-runs, overseer schedules, the next run in overseer status, overseer schedules cancel', { timeout: 180_000 }, async () => {
    // The built CLI (dist/: `npm test` builds it first, as for the other tests that run it).
    const h = await hub(movableClock());
    const cli = async (args: string[]) => {
      const r = await overseer(h.project, args, { OVERSEER_HOME: h.home });
      return { code: r.code, out: r.stdout, err: r.stderr };
    };
    const runAt = iso(Date.now() + 60 * MIN);
    const spawned = await cli(['spawn', '--prompt', '@script:quick', '--title', 'hourly', '--at', runAt, '--every', '3600', '--max-runs', '3', '--json']);
    assert.equal(spawned.code, 0, spawned.err);
    const r = JSON.parse(spawned.out);
    assert.deepEqual([r.status, r.run_at], ['waiting', runAt]);
    const list = await cli(['schedules']);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /^SCHEDULE +STATUS +REPEAT +RUNS +UNTIL +TITLE +NEXT\n/);
    assert.match(list.out, new RegExp(`${r.schedule_id} +active +every 3600 s +1/3 +- +hourly +next run ${runAt.replace(/[.]/g, '\\.')} \\(${r.job_id}\\)`));
    const status = await cli(['status']);
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, new RegExp(`${r.job_id} +waiting .*runs at ${runAt.replace(/[.]/g, '\\.')}`));
    assert.match(status.out, new RegExp(`^schedules: ${r.schedule_id} "hourly" every 3600 s, runs 1/3, next run `, 'm'));
    const bad = await cli(['spawn', '--prompt', 'x', '--cron', '0 0 30 2 *']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /cron "0 0 30 2 \*" never fires/);
    const cancelled = await cli(['schedules', 'cancel', r.schedule_id, '--reason', 'done with it']);
    assert.equal(cancelled.code, 0, cancelled.err);
    assert.equal(cancelled.out, `${r.schedule_id} cancelled: its next run ${r.job_id} was cancelled\n`);
    const after = JSON.parse((await cli(['schedules', '--status', 'cancelled', '--json'])).out);
    assert.deepEqual(after.map((v: any) => [v.schedule_id, v.stop_reason]), [[r.schedule_id, 'cancelled: done with it']]);
  });

  test('bad input is refused before anything is created; agents cannot schedule', { timeout: 60_000 }, async () => {
    const clock = movableClock();
    const h = await hub(clock);
    const rows = async (): Promise<number[]> => [await count(h, sql`SELECT COUNT(*) AS c FROM jobs`), await count(h, sql`SELECT COUNT(*) AS c FROM schedules`), await count(h, sql`SELECT COUNT(*) AS c FROM events`)];
    const before = await rows();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ at: iso(clock.now() - 1000) }, /^invalid_input: at .* is in the past \(it is .* now\): pass a future time, or omit at to start now/],
      [{ cron: '0 0 30 2 *' }, /cron "0 0 30 2 \*" never fires/],
      [{ cron: 'at noon' }, /cron "at noon" is not a 5-field cron expression/],
      [{ every_s: 60, cron: '* * * * *' }, /every_s and cron were both given/],
      [{ at: iso(clock.now() + MIN), max_runs: 3 }, /max_runs caps how often a repeating schedule runs/],
      [{ at: iso(clock.now() + MIN), until: iso(clock.now() + 2 * MIN) }, /until ends a repeating schedule/],
      [{ every_s: 60, at: iso(clock.now() + 10 * MIN), until: iso(clock.now() + 5 * MIN) }, /until .* is not after the first run/],
      [{ every_s: 30 }, /every_s must be at least 60/],
      [{ every_s: 60, worktree: true, branch: 'feature/x' }, /branch cannot be given for a repeating schedule/],
    ];
    for (const [extra, re] of cases) {
      const r = await h.callRaw('spawn_agent', { prompt: '@script:quick', ...extra });
      assert.equal(r.isError, true, JSON.stringify(extra));
      assert.match(r.text, re, JSON.stringify(extra));
    }
    const agent = await h.connect({ role: 'agent', jobId: 'j-nobody' });
    const forbidden = await agent.callTool({ name: 'spawn_agent', arguments: { prompt: 'x', at: iso(clock.now() + MIN) } });
    assert.equal(forbidden.isError, true);
    assert.match((forbidden.content as { text: string }[])[0]!.text, /at, every_s, cron, max_runs and until are for the lead/);
    const tools = (await agent.listTools()).tools.map((t) => t.name);
    assert.ok(!tools.includes('list_schedules') && !tools.includes('cancel_schedule'), 'schedule tools are the lead\'s');
    assert.deepEqual(await rows(), before, 'no job, schedule or event was written');
  });
});
