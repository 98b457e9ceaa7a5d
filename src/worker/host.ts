// One `overseer worker` process's hold on its row (issue 30; docs/workers-plan.md): registered at
// start under its name and the next lease epoch, a heartbeat every sixth of the lease, and a
// clean stop. A beat that matches nothing means the lease ended (cut off or paused longer than
// the lease, or another process took the name after that): the worker is fenced — whatever it
// ran under that epoch is no longer its to record: it kills its children and exits (onFenced), and
// its service manager starts it again under a new epoch. A holder that is live under
// the name refuses the registration: two processes never share one name. Each registration writes
// the worker's hub id (src/worker/run.ts: a worker is a hub in worker mode) into its row.
import type { Logger } from '../log.js';
import type { SqlDb } from '../store/sql/open.js';
import { beatWorker, registerWorker, setWorkerHub, stopWorker, type WorkerIdentity } from '../store/sql/workers.js';

/** Another live process holds the name (exit, do not retry). */
export class WorkerNameTaken extends Error {}

export interface WorkerHostOptions {
  sql: SqlDb;
  identity: WorkerIdentity;
  /** Its hub's id (the worker is a hub in worker mode): written into its row at each registration. */
  hubId: string;
  log: Logger;
  /** The name was taken by another live process while this one was fenced: it cannot go on. */
  onLostName(err: WorkerNameTaken): void;
  /** Its lease ended (cut off or paused past it): its jobs are, or will be, another's. The worker
   * kills its children, records nothing for them and exits; its service manager starts it again
   * under the next epoch. Told once; the beats stop. */
  onFenced(): void;
}

export class WorkerHost {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private stopped = false;

  private constructor(private readonly o: WorkerHostOptions, private epochNow: number) {}

  /** Register and start beating; WorkerNameTaken when a live worker holds the name. */
  static async start(o: WorkerHostOptions): Promise<WorkerHost> {
    const h = new WorkerHost(o, await register(o));
    h.schedule();
    return h;
  }

  get epoch(): number {
    return this.epochNow;
  }

  get beatMs(): number {
    return Math.max(100, Math.floor(this.o.identity.leaseMs / 6));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => this.schedule());
    }, this.beatMs);
  }

  private async tick(): Promise<void> {
    const { sql, identity, log } = this.o;
    try {
      if (await beatWorker(sql.db, sql.dialect, identity.name, this.epochNow)) return;
      if (this.stopped) return;
      log.error({ worker: identity.name, epoch: this.epochNow }, 'this worker\'s lease ended (no heartbeat within the lease): fenced; its children are stopped and nothing is recorded for them');
      this.stopped = true;
      this.o.onFenced();
    } catch (err) {
      if (err instanceof WorkerNameTaken) {
        this.stopped = true;
        this.o.onLostName(err);
        return;
      }
      log.warn({ err: (err as Error).message, worker: identity.name }, 'worker heartbeat failed: trying again next beat');
    }
  }

  /** Stop beating and mark the row stopped (under this epoch only). */
  async stop(): Promise<boolean> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    return stopWorker(this.o.sql.db, this.o.sql.dialect, this.o.identity.name, this.epochNow);
  }
}

async function register(o: WorkerHostOptions): Promise<number> {
  const r = await registerWorker(o.sql.db, o.sql.dialect, o.identity);
  if (r.ok) {
    await setWorkerHub(o.sql.db, o.identity.name, r.epoch, o.hubId);
    return r.epoch;
  }
  const h = r.holder;
  throw new WorkerNameTaken(`a worker named ${h.name} is live on host ${h.host} (pid ${h.pid}, heartbeat ${(r.ageMs / 1000).toFixed(1)} s ago, lease ${Number(h.lease_ms) / 1000} s): give this one another --name, or stop that one first`);
}
