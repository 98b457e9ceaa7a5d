// Script runs on the floor (issue 28 point 6): each run still running, and those that ended
// within the failed window, read through the layer in the floor's snapshot with the run's own view
// (src/scripts/view.ts, what get_run shows), so the floor and get_run cannot disagree.
import type { Q } from '../store/sql/tx.js';
import { listScriptRuns, runView, scriptCallCounts } from '../scripts/view.js';
import type { FloorRun, FloorRunCall } from './types.js';

/** Most runs the floor shows (running ones come first). */
export const FLOOR_RUNS_MAX = 20;
/** Log lines of a run the floor carries. */
const LOG_LINES = 20;

/** The script runs to show; none for a database from before scripted runs (read-only CLI of an older state, SQLite). */
export async function readFloorRuns(q: Q, since: number): Promise<FloorRun[]> {
  let rows;
  try {
    rows = await listScriptRuns(q, { limit: FLOOR_RUNS_MAX, since });
  } catch {
    return [];
  }
  const out: FloorRun[] = [];
  for (const r of rows) {
    const { view: v, titles } = await runView(q, r);
    // Calls a resume replaced are history (get_run lists them): the floor shows the run as it goes now.
    const calls: FloorRunCall[] = v.calls.filter((c) => c.replaced !== true).map((c) => ({
      seq: c.seq, kind: c.kind, label: c.label, phase: c.phase, status: c.status, job_id: c.job_id,
      job_title: c.job_id ? titles.get(c.job_id) ?? null : null, job_status: c.job_status, request_id: c.request_id, cost_usd: c.cost_usd,
    }));
    const log = v.log.slice(-LOG_LINES).map((l) => ({ at: Date.parse(l.at), kind: l.kind, text: l.text }));
    const phases = v.log.filter((l) => l.kind === 'phase');
    const waiting = calls.find((c) => c.kind === 'approve' && c.status === 'running' && c.request_id);
    out.push({
      run_id: r.id, kind: 'script', title: r.title, status: r.status, paused: v.paused === true,
      phase: phases.at(-1)?.text ?? calls.at(-1)?.phase ?? null, counts: scriptCallCounts(calls),
      cost_usd: v.cost_usd as number, budget_usd: (v.budget_usd as number | null) ?? null,
      error: r.status === 'succeeded' ? null : (r.note ?? null), waiting_request: r.status === 'running' ? waiting?.request_id ?? null : null,
      created_at: r.created_at, ended_at: r.ended_at, calls, log,
    });
  }
  return out;
}
