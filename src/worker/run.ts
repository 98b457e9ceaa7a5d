// `overseer worker`'s process (issue 30, docs/workers-plan.md §3): a hub in worker mode. It opens a
// hub on its own state directory (its OVERSEER_HOME: hub.json, its children's transcripts, codex
// home, logs) against the crew's PostgreSQL database, without upgrading the schema, serving HTTP on
// 127.0.0.1 only — MCP and /hook for its own children, which never talk to another host — with its
// own `hubs` row (heartbeats, fencing), whose id goes into its `workers` row. Its runner takes work
// from the attempt queue (QueueWork) instead of the hub's own queued jobs. SIGTERM/SIGINT/SIGHUP:
// stop fetching, end its children `interrupted` as a hub's stop does, mark the worker stopped.
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { Hub } from '../hub.js';
import { acquireHubLock, type HubClaim } from '../hubfiles/hubLock.js';
import type { SqlDb } from '../store/sql/open.js';
import { openAttemptQueue } from '../store/sql/queue.js';
import { STOP_MARGIN_MS, withDeadline } from '../hubproc/stopDeadline.js';
import type { WorkerOptions } from './options.js';
import { WorkerHost, WorkerNameTaken } from './host.js';
import { QueueWork } from './queueWork.js';
import { WorkerRepos } from './repos.js';

export interface WorkerProcessOptions {
  config: Config & { databaseUrl: string };
  /** The worker's own connection for its `workers` row (opened without migrating). */
  sql: SqlDb;
  log: Logger;
  options: WorkerOptions;
  /** The backstop poll of the queue, ms (a job queued by a hub wakes the worker at once through NOTIFY). */
  pollMs: number;
  /** CLI name → version: what it can run. */
  clis: Record<string, string>;
  version: string;
  cwd: string;
  out: (s: string) => void;
  exit: (code: number) => void;
}

/** Thrown for what the person must fix (another process holds the name or the state directory). */
export class WorkerStartRefused extends Error {}

export async function runWorkerProcess(o: WorkerProcessOptions): Promise<void> {
  const { config, log, options } = o;
  const lock = await acquireHubLock(config.home, log);
  if (lock.kind === 'running') {
    const i = lock.info;
    throw new WorkerStartRefused(`a hub or worker already runs on the state directory ${config.home} (pid ${i.pid}, ${i.url}); give each worker its own OVERSEER_HOME`);
  }
  const claim: HubClaim = lock.claim;
  let running: Started;
  for (let attempt = 1; ; attempt++) {
    try {
      running = await startOnce(o, claim);
      break;
    } catch (err) {
      // Workers starting together on a new database can deadlock in PostgreSQL (the victim's transaction is
      // rolled back whole): the start is begun again, as PostgreSQL advises, a few times.
      if (isDeadlock(err) && attempt < START_TRIES) {
        log.warn({ err: (err as Error).message, attempt }, 'the worker\'s start was chosen as a deadlock\'s victim: starting again');
        continue;
      }
      await claim.release();
      if (err instanceof WorkerNameTaken) throw new WorkerStartRefused(err.message);
      throw err;
    }
  }
  const cliText = Object.entries(o.clis).map(([k, v]) => `${k} ${v}`).join(', ') || 'none found (it can run no agent)';
  o.out(`worker ${options.name} registered: epoch ${running.host.epoch}, capacity ${options.capacity}, labels ${options.labels.join(',') || '-'}, lease ${options.leaseMs / 1000} s; CLIs: ${cliText}\n`
    + `worker ${options.name} listening on ${running.hub.http!.url} (for its own agents), hub ${running.hub.hubId}\n`);
  let stopping = false;
  const stop = async (sig: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ worker: options.name, sig }, 'stopping the worker');
    let code = 0;
    const deadline = config.killGraceMs + STOP_MARGIN_MS;
    try {
      // Stops fetching, ends the children interrupted (their queue jobs completed), marks its hub stopped.
      await withDeadline(() => running.hub.stop(), deadline, () => {
        log.error({ deadline_ms: deadline }, 'the worker did not finish stopping in time: exiting without the rest of its stop');
        o.exit(1);
      });
      const marked = await running.host.stop();
      o.out(`worker ${options.name} stopped (${sig})${marked ? '' : ': its lease had already ended'}\n`);
    } catch (err) {
      process.stderr.write(`overseer: the worker's stop failed: ${(err as Error).message}\n`);
      code = 1;
    } finally {
      await running.boss.stop({ graceful: false, wait: true }).catch(() => undefined);
      await o.sql.close().catch(() => undefined);
      await claim.release();
      o.exit(code);
    }
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => void stop(sig));
}

const START_TRIES = 3;

const isDeadlock = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '40P01';

interface Started { hub: Hub; host: WorkerHost; boss: PgBoss }

/** The queue, the hub in worker mode and the worker's row; on a failure, what was started is stopped again. */
async function startOnce(o: WorkerProcessOptions, claim: HubClaim): Promise<Started> {
  const { config, log, options } = o;
  let boss: PgBoss | undefined;
  let hub: Hub | undefined;
  let host: WorkerHost | undefined;
  try {
    boss = await openAttemptQueue({ url: config.databaseUrl, log });
    const b = boss;
    hub = await Hub.open({
      config, projectDir: o.cwd, log, migrate: false, drives: false, publish: (info) => claim.publish(info),
      work: ({ ctx }) => new QueueWork({
        ctx, boss: b, seat: { name: options.name, labels: options.labels, clis: o.clis }, capacity: options.capacity,
        epoch: () => host?.epoch ?? 0, repos: new WorkerRepos(ctx, config.home), pollMs: o.pollMs,
      }),
      onFenced: () => {
        log.error('this worker\'s hub was found dead by another hub, which took over its jobs: its children were ended; exiting');
        void claim.release();
        o.exit(1);
      },
    });
    const h = hub;
    host = await WorkerHost.start({
      sql: o.sql, log, hubId: h.hubId,
      identity: { name: options.name, host: hostname(), pid: process.pid, capacity: options.capacity, labels: options.labels, clis: o.clis, version: o.version, leaseMs: options.leaseMs },
      onLostName: (err) => {
        process.stderr.write(`overseer: ${err.message}\n`);
        void h.stop().finally(() => claim.release().finally(() => o.exit(1)));
      },
      onFenced: () => h.fence(),
    });
    await hub.start();
    return { hub, host, boss };
  } catch (err) {
    await host?.stop().catch(() => undefined);
    await hub?.stop().catch(() => undefined);
    await boss?.stop({ graceful: false, wait: true }).catch(() => undefined);
    throw err;
  }
}
