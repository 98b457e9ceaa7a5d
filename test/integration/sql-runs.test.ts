// Dispatch runs, schedules and debates over the layer (src/store/sql/runs.ts, schedules.ts,
// debates.ts), on SQLite and PostgreSQL: their rows, and each decision raced by two "hubs" on two
// connections (worker threads, test/helpers/runsRacer.ts) — a due job is queued once, a series
// moves to its next occurrence once, a run's task gets one job, a debate's turn gets one job and
// its answer is recorded once.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { getJob, insertJob } from '../../src/store/sql/jobs.js';
import {
  activeSchedules, dueWaiting, endSchedule, getSchedule, insertSchedule, listSchedules, nextDue, occurrences, recentScheduleIds, startSeries,
} from '../../src/store/sql/schedules.js';
import { getRun, insertRun, listRuns, runIds, runOfJob, runTasks, runningRuns, setTask, updateRun } from '../../src/store/sql/runs.js';
import { endDebate, getDebate, insertDebate, listDebates, recentDebateIds, debateIdsWithPrefix, recordTurn, settleTurn, turnByJob, turnsOf } from '../../src/store/sql/debates.js';
import type { Q } from '../../src/store/sql/tx.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';
import { raceWorkers } from '../helpers/workerRace.js';
import type { RaceOp } from '../helpers/runsRacer.js';

const schedule = (id: string) => ({ id, title: `t ${id}`, created_by: 'lead', kind: 'every' as const, every_s: 60, cron: null, first_at: 1, until_at: null, max_runs: null, spec_json: '{}' });
const run = (id: string, at: number) => ({ id, title: `run ${id}`, file: null, content: 'x', format: 'toml', rules_json: '{}', status: 'running' as const, deadline_at: null, created_at: at, hub_id: 'h-test' });
const debate = (id: string, at: number) => ({
  id, title: `debate ${id}`, task: 'which?', status: 'running' as const, cwd: '/repo', repo_root: null, worktree_path: null, branch: null, base_commit: null,
  sides_json: '[]', max_rounds: 3, loops: 1, post_action: null, post_action_side: 0, verify: 0, error: null, project: null, created_at: at, ended_at: null, hub_id: 'h-test',
});

/** Two racers, one connection each, released together on `keys`; what each won. */
async function race(op: RaceOp, keys: string[], home: string, url: string | undefined): Promise<[string[], string[]]> {
  const won = await raceWorkers(join(import.meta.dirname, '..', 'helpers', 'runsRacer.ts'), ['h1', 'h2'], { home, url, keys, op });
  assert.ok(won.has('h1') && won.has('h2'), 'both racers finished');
  return [won.get('h1')!, won.get('h2')!];
}

/** Every key won exactly once, between the two. */
function once(t: { diagnostic: (s: string) => void }, [a, b]: [string[], string[]], keys: string[]): void {
  t.diagnostic(`h1 won ${a.length}, h2 won ${b.length}`);
  assert.deepEqual([...a, ...b].sort(), [...keys].sort(), 'each decision was won exactly once');
}

const jobsLike = async (q: Q, pattern: string): Promise<string[]> => (await q.selectFrom('jobs').select('id').where('id', 'like', pattern).orderBy('id').execute()).map((r) => r.id);
const keys = Array.from({ length: 30 }, (_, i) => String(i + 1).padStart(2, '0'));

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`runs, schedules and debates on ${dialect}`, () => {
    const open = (t: { after: (fn: () => Promise<void> | void) => void }) => openDialect(dialect, t);

    test('rows: runs with tasks, schedules with their occurrence, debates with turns', async (t) => {
      const q = (await open(t)).s.db;
      await insertRun(q, run('r-a1', 10), [{ id: 'build' }, { id: 'test' }]);
      await insertRun(q, run('r-b2', 10), []);
      await q.insertInto('runs').values({ ...run('r-s3', 5), kind: 'script', note: null, updated_at: 5, ended_at: null }).execute();
      assert.deepEqual((await listRuns(q, 10)).map((r) => [r.id, r.kind]), [['r-b2', 'dispatch'], ['r-a1', 'dispatch'], ['r-s3', 'script']], 'newest first, ties by insertion on SQLite');
      assert.deepEqual((await runningRuns(q)).map((r) => r.id).sort(), ['r-a1', 'r-b2'], 'dispatch runs only');
      assert.deepEqual(await runIds(q, 'r-a'), ['r-a1']);
      assert.deepEqual(await runIds(q, 'r_'), [], 'LIKE wildcards are escaped');
      assert.deepEqual((await runTasks(q, 'r-a1')).map((x) => [x.task_id, x.n, x.state, JSON.parse(x.spec_json).id]), [['build', 0, 'pending', 'build'], ['test', 1, 'pending', 'test']]);
      await insertJob(q, newJob('j-1'), 11);
      await setTask(q, 'r-a1', 'build', { state: 'started', job_id: 'j-1', job_ids_json: '["j-1"]' });
      assert.equal(await runOfJob(q, 'j-1'), 'r-a1');
      await updateRun(q, 'r-a1', { status: 'failed', note: 'why', ended_at: 20 }, 20);
      assert.equal(await runOfJob(q, 'j-1'), undefined, 'only a running run');
      assert.deepEqual(await getRun(q, 'r-a1').then((r) => [r!.status, r!.note, r!.ended_at, r!.updated_at]), ['failed', 'why', 20, 20]);

      await insertJob(q, newJob('j-s1', { status: 'waiting' }), 30);
      await q.updateTable('jobs').set({ not_before: 100 }).where('id', '=', 'j-s1').execute();
      await insertSchedule(q, schedule('s-1'), 30);
      await insertSchedule(q, schedule('s-2'), 31);
      await startSeries(q, 's-1', 'j-s1', 30);
      const s1 = (await getSchedule(q, 's-1'))!;
      assert.deepEqual([s1.seq, s1.runs, s1.current_job, s1.current_status, s1.current_not_before, s1.status], [1, 1, 'j-s1', 'waiting', 100, 'active']);
      assert.deepEqual([(await getJob(q, 'j-s1'))!.schedule_id, (await getJob(q, 'j-s1'))!.occurrence], ['s-1', 1]);
      assert.deepEqual((await dueWaiting(q, 99, 'h-me')).map((j) => j.id), []);
      assert.deepEqual((await dueWaiting(q, 100, 'h-me')).map((j) => j.id), ['j-s1'], 'an unowned job: any hub queues it');
      assert.equal(await nextDue(q, 50, 'h-me'), 100);
      assert.equal(await nextDue(q, 100, 'h-me'), undefined);
      // Another hub's due job is that hub's to queue (its runner starts it); this hub's own are its.
      await q.updateTable('jobs').set({ hub_id: 'h-other' }).where('id', '=', 'j-s1').execute();
      assert.deepEqual((await dueWaiting(q, 100, 'h-me')).map((j) => j.id), []);
      assert.equal(await nextDue(q, 50, 'h-me'), undefined);
      assert.deepEqual((await dueWaiting(q, 100, 'h-other')).map((j) => j.id), ['j-s1']);
      assert.equal(await nextDue(q, 50, 'h-other'), 100);
      assert.deepEqual((await occurrences(q, 's-1')).map((o) => [o.id, o.occurrence]), [['j-s1', 1]]);
      assert.equal(await endSchedule(q, s1, 'cancelled', 'not needed', 40), true);
      assert.equal(await endSchedule(q, s1, 'done', 'again', 41), false, 'ended once');
      assert.deepEqual((await listSchedules(q, { limit: 10 })).map((s) => s.id), ['s-2', 's-1'], 'active first');
      assert.deepEqual((await listSchedules(q, { status: 'cancelled', limit: 10 })).map((s) => [s.id, s.stop_reason]), [['s-1', 'not needed']]);
      assert.deepEqual((await activeSchedules(q)).map((s) => s.id), ['s-2']);
      assert.deepEqual(await recentScheduleIds(q), ['s-2', 's-1']);
      const ended = await q.selectFrom('events').select('kind').where('job_id', '=', 'j-s1').execute();
      assert.deepEqual(ended.map((e) => e.kind), ['schedule_ended']);

      await insertDebate(q, debate('d-ab12', 50));
      await insertDebate(q, debate('d-ab34', 50));
      assert.deepEqual((await listDebates(q, undefined, 10)).map((d) => d.id), ['d-ab34', 'd-ab12']);
      assert.deepEqual(await recentDebateIds(q, 1), ['d-ab34']);
      assert.deepEqual((await debateIdsWithPrefix(q, 'd-ab1')), ['d-ab12']);
      await insertJob(q, newJob('j-t1'), 51);
      await insertJob(q, newJob('j-t2'), 52);
      assert.equal(await recordTurn(q, { debate_id: 'd-ab12', loop: 1, kind: 'answer', round: 1, side: 0 }, 'j-t1', 51), true);
      assert.equal(await recordTurn(q, { debate_id: 'd-ab12', loop: 1, kind: 'answer', round: 1, side: 0 }, 'j-t2', 52), false, 'the turn has its job');
      assert.equal(await recordTurn(q, { debate_id: 'd-ab12', loop: 1, kind: 'answer', round: 1, side: 0 }, 'j-t2', 52, 'j-other'), false, 'replaces only the job it names');
      assert.equal(await recordTurn(q, { debate_id: 'd-ab12', loop: 1, kind: 'answer', round: 1, side: 0 }, 'j-t2', 52, 'j-t1'), true, 'an interrupted turn gets a new job');
      assert.equal(await settleTurn(q, 'j-t2', { status: 'done', position: 'yes', open_points: '["x"]' }, 60), true);
      assert.equal(await settleTurn(q, 'j-t2', { status: 'failed', error: 'late' }, 61), false, 'recorded once');
      const turn = (await turnByJob(q, 'j-t2'))!;
      assert.deepEqual([turn.status, turn.position, turn.open_points, turn.error, turn.ended_at, turn.side, turn.round], ['done', 'yes', '["x"]', null, 60, 0, 1]);
      assert.equal((await turnsOf(q, 'd-ab12')).length, 1);
      assert.equal(await endDebate(q, 'd-ab12', { status: 'consensus' }, 70), true);
      assert.equal(await endDebate(q, 'd-ab12', { status: 'failed', error: 'late' }, 71), false, 'ended once');
      assert.deepEqual(await getDebate(q, 'd-ab12').then((d) => [d!.status, d!.error, d!.ended_at]), ['consensus', null, 70]);
    });

    test('two hubs tick the same due jobs: each is queued once, with one due event', { timeout: 120_000 }, async (t) => {
      const { s, home, url } = await open(t);
      const q = s.db;
      for (const k of keys) {
        await insertJob(q, newJob(k, { status: 'waiting' }), 1);
        await q.updateTable('jobs').set({ not_before: 1 }).where('id', '=', k).execute();
      }
      once(t, await race('due', keys, home, url), keys);
      assert.equal((await q.selectFrom('events').select('id').where('kind', '=', 'due').execute()).length, keys.length, 'one due event per job');
      assert.equal((await q.selectFrom('jobs').select('id').where('status', '=', 'queued').execute()).length, keys.length);
    });

    test('two hubs see the same occurrence settle: the series gets one next occurrence', { timeout: 120_000 }, async (t) => {
      const { s, home, url } = await open(t);
      const q = s.db;
      for (const k of keys) {
        await insertJob(q, newJob(`j-prev-${k}`, { status: 'succeeded' }), 1);
        await insertSchedule(q, schedule(k), 1);
        await startSeries(q, k, `j-prev-${k}`, 1);
      }
      once(t, await race('next', keys, home, url), keys);
      for (const k of keys) {
        const sc = (await getSchedule(q, k))!;
        assert.equal(sc.runs, 2);
        assert.deepEqual((await occurrences(q, k)).map((o) => o.occurrence), [1, 2], `schedule ${k}: one second occurrence`);
        assert.match(sc.current_job!, new RegExp(`^j-h[12]-${k}$`));
      }
      assert.equal((await jobsLike(q, 'j-h%')).length, keys.length, 'the losers\' jobs were rolled back');
    });

    test('two passes claim the same run\'s tasks: each task gets one job', { timeout: 120_000 }, async (t) => {
      const { s, home, url } = await open(t);
      const q = s.db;
      await insertRun(q, run('r-1', 1), keys.map((id) => ({ id })));
      once(t, await race('claim', keys, home, url), keys);
      for (const task of await runTasks(q, 'r-1')) {
        assert.equal(task.state, 'started');
        assert.deepEqual(JSON.parse(task.job_ids_json), [task.job_id], `task ${task.task_id}: one job`);
      }
      assert.equal((await jobsLike(q, 'j-h%')).length, keys.length, 'the losers\' jobs were rolled back');
    });

    test('two advances of a debate spawn the same turns: each turn gets one job; its answer is recorded once', { timeout: 120_000 }, async (t) => {
      const { s, home, url } = await open(t);
      const q = s.db;
      await insertDebate(q, debate('d-1', 1));
      once(t, await race('turn', keys, home, url), keys);
      const turns = await turnsOf(q, 'd-1');
      assert.equal(turns.length, keys.length);
      assert.deepEqual((await jobsLike(q, 'j-h%')).sort(), turns.map((x) => x.job_id).sort(), 'every job made is its turn\'s; the losers\' were rolled back');
      const jobs = turns.map((x) => x.job_id);
      const [a, b] = await race('settle', jobs, home, url);
      once(t, [a, b], jobs);
      for (const x of await turnsOf(q, 'd-1')) assert.equal(x.position, `by ${a.includes(x.job_id) ? 'h1' : 'h2'}`, 'the winner\'s answer stands');
    });
  });
}
