// Zod input schemas of the lead's schedule tools (docs/schedules.md). The schedule fields of
// spawn_agent itself (at, every_s, cron, max_runs, until) live in SpawnInput (agents.ts). The
// tools return ScheduleViews.
import { z } from 'zod';

const scheduleId = z.string().min(1, 'schedule_id is empty: pass an id from spawn_agent (schedule_id) or list_schedules').max(100);

export const ListSchedulesInput = z.object({
  status: z.enum(['active', 'done', 'stopped', 'cancelled']).optional()
    .describe('Only schedules in this state: "active" (more runs to come), "done" (cap, until or its one run reached), "stopped" (a run failed or was cancelled), "cancelled" (cancel_schedule). Default: all, active first.'),
  schedule_id: scheduleId.optional().describe('Just this schedule, with its latest runs (occurrences[]).'),
  limit: z.number().int().min(1).max(100, 'limit must be at most 100').default(20).describe('Most schedules to return, newest first, 1..100 (default 20).'),
}).strict();
export type ListSchedulesInput = z.infer<typeof ListSchedulesInput>;

export const CancelScheduleInput = z.object({
  schedule_id: scheduleId.describe('Id of the schedule to stop, from spawn_agent (schedule_id) or list_schedules.'),
  reason: z.string().max(2000).optional().describe('Why; recorded as the schedule\'s stop_reason "cancelled: <reason>".'),
}).strict();
export type CancelScheduleInput = z.infer<typeof CancelScheduleInput>;

export type ScheduleStatus = 'active' | 'done' | 'stopped' | 'cancelled';

export interface ScheduleView {
  schedule_id: string;
  title: string;
  status: ScheduleStatus;
  /** "once", "every 3600 s" or "cron 0 9 * * 1-5". */
  repeat: string;
  every_s: number | null;
  cron: string | null;
  first_run_at: string;
  until: string | null;
  max_runs: number | null;
  /** Occurrences created so far (the current one included). */
  runs: number;
  /** When the next occurrence starts, while one waits for its time; null otherwise. */
  next_run_at: string | null;
  current_job_id: string | null;
  current_status: string | null;
  /** Why the series ended (cap, until, a failed or cancelled run, cancel_schedule). */
  stop_reason: string | null;
  created_at: string;
  ended_at: string | null;
  /** Only for one schedule (list_schedules { schedule_id }): its latest occurrences. */
  occurrences?: { n: number | null; job_id: string; status: string; run_at: string | null; started_at: string | null; ended_at: string | null; failure_class: string | null }[];
  note?: string;
}
