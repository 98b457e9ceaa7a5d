// Schedules and repeats (docs/schedules.md): spawn_agent { at, every_s | cron, max_runs, until }.
//
// Model: a schedule is a series of jobs. Each occurrence is an ordinary job (its own id, session,
// attempts, retries, budget reservation) tagged with schedule_id and its occurrence number, made
// from the spec stored with the schedule. A job whose time has not come is `waiting` with
// `not_before` set; the engine leaves it waiting (JobService.create, Runner.settleDependents) and
// this service queues it when its time comes: a timer armed at the earliest due time (capped at
// MAX_SLEEP_MS, re-armed whenever a job starts waiting), and `tick()` for tests that drive the
// injected clock. After an occurrence succeeds the next one is created at once (waiting until its
// time); a failed or cancelled occurrence stops the series, cancel_schedule cancels it.
//
// Everything is in the database (migration 18): on start the hub catches up with occurrences that
// settled while no hub listened, queues every job whose time passed while no hub ran (once: missed
// repeats are not made up), and re-arms the timer. Listens on the bus; the engine never calls in.
// A spawn's schedule is checked and recorded by ScheduleBook (./scheduleBook.ts), which JobService
// is built with; this engine is built on JobService and the Runner, never the other way round.
import type { HubContext } from '../services/context.js';
import type { JobService, JobSpec } from '../services/jobs.js';
import type { WaitingJobs } from '../services/runner.js';
import type { AttemptQueueService } from '../services/attemptQueue.js';
import { transact } from '../store/sql/tx.js';
import { isoTime } from '../clock.js';
import { slugify } from '../domain/job.js';
import { errorMessage, InvalidStateError, NotFoundError } from '../errors.js';
import { addEvent, depsOf, getJob } from '../store/sql/jobs.js';
import {
  activeSchedules, advanceSchedule, dueWaiting, endSchedule, getSchedule, listSchedules, nextDue, occurrences, queueDue, recentScheduleIds,
  type ScheduleWithCurrent,
} from '../store/sql/schedules.js';
import type { ScheduleStatus } from '../contract/schedules.js';
import { describeRepeat, nextOccurrence, type Repeat, type SchedulePlan } from './scheduleTiming.js';
import type { ScheduleView } from '../contract/schedules.js';

export type { ScheduleView };

/** Longest the timer sleeps before it looks again (clock changes, suspend). */
export const MAX_SLEEP_MS = 60_000;

export type { JobSpec };

/** What the engine needs of the job service: the next run of a series, and cancelling a waiting one. */
export type ScheduleJobs = Pick<JobService, 'create' | 'cancel'>;

const SETTLED = new Set(['succeeded', 'failed', 'cancelled']);
const PENDING = new Set(['waiting', 'queued']);

/** Thrown inside a next occurrence's transaction when another hub (or call) moved the series first: the job is not made. */
class SeriesMoved extends InvalidStateError {}

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : isoTime(ms));

/** The plan a stored schedule runs by. */
export function planOf(s: Pick<ScheduleWithCurrent, 'kind' | 'every_s' | 'cron' | 'first_at' | 'until_at' | 'max_runs'>): SchedulePlan {
  const repeat: Repeat = s.kind === 'every' ? { kind: 'every', everyS: s.every_s! } : s.kind === 'cron' ? { kind: 'cron', cron: s.cron! } : { kind: 'once' };
  return { repeat, firstAt: s.first_at, untilAt: s.until_at, maxRuns: s.max_runs };
}

/** A schedule as list_schedules shows it (also used by the CLI on a read-only database). */
export function scheduleView(s: ScheduleWithCurrent): ScheduleView {
  const pending = s.current_status !== null && PENDING.has(s.current_status);
  return {
    schedule_id: s.id, title: s.title, status: s.status, repeat: describeRepeat(planOf(s).repeat), every_s: s.every_s, cron: s.cron,
    first_run_at: isoTime(s.first_at), until: iso(s.until_at), max_runs: s.max_runs, runs: s.runs,
    next_run_at: s.status === 'active' && pending ? iso(s.current_not_before) : null,
    current_job_id: s.current_job, current_status: s.current_status, stop_reason: s.stop_reason,
    created_at: isoTime(s.created_at), ended_at: iso(s.ended_at),
  };
}

export class Schedules {
  private timer?: NodeJS.Timeout;
  /** When the armed timer fires (ms on the injected clock), for tests and the floor. */
  wakeAt?: number;
  private readonly off: (() => void)[] = [];
  private closed = false;
  /** The engine's work, one step at a time (a tick, an occurrence's end, a re-arm): each reads what the one before wrote. */
  private chain: Promise<void> = Promise.resolve();

  /** `hubId`: this hub; it queues the due jobs it would run (its own and unowned ones), another hub's are that hub's. `tz`: the time zone cron expressions are read in (default: the hub's local one). */
  constructor(private readonly ctx: HubContext, private readonly jobs: ScheduleJobs, private readonly runner: WaitingJobs, private readonly hubId: string, private readonly queue: AttemptQueueService, private readonly tz?: string) {}

  // ---- lifecycle ---------------------------------------------------------------------------

  /** After reconcile: listen, catch up with what settled while no hub ran, queue what is due, arm. Resolves when that is done (the hub dispatches after it). */
  start(): Promise<void> {
    this.off.push(this.ctx.bus.on('job', (ev) => {
      if (SETTLED.has(ev.status)) void this.step(() => this.onSettled(ev.jobId));
      else if (ev.status === 'waiting') void this.step(() => this.arm());
    }, { remote: true, resync: () => void this.step(() => this.arm()) }));
    // remote: an occurrence may run on any hub (the one that made it, or whichever claimed it
    // unowned), and every hub takes its end up: the next occurrence is made in one transaction
    // with `advanceSchedule`, which moves the series only from that occurrence, so of the hubs
    // that try, one makes it (the others' jobs roll back). A series has no driver to adopt.
    void this.step(async () => {
      for (const s of await activeSchedules(this.ctx.sql.db)) {
        if (s.current_job && s.current_status && SETTLED.has(s.current_status)) await this.guarded(() => this.onSettled(s.current_job!));
      }
    });
    return this.tick();
  }

  /** Stop listening and the timer; resolves when the step under way is done (before the database closes). */
  async close(): Promise<void> {
    this.closed = true;
    for (const f of this.off.splice(0)) f();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.wakeAt = undefined;
    await this.chain;
  }

  /** Resolves when the engine's steps queued so far are done (tests). */
  idle(): Promise<void> {
    return this.chain;
  }

  /** Queue every waiting job whose time has come (and whose dependencies let it), then re-arm. Tests call it after moving the clock. */
  tick(): Promise<void> {
    return this.step(async () => {
      const { ctx } = this;
      const now = ctx.clock.now();
      let queued = 0;
      for (const j of await dueWaiting(ctx.sql.db, now, this.hubId)) {
        const st = this.runner.depState(await depsOf(ctx.sql.db, j.id));
        if (st === 'blocked') continue; // its last dependency's end queues it (Runner.settleDependents)
        if (st !== 'ready') {
          await this.runner.failWaiting(j.id, `dependency ${st.failed} ${st.status}`);
          continue;
        }
        // Another tick (another hub's) may have queued it since the read: only the one that moves it tells.
        // A job of the worker queue gets its queue job in the transaction that queues it.
        await this.queue.prepare(j);
        const won = await transact(ctx.sql.db, async (trx) => {
          if (!(await queueDue(trx, j.id, now))) return false;
          await this.queue.queued(trx, j.id);
          return true;
        });
        if (!won) continue;
        ctx.bus.emit('job', { jobId: j.id, status: 'queued' });
        queued++;
      }
      if (queued) await this.runner.dispatch();
      await this.arm();
    });
  }

  /** Run `f` after the engine's earlier steps; an error is logged (a bus listener never throws into the engine's call). */
  private step(f: () => Promise<void>): Promise<void> {
    const next = this.chain.then(() => (this.closed ? undefined : this.guarded(f)));
    this.chain = next;
    return next;
  }

  private async guarded(f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (err) {
      this.ctx.log.error({ err }, 'schedules: handling a change failed');
    }
  }

  /** Sleep until the earliest due time (at most MAX_SLEEP_MS), then tick. */
  private async arm(): Promise<void> {
    if (this.closed) return;
    const now = this.ctx.clock.now();
    const next = await nextDue(this.ctx.sql.db, now, this.hubId);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.wakeAt = next;
    if (next === undefined || this.closed) return;
    this.timer = setTimeout(() => void this.tick(), Math.min(Math.max(0, next - now), MAX_SLEEP_MS));
    this.timer.unref();
  }

  /** An occurrence ended: the next one, or the end of the series. Idempotent (only the current occurrence of an active series counts). */
  private async onSettled(jobId: string): Promise<void> {
    const { ctx } = this;
    const q = ctx.sql.db;
    const j = await getJob(q, jobId);
    if (!j?.schedule_id) return;
    const s = await getSchedule(q, j.schedule_id);
    if (!s || s.status !== 'active' || s.current_job !== j.id) return;
    const now = ctx.clock.now();
    if (j.status === 'failed' || j.status === 'cancelled') {
      const why = `run ${j.occurrence ?? s.runs} (${j.id}) ${j.status}${j.failure_class && j.failure_class !== j.status ? ` (${j.failure_class})` : ''}${j.error ? `: ${j.error.slice(0, 300)}` : ''}; the series stops. Resume that job to retry it, or spawn_agent the schedule again.`;
      await this.end(s, 'stopped', why, now);
      return;
    }
    if (j.status !== 'succeeded') return;
    const step = nextOccurrence(planOf(s), s.runs, now, this.tz);
    if ('end' in step) {
      await this.end(s, 'done', step.end, now);
      return;
    }
    try {
      await this.createOccurrence(s, step.at, j.id);
    } catch (err) {
      if (err instanceof SeriesMoved) return;
      await this.end(s, 'stopped', `run ${s.runs + 1} could not be queued: ${errorMessage(err)}`, now);
    }
  }

  /**
   * The next occurrence, in one transaction with the series' move to it: `advanceSchedule` moves
   * current_job only from `previous`, so when another hub made the next occurrence first the
   * transaction aborts and this job is never made (docs/decisions.md, "Runs, schedules and debates on the layer").
   */
  private async createOccurrence(s: ScheduleWithCurrent, at: number, previous: string): Promise<void> {
    const spec = JSON.parse(s.spec_json) as JobSpec;
    const id = await this.newJobId();
    const n = s.runs + 1;
    // Dependencies hold the first run only (they have all succeeded since); a worktree run gets a branch of its own.
    const next: JobSpec = { ...spec, id, depends_on_json: '[]', branch: spec.worktree ? `overseer/${slugify(spec.title)}-${id.slice(2, 8)}` : spec.branch };
    await this.jobs.create(next, `schedule ${s.id}`, {
      notBefore: at,
      within: async (jobId, now, trx) => {
        if (!(await advanceSchedule(trx, s.id, previous, jobId, n, now))) throw new SeriesMoved(`schedule ${s.id} already moved on from ${previous}`);
        await addEvent(trx, previous, now, 'schedule_next', { schedule_id: s.id, next_job_id: jobId, occurrence: n, run_at: isoTime(at) });
      },
    });
    this.ctx.log.info({ scheduleId: s.id, jobId: id, occurrence: n, runAt: isoTime(at) }, 'next run of a schedule queued');
    await this.arm();
  }

  private async end(s: ScheduleWithCurrent, status: Exclude<ScheduleStatus, 'active'>, reason: string, now: number): Promise<void> {
    if (await endSchedule(this.ctx.sql.db, s, status, reason, now)) this.ctx.log.info({ scheduleId: s.id, status, reason }, 'schedule ended');
  }

  // ---- lead tools ----------------------------------------------------------------------------

  /** A schedule, or NotFoundError naming recent ones. */
  async get(id: string): Promise<ScheduleWithCurrent> {
    await this.chain; // what the engine was already told (an occurrence's end) shows in what is read
    const s = await getSchedule(this.ctx.sql.db, id);
    if (!s) {
      const known = await recentScheduleIds(this.ctx.sql.db);
      throw new NotFoundError(`No schedule ${JSON.stringify(id)}.${known.length ? ` Recent schedules: ${known.join(', ')}.` : ' There are no schedules yet.'} Use list_schedules to see them.`);
    }
    return s;
  }

  async list(f: { status?: ScheduleStatus; schedule_id?: string; limit: number }): Promise<{ schedules: ScheduleView[] }> {
    await this.chain;
    if (f.schedule_id !== undefined) {
      const s = await this.get(f.schedule_id);
      const occ = (await occurrences(this.ctx.sql.db, s.id, 20)).map((o) => ({
        n: o.occurrence ?? null, job_id: o.id, status: o.status, run_at: iso(o.not_before), started_at: iso(o.started_at), ended_at: iso(o.ended_at), failure_class: o.failure_class,
      }));
      return { schedules: [{ ...scheduleView(s), occurrences: occ }] };
    }
    return { schedules: (await listSchedules(this.ctx.sql.db, { status: f.status, limit: f.limit })).map(scheduleView) };
  }

  /** Stop a series: no further run; a run waiting for its time (or queued) is cancelled; a running one is left to finish. */
  async cancel(f: { schedule_id: string; reason?: string }): Promise<ScheduleView> {
    const s = await this.get(f.schedule_id);
    if (s.status !== 'active') return { ...scheduleView(s), note: `schedule ${s.id} had already ended (${s.status}): nothing to cancel` };
    const reason = `cancelled${f.reason ? `: ${f.reason}` : ' by the lead'}`;
    await this.end(s, 'cancelled', reason, this.ctx.clock.now());
    let note: string | undefined;
    if (s.current_job && s.current_status && PENDING.has(s.current_status)) {
      await this.jobs.cancel({ job_id: s.current_job, reason: `schedule ${s.id} ${reason}`, cascade: true }, { role: 'lead' });
      note = `its next run ${s.current_job} was cancelled`;
    } else if (s.current_job && s.current_status && !SETTLED.has(s.current_status)) {
      note = `its run ${s.current_job} (${s.current_status}) goes on; cancel_agent stops it`;
    }
    await this.step(() => this.arm());
    return { ...scheduleView(await this.get(s.id)), ...(note ? { note } : {}) };
  }

  private async newJobId(): Promise<string> {
    for (let i = 0; i < 10; i++) {
      const id = this.ctx.ids.jobId();
      if (!(await getJob(this.ctx.sql.db, id))) return id;
    }
    throw new Error('could not generate a unique job id');
  }
}
