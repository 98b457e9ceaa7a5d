// `overseer schedules [--status s] [--json]`: the schedules and their next runs, read from the
// state database (works whether or not a hub runs); `overseer schedules cancel <id>` stops one
// through the running hub's cancel_schedule, as the lead would (docs/schedules.md).
import { openState } from './state.js';
import { table } from './status.js';
import { UsageError } from './errors.js';
import { readSchedules, schedulesTable } from '../runs/scheduleText.js';
import type { ScheduleView } from '../runs/schedules.js';

const STATUSES = ['active', 'done', 'stopped', 'cancelled'] as const;

export async function runSchedules(o: { status?: string; json?: boolean }): Promise<void> {
  if (o.status !== undefined && !(STATUSES as readonly string[]).includes(o.status)) {
    throw new UsageError(`--status ${JSON.stringify(o.status)} is not a schedule status; use one of ${STATUSES.join(', ')}`);
  }
  const state = await openState();
  try {
    let views: ScheduleView[];
    try {
      views = await readSchedules(state.sql.db, { status: o.status as ScheduleView['status'] | undefined });
    } catch (err) {
      if (!/no such table/.test((err as Error).message)) throw err;
      views = []; // a database from before schedules
    }
    process.stdout.write(o.json ? `${JSON.stringify(views, null, 2)}\n` : schedulesTable(views, table));
  } finally {
    await state.close();
  }
}

export async function runCancelSchedule(id: string, o: { reason?: string; json?: boolean }): Promise<void> {
  const [{ loadConfig }, { connectHub }] = await Promise.all([import('../config.js'), import('./hubTools.js')]);
  const h = await connectHub(loadConfig().home);
  try {
    const r = await h.call('cancel_schedule', { schedule_id: id, ...(o.reason ? { reason: o.reason } : {}) }) as ScheduleView;
    process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${r.schedule_id} ${r.status}${r.note ? `: ${r.note}` : ''}\n`);
  } finally {
    await h.close();
  }
}
