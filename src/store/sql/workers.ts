// The worker hosts (`overseer worker`, issue 30; docs/workers-plan.md): registration, heartbeat,
// clean stop, and the list `overseer hosts` shows. A worker holds a lease: its heartbeat, on the
// database's clock, keeps it for `lease_ms`. Each registration under a name takes the next lease
// epoch, and every write a worker makes for its own row carries its epoch and needs its lease
// still held, so a worker whose lease ended (stopped, cut off, paused longer than the lease) can
// no longer write as that worker: its beat matches nothing and it knows it is fenced.
//
// Every decision here is one conditional statement (no read-then-write), the same on SQLite and
// PostgreSQL: a registration takes the name only if nobody holds its lease, a beat renews only
// the lease it holds.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Schema, WorkersTable } from './schema.js';
import type { SqlDialect } from './open.js';
import { dbNow } from './hubs.js';

type Q = Kysely<Schema>;
export type WorkerRow = Selectable<WorkersTable>;

export interface WorkerIdentity {
  name: string;
  host: string;
  pid: number;
  capacity: number;
  labels: string[];
  /** CLI name → its `--version` line, for each agent CLI this host can run. */
  clis: Record<string, string>;
  version: string;
  leaseMs: number;
}

export type Registration =
  | { ok: true; epoch: number }
  /** Another process holds the name's lease: its row as it is. */
  | { ok: false; holder: WorkerRow; ageMs: number };

/** `heartbeat_at` is within the row's lease (the database's clock). */
const leaseHeld = (dialect: SqlDialect) => sql<boolean>`workers.heartbeat_at >= ${dbNow(dialect)} - workers.lease_ms`;

/**
 * Register under `w.name`: a new row at epoch 1, or the name's row taken over at the next epoch when
 * nobody holds its lease (stopped, lost, or a heartbeat older than its lease). A live holder is
 * not displaced: the answer names it.
 */
export async function registerWorker(q: Q, dialect: SqlDialect, w: WorkerIdentity): Promise<Registration> {
  const now = dbNow(dialect);
  const values = {
    name: w.name, host: w.host, pid: w.pid, capacity: w.capacity, labels_json: JSON.stringify(w.labels),
    clis_json: JSON.stringify(w.clis), version: w.version, lease_ms: w.leaseMs, epoch: 1, state: 'live' as const,
    started_at: now, heartbeat_at: now, stopped_at: null, lost_at: null, hub_id: null,
  };
  const row = await q.insertInto('workers').values(values)
    .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({
      host: eb.ref('excluded.host'), pid: eb.ref('excluded.pid'), capacity: eb.ref('excluded.capacity'),
      labels_json: eb.ref('excluded.labels_json'), clis_json: eb.ref('excluded.clis_json'), version: eb.ref('excluded.version'),
      lease_ms: eb.ref('excluded.lease_ms'), epoch: sql<number>`workers.epoch + 1`, state: 'live',
      started_at: eb.ref('excluded.started_at'), heartbeat_at: eb.ref('excluded.heartbeat_at'), stopped_at: null, lost_at: null, hub_id: null,
    })).where((eb) => eb.or([eb('workers.state', '<>', 'live'), eb.not(leaseHeld(dialect))])))
    .returning('epoch').executeTakeFirst();
  if (row) return { ok: true, epoch: Number(row.epoch) };
  const holder = (await listWorkers(q, dialect)).find((h) => h.row.name === w.name);
  if (!holder) return registerWorker(q, dialect, w); // its holder stopped between the two statements
  return { ok: false, holder: holder.row, ageMs: holder.ageMs };
}

/** Renew the lease of (`name`, `epoch`); false: it is not held any more (the worker is fenced). */
export async function beatWorker(q: Q, dialect: SqlDialect, name: string, epoch: number): Promise<boolean> {
  const r = await q.updateTable('workers').set({ heartbeat_at: dbNow(dialect) })
    .where('name', '=', name).where('epoch', '=', epoch).where('state', '=', 'live').where(leaseHeld(dialect))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** A clean stop of (`name`, `epoch`): nobody waits for its lease to run out. False: it was not live under that epoch. */
export async function stopWorker(q: Q, dialect: SqlDialect, name: string, epoch: number): Promise<boolean> {
  const r = await q.updateTable('workers').set({ state: 'stopped', stopped_at: dbNow(dialect) })
    .where('name', '=', name).where('epoch', '=', epoch).where('state', '=', 'live')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** What `overseer hosts` shows of one worker. `state` is `lost` for a live row whose lease ran out. */
export interface HostView {
  row: WorkerRow;
  /** ms since its last heartbeat, on the database's clock. */
  ageMs: number;
  state: WorkerRow['state'];
}

/** Every worker, by name, with its heartbeat's age and its state as of now. */
export async function listWorkers(q: Q, dialect: SqlDialect): Promise<HostView[]> {
  const rows = await q.selectFrom('workers').selectAll().select(sql<number>`${dbNow(dialect)} - heartbeat_at`.as('age_ms'))
    .orderBy('name').execute();
  return rows.map(({ age_ms, ...row }) => {
    const ageMs = Math.max(0, Number(age_ms));
    return { row, ageMs, state: row.state === 'live' && ageMs > Number(row.lease_ms) ? 'lost' : row.state };
  });
}

/** The worker whose hub row is `hubId` (a worker is a hub in worker mode: docs/workers-plan.md §3), if any. */
export async function workerOfHub(q: Q, hubId: string): Promise<WorkerRow | undefined> {
  return q.selectFrom('workers').selectAll().where('hub_id', '=', hubId).executeTakeFirst();
}

/**
 * Mark (`name`, `epoch`) lost (docs/workers-plan.md §1, §5): only while it is live under that
 * epoch — one conditional statement, so of several hubs that find it lost one marks it, and a
 * worker that registered again meanwhile (a new epoch) is not touched. Its own beat then matches
 * nothing (state is no longer live): it is fenced. The row as marked, or undefined.
 */
export async function markWorkerLost(q: Q, dialect: SqlDialect, name: string, epoch: number): Promise<WorkerRow | undefined> {
  return q.updateTable('workers').set({ state: 'lost', lost_at: dbNow(dialect) })
    .where('name', '=', name).where('epoch', '=', epoch).where('state', '=', 'live')
    .returningAll().executeTakeFirst();
}

/** The host of each hub of `ids` (hubs.host): where the jobs a hub ran ran, for a job no worker claimed. */
export async function hubHosts(q: Q, ids: readonly (string | null | undefined)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => !!id))];
  if (!wanted.length) return new Map();
  const rows = await q.selectFrom('hubs').select(['id', 'host']).where('id', 'in', wanted).execute();
  return new Map(rows.map((r) => [r.id, r.host]));
}

/** A worker's jobs that hold a slot (running, needs_input, frozen), per worker name and the lease epoch that claimed them. */
export interface WorkerJobs {
  worker: string;
  epoch: number | null;
  n: number;
}

/** Jobs holding a slot on some worker (jobs.worker), grouped by worker and claiming epoch. */
export async function activeWorkerJobs(q: Q): Promise<WorkerJobs[]> {
  const rows = await q.selectFrom('jobs').select(['worker', 'worker_epoch', sql<number | string>`COUNT(*)`.as('n')])
    .where('worker', 'is not', null).where('status', 'in', ['running', 'needs_input', 'frozen'])
    .groupBy(['worker', 'worker_epoch']).orderBy('worker').execute();
  return rows.map((r) => ({ worker: r.worker!, epoch: r.worker_epoch === null ? null : Number(r.worker_epoch), n: Number(r.n) }));
}

/** The running count `overseer hosts` shows: a worker's jobs of its current epoch (an older epoch's are fenced). */
export function runningOf(v: HostView, jobs: readonly WorkerJobs[]): number {
  return jobs.filter((w) => w.worker === v.row.name && (w.epoch === null || w.epoch === Number(v.row.epoch))).reduce((a, w) => a + w.n, 0);
}

/** The worker's hub (its row in `hubs`: the owner of the jobs it claims), under its epoch only. False: not live under that epoch. */
export async function setWorkerHub(q: Q, name: string, epoch: number, hubId: string): Promise<boolean> {
  const r = await q.updateTable('workers').set({ hub_id: hubId })
    .where('name', '=', name).where('epoch', '=', epoch).where('state', '=', 'live')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
