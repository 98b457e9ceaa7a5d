// Reads the rows of the floor from the state database: the hub's own connection, or the CLI's
// read-only one (src/cli/state.ts) when no hub runs. SELECTs only. A fixed set of statements
// whatever the number of jobs (ids go in as one JSON array, not one query per job), prepared
// once per connection.
import type Database from 'better-sqlite3';
import type { OverlapRow } from '../store/overlaps.js';
import type { JobRow } from '../store/jobs.js';
import type { FullRequestRow } from '../store/sql/requests.js';
import type { WarningRow } from '../store/warnings.js';
import type { WorkflowRow } from '../store/workflows.js';
import type { LockRow, WaitRow } from '../store/locks.js';
import { buildFloor, DEFAULT_DONE_LIMIT, DEFAULT_FAILED_WINDOW_MS, type FloorHubInfo, type FloorInput, type StatusCount } from './model.js';
import type { Floor } from './types.js';
import { archivedProjects } from '../projects/store.js';
import type { LimitRow } from '../limits/store.js';
import { readFloorRuns } from './runs.js';

/** The provider limiters not closed; none for a database from before them (read-only CLI of an older state). */
function openLimits(db: Database.Database): LimitRow[] {
  try {
    return db.prepare("SELECT * FROM provider_limits WHERE phase != 'closed' ORDER BY provider, account").all() as LimitRow[];
  } catch {
    return [];
  }
}

export interface FloorReadOptions {
  now: number;
  hub: FloorHubInfo | null;
  cap: number;
  source: 'hub' | 'database';
  doneLimit?: number;
  failedWindowMs?: number;
  /** Only this project (src/projects); jobs of archived projects are left out unless named. */
  project?: string;
}

/** Totals over one project, or over every job not in an archived project. */
const COUNTS_NARROWED = `SELECT status, COUNT(*) AS n, TOTAL(cost_usd) AS cost_usd, MAX(cost_unknown) AS cost_unknown FROM jobs
  WHERE CASE WHEN @project IS NULL THEN project IS NULL OR project NOT IN (SELECT name FROM projects WHERE archived_at IS NOT NULL) ELSE project = @project END
  GROUP BY status`;

const SQL = {
  live: `SELECT * FROM jobs WHERE status IN ('queued', 'waiting', 'running', 'frozen', 'needs_input')`,
  // Ended jobs of interest: the most recent (DONE), and the failed or lock-violating ones of the window (NEEDS YOU).
  recentEnded: `SELECT * FROM jobs WHERE status IN ('succeeded', 'failed', 'cancelled', 'interrupted') ORDER BY COALESCE(ended_at, updated_at) DESC, seq DESC LIMIT ?`,
  windowEnded: `SELECT * FROM jobs WHERE status IN ('failed', 'succeeded', 'cancelled', 'interrupted') AND COALESCE(ended_at, updated_at) >= ?
    AND (status = 'failed' OR lock_violations_json IS NOT NULL)`,
  byIds: `SELECT * FROM jobs WHERE id IN (SELECT value FROM json_each(?))`,
  counts: `SELECT status, COUNT(*) AS n, TOTAL(cost_usd) AS cost_usd, MAX(cost_unknown) AS cost_unknown FROM jobs GROUP BY status`,
  requests: `SELECT * FROM requests WHERE status = 'pending' ORDER BY created_at, id`,
  warnings: `SELECT * FROM job_warnings WHERE cleared_at IS NULL ORDER BY id`,
  workflows: `SELECT * FROM workflows WHERE status IN ('running', 'waiting_approval', 'blocked') OR COALESCE(ended_at, updated_at) >= ? ORDER BY seq`,
  milestones: `SELECT workflow_id, COUNT(done_at) AS done, COUNT(*) AS total FROM workflow_milestones WHERE workflow_id IN (SELECT value FROM json_each(?)) GROUP BY workflow_id`,
  locks: `SELECT * FROM locks WHERE expires_at > ? ORDER BY path`,
  lockWaits: `SELECT * FROM lock_waits WHERE status = 'waiting' ORDER BY id`,
  overlaps: `SELECT * FROM overlaps WHERE cleared_at IS NULL ORDER BY id`,
  deps: `SELECT d.job_id, d.dep_id, COALESCE(j.status, 'unknown') AS status FROM job_deps d LEFT JOIN jobs j ON j.id = d.dep_id
    WHERE d.job_id IN (SELECT id FROM jobs WHERE status IN ('queued', 'waiting'))`,
} as const;

type Statements = { [K in keyof typeof SQL]: Database.Statement };

/** Statements per connection: prepared on first use, dropped with the connection. */
const prepared = new WeakMap<Database.Database, Statements>();

function statements(db: Database.Database): Statements {
  let st = prepared.get(db);
  if (!st) {
    st = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)])) as Statements;
    prepared.set(db, st);
  }
  return st;
}

/** The floor's rows as they are now. Reads in one transaction so the rows agree with each other. */
export function readFloorInput(db: Database.Database, o: FloorReadOptions): FloorInput {
  const st = statements(db);
  const doneLimit = Math.max(0, o.doneLimit ?? DEFAULT_DONE_LIMIT);
  const windowMs = o.failedWindowMs ?? DEFAULT_FAILED_WINDOW_MS;
  const since = o.now - windowMs;
  const read = (): FloorInput => {
    const archived = archivedProjects(db);
    // Prepared only when needed: a database from before projects (read-only CLI) has no project column.
    const narrowed = o.project !== undefined || archived.length > 0;
    const jobs = new Map<string, JobRow>();
    const add = (rows: unknown[]): void => { for (const r of rows as JobRow[]) jobs.set(r.id, r); };
    add(st.live.all());
    add(st.recentEnded.all(doneLimit));
    add(st.windowEnded.all(since));
    const requests = st.requests.all() as FullRequestRow[];
    const warnings = st.warnings.all() as WarningRow[];
    const workflows = st.workflows.all(since) as WorkflowRow[];
    const locks = st.locks.all(o.now) as LockRow[];
    const lockWaits = st.lockWaits.all() as WaitRow[];
    // Jobs other rows name but the queries above did not bring: old agents of pending requests
    // (a workflow's detached approval), lock holders, waiters.
    const missing = new Set<string>();
    for (const id of [...requests.map((r) => r.job_id), ...warnings.map((w) => w.job_id), ...locks.map((l) => l.holder), ...lockWaits.map((w) => w.holder)]) {
      if (id !== 'lead' && !jobs.has(id)) missing.add(id);
    }
    if (missing.size) add(st.byIds.all(JSON.stringify([...missing])));
    return {
      jobs: [...jobs.values()],
      requests,
      warnings,
      workflows,
      milestones: workflows.length ? st.milestones.all(JSON.stringify(workflows.map((w) => w.id))) as { workflow_id: string; done: number; total: number }[] : [],
      locks,
      lockWaits,
      overlaps: st.overlaps.all() as OverlapRow[],
      deps: st.deps.all() as { job_id: string; dep_id: string; status: string }[],
      counts: (narrowed ? db.prepare(COUNTS_NARROWED).all({ project: o.project ?? null }) : st.counts.all()) as StatusCount[],
      hub: o.hub,
      cap: o.cap,
      source: o.source,
      doneLimit,
      failedWindowMs: windowMs,
      ...(o.project !== undefined ? { project: o.project } : {}),
      ...(archived.length ? { archived } : {}),
      limits: openLimits(db),
      runs: readFloorRuns(db, since),
    };
  };
  // A deferred transaction: one snapshot for all the reads (and no write lock, so it works on a read-only connection).
  return db.inTransaction ? read() : db.transaction(read).deferred();
}

/** The floor as it is now. */
export function readFloor(db: Database.Database, o: FloorReadOptions): Floor {
  return buildFloor(readFloorInput(db, o), o.now);
}
