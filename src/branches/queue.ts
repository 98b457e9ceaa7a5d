// The merge queue's order (docs/merge.md), pure: branches that overlap the fewest other queued
// branches first (an overlap = a file both change relative to where they left the target, or a
// pair the conflict guard recorded), then the smallest diff, then the oldest.

export interface QueueCandidate {
  jobId: string;
  /** Files the branch changes relative to its merge base with the target. */
  files: readonly string[];
  /** Lines added + deleted. */
  lines: number;
  /** When the job ended (ms); older first on a tie. */
  endedAt: number;
}

export interface QueuedItem<C extends QueueCandidate = QueueCandidate> {
  candidate: C;
  /** Other queued jobs this one overlaps, with the shared files (from git and from the guard). */
  overlaps: { jobId: string; files: string[] }[];
}

/**
 * Order the candidates. `guard` holds the conflict guard's recorded pairs (job ids, files): they
 * count as overlaps even when the files no longer differ (e.g. one side reverted its edit).
 */
export function orderQueue<C extends QueueCandidate>(cands: readonly C[], guard: readonly { a: string; b: string; file: string }[] = []): QueuedItem<C>[] {
  const ids = new Set(cands.map((c) => c.jobId));
  const shared = new Map<string, Map<string, Set<string>>>(); // job -> other -> files
  const add = (a: string, b: string, f: string) => {
    for (const [x, y] of [[a, b], [b, a]] as const) {
      const m = shared.get(x) ?? new Map<string, Set<string>>();
      shared.set(x, m);
      const s = m.get(y) ?? new Set<string>();
      m.set(y, s);
      s.add(f);
    }
  };
  const byFile = new Map<string, string[]>();
  for (const c of cands) for (const f of new Set(c.files)) byFile.set(f, [...(byFile.get(f) ?? []), c.jobId]);
  for (const [f, js] of byFile) for (let i = 0; i < js.length; i++) for (let k = i + 1; k < js.length; k++) add(js[i]!, js[k]!, f);
  for (const g of guard) if (g.a !== g.b && ids.has(g.a) && ids.has(g.b)) add(g.a, g.b, g.file);

  const items = cands.map((c) => ({
    candidate: c,
    overlaps: [...(shared.get(c.jobId) ?? new Map<string, Set<string>>())].map(([jobId, s]) => ({ jobId, files: [...s].sort() })).sort((a, b) => (a.jobId < b.jobId ? -1 : 1)),
  }));
  const sharedFiles = (i: QueuedItem<C>) => i.overlaps.reduce((n, o) => n + o.files.length, 0);
  return items.sort((a, b) =>
    a.overlaps.length - b.overlaps.length
    || sharedFiles(a) - sharedFiles(b)
    || a.candidate.lines - b.candidate.lines
    || a.candidate.files.length - b.candidate.files.length
    || a.candidate.endedAt - b.candidate.endedAt
    || (a.candidate.jobId < b.candidate.jobId ? -1 : 1));
}
