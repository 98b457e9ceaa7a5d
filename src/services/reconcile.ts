// Start-up reconciliation: after a crash (kill -9 of the hub) the database may still say
// jobs are running. Their processes are orphans we can no longer supervise: end them, and
// mark each job `interrupted` (resumable: its session is kept) or requeue it under its retry
// policy. Nothing is lost, nothing is left `running`.
import { readFileSync } from 'node:fs';
import type { HubContext } from './context.js';
import { batch } from '../store/sql/tx.js';
import { attemptUpdate, attemptsOf, eventInsert, jobUpdate, jobsByStatus } from '../store/sql/jobs.js';
import { pidAlive, signalGroup } from '../launch/process.js';

export interface ReconcileReport {
  interrupted: string[];
  requeued: string[];
  killed: number[];
  /** Holders whose locks were released because their job is not running. */
  locksReleasedFor?: string[];
  /** Pending requests of agents that did not survive. */
  requestsCancelled?: string[];
}

/** True when pid is still the child we launched for jobId (guards against pid reuse). */
function isOurChild(pid: number, jobId: string): boolean {
  if (!pidAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`OVERSEER_AGENT_ID=${jobId}`);
  } catch {
    return false;
  }
}

export async function reconcile(ctx: HubContext): Promise<ReconcileReport> {
  const report: ReconcileReport = { interrupted: [], requeued: [], killed: [] };
  const now = ctx.clock.now();
  const q = ctx.sql.db;
  for (const j of await jobsByStatus(q, 'running', 'frozen', 'needs_input')) {
    if (j.pid && isOurChild(j.pid, j.id)) {
      signalGroup(j.pid, 'SIGCONT');
      signalGroup(j.pid, 'SIGKILL');
      report.killed.push(j.pid);
    }
    const attempts = await attemptsOf(q, j.id);
    const requeue = j.retry !== 'none' && attempts.length < ctx.config.maxAttempts;
    const error = 'the hub stopped while this agent ran (crash or kill); its process was ended';
    const last = attempts.at(-1);
    await batch(q, [
      ...(last && last.ended_at === null ? [attemptUpdate(q, j.id, last.n, { status: 'interrupted', ended_at: now, failure_class: 'interrupted', error })] : []),
      jobUpdate(q, j.id, requeue
        ? { status: 'queued', pid: null, token_hash: null }
        : { status: 'interrupted', pid: null, token_hash: null, ended_at: now, failure_class: 'interrupted', error }, now),
      eventInsert(q, j.id, now, 'reconciled', { to: requeue ? 'queued' : 'interrupted' }),
    ]);
    (requeue ? report.requeued : report.interrupted).push(j.id);
  }
  return report;
}
