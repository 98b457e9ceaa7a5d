// A worker lost (issue 30 point 3; docs/workers-plan.md §5): a worker is a hub in worker mode, so
// it is lost when another hub finds its hub row dead (src/store/sql/hubs.ts: the compare-and-set
// picks one hub) — and in that hub's reconcile transaction (./hubReconcile.ts):
// - its `workers` row becomes `lost` (compare-and-set on its epoch), which `overseer hosts` and
//   the floor show, and which fences the worker if it was only cut off (its beat matches nothing);
// - each of its running attempts ends `interrupted` (reason `worker_lost`: the worker, its host,
//   its last heartbeat), and its job goes back to the queue for the next attempt, with a queue job
//   sent in the same transaction — unless it ran maxAttempts attempts already. The job's `retry`
//   does not stop this (docs/decisions.md "A lost worker's attempts go back to the queue"): a lost
//   machine is not the agent's failure, and with the session file gone the requeue is the resume;
// - the next attempt is a new session whose first prompt carries what the lost attempt said and
//   did, from `transcript_rows` (workerLostSeed, read by the runner's launch).
import type { Kysely, Transaction } from 'kysely';
import type { Schema } from '../store/sql/schema.js';
import type { Q } from '../store/sql/tx.js';
import type { HubRow } from '../store/sql/hubs.js';
import type { AttemptRow } from '../store/jobs.js';
import type { PromptLibrary } from '../prompts/load.js';
import { markWorkerLost, workerOfHub, type WorkerRow } from '../store/sql/workers.js';
import { attemptUpdate, attemptsOf, eventInsert, jobUpdate } from '../store/sql/jobs.js';
import { transcriptTail } from '../store/sql/transcriptTail.js';
import { countsAgainstRetries } from '../domain/failure.js';

/** The reason a lost worker's attempt ended, first in its error and the kind of the job's event. */
export const WORKER_LOST = 'worker_lost';

/**
 * `jobId`, queued again in `trx`, gets its next queue job there (the queue job exists exactly when
 * the requeue commits), and `replacing` — the lost attempt's queue job, fetched by the lost worker —
 * is failed there. The hub's attempt queue (src/services/attemptQueue.ts `queued`).
 */
export type Requeue = (trx: Transaction<Schema>, jobId: string, replacing: string | null) => Promise<void>;

/** The worker a dead hub was, marked lost in `trx`; undefined for a plain hub (or a worker that registered again under a new epoch). */
export async function loseWorker(trx: Transaction<Schema>, dialect: 'sqlite' | 'postgres', dead: HubRow): Promise<WorkerRow | undefined> {
  const w = await workerOfHub(trx, dead.id);
  if (!w) return undefined;
  return (await markWorkerLost(trx, dialect, w.name, Number(w.epoch))) ?? w;
}

export interface LostJobFacts {
  now: number;
  me: string;
  dead: HubRow;
  /** The worker's row (as marked lost), when the dead hub was a worker's. */
  worker: WorkerRow | undefined;
  maxAttempts: number;
  requeue: Requeue;
  /** Why, after "worker <name> (host <host>, hub <id>)": default "stopped heartbeating; last heartbeat …". */
  why?: string;
}

/**
 * One running job of a lost worker, in the reconcile's transaction: its open attempt ends
 * `interrupted` (worker_lost), the job is queued again for the queue (owner, worker and epoch
 * cleared) and its queue job sent — or, at maxAttempts, ends `interrupted` saying so. Returns the
 * job's new status. Locks, waits and requests are the caller's (as for any dead hub's job).
 */
export async function loseJob(trx: Transaction<Schema>, jobId: string, f: LostJobFacts): Promise<'queued' | 'interrupted'> {
  const attempts = await attemptsOf(trx, jobId);
  const last = attempts.at(-1);
  const name = f.worker?.name ?? f.dead.host;
  const host = f.worker?.host ?? f.dead.host;
  const beat = f.worker ? Number(f.worker.heartbeat_at) : Number(f.dead.heartbeat_at);
  const error = `${WORKER_LOST}: worker ${name} (host ${host}, hub ${f.dead.id}) ${f.why ?? `stopped heartbeating; last heartbeat ${new Date(beat).toISOString()}; found lost by hub ${f.me}`}`;
  if (last && last.ended_at === null) await attemptUpdate(trx, jobId, last.n, { status: 'interrupted', ended_at: f.now, failure_class: 'interrupted', error }).execute();
  // Ended interrupted by its own worker's clean stop: the same reason, so the next attempt is seeded as after a loss.
  else if (last && last.status === 'interrupted' && f.why) await attemptUpdate(trx, jobId, last.n, { error }).execute();
  // Counted as the runner counts a retry's attempts (a provider limit's wait is no attempt used up).
  const used = attempts.filter(countsAgainstRetries).length;
  const again = used < f.maxAttempts;
  const data = { attempt: last?.n ?? null, worker: name, host, heartbeat_at: beat, dead_hub: f.dead.id, by: f.me, to: again ? 'queued' : 'interrupted' };
  const cleared = { pid: null, token_hash: null, hub_id: null, worker: null, worker_epoch: null };
  if (!again) {
    const why = `${error}; not queued again: it ran ${used} attempt(s), the most a job gets (maxAttempts ${f.maxAttempts}); resume_agent runs it again`;
    await jobUpdate(trx, jobId, { ...cleared, status: 'interrupted', ended_at: f.now, failure_class: 'interrupted', error: why }, f.now).execute();
    await eventInsert(trx, jobId, f.now, WORKER_LOST, data).execute();
    return 'interrupted';
  }
  await jobUpdate(trx, jobId, { ...cleared, status: 'queued', ended_at: null, outcome: null, failure_class: 'interrupted', error }, f.now).execute();
  await eventInsert(trx, jobId, f.now, WORKER_LOST, data).execute();
  const job = await trx.selectFrom('jobs').select('queue_id').where('id', '=', jobId).executeTakeFirstOrThrow();
  await f.requeue(trx, jobId, job.queue_id ?? null);
  return 'queued';
}

/** What the seed keeps of the lost attempt's transcript, in characters. */
const SEED_CHARS = 12_000;

/**
 * The first prompt's section for the attempt after one lost with its worker (kind 'retry', the
 * attempt before it ended `worker_lost`): what that attempt said and did, from `transcript_rows`,
 * newest kept. Undefined for any other attempt. `attempts` are the job's, the new one last.
 */
export async function workerLostSeed(q: Q, prompts: PromptLibrary, jobId: string, kind: string, attempts: readonly AttemptRow[]): Promise<string | undefined> {
  const prev = attempts.at(-2);
  if (kind !== 'retry' || !prev || !prev.error?.startsWith(WORKER_LOST)) return undefined;
  const ev = await q.selectFrom('events').select('data_json').where('job_id', '=', jobId).where('kind', '=', WORKER_LOST)
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
  const d = JSON.parse(ev?.data_json ?? '{}') as { attempt?: number; worker?: string; host?: string; heartbeat_at?: number };
  if (d.attempt !== prev.n) return undefined;
  const tail = await transcriptTail(q, jobId, prev.n, SEED_CHARS);
  const transcript = tail.rows.length
    ? tail.rows.map((r) => (r.kind === 'tool_call' ? `- called ${r.tool ?? 'a tool'}: ${r.body}` : `- said: ${r.body}`)).join('\n')
    : '(nothing of it reached the database)';
  const omitted = tail.omitted > 0 ? `the newest entries; ${tail.omitted} earlier one(s) left out` : 'all of it';
  return prompts.render('worker-lost', {
    attempt: prev.n, worker: d.worker ?? 'unknown', host: d.host ?? 'unknown',
    heartbeat: d.heartbeat_at ? new Date(d.heartbeat_at).toISOString() : 'unknown', transcript, omitted,
  });
}

/**
 * A worker stopping cleanly (SIGTERM, a rolling deploy): the jobs its runner has just ended
 * `interrupted` go back to the queue at once, as a lost worker's do after its lease — a new session
 * seeded with the attempt's transcript, since the next worker has not this one's session file —
 * or stay interrupted at maxAttempts. One transaction per job. Returns the ids requeued.
 */
export async function requeueStopped(db: Kysely<Schema>, me: { hub: HubRow; worker: WorkerRow | undefined }, o: { now: number; maxAttempts: number; requeue: Requeue }): Promise<string[]> {
  const jobs = await db.selectFrom('jobs').select('id').where('hub_id', '=', me.hub.id).where('status', '=', 'interrupted')
    .where('placement', '=', 'queue').orderBy('seq').execute();
  const out: string[] = [];
  for (const { id } of jobs) {
    const to = await db.transaction().execute((trx) => loseJob(trx, id, { now: o.now, me: me.hub.id, dead: me.hub, worker: me.worker, maxAttempts: o.maxAttempts, requeue: o.requeue, why: 'was stopped cleanly (SIGTERM) while it ran the attempt' }));
    if (to === 'queued') out.push(id);
  }
  return out;
}
