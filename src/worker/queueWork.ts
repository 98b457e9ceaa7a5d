// A worker's work source (issue 30, docs/workers-plan.md §3): instead of the hub's queued jobs, the
// attempts in the pg-boss queues this worker serves. A round: free = capacity − its running
// children; for each queue it serves (its CLIs, its name, its labels: src/domain/placement.ts
// `serves`), fetch up to `free` queue jobs; each → our compare-and-set claim (claimQueuedAttempt:
// queued → running, owned by this worker's hub, jobs.worker/worker_epoch) and, when won, the child
// started by the runner's one launch path. A claim that loses (cancelled meanwhile, taken, stale)
// completes its queue job. The queue job of a won claim is completed when the attempt ends: our
// tables decide what happens next (retries are ours; pg-boss never retries: retryLimit 0).
// Woken by other hubs' `job` events (the relay: a hub that queued a job) and a slow poll.
import type PgBoss from 'pg-boss';
import type { JobRow } from '../store/jobs.js';
import type { JobStatus } from '../domain/job.js';
import type { HubContext } from '../services/context.js';
import type { WorkRunner, WorkSource } from '../services/workSource.js';
import { activeOf, claimQueuedAttempt, getJob, updateJob } from '../store/sql/jobs.js';
import type { AttemptMessage } from '../store/sql/queue.js';
import { parseQueueName, serves, type WorkerSeat } from '../domain/placement.js';
import { errorMessage } from '../errors.js';

/** Where a job fetched by this worker works, on this machine: its own clone (src/worker/repos.ts). */
export interface WorkerRepoPort {
  /** Make the job's worktree ready in this worker's clone of its remote before its child starts
   * (the row gets work_dir, branch, base_commit). Rejects with a SetupFailed the person can act on. */
  prepare(job: JobRow): Promise<unknown>;
  /** At the attempt's end: the agent's work committed in the clone and the branch pushed to the remote. */
  publish(job: JobRow): Promise<void>;
}

export interface QueueWorkOptions {
  ctx: HubContext;
  boss: PgBoss;
  /** Its name, labels and CLIs: which queues it serves. */
  seat: Pick<WorkerSeat, 'name' | 'labels' | 'clis'>;
  /** Children it runs at once. */
  capacity: number;
  /** Its lease epoch (WorkerHost: a fenced worker exits; started again, it registers under the next). */
  epoch: () => number;
  repos: WorkerRepoPort;
  /** The backstop poll, ms (woken by NOTIFY otherwise). */
  pollMs: number;
}

/** A fetched queue job this worker claimed and runs. */
interface Held { queue: string; id: string }

export class QueueWork implements WorkSource {
  private readonly held = new Map<string, Held>();
  private readonly owed = new Set<Promise<void>>();
  private armed = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly o: QueueWorkOptions) {}

  async round(r: WorkRunner): Promise<void> {
    if (this.closed) return;
    this.arm(r);
    const { ctx, boss, capacity } = this.o;
    let free = capacity - await activeOf(ctx.sql.db, r.hubId);
    if (free <= 0) return;
    // As a hub's first dispatch: a provider limit still in force from before wakes up on time.
    r.limits.start();
    const queues = (await boss.getQueues()).map((q) => q.name).filter((n) => serves(this.o.seat, n)).sort();
    for (const queue of queues) {
      const provider = parseQueueName(queue)!.cli;
      while (free > 0 && !r.stopping) {
        // A provider at its limit: its queues wait (the limiter's wake-up starts a round); half open: one probe.
        const room = r.limits.room(provider);
        if (room === 'none') break;
        const got = await boss.fetch<AttemptMessage>(queue, { batchSize: room === 'one' ? 1 : free });
        if (!got.length) break;
        for (const m of got) {
          if (await this.take(r, queue, provider, m)) free--;
        }
        if (room === 'one') break;
      }
    }
  }

  /** Claim one fetched queue job; true when this worker runs it now. */
  private async take(r: WorkRunner, queue: string, provider: string, m: PgBoss.Job<AttemptMessage>): Promise<boolean> {
    const { ctx, boss, seat } = this.o;
    const jobId = typeof m.data?.jobId === 'string' ? m.data.jobId : undefined;
    if (!jobId) {
      ctx.log.warn({ queue, id: m.id, data: m.data }, 'a queue job without a job id: completed, nothing run');
      await boss.complete(queue, m.id, { outcome: 'not an attempt' });
      return false;
    }
    if (r.stopping) {
      // Fetched as the worker began to stop: not started here. Its queue job stays active until its
      // expiry; taking such attempts back is the lost-worker step's (docs/workers-plan.md §5).
      ctx.log.warn({ jobId, queue }, 'fetched while stopping: not started');
      return false;
    }
    // Fetched: it is ours to decide now. A probe is said so in the log (the limiter's own record); 'wait' cannot
    // follow the room just read, and a job fetched is never left unstarted and unreleased.
    r.limits.admit(provider, jobId);
    let job: JobRow | undefined;
    try {
      job = await r.claimAndStart(async (c) => {
        const won = await claimQueuedAttempt(ctx.sql.db, {
          ...c, jobId, queueId: m.id, hubId: r.hubId, worker: seat.name, epoch: this.o.epoch(), files: (n) => c.files(jobId, n),
        });
        // Held from the claim on: however soon its attempt ends, its queue job is completed then.
        if (won) this.held.set(jobId, { queue, id: m.id });
        return won;
      });
    } catch (err) {
      ctx.log.error({ err: errorMessage(err), jobId, queue }, 'claiming a fetched attempt failed: its queue job is completed, the job stays as it is');
    }
    if (!job) {
      await boss.complete(queue, m.id, { outcome: 'not claimed' });
      ctx.log.info({ jobId, queue }, 'a fetched attempt was not ours to start (cancelled, taken or stale): queue job completed');
      return false;
    }
    ctx.log.info({ jobId, queue, worker: seat.name }, 'claimed an attempt from the queue');
    return true;
  }

  /** The first round starts the wake-ups: other hubs' job events (a job queued anywhere) and the poll. */
  private arm(r: WorkRunner): void {
    if (this.armed) return;
    this.armed = true;
    const wake = (): void => void r.dispatch();
    this.unsubscribe = this.o.ctx.bus.on('job', (ev) => { if (ev.status === 'queued') wake(); }, { remote: 'only', resync: wake });
    this.timer = setInterval(wake, this.o.pollMs);
    this.timer.unref();
  }

  async prepare(job: JobRow): Promise<void> {
    await this.o.repos.prepare(job);
  }

  /** A worker's job is committed in its clone and its branch pushed, before its dependents settle.
   * Whatever happens, the row ends up with diff_stat or git_note: waits on it end (awaitingPublish). */
  async finish(job: JobRow): Promise<void> {
    const { ctx } = this.o;
    try {
      await this.o.repos.publish(job);
    } catch (err) {
      const row = await getJob(ctx.sql.db, job.id);
      if (row && row.diff_stat === null && row.git_note === null) {
        await updateJob(ctx.sql.db, job.id, { git_note: `not published from worker ${this.o.seat.name}: ${errorMessage(err)}` }, ctx.clock.now());
      }
      throw err;
    }
  }

  /** Every job a worker starts came from the queue: its directory is checked (or made) on this machine. */
  mustPrepare(): boolean {
    return true;
  }

  ended(jobId: string, status: JobStatus): void {
    const h = this.held.get(jobId);
    if (!h) return;
    this.held.delete(jobId);
    const { ctx, boss } = this.o;
    const p = boss.complete(h.queue, h.id, { status })
      .catch((err: unknown) => ctx.log.warn({ err: errorMessage(err), jobId }, 'completing a queue job failed (its expiry is the backstop)'))
      .finally(() => this.owed.delete(p));
    this.owed.add(p);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    while (this.owed.size) await Promise.all([...this.owed]);
  }
}
