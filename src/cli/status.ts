// `overseer status [--json]`: the table of jobs, read from the state database directly (works
// whether or not a hub runs). TURNS and COST are the job's (summed over its attempts), the same
// numbers as get_agent and the verdict line of `overseer logs`. Under the table: what needs the
// person (open requests, health warnings, blocked workflows: the floor model's NEEDS YOU), and
// writes to held files that were undone. `--watch` renders it again whenever the floor changes
// (the running hub's stream, else the database polled read-only); `--floor` prints the whole
// floor as JSON (with `--watch`: one JSON floor per line).
import type { JobRow } from '../store/jobs.js';
import type { Config } from '../config.js';
import { applicableBudgets, spentOf } from '../money/budget.js';
import { useOf } from '../store/sql/budgets.js';
import { attemptsOfJobs, listJobs } from '../store/sql/jobs.js';
import { archivedProjectNames, mergeTargetsByJob, scriptCallsByJob, setupReportsByJob } from '../store/sql/cli.js';
import type { Q } from '../store/sql/tx.js';
import { FIELD_CAP, summarize } from '../services/summary.js';
import { hubHosts } from '../store/sql/workers.js';
import type { State } from './state.js';
import { readFloor } from '../floor/source.js';
import { schedulesLine } from '../runs/scheduleText.js';
import type { Floor, FloorLimit, FloorRun, NeedsYouItem } from '../floor/types.js';
import { debateStatusLines } from '../debate/status.js';
import { liveHubs } from '../store/sql/hubs.js';
import type { SqlDb } from '../store/sql/open.js';

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

export interface StatusFilter { status?: string; label?: string; parent?: string; project?: string }

/** The rows a filter keeps: a status, a label, a parent job (`-` or `lead`: the lead's own children), a
 * project; jobs of `archived` projects only when their project is the one asked for. */
export function filterRows(rows: readonly JobRow[], f: StatusFilter, archived: readonly string[] = []): JobRow[] {
  return rows.filter((j) => (f.project !== undefined ? j.project === f.project : !j.project || !archived.includes(j.project))
    && (!f.status || j.status === f.status)
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

export interface StatusOptions extends StatusFilter { json?: boolean; all?: boolean; watch?: boolean; floor?: boolean }

/** `overseer status --json`: the summaries of the jobs the filter keeps, each held by a provider limit with `waiting_on_limit`. */
export async function statusJson(state: Pick<State, 'sql'>, f: StatusFilter): Promise<Record<string, unknown>[]> {
  const q = state.sql.db;
  const rows = filterRows(await listJobs(q, { limit: 10_000 }), f, await archivedProjectNames(q));
  const held = await limitHolds(q);
  const call = await scriptCallsByJob(q);
  const attempts = await attemptsOfJobs(q, rows.map((j) => j.id));
  // A SQLite file from before the hubs table: every job ran on this machine.
  const hosts = await hubHosts(q, rows.map((j) => j.hub_id)).catch(() => new Map<string, string>());
  return rows.map((j) => ({ ...summarize(j, attempts.get(j.id) ?? [], FIELD_CAP, hosts), ...held(j), ...(call.has(j.id) ? { script_run: call.get(j.id) } : {}) }));
}

/** A script run as one status line: status, pause, phase, calls, cost of budget, the error, and the command that shows it. */
export function runStatusLine(r: FloorRun): string {
  const cost = `$${r.cost_usd.toFixed(4)}${r.budget_usd !== null ? ` of $${r.budget_usd.toFixed(2)}` : ''}`;
  const parts = [
    `${r.status}${r.paused ? ' · paused (no new call starts)' : ''}`, ...(r.phase ? [`phase ${r.phase}`] : []),
    `calls: ${r.counts.done} done, ${r.counts.running} running, ${r.counts.failed} failed`, cost,
    ...(r.waiting_request ? [`approve() waits for you: overseer respond ${r.waiting_request} --approve|--reject`] : []),
    ...(r.error && r.status !== 'succeeded' ? [r.error.replace(/\s+/g, ' ').slice(0, 160)] : []),
  ];
  return `▸ run ${r.run_id} "${r.title}" ${parts.join(' · ')} — overseer run ${r.run_id}`;
}

/** `waiting_on_limit` for a job a provider limit holds (queued for its provider, or paused where it met it): the floor's line. */
async function limitHolds(q: Q): Promise<(j: JobRow) => { waiting_on_limit?: string }> {
  let limits: FloorLimit[] = [];
  try {
    limits = (await readFloor(q, { now: Date.now(), hub: null, cap: 0, source: 'database', doneLimit: 0 })).limits ?? [];
  } catch { /* an older database: no limits */ }
  return (j) => {
    const l = limits.find((x) => x.provider === j.provider);
    return l && (j.status === 'queued' || l.paused.includes(j.id)) ? { waiting_on_limit: l.line } : {};
  };
}

/** The provider limits in force, one line each, first under the table: nothing of that provider starts meanwhile. */
export function limitLines(limits: readonly FloorLimit[] | undefined): string[] {
  return (limits ?? []).map((l) => `⏸ ${l.line}${l.reason ? ` (${l.reason.slice(0, 120)})` : ''} — new ${l.provider} agents start when it has passed`);
}

/** "merged into main · " for a job whose branch was merged (docs/merge.md); empty otherwise, and for a database without the table. */
async function mergedNotes(q: Q): Promise<(j: JobRow) => string> {
  const into = await mergeTargetsByJob(q);
  return (j) => (into.has(j.id) ? `merged into ${into.get(j.id)} · ` : '');
}

/** "setup 12.3s · " for a worktree job whose bootstrap ran commands (or failed); empty otherwise, and for a database without the table. */
async function setupNotes(q: Q): Promise<(j: JobRow) => string> {
  const reports = await setupReportsByJob(q);
  return (j) => {
    const r = j.worktree === 1 ? reports.get(j.id) : undefined;
    if (!r || (r.commands.length === 0 && r.status === 'ok')) return '';
    return `setup ${r.status === 'failed' ? 'failed ' : r.status === 'skipped' ? 'skipped ' : ''}${(r.duration_ms / 1000).toFixed(1)}s · `;
  };
}

/** The table, its totals and what needs the person, as `overseer status` prints it. `floor`:
 * the NEEDS YOU items to show (default: read from the same database). */
export async function statusText(state: State, f: StatusFilter, floor?: Pick<Floor, 'needs_you' | 'limits' | 'runs'>): Promise<string> {
  const q = state.sql.db;
  const all = await listJobs(q, { limit: 10_000 });
  const rows = filterRows(all, f, await archivedProjectNames(q));
  const kept = new Set(rows.map((j) => j.id));
  const hidden = f.project === undefined ? all.filter((j) => (!f.status || j.status === f.status) && j.project && !kept.has(j.id)).length : 0;
  const hiddenLine = hidden && !f.label && !f.parent ? `(${hidden} job(s) of archived projects hidden: overseer projects --archived, or --project <name>)\n` : '';
  if (rows.length === 0) {
    if (f.status || f.label || f.parent || f.project) return `No jobs match.\n${hiddenLine}`;
    // A script run may have no agent yet (its first call waits for the person, or it is paused).
    let runs: string[] = [];
    try {
      const fl = floor ?? await readFloor(q, { now: Date.now(), hub: null, cap: 0, source: 'database', doneLimit: 0 });
      // Lost or fenced workers need the person even with no job on the floor.
      runs = [...(fl.runs ?? []).map(runStatusLine), ...needsYouLines(fl.needs_you.filter((n) => n.kind === 'worker_lost' || n.kind === 'worker_fenced'))];
    } catch { /* an older database */ }
    const hubs = await hubLines(state.sql);
    return `No jobs yet.\n${hiddenLine}${hubs.length ? `${hubs.join('\n')}\n` : ''}${runs.length ? `\n${runs.join('\n')}\n` : ''}`;
  }
  // A PROJECT column when some job has one (src/projects).
  const withProject = f.project === undefined && rows.some((j) => j.project);
  const setup = await setupNotes(q);
  const merged = await mergedNotes(q);
  const calls = await scriptCallsByJob(q);
  const ofRun = (j: JobRow): string => { const c = calls.get(j.id); return c ? `run ${c.run_id} #${c.call} · ` : ''; };
  const body = rows.map((j: JobRow) => [
    j.id, j.status + (j.failure_class ? ` (${j.failure_class})` : ''), j.parent_id ?? '-', ...(withProject ? [j.project ?? '-'] : []), String(j.turns), `$${j.cost_usd.toFixed(4)}`,
    age(j.created_at), j.title.slice(0, 40), `${ofRun(j)}${merged(j)}${setup(j)}${(runsAt(j) ?? j.status_message ?? j.error ?? '').replace(/\s+/g, ' ')}`.slice(0, 70),
  ]);
  let needs: Pick<Floor, 'needs_you' | 'limits' | 'runs'>;
  let unreadable: string[] = [];
  try {
    needs = floor ?? await readFloor(q, { now: Date.now(), hub: null, cap: 0, source: 'database', doneLimit: 0 });
  } catch (err) {
    // A database an older hub left (no warnings table yet) has its table; the rest comes with a newer hub.
    needs = { needs_you: [] };
    unreadable = [`(what needs you could not be read: ${(err as Error).message}; a running hub of this version upgrades the database)`];
  }
  const filtered = !!(f.status || f.label || f.parent || f.project) || hidden > 0;
  const shown = new Set(rows.map((r) => r.id));
  // Script runs: all of them on the whole floor; with a filter, only the run a `--label run:<id>` names.
  const runs = (needs.runs ?? []).filter((r) => (filtered ? f.label === `run:${r.run_id}` : true));
  const lines = [...limitLines(needs.limits), ...runs.map(runStatusLine), ...needsYouLines(needs.needs_you.filter((n) => (filtered ? n.job_id !== null && shown.has(n.job_id) : true))), ...attentionList(rows), ...unreadable];
  const budgets = state.config ? await budgetsLine(q, state.config) : undefined;
  const schedules = await schedulesLine(q);
  const debates = filtered ? [] : await debateStatusLines(q, Date.now());
  const hubs = await hubLines(state.sql);
  return `${table([['JOB', 'STATUS', 'PARENT', ...(withProject ? ['PROJECT'] : []), 'TURNS', 'COST', 'AGE', 'TITLE', 'LAST'], ...body])}\n${totalsLine(rows)}\n${hiddenLine}${hubs.length ? `${hubs.join('\n')}\n` : ''}${budgets ? `${budgets}\n` : ''}${schedules ? `${schedules}\n` : ''}${debates.length ? `${debates.join('\n')}\n` : ''}${lines.length ? `\n${lines.join('\n')}\n` : ''}`;
}

/** PostgreSQL: one line per hub serving the crew (id, host, pid, url, heartbeat age); none on SQLite (one hub per state
 * directory, shown by its hub.json) or on a database from before the hubs table. */
export async function hubLines(s: SqlDb): Promise<string[]> {
  if (s.dialect !== 'postgres') return [];
  let hubs;
  try { hubs = await liveHubs(s.db, s.dialect); } catch { return []; }
  return hubs.map((h) => `hub ${h.id} on ${h.host} pid ${h.pid} ${h.url ?? '(no url yet: starting)'} · heartbeat ${(Math.max(0, h.heartbeat_age_ms) / 1000).toFixed(1)}s ago`);
}

/** A scheduled job still waiting for its time (docs/schedules.md): when it runs. */
function runsAt(j: JobRow): string | undefined {
  return j.status === 'waiting' && j.not_before != null && j.not_before > Date.now() ? `runs at ${new Date(j.not_before).toISOString()}` : undefined;
}

/** Under the totals: the house and label budgets (docs/budgets.md), what is spent, reserved and left of each; undefined without budgets. */
export async function budgetsLine(q: Q, config: Pick<Config, 'budgetUsd' | 'labelBudgets'>): Promise<string | undefined> {
  const refs = applicableBudgets({ houseUsd: config.budgetUsd, labelBudgets: config.labelBudgets, labels: Object.keys(config.labelBudgets), ancestors: [] });
  if (refs.length === 0) return undefined;
  const d = (v: number): string => `$${v.toFixed(2)}`;
  try {
    const parts: string[] = [];
    for (const r of [...refs.filter((x) => x.kind === 'house'), ...refs.filter((x) => x.kind === 'label')]) {
      const u = await useOf(q, r);
      const spent = spentOf(u);
      parts.push( `${r.kind === 'house' ? 'house' : `label ${r.key}`} ${d(r.limitUsd)}: ${d(spent)} spent, ${d(u.reservedUsd)} reserved, ${d(Math.max(0, r.limitUsd - spent - u.reservedUsd))} left`);
    }
    return `budgets: ${parts.join(' · ')}`;
  } catch (err) {
    // A database from before budgets (no reservations table): a hub of this version upgrades it.
    return `budgets: (not readable here: ${(err as Error).message})`;
  }
}

/** NEEDS YOU lines for the status: open requests, health warnings, recent failures, blocked or
 * waiting workflows, lost or fenced workers (lock violations have their own lines below, from the table's rows; a failed
 * script run is on its run line). */
export function needsYouLines(items: readonly NeedsYouItem[]): string[] {
  const out: string[] = [];
  for (const n of items) {
    const job = n.job_id ? `${n.job_id} "${n.title}"` : `"${n.title}"`;
    if (n.kind === 'approval' || n.kind === 'question' || n.kind === 'permission') out.push(`? ${n.kind} ${n.request_id} from ${job}: ${n.text} — ${n.command}`);
    else if (n.kind === 'warning') out.push(`! ${job} ${n.text} — ${n.command}`);
    else if (n.kind === 'failed') out.push(`! ${job} failed: ${n.text} — ${n.command}`);
    else if (n.kind === 'workflow_blocked' || n.kind === 'workflow_approval') out.push(`! workflow ${n.workflow_id} "${n.title}" ${n.text} — ${n.command}`);
    else if (n.kind === 'worker_lost' || n.kind === 'worker_fenced') out.push(`! ${n.title} ${n.text} — ${n.command}`);
  }
  return out;
}

/** What the person must know beyond the table: writes to held files that were undone or
 * recorded, and agents stopped because a tool ran without the lock hook. */
export function attentionLines(rows: readonly JobRow[]): string {
  const lines = attentionList(rows);
  return lines.length ? `\n${lines.join('\n')}\n` : '';
}

function attentionList(rows: readonly JobRow[]): string[] {
  const lines: string[] = [];
  for (const j of rows) {
    const files = j.lock_violations_json ? (JSON.parse(j.lock_violations_json) as string[]) : [];
    if (files.length) lines.push(`! ${j.id} wrote to files another agent held (undone, or recorded for a codex turn): ${files.join(', ')} — overseer events --job ${j.id}`);
    if (j.failure_class === 'hook_bypassed') lines.push(`! ${j.id} was stopped: a tool call ran without the lock hook; review its changes before using them — overseer events --job ${j.id}`);
  }
  return lines;
}
