// Where a job runs, and the worker queue it waits in (issue 30 step 2; docs/workers-plan.md §2 and §4,
// docs/decisions.md "Placement: labels and host" and "The hub sends queued jobs to the worker queue").
// One interface, two implementations, chosen once in the composition root:
// - SQLite (`HUB_ONLY`): every job runs on the hub's machine, labels are only tags, a `host` is
//   refused with place()'s message; no pg-boss is ever opened.
// - PostgreSQL (`WorkerQueue`): a spawn reads the `workers` rows in its transaction and places the
//   job by src/domain/placement.ts `place()`; a job placed in the queue gets a pg-boss job, sent in
//   the very transaction that makes it queued (spawn, resume, retry, a dependent or a schedule's
//   occurrence coming due), and withdrawn in the transaction that cancels or fails it. pg-boss is
//   opened at the first job placed in the queue (a crew without workers never opens it) and
//   stopped with the hub.
import { git } from '../git/exec.js';
import { place, placementLabels, type Placement, type WorkerSeat } from '../domain/placement.js';
import { listWorkers } from '../store/sql/workers.js';
import { cancelAttempt, ensureQueue, openAttemptQueue, sendAttempt } from '../store/sql/queue.js';
import { getJob, lastAttempt, updateJob } from '../store/sql/jobs.js';
import type { Q } from '../store/sql/tx.js';
import type { SqlDb } from '../store/sql/open.js';
import type { JobRow } from '../store/jobs.js';
import type { Logger } from '../log.js';
import { PlacementError } from '../errors.js';

/** What a spawn asks of placement (JobService.create). */
export interface PlaceAsk {
  cli: string;
  host: string | null;
  /** The job's labels as given (tags included). */
  labels: readonly string[];
  worktree: boolean;
  repoRoot: string | null;
}

/** A placement checked before the spawn's transaction (nothing written yet). */
export interface Planned {
  ask: PlaceAsk;
  /** origin's URL of the job's repository (a worktree job), read before the transaction. */
  remote: string | null;
  /** Whether any worker row existed when it was read: none, and the job is the hub's (no check in the transaction). */
  workers: boolean;
}

/** The job's placement columns (migration 34) as the spawn's transaction decided them. */
export type PlacedColumns = Partial<Pick<JobRow, 'placement' | 'queue_name' | 'place_host' | 'place_labels_json' | 'repo_remote'>>;

export interface AttemptQueueService {
  /** Before the spawn's transaction: refuse what cannot be placed (PlacementError, nothing written)
   * and make the queue the job will go to (pg-boss DDL, never inside our transaction). */
  plan(ask: PlaceAsk): Promise<Planned>;
  /** In the spawn's transaction: the placement decided from the `workers` rows read there. */
  place(trx: Q, p: Planned): Promise<PlacedColumns>;
  /** Before a transaction that queues `job` again (resume, retry, dependent, due): make its queue. */
  prepare(job: Pick<JobRow, 'placement' | 'queue_name'>): Promise<void>;
  /** `jobId` became queued in `trx`: a job of the queue gets its queue job there (and is nobody's
   * until a worker claims it). The one helper every path that queues a job calls. */
  queued(trx: Q, jobId: string): Promise<void>;
  /** `jobId` stops being queued in `trx` (cancelled, failed before it started): its queue job is withdrawn. */
  withdraw(trx: Q, jobId: string): Promise<void>;
  stop(): Promise<void>;
}

/** SQLite: no workers, no pg-boss. A host is refused as place() refuses it with no worker registered. */
export const HUB_ONLY: AttemptQueueService = {
  plan: async (ask) => {
    const p = place({ cli: ask.cli, host: ask.host, labels: ask.labels, portable: false }, []);
    if (p.where === 'refused') throw new PlacementError(`${p.message} (this hub keeps its state in SQLite: worker hosts need a PostgreSQL database)`);
    return { ask, remote: null, workers: false };
  },
  place: async () => ({}),
  prepare: async () => undefined,
  queued: async () => undefined,
  withdraw: async () => undefined,
  stop: async () => undefined,
};

/** origin's fetch URL of the repository at `repoRoot`, or null when it has none. */
export async function originUrl(repoRoot: string): Promise<string | null> {
  const r = await git(['remote', 'get-url', 'origin'], { cwd: repoRoot, allowFail: true });
  const url = r.code === 0 ? r.stdout.trim() : '';
  return url || null;
}

type Boss = Awaited<ReturnType<typeof openAttemptQueue>>;

export interface WorkerQueueOptions {
  sql: SqlDb;
  url: string;
  log: Logger;
  /** A job's timeout when it has none (config defaultTimeoutS): the queue job's expiry backstop. */
  defaultTimeoutS: number;
  now: () => number;
}

/** The worker rows as placement sees them (live: the lease held on the database's clock, as `overseer hosts` computes it). */
async function seats(q: Q, sql: SqlDb): Promise<WorkerSeat[]> {
  return (await listWorkers(q, sql.dialect)).map((h) => ({
    name: h.row.name, labels: JSON.parse(h.row.labels_json) as string[], clis: JSON.parse(h.row.clis_json) as Record<string, string>, live: h.state === 'live',
  }));
}

/** PostgreSQL: placement from the `workers` rows, and the pg-boss attempt queue. */
export class WorkerQueue implements AttemptQueueService {
  private boss?: Promise<Boss>;
  private stopped = false;

  constructor(private readonly o: WorkerQueueOptions) {}

  /** pg-boss, opened at its first use (a crew without workers never opens it). */
  private open(): Promise<Boss> {
    if (this.stopped) return Promise.reject(new Error('the hub is stopping: the worker queue is closed'));
    this.boss ??= openAttemptQueue({ url: this.o.url, log: this.o.log }).catch((err: unknown) => {
      this.boss = undefined;
      throw err;
    });
    return this.boss;
  }

  private decide(p: Planned, workers: readonly WorkerSeat[]): Placement {
    const r = place({ cli: p.ask.cli, host: p.ask.host, labels: p.ask.labels, portable: p.ask.worktree && p.remote !== null }, workers);
    if (r.where === 'refused') throw new PlacementError(r.message);
    return r;
  }

  async plan(ask: PlaceAsk): Promise<Planned> {
    const workers = await seats(this.o.sql.db, this.o.sql);
    // No worker registered and no host asked: the hub's, as before (no git, no pg-boss).
    if (!workers.length && !ask.host) return { ask, remote: null, workers: false };
    const remote = ask.worktree && ask.repoRoot ? await originUrl(ask.repoRoot) : null;
    const planned = { ask, remote, workers: true };
    const r = this.decide(planned, workers);
    if (r.where === 'queue') await ensureQueue(await this.open(), r.queue);
    return planned;
  }

  async place(trx: Q, p: Planned): Promise<PlacedColumns> {
    if (!p.workers) return { placement: 'hub' };
    // Decided again on the rows read in the spawn's transaction: a worker may have come or gone since the plan.
    const r = this.decide(p, await seats(trx, this.o.sql));
    if (r.where === 'hub') return { placement: 'hub', repo_remote: p.remote };
    if (r.where !== 'queue') throw new Error('unreachable: decide() throws on refused');
    const labels = placementLabels(r.labels);
    return { placement: 'queue', queue_name: r.queue, place_host: r.host, place_labels_json: labels.length ? JSON.stringify(labels) : null, repo_remote: p.remote };
  }

  async prepare(job: Pick<JobRow, 'placement' | 'queue_name'>): Promise<void> {
    if (job.placement === 'queue' && job.queue_name) await ensureQueue(await this.open(), job.queue_name);
  }

  async queued(trx: Q, jobId: string): Promise<void> {
    const job = await getJob(trx, jobId);
    if (!job || job.placement !== 'queue' || !job.queue_name) return;
    // Made before the transaction by plan/prepare; a queue this process has not made yet is made
    // here on pg-boss's own connections (its DDL never joins our transaction).
    const boss = await this.open();
    await ensureQueue(boss, job.queue_name);
    const attempt = ((await lastAttempt(trx, jobId))?.n ?? 0) + 1;
    const expire = (job.timeout_s ?? this.o.defaultTimeoutS) + 5 * 60;
    const id = await sendAttempt(trx, boss, job.queue_name, { jobId, attempt }, expire);
    // A queue job belongs to whichever worker claims it: nobody owns the job until then. null: one
    // is waiting for it already (the singleton key), whose id the row keeps.
    await updateJob(trx, jobId, { hub_id: null, ...(id ? { queue_id: id } : {}) }, this.o.now());
  }

  async withdraw(trx: Q, jobId: string): Promise<void> {
    const job = await getJob(trx, jobId);
    if (!job || job.placement !== 'queue' || !job.queue_name || !job.queue_id) return;
    await cancelAttempt(trx, await this.open(), job.queue_name, job.queue_id);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const b = this.boss;
    this.boss = undefined;
    if (!b) return;
    const boss = await b.catch(() => undefined);
    await boss?.stop({ graceful: false, wait: true }).catch((err: unknown) => this.o.log.warn({ err }, 'the worker queue (pg-boss) did not stop cleanly'));
  }
}
