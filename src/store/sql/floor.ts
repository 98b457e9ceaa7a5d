// The floor's rows of jobs, requests, warnings, locks and overlaps over the Kysely layer, on SQLite
// and PostgreSQL alike (src/floor/source.ts reads them inside one `snapshot`). A fixed number of
// statements whatever the number of jobs. Workflows, their milestones and script runs are read
// by the floor through the synchronous store until step 7 of docs/store-plan.md.
import { sql } from 'kysely';
import type { JobRow } from '../jobs.js';
import type { FullRequestRow } from './requests.js';
import type { WarningRow } from '../warnings.js';
import type { LockRow, WaitRow } from '../locks.js';
import type { OverlapRow } from '../overlaps.js';
import type { LimitRecord } from './limits.js';
import type { Q } from './tx.js';

export interface FloorRows {
  jobs: JobRow[];
  requests: FullRequestRow[];
  warnings: WarningRow[];
  locks: LockRow[];
  lockWaits: WaitRow[];
  overlaps: OverlapRow[];
  deps: { job_id: string; dep_id: string; status: string }[];
  counts: { status: string; n: number; cost_usd: number; cost_unknown: number }[];
  archived: string[];
  limits: LimitRecord[];
}

const LIVE = ['queued', 'waiting', 'running', 'frozen', 'needs_input'] as const;
const ENDED = ['succeeded', 'failed', 'cancelled', 'interrupted'] as const;
/** None from a SQLite database from before this table (the read-only CLI of an older state; the
 * failed SELECT leaves the read transaction usable there; PostgreSQL is always migrated). */
async function older<T>(p: Promise<T[]>): Promise<T[]> {
  try {
    return await p;
  } catch {
    return [];
  }
}

const endedAt = sql<number>`COALESCE(ended_at, updated_at)`;

/**
 * The live jobs, the `doneLimit` most recently ended, the failed or lock-violating ones ended since
 * `since`, and any job the other rows name; totals by status over `project`, or over every job not
 * in an archived project (all jobs when none is archived). Run it in a snapshot.
 */
export async function floorRows(q: Q, o: { now: number; since: number; doneLimit: number; project?: string | undefined }): Promise<FloorRows> {
  const archived = (await older(q.selectFrom('projects').select('name').where('archived_at', 'is not', null).orderBy('name').execute())).map((r) => r.name);
  const jobs = new Map<string, JobRow>();
  const add = (rows: unknown[]): void => { for (const r of rows as JobRow[]) jobs.set(r.id, r); };
  add(await q.selectFrom('jobs').selectAll().where('status', 'in', LIVE).execute());
  if (o.doneLimit > 0) add(await q.selectFrom('jobs').selectAll().where('status', 'in', ENDED).orderBy(endedAt, 'desc').orderBy('seq', 'desc').limit(o.doneLimit).execute());
  add(await q.selectFrom('jobs').selectAll().where('status', 'in', ENDED).where(endedAt, '>=', o.since)
    .where((e) => e.or([e('status', '=', 'failed'), e('lock_violations_json', 'is not', null)])).execute());
  const requests = await q.selectFrom('requests').selectAll().where('status', '=', 'pending').orderBy('created_at').orderBy('id').execute() as unknown as FullRequestRow[];
  const warnings = await q.selectFrom('job_warnings').selectAll().where('cleared_at', 'is', null).orderBy('id').execute() as unknown as WarningRow[];
  const locks = await q.selectFrom('locks').selectAll().where('expires_at', '>', o.now).orderBy('path').execute() as unknown as LockRow[];
  const lockWaits = await q.selectFrom('lock_waits').selectAll().where('status', '=', 'waiting').orderBy('id').execute() as unknown as WaitRow[];
  // Jobs other rows name but the queries above did not bring: old agents of pending requests
  // (a workflow's detached approval), lock holders, waiters.
  const missing = new Set<string>();
  for (const id of [...requests.map((r) => r.job_id), ...warnings.map((w) => w.job_id), ...locks.map((l) => l.holder), ...lockWaits.map((w) => w.holder)]) {
    if (id !== 'lead' && !jobs.has(id)) missing.add(id);
  }
  if (missing.size) add(await q.selectFrom('jobs').selectAll().where('id', 'in', [...missing]).execute());
  const overlaps = await q.selectFrom('overlaps').selectAll().where('cleared_at', 'is', null).orderBy('id').execute() as unknown as OverlapRow[];
  const deps = await q.selectFrom('job_deps as d').leftJoin('jobs as j', 'j.id', 'd.dep_id')
    .select(['d.job_id', 'd.dep_id', sql<string>`COALESCE(j.status, 'unknown')`.as('status')])
    .where('d.job_id', 'in', q.selectFrom('jobs').select('id').where('status', 'in', ['queued', 'waiting'])).execute();
  let counts = q.selectFrom('jobs').select(['status', sql<number>`COUNT(*)`.as('n'), sql<number>`COALESCE(SUM(cost_usd), 0)`.as('cost_usd'), sql<number>`MAX(cost_unknown)`.as('cost_unknown')]);
  if (o.project !== undefined) counts = counts.where('project', '=', o.project);
  else if (archived.length) counts = counts.where((e) => e.or([e('project', 'is', null), e('project', 'not in', archived)]));
  const limits = await older(q.selectFrom('provider_limits').selectAll().where('phase', '!=', 'closed').orderBy('provider').orderBy('account').execute()) as LimitRecord[];
  return {
    jobs: [...jobs.values()], requests, warnings, locks, lockWaits, overlaps, deps,
    counts: (await counts.groupBy('status').execute()).map((c) => ({ ...c, n: Number(c.n), cost_usd: Number(c.cost_usd) })),
    archived, limits,
  };
}
