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
// repeats are not made up), and re-arms the timer. Listens on the bus; the engine never calls in,
// except through the JobService hook `plan`/`create`/`view` the hub sets.
import type { Caller, HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { JobRow } from '../store/jobs.js';
import type { SpawnInput } from '../contract/agents.js';
import { tx } from '../store/db.js';
import { isoTime } from '../clock.js';
import { slugify } from '../domain/job.js';
import { errorMessage, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.js';
import { ScheduleStore, type ScheduleStatus, type ScheduleWithCurrent } from './scheduleStore.js';
import { describeRepeat, hasSchedule, nextOccurrence, planSchedule, type Repeat, type SchedulePlan } from './scheduleTiming.js';
import type { ScheduleView } from '../contract/schedules.js';

export type { ScheduleView };

/** Longest the timer sleeps before it looks again (clock changes, suspend). */
export const MAX_SLEEP_MS = 60_000;

/** What JobService.create takes and gives. */
export type JobSpec = Parameters<JobService['create']>[0];
type Created = ReturnType<JobService['create']>;

const SETTLED = new Set(['succeeded', 'failed', 'cancelled']);
const PENDING = new Set(['waiting', 'queued']);

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
  readonly store: ScheduleStore;
  private timer?: NodeJS.Timeout;
  /** When the armed timer fires (ms on the injected clock), for tests and the floor. */
  wakeAt?: number;
  private readonly off: (() => void)[] = [];
  private closed = false;

  /** `tz`: the time zone cron expressions are read in (default: the hub's local one). */
  constructor(private readonly ctx: HubContext, private readonly jobs: JobService, private readonly tz?: string) {
    this.store = new ScheduleStore(ctx.db);
  }

  // ---- the JobService hook ----------------------------------------------------------------

  /** Check spawn_agent's schedule fields (nothing is written); undefined when it has none. */
  plan(input: SpawnInput, caller: Caller): SchedulePlan | undefined {
    if (!hasSchedule(input)) return undefined;
    if (caller.role !== 'lead') {
      throw new ForbiddenError('at, every_s, cron, max_runs and until are for the lead: a schedule outlives the agent that would make it. Spawn the sub-agent now without them, or ask the lead (ask_lead) to schedule it.');
    }
    const plan = planSchedule(input, this.ctx.clock.now(), this.tz)!;
    if (plan.repeat.kind !== 'once' && input.branch !== undefined) {
      throw new InvalidInputError('branch cannot be given for a repeating schedule: every run is a job of its own and needs a branch of its own. Omit branch (each run gets overseer/<title>-<id>).');
    }
    return plan;
  }

  /** Create the schedule and its first occurrence in one transaction (budgets checked as for any spawn). */
  create(plan: SchedulePlan, spec: JobSpec, by: string): Created & { schedule_id: string; run_at: string } {
    const { ctx } = this;
    const id = this.newId();
    const stored: JobSpec = { ...spec, id: undefined, branch: spec.worktree ? null : spec.branch };
    const created = this.jobs.create(spec, by, {
      notBefore: plan.firstAt,
      within: (jobId, now) => {
        this.store.insert({
          id, title: spec.title, created_by: by, kind: plan.repeat.kind,
          every_s: plan.repeat.kind === 'every' ? plan.repeat.everyS : null, cron: plan.repeat.kind === 'cron' ? plan.repeat.cron : null,
          first_at: plan.firstAt, until_at: plan.untilAt, max_runs: plan.maxRuns, spec_json: JSON.stringify(stored),
        }, now);
        this.store.tagJob(jobId, id, 1);
        this.store.setCurrent(id, jobId, 1, now);
        ctx.store.addEvent(jobId, now, 'scheduled', { schedule_id: id, occurrence: 1, run_at: isoTime(plan.firstAt), repeat: describeRepeat(plan.repeat) });
      },
    });
    ctx.log.info({ scheduleId: id, jobId: created.job_id, runAt: isoTime(plan.firstAt) }, 'schedule created');
    this.arm();
    return { ...created, schedule_id: id, run_at: isoTime(plan.firstAt) };
  }

  /** get_agent / list_agents extras: when the job runs, and its series. */
  view(j: JobRow): { run_at?: string; schedule?: Record<string, unknown> } | undefined {
    if ((j.not_before === null || j.not_before === undefined) && !j.schedule_id) return undefined;
    const out: { run_at?: string; schedule?: Record<string, unknown> } = {};
    if (j.not_before !== null && j.not_before !== undefined) out.run_at = isoTime(j.not_before);
    const s = j.schedule_id ? this.store.get(j.schedule_id) : undefined;
    if (s) {
      const v = scheduleView(s);
      out.schedule = {
        schedule_id: s.id, occurrence: j.occurrence ?? null, repeat: v.repeat, status: v.status, runs: v.runs, max_runs: v.max_runs,
        next_run_at: v.next_run_at, ...(s.current_job !== j.id ? { next_job_id: s.current_job } : {}), ...(v.stop_reason ? { stop_reason: v.stop_reason } : {}),
      };
    }
    return out;
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** After reconcile: listen, catch up with what settled while no hub ran, queue what is due, arm. */
  start(): void {
    this.off.push(this.ctx.bus.on('job', (ev) => {
      if (SETTLED.has(ev.status)) this.guard(() => this.onSettled(ev.jobId));
      else if (ev.status === 'waiting') this.guard(() => this.arm());
    }));
    for (const s of this.store.active()) {
      if (s.current_job && s.current_status && SETTLED.has(s.current_status)) this.guard(() => this.onSettled(s.current_job!));
    }
    this.tick();
  }

  close(): void {
    this.closed = true;
    for (const f of this.off.splice(0)) f();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.wakeAt = undefined;
  }

  /** Queue every waiting job whose time has come (and whose dependencies let it), then re-arm. Tests call it after moving the clock. */
  tick(): void {
    if (this.closed) return;
    const { ctx } = this;
    const now = ctx.clock.now();
    let queued = 0;
    for (const j of this.store.dueWaiting(now)) {
      const st = this.jobs.runner.depState(ctx.store.depsOf(j.id));
      if (st === 'blocked') continue; // its last dependency's end queues it (Runner.settleDependents)
      if (st !== 'ready') {
        this.jobs.runner.failWaiting(j.id, `dependency ${st.failed} ${st.status}`);
        continue;
      }
      tx(ctx.db, () => {
        ctx.store.update(j.id, { status: 'queued' }, now);
        ctx.store.addEvent(j.id, now, 'due', { run_at: isoTime(j.not_before!) , late_ms: now - j.not_before! });
      });
      ctx.bus.emit('job', { jobId: j.id, status: 'queued' });
      queued++;
    }
    if (queued) this.jobs.runner.dispatch();
    this.arm();
  }

  /** Sleep until the earliest due time (at most MAX_SLEEP_MS), then tick. */
  private arm(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = this.ctx.clock.now();
    const next = this.store.nextDue(now);
    this.wakeAt = next;
    if (next === undefined) return;
    this.timer = setTimeout(() => this.guard(() => this.tick()), Math.min(Math.max(0, next - now), MAX_SLEEP_MS));
    this.timer.unref();
  }

  /** A bus listener runs inside the engine's own call (e.g. the end of an attempt): never throw into it. */
  private guard(f: () => void): void {
    try {
      f();
    } catch (err) {
      this.ctx.log.error({ err }, 'schedules: handling a change failed');
    }
  }

  /** An occurrence ended: the next one, or the end of the series. Idempotent (only the current occurrence of an active series counts). */
  private onSettled(jobId: string): void {
    if (this.closed) return;
    const { ctx } = this;
    const j = ctx.store.get(jobId);
    if (!j?.schedule_id) return;
    const s = this.store.get(j.schedule_id);
    if (!s || s.status !== 'active' || s.current_job !== j.id) return;
    const now = ctx.clock.now();
    if (j.status === 'failed' || j.status === 'cancelled') {
      const why = `run ${j.occurrence ?? s.runs} (${j.id}) ${j.status}${j.failure_class && j.failure_class !== j.status ? ` (${j.failure_class})` : ''}${j.error ? `: ${j.error.slice(0, 300)}` : ''}; the series stops. Resume that job to retry it, or spawn_agent the schedule again.`;
      this.end(s, 'stopped', why, now);
      return;
    }
    if (j.status !== 'succeeded') return;
    const step = nextOccurrence(planOf(s), s.runs, now, this.tz);
    if ('end' in step) {
      this.end(s, 'done', step.end, now);
      return;
    }
    try {
      this.createOccurrence(s, step.at, j.id);
    } catch (err) {
      this.end(s, 'stopped', `run ${s.runs + 1} could not be queued: ${errorMessage(err)}`, now);
    }
  }

  private createOccurrence(s: ScheduleWithCurrent, at: number, previous: string): void {
    const spec = JSON.parse(s.spec_json) as JobSpec;
    const id = this.newJobId();
    const n = s.runs + 1;
    // Dependencies hold the first run only (they have all succeeded since); a worktree run gets a branch of its own.
    const next: JobSpec = { ...spec, id, depends_on_json: '[]', branch: spec.worktree ? `overseer/${slugify(spec.title)}-${id.slice(2, 8)}` : spec.branch };
    this.jobs.create(next, `schedule ${s.id}`, {
      notBefore: at,
      within: (jobId, now) => {
        this.store.tagJob(jobId, s.id, n);
        this.store.setCurrent(s.id, jobId, n, now);
        this.ctx.store.addEvent(previous, now, 'schedule_next', { schedule_id: s.id, next_job_id: jobId, occurrence: n, run_at: isoTime(at) });
      },
    });
    this.ctx.log.info({ scheduleId: s.id, jobId: id, occurrence: n, runAt: isoTime(at) }, 'next run of a schedule queued');
    this.arm();
  }

  private end(s: ScheduleWithCurrent, status: Exclude<ScheduleStatus, 'active'>, reason: string, now: number): void {
    tx(this.ctx.db, () => {
      this.store.end(s.id, status, reason, now);
      if (s.current_job && this.ctx.store.get(s.current_job)) this.ctx.store.addEvent(s.current_job, now, 'schedule_ended', { schedule_id: s.id, status, reason });
    });
    this.ctx.log.info({ scheduleId: s.id, status, reason }, 'schedule ended');
  }

  // ---- lead tools ----------------------------------------------------------------------------

  /** A schedule, or NotFoundError naming recent ones. */
  get(id: string): ScheduleWithCurrent {
    const s = this.store.get(id);
    if (!s) {
      const known = this.store.nearbyIds();
      throw new NotFoundError(`No schedule ${JSON.stringify(id)}.${known.length ? ` Recent schedules: ${known.join(', ')}.` : ' There are no schedules yet.'} Use list_schedules to see them.`);
    }
    return s;
  }

  list(f: { status?: ScheduleStatus; schedule_id?: string; limit: number }): { schedules: ScheduleView[] } {
    if (f.schedule_id !== undefined) {
      const s = this.get(f.schedule_id);
      const occurrences = this.store.occurrences(s.id, 20).map((o) => ({
        n: o.occurrence ?? null, job_id: o.id, status: o.status, run_at: iso(o.not_before), started_at: iso(o.started_at), ended_at: iso(o.ended_at), failure_class: o.failure_class,
      }));
      return { schedules: [{ ...scheduleView(s), occurrences }] };
    }
    return { schedules: this.store.list({ status: f.status, limit: f.limit }).map(scheduleView) };
  }

  /** Stop a series: no further run; a run waiting for its time (or queued) is cancelled; a running one is left to finish. */
  async cancel(f: { schedule_id: string; reason?: string }): Promise<ScheduleView> {
    const s = this.get(f.schedule_id);
    if (s.status !== 'active') return { ...scheduleView(s), note: `schedule ${s.id} had already ended (${s.status}): nothing to cancel` };
    const reason = `cancelled${f.reason ? `: ${f.reason}` : ' by the lead'}`;
    this.end(s, 'cancelled', reason, this.ctx.clock.now());
    let note: string | undefined;
    if (s.current_job && s.current_status && PENDING.has(s.current_status)) {
      await this.jobs.cancel({ job_id: s.current_job, reason: `schedule ${s.id} ${reason}`, cascade: true }, { role: 'lead' });
      note = `its next run ${s.current_job} was cancelled`;
    } else if (s.current_job && s.current_status && !SETTLED.has(s.current_status)) {
      note = `its run ${s.current_job} (${s.current_status}) goes on; cancel_agent stops it`;
    }
    this.arm();
    return { ...scheduleView(this.get(s.id)), ...(note ? { note } : {}) };
  }

  private newId(): string {
    for (let i = 0; i < 10; i++) {
      const id = `s-${this.ctx.ids.jobId().replace(/^j-/, '')}`;
      if (!this.store.get(id)) return id;
    }
    throw new Error('could not generate a unique schedule id');
  }

  private newJobId(): string {
    for (let i = 0; i < 10; i++) {
      const id = this.ctx.ids.jobId();
      if (!this.ctx.store.get(id)) return id;
    }
    throw new Error('could not generate a unique job id');
  }
}
