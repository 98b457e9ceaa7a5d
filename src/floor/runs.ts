// Script runs on the floor (issue 28 point 6): each run still running, and those that ended
// within the failed window, read from the database alone through the run's own view
// (src/scripts/view.ts, what get_run shows), so the floor and get_run cannot disagree.
import type Database from 'better-sqlite3';
import type { JobRow } from '../store/jobs.js';
import { listScriptRuns, scriptCallCounts, scriptRunView } from '../scripts/view.js';
import type { FloorRun, FloorRunCall } from './types.js';

/** Most runs the floor shows (running ones come first). */
export const FLOOR_RUNS_MAX = 20;
/** Log lines of a run the floor carries. */
const LOG_LINES = 20;

/** The script runs to show; none for a database from before scripted runs (read-only CLI of an older state). */
export function readFloorRuns(db: Database.Database, since: number): FloorRun[] {
  let rows;
  try {
    rows = listScriptRuns(db, { limit: FLOOR_RUNS_MAX, since });
  } catch {
    return [];
  }
  const jobOf = db.prepare('SELECT * FROM jobs WHERE id = ?');
  return rows.map((r) => {
    const jobs = new Map<string, JobRow>();
    const job = (id: string): JobRow | undefined => {
      const j = jobOf.get(id) as JobRow | undefined;
      if (j) jobs.set(id, j);
      return j;
    };
    const v = scriptRunView(db, job, r.id) as Record<string, any>;
    // Calls a resume replaced are history (get_run lists them): the floor shows the run as it goes now.
    const calls: FloorRunCall[] = (v.calls as any[]).filter((c) => c.replaced !== true).map((c) => ({
      seq: c.seq, kind: c.kind, label: c.label, phase: c.phase, status: c.status, job_id: c.job_id,
      job_title: c.job_id ? jobs.get(c.job_id)?.title ?? null : null, job_status: c.job_status, request_id: c.request_id, cost_usd: c.cost_usd,
    }));
    const log = (v.log as { at: string; kind: string; text: string }[]).slice(-LOG_LINES).map((l) => ({ at: Date.parse(l.at), kind: l.kind, text: l.text }));
    const phases = (v.log as { kind: string; text: string }[]).filter((l) => l.kind === 'phase');
    const waiting = calls.find((c) => c.kind === 'approve' && c.status === 'running' && c.request_id);
    return {
      run_id: r.id, kind: 'script', title: r.title, status: r.status, paused: v.paused === true,
      phase: phases.at(-1)?.text ?? calls.at(-1)?.phase ?? null, counts: scriptCallCounts(calls),
      cost_usd: v.cost_usd as number, budget_usd: (v.budget_usd as number | null) ?? null,
      error: r.status === 'succeeded' ? null : (r.note ?? null), waiting_request: r.status === 'running' ? waiting?.request_id ?? null : null,
      created_at: r.created_at, ended_at: r.ended_at, calls, log,
    };
  });
}
