// Overlaps of the conflict guard (src/branches/overlapGuard.ts): a file two live worktree branches
// both change. One row per (pair, file); open while both jobs live. Written and listed on the
// asynchronous layer (src/store/sql/overlaps.ts); the reads below are JobService's, in its
// synchronous agent views and wait_for_agents' check and ack (mixed period: until step 6 of
// docs/store-plan.md moves them).
import type { Db } from './db.js';

export interface OverlapRow {
  id: number;
  repo_root: string;
  file: string;
  job_a: string;
  job_b: string;
  locks_conflict: number;
  detected_at: number;
  cleared_at: number | null;
  lead_seen_at: number | null;
}

export class OverlapStore {
  constructor(private readonly db: Db) {}

  /** Open overlaps, optionally of one job. */
  open(jobId?: string): OverlapRow[] {
    return (jobId
      ? this.db.prepare('SELECT * FROM overlaps WHERE cleared_at IS NULL AND (job_a = ? OR job_b = ?) ORDER BY id').all(jobId, jobId)
      : this.db.prepare('SELECT * FROM overlaps WHERE cleared_at IS NULL ORDER BY id').all()) as OverlapRow[];
  }

  /** Open overlaps touching these jobs that the lead has not been shown. */
  unseenByLead(jobIds: readonly string[]): OverlapRow[] {
    if (!jobIds.length) return [];
    const q = jobIds.map(() => '?').join(',');
    return this.db.prepare(`SELECT * FROM overlaps WHERE cleared_at IS NULL AND lead_seen_at IS NULL AND (job_a IN (${q}) OR job_b IN (${q})) ORDER BY id`).all(...jobIds, ...jobIds) as OverlapRow[];
  }

  markSeen(ids: readonly number[], now: number): void {
    const st = this.db.prepare('UPDATE overlaps SET lead_seen_at = ? WHERE id = ?');
    for (const id of ids) st.run(now, id);
  }
}

/** Overlap rows grouped per pair: [a, b] → files. */
export function byPair(rows: readonly OverlapRow[]): { jobs: [string, string]; files: string[]; locks_conflict: boolean; detected_at: number }[] {
  const m = new Map<string, { jobs: [string, string]; files: string[]; locks_conflict: boolean; detected_at: number }>();
  for (const r of rows) {
    const k = `${r.job_a} ${r.job_b}`;
    const e = m.get(k) ?? { jobs: [r.job_a, r.job_b], files: [], locks_conflict: false, detected_at: r.detected_at };
    e.files.push(r.file);
    e.locks_conflict ||= r.locks_conflict === 1;
    e.detected_at = Math.min(e.detected_at, r.detected_at);
    m.set(k, e);
  }
  return [...m.values()];
}
