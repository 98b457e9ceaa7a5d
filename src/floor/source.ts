// Reads the rows of the floor from the state database through the layer: the hub's, or the CLI's
// read-only one (src/store/sql/readOnly.ts: SQLite's file or a PostgreSQL pool) when no hub
// runs. SELECTs only, in one snapshot
// (src/store/sql/tx.ts): jobs, requests, warnings, locks, overlaps and workflows through the layer
// (src/store/sql/floor.ts, the workflows' two statements here), script runs (src/floor/runs.ts),
// READY TO SHIP (src/floor/ship.ts) and the crew brief (src/brief/store.ts).
// A fixed set of statements whatever the number of jobs.
import type { WorkflowRow } from '../store/workflows.js';
import { buildFloor, DEFAULT_DONE_LIMIT, DEFAULT_FAILED_WINDOW_MS, type FloorHubInfo, type FloorInput, type StatusCount } from './model.js';
import type { Floor } from './types.js';
import { readFloorRuns } from './runs.js';
import { readShipRows } from './ship.js';
import { readBrief } from '../brief/store.js';
import type { LimitRow } from '../limits/store.js';
import { floorRows } from '../store/sql/floor.js';
import { snapshot, type Q } from '../store/sql/tx.js';
import { sql } from 'kysely';
import { hostname } from 'node:os';
import { hubHosts, listWorkers } from '../store/sql/workers.js';
import { isPostgres } from '../store/sql/tx.js';
import type { FloorWorkerRow } from './workers.js';

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

/** Live workflows and those that ended since `since`, in creation order (the same statement on both databases). */
async function floorWorkflows(r: Q, since: number): Promise<WorkflowRow[]> {
  return (await sql<WorkflowRow>`SELECT * FROM workflows WHERE status IN ('running', 'waiting_approval', 'blocked') OR COALESCE(ended_at, updated_at) >= ${since} ORDER BY seq`.execute(r)).rows;
}

/** Milestones done and in all, per workflow of `ids`. */
async function floorMilestones(r: Q, ids: readonly string[]): Promise<{ workflow_id: string; done: number; total: number }[]> {
  if (!ids.length) return [];
  const rows = (await sql<{ workflow_id: string; done: number | string; total: number | string }>`SELECT workflow_id, COUNT(done_at) AS done, COUNT(*) AS total FROM workflow_milestones WHERE workflow_id IN (${sql.join(ids)}) GROUP BY workflow_id`.execute(r)).rows;
  return rows.map((m) => ({ workflow_id: m.workflow_id, done: Number(m.done), total: Number(m.total) }));
}

/** The worker hosts as of now (src/floor/workers.ts), and the hosts of the hubs the jobs name. A SQLite
 * file from before the workers table (read by a newer CLI) has none; PostgreSQL's read-only CLI refuses an
 * older schema before it gets here, and a failed statement there would abort the snapshot. */
async function floorHosts(r: Q, jobs: readonly { hub_id?: string | null }[]): Promise<Pick<FloorInput, 'workers' | 'hubHosts' | 'localHost'>> {
  if (!isPostgres(r)) {
    try {
      return await readHosts(r, jobs);
    } catch {
      return { localHost: hostname() };
    }
  }
  return readHosts(r, jobs);
}

async function readHosts(r: Q, jobs: readonly { hub_id?: string | null }[]): Promise<Pick<FloorInput, 'workers' | 'hubHosts' | 'localHost'>> {
  const workers = (await listWorkers(r, isPostgres(r) ? 'postgres' : 'sqlite')).map((v): FloorWorkerRow => ({
    name: v.row.name, host: v.row.host, state: v.state, epoch: Number(v.row.epoch), lease_ms: Number(v.row.lease_ms), age_ms: v.ageMs, heartbeat_at: Number(v.row.heartbeat_at),
  }));
  const hubs = await hubHosts(r, jobs.map((j) => j.hub_id));
  return { workers, hubHosts: [...hubs].map(([id, host]) => ({ id, host })), localHost: hostname() };
}

/** The floor's rows as they are now, read in one snapshot so they agree with each other. */
export async function readFloorInput(q: Q, o: FloorReadOptions): Promise<FloorInput> {
  const doneLimit = Math.max(0, o.doneLimit ?? DEFAULT_DONE_LIMIT);
  const windowMs = o.failedWindowMs ?? DEFAULT_FAILED_WINDOW_MS;
  const since = o.now - windowMs;
  return snapshot(q, async (r) => {
    const rows = await floorRows(r, { now: o.now, since, doneLimit, project: o.project });
    const workflows = await floorWorkflows(r, since);
    return {
      jobs: rows.jobs,
      requests: rows.requests,
      warnings: rows.warnings,
      workflows,
      milestones: await floorMilestones(r, workflows.map((w) => w.id)),
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
      ship: await readShipRows(r, { project: o.project }),
      brief: await readBrief(r),
      ...(await floorHosts(r, rows.jobs)),
    };
  });
}

/** The floor as it is now. */
export async function readFloor(q: Q, o: FloorReadOptions): Promise<Floor> {
  return buildFloor(await readFloorInput(q, o), o.now);
}
