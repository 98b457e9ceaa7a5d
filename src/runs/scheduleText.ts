// Schedules as text, for `overseer schedules` and the line under `overseer status`'s totals.
// Reads through the layer (the CLI's read-only connection works: SELECTs only).
import { listSchedules } from '../store/sql/schedules.js';
import type { Q } from '../store/sql/tx.js';
import { scheduleView, type ScheduleView } from './schedules.js';

/** Schedules as list_schedules shows them, read from the database (no hub needed). */
export async function readSchedules(q: Q, f: { status?: ScheduleView['status']; limit?: number } = {}): Promise<ScheduleView[]> {
  return (await listSchedules(q, { status: f.status, limit: f.limit ?? 100 })).map(scheduleView);
}

const runsOf = (v: ScheduleView): string => `${v.runs}${v.max_runs !== null ? `/${v.max_runs}` : ''}`;

/** One cell: what the series does next, or why it ended. */
export function scheduleState(v: ScheduleView): string {
  if (v.status !== 'active') return `${v.status}: ${v.stop_reason ?? ''}`;
  if (v.next_run_at) return `next run ${v.next_run_at} (${v.current_job_id})`;
  return `run ${v.runs} ${v.current_status ?? 'gone'} (${v.current_job_id})`;
}

/** The table of `overseer schedules`. */
export function schedulesTable(views: readonly ScheduleView[], table: (rows: string[][]) => string): string {
  if (views.length === 0) return 'No schedules. spawn_agent with at, every_s or cron makes one (docs/schedules.md).\n';
  const rows = views.map((v) => [v.schedule_id, v.status, v.repeat, runsOf(v), v.until ?? '-', v.title.slice(0, 40), scheduleState(v).replace(/\s+/g, ' ').slice(0, 120)]);
  return `${table([['SCHEDULE', 'STATUS', 'REPEAT', 'RUNS', 'UNTIL', 'TITLE', 'NEXT'], ...rows])}\n`;
}

/** Under `overseer status`'s totals: the active schedules and their next runs; undefined when there are none. */
export async function schedulesLine(q: Q): Promise<string | undefined> {
  let active: ScheduleView[];
  try {
    active = await readSchedules(q, { status: 'active', limit: 20 });
  } catch (err) {
    // A database from before schedules (no table): a hub of this version upgrades it.
    return /no such (table|column)/.test((err as Error).message) ? undefined : `schedules: (not readable here: ${(err as Error).message})`;
  }
  if (active.length === 0) return undefined;
  return `schedules: ${active.map((v) => `${v.schedule_id} "${v.title.slice(0, 30)}" ${v.repeat}, runs ${runsOf(v)}, ${scheduleState(v)}`).join(' · ')}`;
}
