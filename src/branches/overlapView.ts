// The conflict guard's overlaps as the list_overlaps tool and `overseer overlaps` show them: per
// pair of jobs, their titles, branches and statuses, the files both change, when it was seen and
// whether it is still open (both jobs live). Read-only.
import type { Q } from '../store/sql/tx.js';
import { byPair } from '../store/overlaps.js';
import { allOverlaps, openOverlaps, overlapJobs } from '../store/sql/overlaps.js';
import { isoTime } from '../clock.js';
import type { OverlapView } from '../contract/overlaps.js';

export type { OverlapView };

export async function listOverlaps(q: Q, o: { all?: boolean | undefined } = {}): Promise<{ overlaps: OverlapView[] }> {
  const openRows = await openOverlaps(q);
  const rows = o.all ? await allOverlaps(q) : openRows;
  const open = new Set(openRows.map((r) => r.id));
  const jobs = await overlapJobs(q, [...new Set(rows.flatMap((r) => [r.job_a, r.job_b]))]);
  const out: OverlapView[] = [];
  for (const [, group] of groupBy(rows, (r) => `${r.job_a} ${r.job_b} ${open.has(r.id) ? 1 : 0}`)) {
    for (const p of byPair(group)) {
      out.push({
        jobs: p.jobs.map((id) => { const j = jobs.get(id); return { job_id: id, title: j?.title ?? id, branch: j?.branch ?? null, status: j?.status ?? 'unknown' }; }),
        files: p.files, locks_conflict: p.locks_conflict, detected_at: isoTime(p.detected_at), open: open.has(group[0]!.id),
      });
    }
  }
  return { overlaps: out.sort((a, b) => (a.detected_at < b.detected_at ? 1 : -1)) };
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) { const k = key(x); m.set(k, [...(m.get(k) ?? []), x]); }
  return m;
}

/** The text of `overseer overlaps`. */
export function overlapsText(v: { overlaps: OverlapView[] }): string {
  if (v.overlaps.length === 0) return 'No overlaps: no two live worktree branches change the same file.\n';
  return `${v.overlaps.map((o) => {
    const [a, b] = o.jobs;
    return `${o.open ? '!' : ' '} ${a!.job_id} (${a!.title}, ${a!.branch ?? '-'}) and ${b!.job_id} (${b!.title}, ${b!.branch ?? '-'}) both change ${o.files.join(', ')}${o.open ? '' : ' [closed]'} — since ${o.detected_at}`;
  }).join('\n')}\n`;
}
