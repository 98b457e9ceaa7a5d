// The schedule side of spawn_agent (docs/schedules.md): checks a spawn's at / every_s / cron
// fields and records the schedule with its first run, inside the transaction JobService creates
// that run in; and shows a job's series in get_agent / list_agents. It needs nothing of the job
// engine, so JobService is built with it (src/hub.ts) and the schedule engine
// (./schedules.ts) is built on JobService: the dependency runs one way.
import type { Caller, HubContext } from '../services/context.js';
import type { JobSpec, PlannedSchedule, SpawnSchedules } from '../services/jobs.js';
import type { JobRow } from '../store/jobs.js';
import { isoTime } from '../clock.js';
import { ForbiddenError, InvalidInputError } from '../errors.js';
import { getSchedule, insertSchedule, startSeries } from '../store/sql/schedules.js';
import { addEvent } from '../store/sql/jobs.js';
import type { Q } from '../store/sql/tx.js';
import { describeRepeat, hasSchedule, planSchedule } from './scheduleTiming.js';
import { scheduleView } from './schedules.js';

/** spawn_agent's input, as JobService hands it over. */
type SpawnInput = Parameters<SpawnSchedules['plan']>[0];

export class ScheduleBook implements SpawnSchedules {
  /** `tz`: the time zone cron expressions are read in (default: the hub's local one). */
  constructor(private readonly ctx: HubContext, private readonly tz?: string) {}

  plan(input: SpawnInput, caller: Caller): PlannedSchedule | undefined {
    if (!hasSchedule(input)) return undefined;
    if (caller.role !== 'lead') {
      throw new ForbiddenError('at, every_s, cron, max_runs and until are for the lead: a schedule outlives the agent that would make it. Spawn the sub-agent now without them, or ask the lead (ask_lead) to schedule it.');
    }
    const plan = planSchedule(input, this.ctx.clock.now(), this.tz)!;
    if (plan.repeat.kind !== 'once' && input.branch !== undefined) {
      throw new InvalidInputError('branch cannot be given for a repeating schedule: every run is a job of its own and needs a branch of its own. Omit branch (each run gets overseer/<title>-<id>).');
    }
    return {
      firstAt: plan.firstAt,
      record: async (trx: Q, jobId: string, spec: JobSpec, by: string, now: number) => {
        const { ctx } = this;
        const id = await this.newId(trx);
        const stored: JobSpec = { ...spec, id: undefined, branch: spec.worktree ? null : spec.branch };
        await insertSchedule(trx, {
          id, title: spec.title, created_by: by, kind: plan.repeat.kind,
          every_s: plan.repeat.kind === 'every' ? plan.repeat.everyS : null, cron: plan.repeat.kind === 'cron' ? plan.repeat.cron : null,
          first_at: plan.firstAt, until_at: plan.untilAt, max_runs: plan.maxRuns, spec_json: JSON.stringify(stored),
        }, now);
        await startSeries(trx, id, jobId, now);
        await addEvent(trx, jobId, now, 'scheduled', { schedule_id: id, occurrence: 1, run_at: isoTime(plan.firstAt), repeat: describeRepeat(plan.repeat) });
        ctx.log.info({ scheduleId: id, jobId, runAt: isoTime(plan.firstAt) }, 'schedule created');
        return { schedule_id: id };
      },
    };
  }

  async view(j: JobRow): Promise<{ run_at?: string; schedule?: Record<string, unknown> } | undefined> {
    if ((j.not_before === null || j.not_before === undefined) && !j.schedule_id) return undefined;
    const out: { run_at?: string; schedule?: Record<string, unknown> } = {};
    if (j.not_before !== null && j.not_before !== undefined) out.run_at = isoTime(j.not_before);
    const s = j.schedule_id ? await getSchedule(this.ctx.sql.db, j.schedule_id) : undefined;
    if (s) {
      const v = scheduleView(s);
      out.schedule = {
        schedule_id: s.id, occurrence: j.occurrence ?? null, repeat: v.repeat, status: v.status, runs: v.runs, max_runs: v.max_runs,
        next_run_at: v.next_run_at, ...(s.current_job !== j.id ? { next_job_id: s.current_job } : {}), ...(v.stop_reason ? { stop_reason: v.stop_reason } : {}),
      };
    }
    return out;
  }

  private async newId(q: Q): Promise<string> {
    for (let i = 0; i < 10; i++) {
      const id = `s-${this.ctx.ids.jobId().replace(/^j-/, '')}`;
      if (!(await getSchedule(q, id))) return id;
    }
    throw new Error('could not generate a unique schedule id');
  }
}

/** Schedules switched off (capabilities.schedules: false): a spawn with a schedule is refused, nothing is written. */
export const SCHEDULES_OFF: SpawnSchedules = {
  plan(input) {
    if (!hasSchedule(input)) return undefined;
    throw new InvalidInputError('at, every_s, cron, max_runs and until need schedules, and this hub runs with them switched off (capabilities.schedules: false in .overseer/config.json or OVERSEER_CAPABILITIES). Spawn the agent now without them, or switch schedules on and restart the hub.');
  },
  view: async () => undefined,
};
