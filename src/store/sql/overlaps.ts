// Overlaps of the conflict guard (src/branches/overlapGuard.ts) over the layer (issue 29 step 3):
// a file two live worktree branches both change, one row per (pair, file) — recorded once (the
// UNIQUE (job_a, job_b, file) with ON CONFLICT DO NOTHING on both databases), open while both
// jobs live.
import type { Q } from './tx.js';
import type { OverlapRow } from '../overlaps.js';

/** Record the files of a pair; returns the rows that are new (a file already recorded is not). */
export async function addOverlaps(q: Q, o: { repoRoot: string; a: string; b: string; files: readonly string[]; locksConflict: boolean; now: number }): Promise<OverlapRow[]> {
  if (!o.files.length) return [];
  const [x, y] = o.a < o.b ? [o.a, o.b] : [o.b, o.a];
  const rows = await q.insertInto('overlaps')
    .values(o.files.map((file) => ({ repo_root: o.repoRoot, file, job_a: x, job_b: y, locks_conflict: o.locksConflict ? 1 : 0, detected_at: o.now })))
    .onConflict((oc) => oc.columns(['job_a', 'job_b', 'file']).doNothing())
    .returningAll().execute();
  return (rows as OverlapRow[]).sort((m, n) => m.id - n.id);
}

/** Open overlaps, optionally of one job, oldest first. */
export async function openOverlaps(q: Q, jobId?: string): Promise<OverlapRow[]> {
  let s = q.selectFrom('overlaps').selectAll().where('cleared_at', 'is', null);
  if (jobId !== undefined) s = s.where((eb) => eb.or([eb('job_a', '=', jobId), eb('job_b', '=', jobId)]));
  return (await s.orderBy('id').execute()) as OverlapRow[];
}

/** Every overlap, newest first (open and cleared). */
export async function allOverlaps(q: Q, limit = 500): Promise<OverlapRow[]> {
  return (await q.selectFrom('overlaps').selectAll().orderBy('id', 'desc').limit(limit).execute()) as OverlapRow[];
}

/** A job ended: its open overlaps close; how many were open. */
export async function clearJobOverlaps(q: Q, jobId: string, now: number): Promise<number> {
  const r = await q.updateTable('overlaps').set({ cleared_at: now }).where('cleared_at', 'is', null)
    .where((eb) => eb.or([eb('job_a', '=', jobId), eb('job_b', '=', jobId)])).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Title, branch and status of the jobs of overlaps (those that still exist). */
export async function overlapJobs(q: Q, ids: readonly string[]): Promise<Map<string, { id: string; title: string; branch: string | null; status: string }>> {
  if (!ids.length) return new Map();
  const rows = await q.selectFrom('jobs').select(['id', 'title', 'branch', 'status']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((j) => [j.id, j]));
}

/** Open overlaps touching these jobs that the lead has not been shown, oldest first (wait_for_agents' attention). */
export async function unseenOverlaps(q: Q, jobIds: readonly string[]): Promise<OverlapRow[]> {
  if (!jobIds.length) return [];
  const ids = [...jobIds];
  return (await q.selectFrom('overlaps').selectAll().where('cleared_at', 'is', null).where('lead_seen_at', 'is', null)
    .where((eb) => eb.or([eb('job_a', 'in', ids), eb('job_b', 'in', ids)])).orderBy('id').execute()) as OverlapRow[];
}

/** The lead has been shown these overlaps. */
export async function markOverlapsSeen(q: Q, ids: readonly number[], now: number): Promise<void> {
  if (!ids.length) return;
  await q.updateTable('overlaps').set({ lead_seen_at: now }).where('id', 'in', [...ids]).where('lead_seen_at', 'is', null).execute();
}
