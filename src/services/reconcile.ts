// Start-up reconciliation: after a crash (kill -9 of the hub) the database may still say
// jobs are running. Their processes are orphans we can no longer supervise: end them, and
// mark each job `interrupted` (resumable: its session is kept) or requeue it under its retry
// policy. Nothing is lost, nothing is left `running`.
//
// Only what this hub may settle (docs/store-plan.md §3.4, §3.8; docs/decisions.md "Hubs own
// their jobs"): on SQLite, everything (one hub per database, as one hub per state directory); on
// PostgreSQL, where other hubs share the database, the jobs of earlier hubs of this state
// directory on this host (this hub holds the directory's claim, so they are gone: their rows are
// marked dead) and running jobs nobody owns (from before ownership). Another hub's running job is
// not touched; a hub that died elsewhere is reconciled by the heartbeat (./hubReconcile.ts).
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { HubContext } from './context.js';
import { sql } from 'kysely';
import { batch } from '../store/sql/tx.js';
import { attemptUpdate, attemptsOf, eventInsert, jobUpdate } from '../store/sql/jobs.js';
import type { JobRow } from '../store/jobs.js';
import { dbNow } from '../store/sql/hubs.js';
import { pidAlive, signalGroup } from '../launch/process.js';

export interface ReconcileReport {
  interrupted: string[];
  requeued: string[];
  killed: number[];
  /** Holders whose locks were released because their job is not running. */
  locksReleasedFor?: string[];
  /** Pending requests of agents that did not survive. */
  requestsCancelled?: string[];
  /** Earlier hubs of this state directory whose jobs this start settled (their rows marked dead). */
  predecessors?: string[];
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

/**
 * The earlier hubs this start takes over: SQLite, every other; PostgreSQL, those of this state
 * directory on this host. Those neither stopped nor dead yet are marked dead (a crash); all are
 * returned, so what they still own is settled here.
 */
async function predecessors(ctx: HubContext, me: string): Promise<string[]> {
  const q = ctx.sql.db;
  const here = ctx.sql.dialect === 'sqlite' ? sql<boolean>`1 = 1` : sql<boolean>`host = ${hostname()} AND state_dir = ${ctx.config.home}`;
  await q.updateTable('hubs').set({ dead_at: dbNow(ctx.sql.dialect) })
    .where(here).where('id', '!=', me).where('dead_at', 'is', null).where('stopped_at', 'is', null).execute();
  return (await q.selectFrom('hubs').select('id').where(here).where('id', '!=', me).execute()).map((r) => r.id);
}

export async function reconcile(ctx: HubContext, me: string): Promise<ReconcileReport> {
  const report: ReconcileReport = { interrupted: [], requeued: [], killed: [] };
  const now = ctx.clock.now();
  const q = ctx.sql.db;
  const before = await predecessors(ctx, me);
  report.predecessors = before;
  const everything = ctx.sql.dialect === 'sqlite';
  const theirs = everything ? sql<boolean>`(hub_id IS NULL OR hub_id <> ${me})`
    : before.length ? sql<boolean>`hub_id IN (${sql.join(before)})` : sql<boolean>`1 = 0`;
  const settle = (await q.selectFrom('jobs').selectAll().where('status', 'in', ['running', 'frozen', 'needs_input'])
    .where(everything ? sql<boolean>`1 = 1` : sql<boolean>`(hub_id IS NULL OR ${theirs})`)
    .orderBy('seq').execute()) as JobRow[];
  for (const j of settle) {
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
        ? { status: 'queued', pid: null, token_hash: null, hub_id: me }
        : { status: 'interrupted', pid: null, token_hash: null, ended_at: now, failure_class: 'interrupted', error, hub_id: me }, now),
      eventInsert(q, j.id, now, 'reconciled', { to: requeue ? 'queued' : 'interrupted' }),
    ]);
    (requeue ? report.requeued : report.interrupted).push(j.id);
  }
  // What the earlier hubs owned is this hub's now: their jobs (their files are on this machine;
  // an interrupted one resumed later runs here), and the runs, workflows and debates they drove.
  await q.updateTable('jobs').set({ hub_id: me }).where(theirs).execute();
  await q.updateTable('runs').set({ hub_id: me }).where(theirs).execute();
  await q.updateTable('workflows').set({ hub_id: me }).where(theirs).execute();
  await q.updateTable('debates').set({ hub_id: me }).where(theirs).execute();
  return report;
}
