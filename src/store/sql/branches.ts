// Worktree branches over the Kysely layer, on SQLite and PostgreSQL: the merges of jobs' branches
// (table job_merges), the merge queue's rows, and the worktree jobs a stopped hub left unclosed.
// The one decision: a job's branch is recorded merged once. `recordMerge` reads the job's merges
// and inserts the new one (with its `merged` event) in one transaction — BEGIN IMMEDIATE on
// SQLite; on PostgreSQL the job's row is locked first (SELECT … FOR UPDATE), so a second
// recorder waits for the first to commit and then sees its row (docs/decisions.md, "Money,
// merges and takeover on the layer").
import { sql } from 'kysely';
import { isPostgres, transact, type Q } from './tx.js';
import { eventInsert } from './jobs.js';
import { prefixUpperBound } from '../prefix.js';
import type { JobRow } from '../jobs.js';
import type { JobMergesTable } from './schema.js';

export interface MergeRow {
  id: number; job_id: string; repo_root: string; branch: string; target: string; mode: string; strategy: string | null;
  commit_sha: string; previous: string; checks_json: string; merged_at: number;
}

export type NewMerge = Omit<MergeRow, 'id'>;

/** A job's merges, oldest first. */
export async function mergesOf(q: Q, jobId: string): Promise<MergeRow[]> {
  return (await q.selectFrom('job_merges').selectAll().where('job_id', '=', jobId).orderBy('id').execute()) as MergeRow[];
}

/**
 * Record a job's branch merged, with its `merged` event, unless it is recorded already: then
 * nothing is written and the merge that was first comes back (`recorded: false`).
 */
export async function recordMerge(q: Q, m: NewMerge, event: Record<string, unknown>): Promise<{ recorded: true; id: number } | { recorded: false; first: MergeRow }> {
  return transact(q, async (trx) => {
    if (isPostgres(trx)) await trx.selectFrom('jobs').select('id').where('id', '=', m.job_id).forUpdate().execute();
    const first = (await trx.selectFrom('job_merges').selectAll().where('job_id', '=', m.job_id).orderBy('id').limit(1).executeTakeFirst()) as MergeRow | undefined;
    if (first) return { recorded: false, first };
    const row = await trx.insertInto('job_merges').values(m satisfies Omit<JobMergesTable, 'id' | 'checks_json'> & { checks_json: string }).returning('id').executeTakeFirstOrThrow();
    await eventInsert(trx, m.job_id, m.merged_at, 'merged', event).execute();
    return { recorded: true, id: Number(row.id) };
  });
}

/** Ids of jobs starting with `prefix`, oldest first, at most `limit` (a range over the id: its index). */
export async function jobIdsWithPrefix(q: Q, prefix: string, limit: number): Promise<string[]> {
  const upper = prefixUpperBound(prefix);
  let s = q.selectFrom('jobs').select('id').where('id', '>=', prefix);
  if (upper !== undefined) s = s.where('id', '<', upper);
  return (await s.orderBy('seq').limit(limit).execute()).map((r) => r.id);
}

/** The merge queue's candidates: succeeded worktree jobs with a branch that are not merged, in order. */
export async function unmergedBranches(q: Q): Promise<JobRow[]> {
  return (await sql<JobRow>`SELECT * FROM jobs WHERE status = 'succeeded' AND worktree = 1 AND branch IS NOT NULL AND repo_root IS NOT NULL
      AND id NOT IN (SELECT job_id FROM job_merges) ORDER BY seq`.execute(q)).rows;
}

/** The overlaps recorded between these jobs and others (the queue orders by them). */
export async function overlapsOfJobs(q: Q, ids: readonly string[]): Promise<{ a: string; b: string; file: string }[]> {
  if (ids.length === 0) return [];
  return q.selectFrom('overlaps').select(['job_a as a', 'job_b as b', 'file']).where('job_a', 'in', [...ids]).orderBy('id').execute();
}

/** Settled worktree jobs whose worktree was never closed (the end written, the commit and diff not: a stopped hub). */
export async function unclosedWorktrees(q: Q): Promise<string[]> {
  return (await q.selectFrom('jobs').select('id').where('worktree', '=', 1).where('status', 'in', ['succeeded', 'failed', 'cancelled'])
    .where('diff_stat', 'is', null).where('git_note', 'is', null).where('work_dir', 'is not', null).where('repo_root', 'is not', null)
    .where('branch', 'is not', null).where('base_commit', 'is not', null)
    // A worker's job is closed (committed, pushed) by its worker (src/worker/repos.ts publish), never by a hub.
    .where('worker', 'is', null).orderBy('seq').execute()).map((r) => r.id);
}

/** The paths a holder has locked, by path (the conflict guard counts them as files its branch changes). */
export async function lockedPathsOf(q: Q, holder: string): Promise<string[]> {
  return (await q.selectFrom('locks').select('path').where('holder', '=', holder).orderBy('path').execute()).map((r) => r.path);
}
