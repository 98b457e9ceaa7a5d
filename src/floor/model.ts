// The floor model: plain rows in (src/floor/source.ts reads them), the floor out — what a
// person sees of the crew, in sections of priority: NEEDS YOU, RUNNING (a tree), QUEUED /
// WAITING (with why), DONE (recent). Pure: no I/O, `now` injected, so status, watch and the
// dashboard show the same thing and tests need no database.
//
// Ordering is stable: every sort ends on the job's seq or a row id, so a view's selection does
// not jump between two frames where nothing moved.
//
// "Failed jobs not yet seen": Overseer does not record what a person has looked at, so a failed
// job stays in NEEDS YOU while it is still failed (not retried or resumed) and ended less than
// `failedWindowMs` ago (default 24 h). Left out: phases of a workflow (the workflow's own item
// speaks for them) and `dependency_failed` jobs (the failure they depend on is shown instead).
import type { JobRow } from '../store/jobs.js';
import type { FullRequestRow } from '../store/sql/requests.js';
import type { WarningRow } from '../store/warnings.js';
import type { WorkflowRow } from '../store/workflows.js';
import type { LockRow, WaitRow } from '../store/locks.js';
import { cliHint } from '../approvals/rules.js';
import { byPair, type OverlapRow } from '../store/overlaps.js';
import type { Floor, FloorJob, FloorLock, FloorRun, FloorTotals, FloorWarning, FloorWorkflow, NeedKind, NeedsYouItem, RequestPlan } from './types.js';
import { OUTCOME_WARNINGS } from './health.js';
import type { LimitRow } from '../limits/store.js';
import { floorLimit } from '../limits/view.js';
import { isLead, leadHub } from '../domain/lead.js';
import type { ShipRows } from './ship.js';
import { shipItems } from './shipView.js';
import { rowHost, showHost, workerNeeds, type FloorWorkerRow } from './workers.js';

/** The hub's own facts (null when the floor is read from the database with no hub running). */
/** The tier of an auto-chosen model ("fallback" when classification failed), for the floor's model column. */
function modelTier(json: string | null | undefined): { model_tier?: string } {
  if (!json) return {};
  try {
    const c = JSON.parse(json) as { tier?: string | null; fallback?: boolean };
    return { model_tier: c.fallback ? 'fallback' : c.tier ?? 'fallback' };
  } catch {
    return {};
  }
}

export interface FloorHubInfo {
  /** The hub's id (its lead's locks are `lead@<id>` on PostgreSQL: shown as "the lead" on its own floor). */
  id?: string | null;
  url: string | null;
  pid: number | null;
  started_at: number | null;
  version: string | null;
}

/** Jobs per status over the whole database (totals), when the rows given are not all the jobs. */
export interface StatusCount {
  status: string;
  n: number;
  cost_usd: number;
  /** 1 when some job of this status has spending that could not be priced. */
  cost_unknown: number;
}

/** Everything buildFloor needs, as rows. */
export interface FloorInput {
  /** Every live job (queued, waiting, running, frozen, needs_input), the recent ended ones, and
   * any job another row refers to (a lock holder, a request's agent). */
  jobs: readonly JobRow[];
  /** Pending requests. */
  requests: readonly FullRequestRow[];
  /** Open health warnings. */
  warnings: readonly WarningRow[];
  /** Workflows to show: every unfinished one and the recently ended. */
  workflows: readonly WorkflowRow[];
  /** Milestones done and in all, per workflow (the hub's record of check-offs). */
  milestones: readonly { workflow_id: string; done: number; total: number }[];
  locks: readonly LockRow[];
  /** Lock waits still waiting. */
  lockWaits: readonly WaitRow[];
  /** Open overlaps of the conflict guard (two live branches changing the same files). */
  overlaps?: readonly OverlapRow[];
  /** Dependencies of queued and waiting jobs, with the dependency's status now. */
  deps: readonly { job_id: string; dep_id: string; status: string }[];
  /** Totals over the whole database; computed from `jobs` when absent. */
  counts?: readonly StatusCount[];
  hub: FloorHubInfo | null;
  /** The cap on agents running at once (config maxAgents). */
  cap: number;
  source: 'hub' | 'database';
  /** How many ended jobs DONE keeps (default 20). */
  doneLimit?: number;
  /** How long a failed job (or one with lock violations) stays in NEEDS YOU (default 24 h). */
  failedWindowMs?: number;
  /** Only this project's jobs (and the requests, warnings, workflows and locks of them). */
  project?: string;
  /** Archived projects (src/projects): their jobs are left out unless `project` names one. */
  archived?: readonly string[];
  /** The provider limiters (src/limits); closed ones are left out of the floor. */
  limits?: readonly LimitRow[];
  /** Script runs, as src/floor/runs.ts reads them (running first, then recently ended). */
  runs?: readonly FloorRun[];
  /** READY TO SHIP's rows (src/floor/ship.ts); absent: the lane is empty. */
  ship?: ShipRows;
  /** The crew brief's row (src/brief/store.ts; the whole crew's, whatever the project); absent: none was ever set. */
  brief?: { text: string | null; version: number; set_by: string; set_at: number };
  /** The worker hosts (src/floor/workers.ts): each row's host, and lost or fenced workers in NEEDS YOU. */
  workers?: readonly FloorWorkerRow[];
  /** The host of each hub the jobs name (jobs.hub_id → hubs.host). */
  hubHosts?: readonly { id: string; host: string }[];
  /** This machine's host name: the host of a job no worker and no known hub ran. */
  localHost?: string;
}

/** The input narrowed to one project, or without the archived projects' jobs (unchanged when neither applies). */
export function narrowToProject(input: FloorInput): FloorInput {
  const archived = new Set(input.archived ?? []);
  const project = input.project;
  if (project === undefined && archived.size === 0) return input;
  const keep = (p: string | null | undefined): boolean => (project !== undefined ? p === project : !p || !archived.has(p));
  const jobs = input.jobs.filter((j) => keep(j.project));
  const ids = new Set(jobs.map((j) => j.id));
  const workflows = input.workflows.filter((w) => keep(w.project));
  const wfIds = new Set(workflows.map((w) => w.id));
  return {
    ...input,
    jobs,
    requests: input.requests.filter((r) => ids.has(r.job_id)),
    warnings: input.warnings.filter((w) => ids.has(w.job_id)),
    workflows,
    milestones: input.milestones.filter((m) => wfIds.has(m.workflow_id)),
    locks: input.locks.filter((l) => ids.has(l.holder) || (isLead(l.holder) && project === undefined)),
    lockWaits: input.lockWaits.filter((w) => ids.has(w.holder)),
    deps: input.deps.filter((d) => ids.has(d.job_id)),
    // A script run belongs to no project: shown on the whole floor, not on one project's.
    runs: project === undefined ? input.runs : [],
    ...(input.ship ? { ship: { ...input.ship, jobs: input.ship.jobs.filter((j) => keep(j.project)) } } : {}),
  };
}

export const DEFAULT_DONE_LIMIT = 20;
export const DEFAULT_FAILED_WINDOW_MS = 24 * 3600 * 1000;

const ACTIVE = new Set(['running', 'needs_input', 'frozen']);
const PENDING = new Set(['queued', 'waiting']);
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
const REQUEST_KINDS = new Set<NeedKind>(['approval', 'question', 'permission']);
const WARNING_ORDER: Record<string, number> = { stalled: 0, commands_failed: 1, time_high: 2, budget_high: 3, turns_high: 4, long_running: 5 };
const LINE_MAX = 200;

/** The first non-blank line of `s`, whitespace squeezed, capped. */
export function firstLine(s: string | null | undefined, max = LINE_MAX): string | null {
  if (!s) return null;
  const line = s.split('\n').map((l) => l.replace(/\s+/g, ' ').trim()).find((l) => l !== '');
  if (!line) return null;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function parseList(json: string | null | undefined): string[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** What an ended job came to, in one line: its result, or `failure_class: error`. */
export function resultLine(j: Pick<JobRow, 'status' | 'result' | 'error' | 'failure_class'>): string | null {
  if (j.status === 'succeeded') return firstLine(j.result);
  const err = firstLine(j.error);
  const cls = j.failure_class ?? j.status;
  if (err) return err.startsWith(`${cls}:`) || err === cls ? err : `${cls}: ${err}`;
  return firstLine(j.result) ?? j.failure_class;
}

/** The milestone bar of a workflow: `3/5 · cycle 4 · review`. */
export function workflowBar(w: Pick<WorkflowRow, 'cycle' | 'phase'>, done: number, total: number): string {
  return `${total > 0 ? `${done}/${total}` : 'no plan yet'} · cycle ${w.cycle} · ${w.phase}`;
}

export function buildFloor(whole: FloorInput, now: number): Floor {
  const input = narrowToProject(whole);
  const doneLimit = Math.max(0, input.doneLimit ?? DEFAULT_DONE_LIMIT);
  const window = input.failedWindowMs ?? DEFAULT_FAILED_WINDOW_MS;
  const jobs = [...input.jobs].sort((a, b) => a.seq - b.seq);
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const locks = input.locks.filter((l) => l.expires_at > now).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const holderOf = new Map(locks.map((l) => [l.path, l.holder]));
  const waitsOf = new Map<string, WaitRow[]>();
  for (const w of [...input.lockWaits].sort((a, b) => a.id - b.id)) {
    if (w.status !== 'waiting') continue;
    waitsOf.set(w.holder, [...(waitsOf.get(w.holder) ?? []), w]);
  }
  const warningsOf = new Map<string, WarningRow[]>();
  const openWarnings = input.warnings.filter((w) => w.cleared_at === null).sort((a, b) => (WARNING_ORDER[a.kind] ?? 9) - (WARNING_ORDER[b.kind] ?? 9) || a.raised_at - b.raised_at || a.id - b.id);
  for (const w of openWarnings) warningsOf.set(w.job_id, [...(warningsOf.get(w.job_id) ?? []), w]);
  const activeCount = jobs.filter((j) => ACTIVE.has(j.status)).length;
  const hubHosts = new Map((input.hubHosts ?? []).map((h) => [h.id, h.host]));
  const hostOf = (j: JobRow): string => rowHost(j, hubHosts, input.localHost ?? '');

  const floorJob = (j: JobRow): FloorJob => {
    const live = ACTIVE.has(j.status);
    const ended = ENDED.has(j.status);
    const activity = j.last_activity ? firstLine(j.last_activity) : null;
    return {
      job_id: j.id, title: j.title, status: j.status, parent_id: j.parent_id, depth: j.depth, provider: j.provider, host: hostOf(j), model: j.model, ...modelTier(j.model_choice_json),
      ...(j.role && j.role !== 'implementer' ? { role: j.role } : {}),
      labels: parseList(j.labels_json), created_at: j.created_at, started_at: j.started_at, ended_at: j.ended_at,
      elapsed_ms: j.started_at === null || PENDING.has(j.status) ? null : Math.max(0, (ended ? j.ended_at ?? now : now) - j.started_at),
      turns: j.turns, max_turns: j.max_turns, cost_usd: j.cost_usd, cost_unknown: !!j.cost_unknown, budget_usd: j.budget_usd,
      input_tokens: j.input_tokens, output_tokens: j.output_tokens, progress: j.progress,
      last_line: firstLine(j.status_message) ?? (live ? activity : null),
      last_event_at: j.last_event_at,
      lock_waits: (waitsOf.get(j.id) ?? []).map((w) => {
        const paths = parseList(w.paths_json);
        const holders = [...new Set(paths.map((p) => holderOf.get(p)).filter((h): h is string => !!h && h !== j.id))];
        return { paths, holders };
      }),
      warnings: (warningsOf.get(j.id) ?? []).map((w): FloorWarning => ({ id: w.id, kind: w.kind, detail: w.detail, raised_at: w.raised_at })),
      why_waiting: null,
      result_line: ended ? resultLine(j) : null,
      failure_class: j.failure_class, branch: j.branch, diff_stat: j.diff_stat, pr_url: j.pr_url, workflow_id: j.workflow_id,
      children: [],
      idle_ms: live && j.last_event_at !== null ? Math.max(0, now - j.last_event_at) : null,
      last_activity: live ? activity : null,
      priority: j.priority,
      ...(j.not_before != null ? { run_at: j.not_before } : {}),
      ...(j.schedule_id ? { schedule_id: j.schedule_id, occurrence: j.occurrence ?? null } : {}),
      project: j.project ?? null,
    };
  };

  // RUNNING: a tree. A live job whose parent is not live (the lead, or a parent that ended)
  // is a root; the lead's own children come first.
  const live = jobs.filter((j) => ACTIVE.has(j.status)).map(floorJob);
  const liveById = new Map(live.map((f) => [f.job_id, f]));
  const running: FloorJob[] = [];
  for (const f of live) {
    const parent = f.parent_id ? liveById.get(f.parent_id) : undefined;
    if (parent) parent.children.push(f);
    else running.push(f);
  }
  running.sort((a, b) => Number(a.parent_id !== null) - Number(b.parent_id !== null) || byId.get(a.job_id)!.seq - byId.get(b.job_id)!.seq);

  // QUEUED / WAITING: queued in the order the scheduler starts them, then waiting ones.
  const depsOf = new Map<string, { dep_id: string; status: string }[]>();
  for (const d of [...input.deps].sort((a, b) => (a.dep_id < b.dep_id ? -1 : a.dep_id > b.dep_id ? 1 : 0))) {
    depsOf.set(d.job_id, [...(depsOf.get(d.job_id) ?? []), d]);
  }
  const queuedRows = jobs.filter((j) => j.status === 'queued').sort((a, b) => b.priority - a.priority || a.seq - b.seq);
  const free = Math.max(0, input.cap - activeCount);
  // Provider limits in force: their queued jobs wait for them first, whatever the cap says.
  const limits = (input.limits ?? []).filter((r) => r.phase !== 'closed')
    .map((r) => floorLimit(r, queuedRows.filter((j) => j.provider === r.provider).length, now));
  const limitOf = new Map(limits.map((l) => [l.provider, l]));
  const queued: FloorJob[] = [];
  queuedRows.forEach((j, rank) => {
    const f = floorJob(j);
    const limit = limitOf.get(j.provider);
    f.why_waiting = limit ? `waiting on the provider limit: ${limit.line}` : whyQueued(rank, free, activeCount, input.cap, queuedRows.slice(0, rank).filter((a) => a.priority > j.priority).length);
    queued.push(f);
  });
  for (const j of jobs.filter((x) => x.status === 'waiting')) {
    const f = floorJob(j);
    const deps = depsOf.get(j.id) ?? [];
    // A scheduled job (src/runs/schedules.ts) waits for its time first, then for what is left of its dependencies.
    f.why_waiting = j.not_before != null && j.not_before > now
      ? `scheduled: runs at ${new Date(j.not_before).toISOString()}${deps.some((d) => d.status !== 'succeeded') ? `, then ${whyWaiting(deps)}` : ''}`
      : whyWaiting(deps);
    queued.push(f);
  }

  // DONE: the recent ended jobs, newest first.
  const done = jobs.filter((j) => ENDED.has(j.status))
    .sort((a, b) => (b.ended_at ?? b.updated_at) - (a.ended_at ?? a.updated_at) || b.seq - a.seq)
    .slice(0, doneLimit)
    .map(floorJob);

  // Workflows and their milestone bars.
  const ms = new Map(input.milestones.map((m) => [m.workflow_id, m]));
  const rank = (w: WorkflowRow): number => (w.status === 'blocked' ? 0 : w.status === 'waiting_approval' ? 1 : w.status === 'running' ? 2 : 3);
  const workflows = [...input.workflows]
    .sort((a, b) => rank(a) - rank(b) || (rank(a) === 3 ? (b.ended_at ?? b.updated_at) - (a.ended_at ?? a.updated_at) || b.seq - a.seq : a.seq - b.seq))
    .map((w): FloorWorkflow => {
      const m = ms.get(w.id) ?? { done: 0, total: 0 };
      return {
        workflow_id: w.id, title: w.title, status: w.status, phase: w.phase, cycle: w.cycle, max_cycles: w.max_cycles,
        milestones_done: m.done, milestones_total: m.total, bar: workflowBar(w, m.done, m.total), current_job: w.current_job,
        blocked_reason: w.status === 'blocked' ? blockedText(w.blocked_json) : null,
        approval_request: w.status === 'waiting_approval' ? w.approval_request : null,
      };
    });

  const floorLocks: FloorLock[] = locks.map((l) => ({
    path: l.path, holder: l.holder, holder_title: isLead(l.holder) ? (l.holder === 'lead' || (input.hub?.id && leadHub(l.holder) === input.hub.id) ? 'the lead' : `the lead on hub ${leadHub(l.holder) ?? '?'}`) : byId.get(l.holder)?.title ?? null, expires_at: l.expires_at,
    waiters: [...new Set(input.lockWaits.filter((w) => w.status === 'waiting' && parseList(w.paths_json).includes(l.path)).sort((a, b) => a.id - b.id).map((w) => w.holder))],
  }));

  const needsYou = [...needs(input, jobs, byId, openWarnings, now, window), ...workerNeeds(input.workers ?? [], jobs, now, window)];
  return {
    at: now,
    source: input.source,
    hub: {
      url: input.hub?.url ?? null, pid: input.hub?.pid ?? null, started_at: input.hub?.started_at ?? null,
      uptime_ms: input.hub?.started_at != null ? Math.max(0, now - input.hub.started_at) : null, version: input.hub?.version ?? null,
    },
    totals: totals(input.counts ?? countsOf(jobs), input.cap, needsYou.length),
    brief: input.brief?.text ? { text: input.brief.text, version: input.brief.version, set_by: input.brief.set_by === 'lead' ? 'lead' : 'person', set_at: input.brief.set_at } : null,
    needs_you: needsYou,
    ready_to_ship: shipItems(input.ship, now),
    running,
    queued,
    done,
    workflows,
    runs: [...(input.runs ?? [])],
    locks: floorLocks,
    limits,
    show_host: showHost(input.workers ?? [], jobs.map(hostOf)),
  };
}

/** request_approval's plan, as its labelled sections (the ones it gave, non-empty). */
function planOf(json: string | null): { plan?: RequestPlan } {
  if (!json) return {};
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return {};
  }
  if (!v || typeof v !== 'object') return {};
  const p = v as Record<string, unknown>;
  const plan: RequestPlan = {};
  const text = (x: unknown): string | undefined => (typeof x === 'string' && x.trim() ? x : undefined);
  const items = (x: unknown): string | string[] | undefined => (Array.isArray(x) ? (x.length ? x.map(String) : undefined) : text(x));
  if (text(p.rationale)) plan.rationale = text(p.rationale)!;
  if (items(p.resources)) plan.resources = items(p.resources)!;
  if (items(p.risks)) plan.risks = items(p.risks)!;
  if (text(p.rollback)) plan.rollback = text(p.rollback)!;
  return Object.keys(plan).length ? { plan } : {};
}

function whyQueued(rank: number, free: number, active: number, cap: number, higherAhead: number): string {
  if (rank < free) return `starting: ${active} running of ${cap}, a slot is free`;
  const ahead = rank - free;
  // The jobs ahead of it that fit under the cap are starting: the cap is full once they have.
  const over = `over the cap (${Math.max(active, cap)} running of ${cap})`;
  if (ahead === 0) return `${over}, next in line`;
  return `${over}, ${ahead} ahead in the queue${higherAhead ? ` (${higherAhead} of higher priority)` : ''}`;
}

function whyWaiting(deps: readonly { dep_id: string; status: string }[]): string {
  const open = deps.filter((d) => d.status !== 'succeeded');
  if (deps.length === 0) return 'waiting';
  if (open.length === 0) return 'its dependencies succeeded: about to be queued';
  const failed = open.find((d) => d.status === 'failed' || d.status === 'cancelled');
  if (failed) return `dependency ${failed.dep_id} ${failed.status}: it will not run`;
  return `waiting on ${open.length === 1 ? 'dependency' : 'dependencies'} ${open.map((d) => `${d.dep_id} (${d.status})`).join(', ')}`;
}

function blockedText(json: string | null): string | null {
  if (!json) return null;
  try {
    const r = JSON.parse(json) as { code?: string; message?: string };
    return firstLine(`${r.code ?? 'blocked'}: ${r.message ?? ''}`);
  } catch {
    return firstLine(json);
  }
}

function blockedJob(json: string | null): string | null {
  if (!json) return null;
  try {
    return (JSON.parse(json) as { job_id?: string | null }).job_id ?? null;
  } catch {
    return null;
  }
}

function countsOf(jobs: readonly JobRow[]): StatusCount[] {
  const m = new Map<string, StatusCount>();
  for (const j of jobs) {
    const c = m.get(j.status) ?? { status: j.status, n: 0, cost_usd: 0, cost_unknown: 0 };
    c.n++;
    c.cost_usd += j.cost_usd;
    if (j.cost_unknown) c.cost_unknown = 1;
    m.set(j.status, c);
  }
  return [...m.values()];
}

function totals(counts: readonly StatusCount[], cap: number, needsYou: number): FloorTotals {
  const n = (...s: string[]): number => counts.filter((c) => s.includes(c.status)).reduce((a, c) => a + c.n, 0);
  return {
    running: n('running', 'needs_input'),
    queued: n('queued', 'waiting'),
    done: n('succeeded'),
    failed: n('failed'),
    needs_you: needsYou,
    cost_usd: counts.reduce((a, c) => a + c.cost_usd, 0),
    cost_unknown: counts.some((c) => c.cost_unknown),
    cap,
    frozen: n('frozen'),
    cancelled: n('cancelled', 'interrupted'),
  };
}

/** NEEDS YOU, in this order: requests, health warnings (stalled first), failed jobs, workflows
 * that are blocked or wait for an approval, lock violations. */
function needs(input: FloorInput, jobs: readonly JobRow[], byId: Map<string, JobRow>, warnings: readonly WarningRow[], now: number, window: number): NeedsYouItem[] {
  const out: NeedsYouItem[] = [];
  const title = (jobId: string): string => byId.get(jobId)?.title ?? jobId;
  const wfOfRequest = new Map(input.workflows.filter((w) => w.approval_request).map((w) => [w.approval_request!, w.id]));
  const listed = new Set<string>();
  const runOfRequest = new Map((input.runs ?? []).filter((r) => r.waiting_request).map((r) => [r.waiting_request!, r]));

  const requests = input.requests.filter((r) => r.status === 'pending' && REQUEST_KINDS.has(r.kind as NeedKind))
    .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
  for (const r of requests) {
    listed.add(r.id);
    const options = r.options_json ? parseList(r.options_json) : undefined;
    const wf = wfOfRequest.get(r.id);
    const run = runOfRequest.get(r.id);
    out.push({
      kind: r.kind as NeedKind, key: `req:${r.id}`, job_id: r.job_id, title: run ? `run ${run.run_id} "${run.title}"` : title(r.job_id), ...(run ? { run_id: run.run_id } : {}),
      text: `${r.who === 'person' ? 'for you only: ' : r.who === 'lead' ? 'for the lead: ' : ''}${firstLine(r.summary) ?? r.kind}`,
      request_id: r.id, ...(wf ? { workflow_id: wf } : {}), ...(options ? { options } : {}),
      at: r.created_at, command: cliHint(r), who: r.who, expires_at: r.expires_at, summary: r.summary, ...planOf(r.plan_json),
    });
  }

  for (const w of warnings) {
    const j = byId.get(w.job_id);
    // A warning about the work done (commands_failed) stays in view after the job ended.
    if (!j || (!ACTIVE.has(j.status) && !OUTCOME_WARNINGS.has(w.kind))) continue;
    out.push({ kind: 'warning', key: `warn:${w.id}`, job_id: w.job_id, title: j.title, text: `${w.kind}: ${firstLine(w.detail) ?? ''}`, at: w.raised_at, command: `overseer logs ${w.job_id}` });
  }

  for (const o of byPair(input.overlaps ?? [])) {
    const [a, b] = o.jobs;
    out.push({
      kind: 'overlap', key: `ovl:${a}:${b}`, job_id: a, title: title(a),
      text: `${a} and ${b} (${title(b)}) both change ${o.files.join(', ')} on their branches`, at: o.detected_at, command: 'overseer overlaps',
    });
  }

  const recent = (j: JobRow): boolean => (j.ended_at ?? j.updated_at) >= now - window;
  const failed = jobs.filter((j) => j.status === 'failed' && recent(j) && j.workflow_id === null && j.failure_class !== 'dependency_failed')
    .sort((a, b) => (b.ended_at ?? b.updated_at) - (a.ended_at ?? a.updated_at) || b.seq - a.seq);
  for (const j of failed) {
    out.push({ kind: 'failed', key: `job:${j.id}`, job_id: j.id, title: j.title, text: resultLine(j) ?? 'failed', at: j.ended_at ?? j.updated_at, command: `overseer logs ${j.id}` });
  }

  const wfs = [...input.workflows].sort((a, b) => a.seq - b.seq);
  for (const w of wfs) {
    if (w.status === 'blocked') {
      const job = blockedJob(w.blocked_json) ?? w.current_job;
      out.push({
        kind: 'workflow_blocked', key: `wf:${w.id}`, job_id: job, title: w.title, workflow_id: w.id,
        text: `blocked: ${blockedText(w.blocked_json) ?? 'no reason recorded'} (the lead resumes it with resume_workflow)`,
        at: w.updated_at, command: job ? `overseer logs ${job}` : 'overseer events --limit 20',
      });
    } else if (w.status === 'waiting_approval' && !(w.approval_request && listed.has(w.approval_request))) {
      out.push({
        kind: 'workflow_approval', key: `wf:${w.id}`, job_id: w.current_job, title: w.title, workflow_id: w.id,
        text: `its plan waits for approval${w.approval_request ? ` (request ${w.approval_request})` : ''}`,
        ...(w.approval_request ? { request_id: w.approval_request } : {}),
        at: w.updated_at, command: w.approval_request ? `overseer respond ${w.approval_request} --approve|--reject [--comment "<text>"]` : 'overseer requests',
      });
    }
  }

  for (const r of input.runs ?? []) {
    if (r.status !== 'failed' || (r.ended_at ?? now) < now - window) continue;
    out.push({ kind: 'run_failed', key: `run:${r.run_id}`, job_id: null, run_id: r.run_id, title: r.title, text: firstLine(r.error) ?? 'failed', at: r.ended_at ?? now, command: `overseer run ${r.run_id}` });
  }

  for (const j of jobs) {
    const files = parseList(j.lock_violations_json);
    if (!files.length || !(ACTIVE.has(j.status) || PENDING.has(j.status) || recent(j))) continue;
    out.push({
      kind: 'lock_violation', key: `viol:${j.id}`, job_id: j.id, title: j.title,
      text: `wrote to files another agent held (undone, or recorded for a codex turn): ${files.join(', ')}`,
      at: j.ended_at ?? j.updated_at, command: `overseer events --job ${j.id}`,
    });
  }
  return out;
}
