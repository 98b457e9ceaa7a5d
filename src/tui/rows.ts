// The watch screen's view model: a Floor flattened into rows (section headings, NEEDS YOU
// items, the RUNNING tree, workflows, locks, queued and done jobs), filtered, with a selection
// keyed by each row's stable key — never by its index — so the cursor stays on the same item
// while the list changes under it. Pure: no React, no I/O.
import type { Floor, FloorJob, FloorLimit, FloorLock, FloorRun, FloorRunCall, FloorWorkflow, NeedsYouItem, ShipItem } from '../floor/types.js';

export type Block = 'limits' | 'needs_you' | 'ship' | 'running' | 'runs' | 'workflows' | 'locks' | 'queued' | 'done';

export const BLOCK_TITLE: Record<Block, string> = {
  limits: 'PROVIDER LIMITS', needs_you: 'NEEDS YOU', ship: 'READY TO SHIP', running: 'RUNNING', runs: 'SCRIPT RUNS', workflows: 'WORKFLOWS', locks: 'LOCKS', queued: 'QUEUED / WAITING', done: 'DONE',
};

/** Screen order: a provider limit holding the crew first (src/limits), what needs the person, then live work, then the past. */
export const BLOCK_ORDER: readonly Block[] = ['limits', 'needs_you', 'ship', 'running', 'runs', 'workflows', 'locks', 'queued', 'done'];

export type ViewRow =
  | { kind: 'heading'; key: string; block: Block; count: number }
  | { kind: 'need'; key: string; block: 'needs_you'; need: NeedsYouItem }
  /** `host`: shown on the row when the floor shows hosts (Floor.show_host). */
  | { kind: 'job'; key: string; block: 'running' | 'queued' | 'done'; job: FloorJob; host?: string }
  /** A finished worktree job whose branch waits to be shipped (READY TO SHIP). */
  | { kind: 'ship'; key: string; block: 'ship'; item: ShipItem }
  | { kind: 'workflow'; key: string; block: 'workflows'; workflow: FloorWorkflow }
  /** A script run; `expanded`: its calls and log lines follow it. */
  | { kind: 'run'; key: string; block: 'runs'; run: FloorRun; expanded: boolean }
  | { kind: 'call'; key: string; block: 'runs'; run: FloorRun; call: FloorRunCall }
  | { kind: 'runlog'; key: string; block: 'runs'; line: { kind: string; text: string } }
  | { kind: 'lock'; key: string; block: 'locks'; lock: FloorLock }
  | { kind: 'limit'; key: string; block: 'limits'; limit: FloorLimit };

/** Rows the cursor can rest on (headings, locks and limits are information only). */
export const selectable = (r: ViewRow): boolean => r.kind === 'need' || r.kind === 'job' || r.kind === 'ship' || r.kind === 'workflow' || r.kind === 'run' || r.kind === 'call';

// ---- filter ------------------------------------------------------------------------------

export interface Filter {
  /** Lower-cased words that must all appear in the row's text. */
  words: string[];
  labels: string[];
  statuses: string[];
}

export const NO_FILTER: Filter = { words: [], labels: [], statuses: [] };

/** `label:x status:y free words` → a Filter (terms are ANDed; case-insensitive). */
export function parseFilter(text: string): Filter {
  const f: Filter = { words: [], labels: [], statuses: [] };
  for (const term of text.trim().split(/\s+/).filter(Boolean)) {
    const m = /^(label|status):(.+)$/i.exec(term);
    if (m) (m[1]!.toLowerCase() === 'label' ? f.labels : f.statuses).push(m[2]!.toLowerCase());
    else f.words.push(term.toLowerCase());
  }
  return f;
}

export const isEmptyFilter = (f: Filter): boolean => !f.words.length && !f.labels.length && !f.statuses.length;

/** The filter as typed back (for the status line). */
export const filterText = (f: Filter): string => [...f.labels.map((l) => `label:${l}`), ...f.statuses.map((s) => `status:${s}`), ...f.words].join(' ');

interface Facts { text: string; labels: string[]; statuses: string[] }

function jobFacts(j: FloorJob): Facts {
  return {
    text: [j.job_id, j.title, j.provider, j.model, j.last_line, j.why_waiting, j.result_line, j.branch, ...j.labels].filter(Boolean).join(' ').toLowerCase(),
    labels: j.labels.map((l) => l.toLowerCase()),
    statuses: [j.status, j.failure_class ?? ''].filter(Boolean),
  };
}

function matches(f: Filter, x: Facts): boolean {
  return f.words.every((w) => x.text.includes(w))
    && f.labels.every((l) => x.labels.includes(l))
    && f.statuses.every((s) => x.statuses.includes(s));
}

// ---- rows --------------------------------------------------------------------------------

export interface RowOptions {
  filter?: Filter;
  showLocks?: boolean;
  /** Script runs shown with their calls and log (by run id). */
  expanded?: ReadonlySet<string>;
}

/** Log lines an expanded run shows. */
export const RUN_LOG_SHOWN = 8;

/** A script run's rows: the run, and when expanded its calls and its last log lines. */
function runRows(run: FloorRun, expanded: boolean): ViewRow[] {
  const rows: ViewRow[] = [{ kind: 'run', key: `run:${run.run_id}`, block: 'runs', run, expanded }];
  if (!expanded) return rows;
  for (const call of run.calls) rows.push({ kind: 'call', key: `call:${run.run_id}:${call.seq}`, block: 'runs', run, call });
  const log = run.log.slice(-RUN_LOG_SHOWN);
  log.forEach((line, i) => rows.push({ kind: 'runlog', key: `runlog:${run.run_id}:${run.log.length - log.length + i}`, block: 'runs', line }));
  return rows;
}

/** Every job of the floor by id (tree included), for the facts of NEEDS YOU items. */
function jobIndex(f: Floor): Map<string, FloorJob> {
  const m = new Map<string, FloorJob>();
  const walk = (j: FloorJob): void => { m.set(j.job_id, j); j.children.forEach(walk); };
  [...f.running, ...f.queued, ...f.done].forEach(walk);
  return m;
}

/** The RUNNING tree in display order (parents before children); a job is kept when it or one
 * of its descendants matches, so a matching child keeps its parents for context. */
function flattenTree(roots: FloorJob[], keep: (j: FloorJob) => boolean): FloorJob[] {
  const out: FloorJob[] = [];
  const walk = (j: FloorJob): boolean => {
    const at = out.length;
    out.push(j);
    let any = keep(j);
    for (const c of j.children) any = walk(c) || any;
    if (!any) out.length = at;
    return any;
  };
  roots.forEach(walk);
  return out;
}

/** The floor as rows: a heading per non-empty block, then its items, in BLOCK_ORDER. */
export function buildRows(f: Floor, o: RowOptions = {}): ViewRow[] {
  const filter = o.filter ?? NO_FILTER;
  const all = isEmptyFilter(filter);
  const jobs = jobIndex(f);
  const keepJob = (j: FloorJob): boolean => all || matches(filter, jobFacts(j));
  const hostOn = (j: FloorJob): { host?: string } => (f.show_host && j.host ? { host: j.host } : {});
  const keepNeed = (n: NeedsYouItem): boolean => {
    if (all) return true;
    const j = n.job_id ? jobs.get(n.job_id) : undefined;
    const jf = j ? jobFacts(j) : { text: '', labels: [], statuses: [] };
    return matches(filter, { text: `${n.kind} ${n.title} ${n.text} ${n.request_id ?? ''} ${jf.text}`.toLowerCase(), labels: jf.labels, statuses: [n.kind, ...jf.statuses] });
  };
  const items: Record<Block, ViewRow[]> = {
    // Never filtered away: a limit holds every agent of its provider, whatever the filter shows.
    limits: (f.limits ?? []).map((limit) => ({ kind: 'limit', key: `limit:${limit.provider}:${limit.key_hash}`, block: 'limits', limit })),
    needs_you: f.needs_you.filter(keepNeed).map((need) => ({ kind: 'need', key: `need:${need.key}`, block: 'needs_you', need })),
    ship: (f.ready_to_ship ?? [])
      .filter((s) => all || matches(filter, { text: `${s.job_id} ${s.title} ${s.branch} ${s.checks} ${s.diff_stat ?? ''}`.toLowerCase(), labels: jobs.get(s.job_id)?.labels.map((l) => l.toLowerCase()) ?? [], statuses: [s.status, `checks_${s.checks}`] }))
      .map((item) => ({ kind: 'ship', key: `ship:${item.job_id}`, block: 'ship', item })),
    running: flattenTree(f.running, keepJob).map((job) => ({ kind: 'job', key: `running:${job.job_id}`, block: 'running', job, ...hostOn(job) })),
    runs: (f.runs ?? [])
      .filter((r) => all || matches(filter, { text: `${r.run_id} ${r.title} ${r.phase ?? ''} ${r.calls.map((c) => `${c.label ?? ''} ${c.job_id ?? ''}`).join(' ')}`.toLowerCase(), labels: [`run:${r.run_id}`], statuses: [r.status] }))
      .flatMap((r) => runRows(r, o.expanded?.has(r.run_id) ?? false)),
    workflows: f.workflows
      .filter((w) => all || matches(filter, { text: `${w.workflow_id} ${w.title} ${w.phase} ${w.bar}`.toLowerCase(), labels: [], statuses: [w.status] }))
      .map((workflow) => ({ kind: 'workflow', key: `wf:${workflow.workflow_id}`, block: 'workflows', workflow })),
    locks: o.showLocks
      ? f.locks.filter((l) => all || matches(filter, { text: `${l.path} ${l.holder} ${l.holder_title ?? ''} ${l.waiters.join(' ')}`.toLowerCase(), labels: [], statuses: [] }))
        .map((lock) => ({ kind: 'lock', key: `lock:${lock.path}`, block: 'locks', lock }))
      : [],
    queued: f.queued.filter(keepJob).map((job) => ({ kind: 'job', key: `queued:${job.job_id}`, block: 'queued', job, ...hostOn(job) })),
    done: f.done.filter(keepJob).map((job) => ({ kind: 'job', key: `done:${job.job_id}`, block: 'done', job, ...hostOn(job) })),
  };
  const rows: ViewRow[] = [];
  for (const b of BLOCK_ORDER) {
    if (!items[b].length) continue;
    const count = b === 'runs' ? items[b].filter((r) => r.kind === 'run').length : items[b].length;
    rows.push({ kind: 'heading', key: `heading:${b}`, block: b, count }, ...items[b]);
  }
  return rows;
}

// ---- selection ---------------------------------------------------------------------------

export interface Selection {
  /** Key of the selected row; null when nothing is selectable. */
  key: string | null;
  /** When the selection last moved by itself (its row vanished), else null: keys that act are
   * refused for a moment after, so they never hit a row the person has not seen selected. */
  movedAt: number | null;
}

export const NO_SELECTION: Selection = { key: null, movedAt: null };

const firstSelectable = (rows: readonly ViewRow[]): ViewRow | undefined => rows.find(selectable);

/** The selected row of `rows`, if the selection names one. */
export function selectedRow(rows: readonly ViewRow[], sel: Selection): ViewRow | undefined {
  return sel.key === null ? undefined : rows.find((r) => r.key === sel.key && selectable(r));
}

/**
 * The selection after the rows changed from `prev` to `next`: the same key when its row is
 * still there; else the nearest row that was its neighbour before and still exists (below
 * first, then above), else the first selectable row. A moved selection records `now`.
 */
export function reconcile(prev: readonly ViewRow[], next: readonly ViewRow[], sel: Selection, now: number): Selection {
  const nextKeys = new Set(next.filter(selectable).map((r) => r.key));
  if (sel.key !== null && nextKeys.has(sel.key)) return sel;
  if (nextKeys.size === 0) return sel.key === null ? sel : { key: null, movedAt: now };
  if (sel.key === null) return { key: firstSelectable(next)!.key, movedAt: null };
  const old = prev.filter(selectable);
  const i = old.findIndex((r) => r.key === sel.key);
  if (i >= 0) {
    for (let d = 1; d < old.length; d++) {
      for (const j of [i + d, i - d]) {
        const k = old[j]?.key;
        if (k !== undefined && nextKeys.has(k)) return { key: k, movedAt: now };
      }
    }
  }
  return { key: firstSelectable(next)!.key, movedAt: now };
}

/** Moves the cursor `delta` selectable rows (clamped); `Infinity`/`-Infinity` go to the ends. */
export function move(rows: readonly ViewRow[], sel: Selection, delta: number): Selection {
  const sels = rows.filter(selectable);
  if (!sels.length) return NO_SELECTION;
  const i = sels.findIndex((r) => r.key === sel.key);
  const to = !Number.isFinite(delta) ? (delta > 0 ? sels.length - 1 : 0) : Math.max(0, Math.min(sels.length - 1, (i < 0 ? 0 : i) + delta));
  return { key: sels[to]!.key, movedAt: null };
}

// ---- what a row acts on ------------------------------------------------------------------

export interface Target {
  job_id: string | null;
  request_id: string | null;
  /** The request's kind when it is one (approval, question, permission, workflow_approval). */
  request_kind: string | null;
  title: string;
  /** The job's status as shown (null for requests and workflows without a current job). */
  status: string | null;
}

const REQUEST_KINDS = new Set(['approval', 'question', 'permission', 'workflow_approval']);

/** What the keys on this row act on. */
export function targetOf(r: ViewRow): Target | undefined {
  switch (r.kind) {
    case 'need': {
      const n = r.need;
      const isReq = !!n.request_id && REQUEST_KINDS.has(n.kind);
      return { job_id: n.job_id, request_id: isReq ? n.request_id! : null, request_kind: isReq ? n.kind : null, title: n.title, status: null };
    }
    case 'job':
      return { job_id: r.job.job_id, request_id: null, request_kind: null, title: r.job.title, status: r.job.status };
    case 'ship':
      return { job_id: r.item.job_id, request_id: null, request_kind: null, title: r.item.title, status: r.item.status };
    case 'workflow':
      return { job_id: r.workflow.current_job, request_id: null, request_kind: null, title: r.workflow.title, status: null };
    case 'run':
      return { job_id: null, request_id: null, request_kind: null, title: r.run.title, status: r.run.status };
    case 'call':
      return { job_id: r.call.job_id, request_id: null, request_kind: null, title: r.call.job_title ?? r.call.label ?? `call #${r.call.seq}`, status: r.call.job_status };
    default:
      return undefined;
  }
}
