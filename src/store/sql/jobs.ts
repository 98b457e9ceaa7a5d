// Job, attempt, event and dependency rows over the Kysely layer, on SQLite and PostgreSQL alike:
// what the job engine writes (src/services/jobs.ts, runner.ts, children.ts, reconcile.ts,
// attemptHooks.ts, src/money, src/takeover). Readers in modules not yet moved read the same rows
// through the synchronous JobStore (src/store/jobs.ts) until step 6b of docs/store-plan.md.
// The decision here is the claim (`claimJob`): a queued job starts once, whoever dispatches it —
// one conditional UPDATE, re-checked by PostgreSQL after a concurrent claimer commits and
// serialised by SQLite's write lock (docs/store-plan.md §2).
import type { PublishFacts } from '../../domain/placement.js';
import { sql } from 'kysely';
import { bumpTokenEpoch, type AttemptRow, type JobRow, type NewJob } from '../jobs.js';
import type { JobStatus } from '../../domain/job.js';
import { batch, isPostgres, transact, type Q } from './tx.js';

/** Undefined becomes NULL (as the synchronous store did): a field passed as undefined is cleared, never skipped. */
function nullify<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === undefined ? null : v])) as T;
}

/**
 * Insert a job and its dependency edges. `seq` is one more than the largest: on SQLite the write
 * lock makes that exact; on PostgreSQL the creating transaction holds the spawn lock
 * (src/money/budgets.ts `lockSpawns`, advisory class 2), and `seq`'s UNIQUE constraint is the backstop.
 */
export async function insertJob(q: Q, j: NewJob, now: number): Promise<void> {
  if (!q.isTransaction) return transact(q, (trx) => insertJob(trx, j, now));
  const { s } = await q.selectFrom('jobs').select(sql<number>`COALESCE(MAX(seq), 0) + 1`.as('s')).executeTakeFirstOrThrow();
  await q.insertInto('jobs').values({ ...nullify(j), project: j.project ?? null, seq: Number(s), created_at: now, updated_at: now } as never).execute();
  const deps = JSON.parse(j.depends_on_json) as string[];
  if (deps.length) await q.insertInto('job_deps').values(deps.map((d) => ({ job_id: j.id, dep_id: d }))).execute();
}

/** The job whose agent token has this hash now, if `hubId` runs it (src/server/tokenAuth.ts): another hub's agent calls its own hub. */
export async function jobIdByTokenHash(q: Q, hash: string, hubId: string): Promise<string | undefined> {
  return (await q.selectFrom('jobs').select('id').where('token_hash', '=', hash).where('hub_id', '=', hubId).executeTakeFirst())?.id;
}

/** Queued jobs `hubId` may start: its own and unowned ones (docs/store-plan.md §3.4), in order. A job
 * placed in the worker queue (placement 'queue', docs/workers-plan.md §2) is never the hub's to start:
 * a worker claims it. */
export async function queuedFor(q: Q, hubId: string): Promise<JobRow[]> {
  return (await q.selectFrom('jobs').selectAll().where('status', '=', 'queued')
    .where((eb) => eb.or([eb('placement', 'is', null), eb('placement', '<>', 'queue')]))
    .where((eb) => eb.or([eb('hub_id', '=', hubId), eb('hub_id', 'is', null)])).orderBy('seq').execute()) as JobRow[];
}

/** How many of `hubId`'s jobs hold a place (running, frozen, needs_input): the cap is per hub, a machine's. */
export async function activeOf(q: Q, hubId: string): Promise<number> {
  const r = await q.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('c'))
    .where('status', 'in', ['running', 'frozen', 'needs_input']).where('hub_id', '=', hubId).executeTakeFirstOrThrow();
  return Number(r.c);
}

export async function getJob(q: Q, id: string): Promise<JobRow | undefined> {
  return (await q.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst()) as JobRow | undefined;
}

/** Update columns of a job; `updated_at` is always set. A write of token_hash moves the token epoch (src/server/tokenAuth.ts). */
export async function updateJob(q: Q, id: string, fields: Partial<JobRow>, now: number): Promise<void> {
  await jobUpdate(q, id, fields, now).execute();
}

/** updateJob as a statement not yet run (for `batch`). */
export function jobUpdate(q: Q, id: string, fields: Partial<JobRow>, now: number) {
  const { id: _id, ...rest } = fields;
  if ('token_hash' in rest) bumpTokenEpoch();
  return q.updateTable('jobs').set({ ...nullify(rest), updated_at: now } as never).where('id', '=', id);
}

/** Update a job only while it is in one of `from`; true when it was (a status change nobody else made first). */
export async function updateJobIf(q: Q, id: string, from: readonly JobStatus[], fields: Partial<JobRow>, now: number): Promise<boolean> {
  const { id: _id, ...rest } = fields;
  if ('token_hash' in rest) bumpTokenEpoch();
  const r = await q.updateTable('jobs').set({ ...nullify(rest), updated_at: now } as never).where('id', '=', id).where('status', 'in', [...from]).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export interface Claim {
  jobId: string;
  now: number;
  /** The new attempt's token, hashed (jobs.token_hash). */
  tokenHash: string | null;
  /** Many hubs (docs/store-plan.md §3.4): the claiming hub, which then owns the job. A job another
   * hub owns is not claimed (jobs run where they were spawned); an unowned one (released by a dead
   * hub) is. Without it, any queued job is claimed and its owner left as it is. */
  hubId?: string;
}

/**
 * Start a queued job: `UPDATE jobs SET status = 'running' … WHERE id = ? AND status = 'queued'`
 * (a new attempt starts without the last one's result). `within` runs in the same transaction
 * only when the claim won (insert the attempt there). Undefined when another dispatcher won or
 * the job is no longer queued (cancelled, started) — skip it.
 */
export async function claimJob<T>(q: Q, c: Claim, within: (trx: Q, job: JobRow) => Promise<T>): Promise<{ job: JobRow; then: T } | undefined> {
  return transact(q, async (trx) => {
    bumpTokenEpoch();
    const hub = c.hubId;
    let claim = trx.updateTable('jobs')
      .set((eb) => ({ status: 'running', started_at: eb.fn.coalesce('started_at', eb.val(c.now)), ended_at: null, token_hash: c.tokenHash, result: null, outcome: null, updated_at: c.now, ...(hub ? { hub_id: hub } : {}) }))
      .where('id', '=', c.jobId).where('status', '=', 'queued');
    if (hub) claim = claim.where((eb) => eb.or([eb('hub_id', '=', hub), eb('hub_id', 'is', null)]));
    const job = await claim.returningAll().executeTakeFirst() as JobRow | undefined;
    if (!job) return undefined;
    return { job, then: await within(trx, job) };
  });
}

/**
 * The start of a queued job's next attempt, as the runner dispatches it: the claim, then in the
 * same transaction its attempt row (n = last + 1; kind resume / initial / retry) and its
 * `started` event. Undefined when the claim lost.
 */
export async function claimAttempt(q: Q, c: Claim & { files: AttemptFiles }): Promise<{ job: JobRow; n: number; kind: AttemptRow['kind'] } | undefined> {
  const r = await claimJob(q, c, (trx, job) => beginAttempt(trx, job, c.now, c.files));
  return r && { job: r.job, ...r.then };
}

type AttemptFiles = (n: number) => { transcript: string; stderr: string };

/** A claimed job's next attempt row (n = last + 1; kind resume / initial / retry) and its `started` event. */
async function beginAttempt(trx: Q, job: JobRow, now: number, files: AttemptFiles): Promise<{ n: number; kind: AttemptRow['kind'] }> {
  const n = ((await lastAttempt(trx, job.id))?.n ?? 0) + 1;
  const kind: AttemptRow['kind'] = job.resume_message !== null ? 'resume' : n === 1 ? 'initial' : 'retry';
  await insertAttempt(trx, {
    job_id: job.id, n, kind, status: 'running', started_at: now, ended_at: null, session_id: null, pid: null,
    exit_code: null, signal: null, turns: 0, cost_usd: 0, failure_class: null, error: null, diagnosis: null, ...files(n),
  });
  await addEvent(trx, job.id, now, 'started', { attempt: n, kind });
  return { n, kind };
}

/** A worker's claim of an attempt it fetched from the queue (docs/workers-plan.md §3). */
export interface QueueClaim {
  jobId: string;
  /** The pg-boss job it fetched: a job whose row names another queue job (a stale one) is not claimed. */
  queueId: string;
  now: number;
  tokenHash: string | null;
  /** The worker's hub id: the job's owner from now on (its token is accepted there only). */
  hubId: string;
  /** The worker's name and its lease epoch (jobs.worker, jobs.worker_epoch). */
  worker: string;
  epoch: number;
  files: AttemptFiles;
}

/**
 * A worker starts a job it fetched from the queue: `UPDATE jobs SET status = 'running', hub_id =
 * <the worker's hub>, worker, worker_epoch … WHERE id = ? AND status = 'queued' AND placement =
 * 'queue' AND (queue_id IS NULL OR queue_id = <the fetched queue job>)`, then its attempt row and
 * `started` event in the same transaction. Whoever spawned it owns it while it waits; the claim
 * moves it to the worker. Undefined when the claim lost (cancelled meanwhile, taken, requeued
 * under another queue job, or not a queue job): the caller completes the queue job and moves on.
 */
export async function claimQueuedAttempt(q: Q, c: QueueClaim): Promise<{ job: JobRow; n: number; kind: AttemptRow['kind'] } | undefined> {
  return transact(q, async (trx) => {
    bumpTokenEpoch();
    const job = await trx.updateTable('jobs')
      .set((eb) => ({
        status: 'running', started_at: eb.fn.coalesce('started_at', eb.val(c.now)), ended_at: null, token_hash: c.tokenHash, result: null, outcome: null,
        updated_at: c.now, hub_id: c.hubId, worker: c.worker, worker_epoch: c.epoch,
      }))
      .where('id', '=', c.jobId).where('status', '=', 'queued').where('placement', '=', 'queue')
      .where((eb) => eb.or([eb('queue_id', 'is', null), eb('queue_id', '=', c.queueId)]))
      .returningAll().executeTakeFirst() as JobRow | undefined;
    if (!job) return undefined;
    return { job, ...await beginAttempt(trx, job, c.now, c.files) };
  });
}

export async function jobsByStatus(q: Q, ...statuses: JobStatus[]): Promise<JobRow[]> {
  return (await q.selectFrom('jobs').selectAll().where('status', 'in', statuses).orderBy('seq').execute()) as JobRow[];
}

export async function countByStatus(q: Q, ...statuses: JobStatus[]): Promise<number> {
  const r = await q.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('c')).where('status', 'in', statuses).executeTakeFirstOrThrow();
  return Number(r.c);
}

export interface JobFilter {
  status?: JobStatus | undefined;
  label?: string | undefined;
  /** null: the lead's own (no parent) */
  parentId?: string | null | undefined;
  /** only descendants of this job (an agent's view) */
  subtreeOf?: string | undefined;
  afterSeq?: number | undefined;
  limit: number;
  project?: string | undefined;
  /** leave out jobs of archived projects */
  hideArchived?: boolean | undefined;
}

/** Jobs in creation order matching every filter given, at most `limit` (list_agents, its pages by `afterSeq`). */
export async function listJobs(q: Q, f: JobFilter): Promise<JobRow[]> {
  let s = q.selectFrom('jobs').selectAll();
  if (f.project !== undefined) s = s.where('project', '=', f.project);
  if (f.hideArchived) s = s.where((e) => e.or([e('project', 'is', null), e('project', 'not in', e.selectFrom('projects').select('name').where('archived_at', 'is not', null))]));
  if (f.status) s = s.where('status', '=', f.status);
  if (f.label) {
    const label = f.label;
    s = s.where(isPostgres(q) ? sql<boolean>`labels_json::jsonb ? ${label}` : sql<boolean>`EXISTS (SELECT 1 FROM json_each(labels_json) WHERE value = ${label})`);
  }
  if (f.parentId !== undefined) s = f.parentId === null ? s.where('parent_id', 'is', null) : s.where('parent_id', '=', f.parentId);
  if (f.subtreeOf) {
    const root = f.subtreeOf;
    s = s.where('id', 'in', sql<string>`(WITH RECURSIVE d(id) AS (SELECT id FROM jobs WHERE parent_id = ${root} UNION ALL SELECT j.id FROM jobs j JOIN d ON j.parent_id = d.id) SELECT id FROM d)`);
  }
  if (f.afterSeq !== undefined) s = s.where('seq', '>', f.afterSeq);
  return (await s.orderBy('seq').limit(f.limit).execute()) as JobRow[];
}

/** The attempts of these jobs by job, each in order (one statement for a page of jobs). */
export async function attemptsOfJobs(q: Q, ids: readonly string[]): Promise<Map<string, AttemptRow[]>> {
  const by = new Map<string, AttemptRow[]>(ids.map((id) => [id, []]));
  if (!ids.length) return by;
  for (const a of (await q.selectFrom('attempts').selectAll().where('job_id', 'in', ids).orderBy('job_id').orderBy('n').execute()) as AttemptRow[]) by.get(a.job_id)?.push(a);
  return by;
}

/** The most recent jobs first, at most `limit` (the lead's resources). */
export async function recentJobs(q: Q, limit: number): Promise<{ id: string; title: string; status: string }[]> {
  return q.selectFrom('jobs').select(['id', 'title', 'status']).orderBy('seq', 'desc').limit(limit).execute();
}

/** All descendants of `id` (not including it), by depth then seq. */
export async function descendants(q: Q, id: string): Promise<JobRow[]> {
  const r = await sql<JobRow>`WITH RECURSIVE d(id) AS (SELECT id FROM jobs WHERE parent_id = ${id} UNION ALL SELECT j.id FROM jobs j JOIN d ON j.parent_id = d.id)
    SELECT jobs.* FROM jobs JOIN d ON jobs.id = d.id ORDER BY jobs.depth, jobs.seq`.execute(q);
  return r.rows;
}

/** Whether `id` is `root` or below it (an agent's rights over a job: its own subtree). */
export async function inSubtree(q: Q, root: string, id: string): Promise<boolean> {
  const r = await sql<{ hit: number }>`WITH RECURSIVE up(id, parent_id) AS (SELECT id, parent_id FROM jobs WHERE id = ${id} UNION ALL SELECT j.id, j.parent_id FROM jobs j JOIN up ON j.id = up.parent_id)
    SELECT 1 AS hit FROM up WHERE id = ${root}`.execute(q);
  return r.rows.length > 0;
}

/** Ids to name when `id` is unknown: those sharing its first four characters, then the most recent, at most `max`. */
export async function nearbyIds(q: Q, id: string, max = 5): Promise<string[]> {
  const similar = await q.selectFrom('jobs').select('id').where('id', 'like', `${id.slice(0, 4)}%`).orderBy('seq', 'desc').limit(max).execute();
  const recent = await q.selectFrom('jobs').select('id').orderBy('seq', 'desc').limit(max).execute();
  return [...new Set([...similar, ...recent].map((r) => r.id))].slice(0, max);
}

/** The titles of these jobs (those that exist), by id. */
export async function titlesOf(q: Q, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await q.selectFrom('jobs').select(['id', 'title']).where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((r) => [r.id, r.title]));
}

/** The job's latest merge (docs/merge.md; table job_merges, written by src/branches), for get_agent. */
export async function lastMergeOf(q: Q, jobId: string): Promise<{ target: string; mode: string; commit_sha: string; merged_at: number } | undefined> {
  const r = await sql<{ target: string; mode: string; commit_sha: string; merged_at: number }>`SELECT target, mode, commit_sha, merged_at FROM job_merges WHERE job_id = ${jobId} ORDER BY id DESC LIMIT 1`.execute(q);
  const m = r.rows[0];
  return m && { ...m, merged_at: Number(m.merged_at) };
}

/** These jobs' rows in the order of `ids` (those that exist; an id given twice, once). */
export async function jobsOf(q: Q, ids: readonly string[]): Promise<JobRow[]> {
  if (!ids.length) return [];
  const rows = (await q.selectFrom('jobs').selectAll().where('id', 'in', [...new Set(ids)]).execute()) as JobRow[];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return [...new Set(ids)].map((id) => byId.get(id)).filter((r): r is JobRow => r !== undefined);
}

/** The jobs that wait for `depId`. */
export async function dependents(q: Q, depId: string): Promise<JobRow[]> {
  return (await q.selectFrom('jobs').innerJoin('job_deps', 'job_deps.job_id', 'jobs.id').selectAll('jobs').where('job_deps.dep_id', '=', depId).orderBy('jobs.seq').execute()) as JobRow[];
}

/** The dependencies of a job, with their status, oldest first (PostgreSQL returns rows in no set order: the first failed one names a job's failure). */
/** A dependency as dependencyState needs it: its status, and whether a worker still publishes its branch (awaitingPublish). */
export type DepRow = { id: string; status: JobStatus } & PublishFacts;
const DEP_COLUMNS = ['jobs.id', 'jobs.status', 'jobs.worker', 'jobs.worktree', 'jobs.work_dir', 'jobs.diff_stat', 'jobs.git_note'] as const;

export async function depsOf(q: Q, jobId: string): Promise<DepRow[]> {
  return (await q.selectFrom('job_deps').innerJoin('jobs', 'jobs.id', 'job_deps.dep_id').select(DEP_COLUMNS).where('job_deps.job_id', '=', jobId).orderBy('jobs.seq').execute()) as DepRow[];
}

/** These jobs' status (those that exist), oldest first. */
export async function statusOf(q: Q, ids: readonly string[]): Promise<DepRow[]> {
  if (!ids.length) return [];
  return (await q.selectFrom('jobs').select(DEP_COLUMNS).where('jobs.id', 'in', [...ids]).orderBy('jobs.seq').execute()) as DepRow[];
}

// attempts

export async function insertAttempt(q: Q, a: AttemptRow): Promise<void> {
  await attemptInsert(q, a).execute();
}

export async function updateAttempt(q: Q, jobId: string, n: number, fields: Partial<AttemptRow>): Promise<void> {
  const { job_id: _j, n: _n, ...rest } = fields;
  if (Object.keys(rest).length === 0) return;
  await attemptUpdate(q, jobId, n, rest).execute();
}

/** updateAttempt as a statement not yet run (for `batch`); `fields` must not be empty. */
export function attemptUpdate(q: Q, jobId: string, n: number, fields: Partial<AttemptRow>) {
  const { job_id: _j, n: _n, ...rest } = fields;
  return q.updateTable('attempts').set(nullify(rest) as never).where('job_id', '=', jobId).where('n', '=', n);
}

/** insertAttempt as a statement not yet run (for `batch`). */
export function attemptInsert(q: Q, a: AttemptRow) {
  return q.insertInto('attempts').values({ stderr: null, ...nullify(a) } as never);
}

export async function attemptsOf(q: Q, jobId: string): Promise<AttemptRow[]> {
  return (await q.selectFrom('attempts').selectAll().where('job_id', '=', jobId).orderBy('n').execute()) as AttemptRow[];
}

export async function lastAttempt(q: Q, jobId: string): Promise<AttemptRow | undefined> {
  return (await q.selectFrom('attempts').selectAll().where('job_id', '=', jobId).orderBy('n', 'desc').limit(1).executeTakeFirst()) as AttemptRow | undefined;
}

// events

export async function addEvent(q: Q, jobId: string, at: number, kind: string, data?: unknown): Promise<void> {
  await eventInsert(q, jobId, at, kind, data).execute();
}

/** addEvent as a statement not yet run (for `batch`). */
export function eventInsert(q: Q, jobId: string, at: number, kind: string, data?: unknown) {
  return q.insertInto('events').values({ job_id: jobId, at, kind, data_json: data === undefined ? null : JSON.stringify(data) });
}

/** A job's change and its event, in one transaction (a `batch`: nothing else runs inside it). */
export async function updateWithEvent(q: Q, jobId: string, fields: Partial<JobRow>, now: number, kind: string, data?: unknown): Promise<void> {
  await batch(q, [jobUpdate(q, jobId, fields, now), eventInsert(q, jobId, now, kind, data)]);
}

/**
 * A job's totals as the sums over its attempts (turns, cost, tokens; cost_unknown if any attempt's
 * is), as a statement not yet run: exact whenever it runs after the attempts' own writes.
 */
export function jobTotalsUpdate(q: Q, jobId: string, now: number) {
  const sum = (col: string) => sql<number>`(SELECT COALESCE(SUM(${sql.ref(col)}), 0) FROM attempts WHERE job_id = ${jobId})`;
  return q.updateTable('jobs').set({
    turns: sum('turns'), cost_usd: sum('cost_usd'), input_tokens: sum('input_tokens'), output_tokens: sum('output_tokens'),
    cache_read_tokens: sum('cache_read_tokens'), cache_creation_tokens: sum('cache_creation_tokens'),
    cost_unknown: sql<number>`(SELECT COALESCE(MAX(cost_unknown), 0) FROM attempts WHERE job_id = ${jobId})`, updated_at: now,
  }).where('id', '=', jobId);
}
