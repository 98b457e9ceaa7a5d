// Reads the rows of the floor from the state database: the hub's own connection, or the CLI's
// read-only one (src/cli/state.ts) when no hub runs. SELECTs only, in one snapshot
// (src/store/sql/tx.ts): jobs, requests, warnings, locks and overlaps through the layer
// (src/store/sql/floor.ts) and script runs (src/floor/runs.ts); workflows through the synchronous store until step 7.
// A fixed set of statements whatever the number of jobs.
import type Database from 'better-sqlite3';
import type { WorkflowRow } from '../store/workflows.js';
import { buildFloor, DEFAULT_DONE_LIMIT, DEFAULT_FAILED_WINDOW_MS, type FloorHubInfo, type FloorInput, type StatusCount } from './model.js';
import type { Floor } from './types.js';
import { readFloorRuns } from './runs.js';
import type { LimitRow } from '../limits/store.js';
import { floorRows } from '../store/sql/floor.js';
import { snapshot } from '../store/sql/tx.js';
import { layerOf } from '../store/sql/open.js';

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

const SQL = {
  workflows: `SELECT * FROM workflows WHERE status IN ('running', 'waiting_approval', 'blocked') OR COALESCE(ended_at, updated_at) >= ? ORDER BY seq`,
  milestones: `SELECT workflow_id, COUNT(done_at) AS done, COUNT(*) AS total FROM workflow_milestones WHERE workflow_id IN (SELECT value FROM json_each(?)) GROUP BY workflow_id`,
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

/** The floor's rows as they are now, read in one snapshot so they agree with each other. */
export async function readFloorInput(db: Database.Database, o: FloorReadOptions): Promise<FloorInput> {
  const doneLimit = Math.max(0, o.doneLimit ?? DEFAULT_DONE_LIMIT);
  const windowMs = o.failedWindowMs ?? DEFAULT_FAILED_WINDOW_MS;
  const since = o.now - windowMs;
  // The layer over this connection (mixed period: until step 7, workflows are read
  // synchronously on the same connection, inside the same snapshot).
  return snapshot(layerOf(db), async (r) => {
    const rows = await floorRows(r, { now: o.now, since, doneLimit, project: o.project });
    const st = statements(db);
    const workflows = st.workflows.all(since) as WorkflowRow[];
    return {
      jobs: rows.jobs,
      requests: rows.requests,
      warnings: rows.warnings,
      workflows,
      milestones: workflows.length ? st.milestones.all(JSON.stringify(workflows.map((w) => w.id))) as { workflow_id: string; done: number; total: number }[] : [],
      locks: rows.locks,
      lockWaits: rows.lockWaits,
      overlaps: rows.overlaps,
      deps: rows.deps,
      counts: rows.counts as StatusCount[],
      hub: o.hub,
      cap: o.cap,
      source: o.source,
      doneLimit,
      failedWindowMs: windowMs,
      ...(o.project !== undefined ? { project: o.project } : {}),
      ...(rows.archived.length ? { archived: rows.archived } : {}),
      limits: rows.limits as LimitRow[],
      runs: await readFloorRuns(r, since),
    };
  });
}

/** The floor as it is now. */
export async function readFloor(db: Database.Database, o: FloorReadOptions): Promise<Floor> {
  return buildFloor(await readFloorInput(db, o), o.now);
}
