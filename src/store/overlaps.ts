// Overlaps of the conflict guard (src/branches/overlapGuard.ts): a file two live worktree branches
// both change. One row per (pair, file); open while both jobs live. Every read and write is on
// the layer (src/store/sql/overlaps.ts); here are the row and its grouping per pair.

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
