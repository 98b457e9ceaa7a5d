// `overseer status [--json]`: the table of jobs, read from the state database directly (works
// whether or not a hub runs). TURNS and COST are the job's (summed over its attempts), the same
// numbers as get_agent and the verdict line of `overseer logs`.
import type { JobRow } from '../store/jobs.js';
import { summarize } from '../services/summary.js';
import { openState } from './state.js';
import { UsageError } from './errors.js';
import { JOB_STATUSES } from '../domain/job.js';

export { CliError } from './errors.js';

function age(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** A plain fixed-width table. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

export interface StatusFilter { status?: string; label?: string; parent?: string }

/** The rows a filter keeps: a status, a label, a parent job (`-` or `lead`: the lead's own children). */
export function filterRows(rows: readonly JobRow[], f: StatusFilter): JobRow[] {
  return rows.filter((j) => (!f.status || j.status === f.status)
    && (!f.label || (JSON.parse(j.labels_json || '[]') as string[]).includes(f.label))
    && (!f.parent || (f.parent === '-' || f.parent === 'lead' ? j.parent_id === null : j.parent_id === f.parent)));
}

/** One line of totals: how many in each state and what they cost. */
export function totalsLine(rows: readonly JobRow[]): string {
  const n = (...s: string[]): number => rows.filter((j) => s.includes(j.status)).length;
  const cost = rows.reduce((a, j) => a + j.cost_usd, 0);
  const unknown = rows.some((j) => j.cost_unknown) ? ' (some unpriced)' : '';
  return `${rows.length} jobs: ${n('running', 'needs_input')} running · ${n('frozen')} frozen · ${n('queued', 'waiting')} queued · ${n('succeeded')} succeeded · ${n('failed')} failed · ${n('cancelled', 'interrupted')} cancelled or interrupted · $${cost.toFixed(4)} spent${unknown}`;
}

export function runStatus(opts: { json?: boolean; all?: boolean } & StatusFilter): void {
  if (opts.status && !(JOB_STATUSES as readonly string[]).includes(opts.status)) {
    throw new UsageError(`--status ${JSON.stringify(opts.status)} is not a job status; use one of ${JOB_STATUSES.join(', ')}`);
  }
  const { store, close } = openState();
  try {
    const rows = filterRows(store.list({ limit: 10_000 }), opts);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(rows.map((j) => summarize(j, store.attempts(j.id))), null, 2)}\n`);
      return;
    }
    if (rows.length === 0) {
      process.stdout.write(opts.status || opts.label || opts.parent ? 'No jobs match.\n' : 'No jobs yet.\n');
      return;
    }
    const body = rows.map((j: JobRow) => [
      j.id, j.status + (j.failure_class ? ` (${j.failure_class})` : ''), j.parent_id ?? '-', String(j.turns), `$${j.cost_usd.toFixed(4)}`,
      age(j.created_at), j.title.slice(0, 40), (j.status_message ?? j.error ?? '').replace(/\s+/g, ' ').slice(0, 60),
    ]);
    process.stdout.write(`${table([['JOB', 'STATUS', 'PARENT', 'TURNS', 'COST', 'AGE', 'TITLE', 'LAST'], ...body])}\n`);
    process.stdout.write(`${totalsLine(rows)}\n`);
    process.stdout.write(attentionLines(rows));
  } finally {
    close();
  }
}

/** What the person must know beyond the table: writes to held files that were undone or
 * recorded, and agents stopped because a tool ran without the lock hook. */
export function attentionLines(rows: readonly JobRow[]): string {
  const lines: string[] = [];
  for (const j of rows) {
    const files = j.lock_violations_json ? (JSON.parse(j.lock_violations_json) as string[]) : [];
    if (files.length) lines.push(`! ${j.id} wrote to files another agent held (undone, or recorded for a codex turn): ${files.join(', ')} — overseer events --job ${j.id}`);
    if (j.failure_class === 'hook_bypassed') lines.push(`! ${j.id} was stopped: a tool call ran without the lock hook; review its changes before using them — overseer events --job ${j.id}`);
  }
  return lines.length ? `\n${lines.join('\n')}\n` : '';
}
