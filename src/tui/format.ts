// Text of the watch screen: one line per fact, fitted to a width. Pure (the clock is a
// parameter), so the unit tests check what an 80-column terminal shows. Widths are counted in
// code points; ink's `wrap="truncate"` on every line is the last guard for wide characters.
import type { Floor, FloorBrief, FloorJob, FloorLock, FloorRun, FloorRunCall, FloorWorkflow, NeedsYouItem } from '../floor/types.js';

/** Columns a string takes (code points; control characters are flattened by `oneLine`). */
export const cols = (s: string): number => [...s].length;

/** One line: whitespace runs (newlines included) become one space. */
export const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** `s` cut to `w` columns, with `…` when it was longer. */
export function fit(s: string, w: number): string {
  if (w <= 0) return '';
  const cp = [...s];
  return cp.length <= w ? s : `${cp.slice(0, Math.max(0, w - 1)).join('')}…`;
}

/** `s` padded with spaces (or cut) to exactly `w` columns. */
export const pad = (s: string, w: number): string => {
  const f = fit(s, w);
  return f + ' '.repeat(Math.max(0, w - cols(f)));
};

/** Below this a duration shows its seconds (so a running row ticks every second); above, minutes. */
export const SECONDS_SHOWN_MS = 10 * 60_000;

/** 42s, 3m12s, 14m, 2h05m, 3d04h. */
export function duration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '-';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s * 1000 >= SECONDS_SHOWN_MS && s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor(s / 3600) % 24).padStart(2, '0')}h`;
}

/** Uptime to the minute (the header does not tick every second): <1m, 12m, 2h05m, 3d04h. */
export function uptime(ms: number): string {
  if (ms < 60_000) return '<1m';
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m`;
  return duration(ms);
}

/** $0.0123 below a dollar, $12.34 above; `?` when part of it could not be priced. */
export const money = (usd: number, unknown = false): string => `$${usd.toFixed(usd < 1 ? 4 : 2)}${unknown ? '?' : ''}`;

/** 950, 12.3k, 4.1M. */
export function count(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A bar of `width` cells, `done` of `total` filled: ■■■□□. */
export function bar(done: number, total: number, width = 5): string {
  if (total <= 0) return '□'.repeat(width);
  const filled = Math.max(0, Math.min(width, Math.round((done / total) * width)));
  return '■'.repeat(filled) + '□'.repeat(width - filled);
}

/** Elapsed time of a job as of `now`: running jobs tick, ended ones keep their duration. */
export function elapsedOf(j: FloorJob, now: number): number | null {
  if (j.started_at === null) return null;
  return j.ended_at === null ? Math.max(0, now - j.started_at) : j.elapsed_ms ?? j.ended_at - j.started_at;
}

/** `head` then the parts (two spaces apart), right-aligned to `w` columns. Optional parts are
 * dropped from the end while the head would get fewer than `minHead` columns; then the head is
 * cut to the room left. */
function fitParts(head: string, required: string[], optional: string[], w: number, minHead = 12): string {
  const req = required.filter(Boolean);
  const opt = optional.filter(Boolean);
  const tailOf = (): string => [...req, ...opt].join('  ');
  while (opt.length && w - 2 - cols(tailOf()) < Math.min(minHead, cols(head))) opt.pop();
  const t = tailOf();
  if (!t) return fit(head, w);
  const room = w - 2 - cols(t);
  if (room < 1) return fit(`${head}  ${t}`, w);
  return `${pad(head, room)}  ${t}`;
}

export interface JobLines {
  main: string;
  /** Second line: warnings, lock waits, last status line (running) or branch/diff/PR (done). */
  detail: string | null;
}

const model = (j: FloorJob): string => `${j.model ? `${j.provider}/${j.model}` : j.provider}${j.model_tier ? ` (auto: ${j.model_tier})` : ''}`;
const turns = (j: FloorJob): string => (j.max_turns ? `${j.turns}/${j.max_turns}t` : `${j.turns}t`);
const tokens = (j: FloorJob): string => (j.input_tokens + j.output_tokens > 0 ? `${count(j.input_tokens + j.output_tokens)} tok` : '');
const progress = (j: FloorJob): string => (j.progress === null ? '' : `${bar(j.progress, 1)} ${Math.round(j.progress * 100)}%`);

/** What is wrong or blocking: warnings first, then lock waits. */
function troubles(j: FloorJob): string[] {
  const out = j.warnings.map((w) => `⚠ ${w.kind}: ${oneLine(w.detail)}`);
  for (const l of j.lock_waits) out.push(`⏳ waits for ${l.paths.join(', ')}${l.holders.length ? ` (held by ${l.holders.join(', ')})` : ''}`);
  return out;
}

/** A job's title with its role when it is not an implementer: `Review auth [reviewer]`. */
export const titleOf = (j: FloorJob): string => (j.role ? `${j.title} [${j.role}]` : j.title);

/** The RUNNING columns right of the title, widest terminals first: [width, text] each. */
function runningColumns(j: FloorJob, now: number, w: number): { cells: [number, string][]; modelShown: boolean } {
  const elapsed: [number, string] = [6, duration(elapsedOf(j, now))];
  const cost: [number, string] = [8, money(j.cost_usd, j.cost_unknown)];
  if (w < 64) return { cells: [elapsed, cost], modelShown: false };
  const cells: [number, string][] = [elapsed, [7, turns(j)], cost, [9, tokens(j)], [9, progress(j)]];
  if (w < 110) return { cells, modelShown: false };
  return { cells: [...cells, [18, model(j)]], modelShown: true };
}

/** `on <host>` for a row when the floor shows hosts (the crew has workers or more than one host), else nothing. */
const onHost = (host: string | undefined): string => (host ? `on ${host}` : '');

/** A RUNNING row: title, elapsed, turns, cost, tokens, progress (and provider/model when wide),
 * in aligned columns; the detail line below has the host (when the floor shows hosts), the model
 * (when narrow), warnings, lock waits and the last status line or tool call. */
export function runningLines(j: FloorJob, now: number, w: number, host?: string): JobLines {
  const indent = '  '.repeat(j.depth > 0 ? j.depth - 1 : 0);
  const status = j.status === 'running' ? '' : `[${j.status}] `;
  const { cells, modelShown } = runningColumns(j, now, w);
  const right = cells.map(([cw, t]) => `  ${t.padStart(cw)}`).join('');
  const main = `${pad(`${indent}${status}${titleOf(j)}`, Math.max(1, w - cols(right)))}${right}`;
  const detail = [onHost(host), modelShown ? '' : model(j), ...troubles(j), j.last_line ? `↳ ${oneLine(j.last_line)}` : ''].filter(Boolean).join('  ');
  return { main: fit(main, w), detail: detail ? fit(`${indent}  ${detail}`, w) : null };
}

/** A QUEUED / WAITING row: title, status, why. */
export function queuedLines(j: FloorJob, w: number, host?: string): JobLines {
  const why = j.why_waiting ? oneLine(j.why_waiting) : '';
  const head = fitParts(titleOf(j), [j.status], [model(j), onHost(host)], Math.min(w, Math.max(24, Math.floor(w / 2))));
  return { main: fit(why ? `${head}  ${why}` : head, w), detail: null };
}

/** A DONE row: title, status (failure class), duration, cost, result line; branch/diff/PR below. */
export function doneLines(j: FloorJob, w: number, host?: string): JobLines {
  const status = j.failure_class && j.failure_class !== j.status ? `${j.status} (${j.failure_class})` : j.status;
  const head = fitParts(titleOf(j), [status, money(j.cost_usd, j.cost_unknown)], [duration(j.elapsed_ms), turns(j)], Math.min(w, Math.max(40, Math.floor((w * 3) / 5))));
  const result = j.result_line ? oneLine(j.result_line) : '';
  const git = [onHost(host), j.branch ? `⎇ ${j.branch}` : '', j.diff_stat ? oneLine(j.diff_stat) : '', j.pr_url ?? ''].filter(Boolean).join('  ');
  return { main: fit(result ? `${head}  ${result}` : head, w), detail: git ? fit(`  ${git}`, w) : null };
}

const NEED_LABEL: Record<NeedsYouItem['kind'], string> = {
  approval: 'APPROVE?', question: 'QUESTION', permission: 'PERMIT?', warning: 'WARNING', failed: 'FAILED',
  workflow_blocked: 'BLOCKED', workflow_approval: 'PLAN OK?', lock_violation: 'LOCKS', overlap: 'OVERLAP', run_failed: 'RUN FAIL',
  worker_lost: 'WORKER', worker_fenced: 'FENCED',
};

/** A NEEDS YOU row: what kind, whose, what (one line). */
export function needLine(n: NeedsYouItem, w: number): string {
  return fit(`${NEED_LABEL[n.kind].padEnd(8)}  ${n.title}: ${oneLine(n.text)}`, w);
}

/** A workflow row: title, status, milestone bar (3/5 · cycle 4 · review). */
export function workflowLine(f: FloorWorkflow, w: number): string {
  return fitParts(f.title, [f.status, `${bar(f.milestones_done, f.milestones_total)} ${f.bar}`], [], w);
}

/** A script run row: ▸/▾ (collapsed/expanded), title, status (paused), phase, calls done/running/failed, cost of budget. */
export function runLine(r: FloorRun, expanded: boolean, w: number): string {
  const status = `${r.status}${r.paused ? ' · paused' : ''}${r.waiting_request ? ' · waits for you' : ''}`;
  const calls = `${r.counts.done} done ${r.counts.running} running ${r.counts.failed} failed`;
  const cost = r.budget_usd !== null ? `${money(r.cost_usd)}/${money(r.budget_usd)}` : money(r.cost_usd);
  return fitParts(`${expanded ? '▾' : '▸'} ${r.title}`, [status, calls, cost], [r.phase ? `phase ${oneLine(r.phase)}` : '', r.run_id], w);
}

/** A call row under an expanded run: #seq, what (label, or the agent's title), phase, status, agent, cost. */
export function runCallLine(c: FloorRunCall, w: number): string {
  const what = c.label ?? c.job_title ?? c.kind;
  const status = c.job_status && c.job_status !== 'succeeded' && c.job_status !== c.status ? `${c.status} (${c.job_status})` : c.status;
  const who = c.kind === 'approve' ? (c.request_id ? `request ${c.request_id}` : 'approve') : c.job_id ?? '-';
  return fitParts(`    #${c.seq} ${c.kind === 'agent' ? '' : `${c.kind} `}${oneLine(what)}`, [status, who, c.kind === 'agent' ? money(c.cost_usd) : ''], [c.phase ? oneLine(c.phase) : ''], w);
}

/** A log line of an expanded run. */
export function runLogLine(l: { kind: string; text: string }, w: number): string {
  return fit(`    │ ${l.kind === 'log' ? '' : `[${l.kind}] `}${oneLine(l.text)}`, w);
}

/** A lock row: path, holder, waiters, time left. */
export function lockLine(l: FloorLock, now: number, w: number): string {
  const holder = l.holder_title ? `${l.holder_title} (${l.holder})` : l.holder;
  const waiters = l.waiters.length ? `  waiters: ${l.waiters.join(', ')}` : '';
  return fit(`${l.path}  held by ${holder}${waiters}  expires in ${duration(l.expires_at - now)}`, w);
}

/** The header's two lines: where the data comes from (hub uptime or read-only), and totals. */
export function headerLines(f: Floor, now: number, w: number): [string, string] {
  const h = f.hub;
  const hub = `hub${h.pid ? ` pid ${h.pid}` : ''}${h.started_at ? ` up ${uptime(now - h.started_at)}` : ''}${h.version ? ` · v${h.version}` : ''}`;
  const where = f.source === 'hub' ? hub
    : h.pid ? `${hub} · read from the database` : 'no hub: read-only (actions need a running hub)';
  const t = f.totals;
  const totals = [
    `${t.running} running`, `${t.queued} queued`, `${t.done} done`, `${t.failed} failed`,
    `${money(t.cost_usd, t.cost_unknown)} spent`, `cap ${t.cap}`, t.needs_you ? `${t.needs_you} need you` : '',
  ].filter(Boolean).join(' · ');
  return [fit(`overseer watch · ${where}`, w), fit(totals, w)];
}

/** The crew brief as the header's third line: who set it, its version, its text on one line, cut to the width (i shows it all). */
export function briefLine(b: FloorBrief, w: number): string {
  return fit(`crew brief v${b.version} (${b.set_by === 'lead' ? 'the lead' : 'the person'}, i shows all): ${oneLine(b.text)}`, w);
}

/** `text` as lines of at most `w` columns: its own lines kept, long ones broken at spaces (a word longer than a line is cut). */
export function wrapText(text: string, w: number): string[] {
  const out: string[] = [];
  for (const raw of text.replace(/\t/g, '  ').split('\n')) {
    let line = '';
    for (const word of raw.split(' ')) {
      if (line && cols(line) + 1 + cols(word) > w) { out.push(line); line = ''; }
      line = line ? `${line} ${word}` : word;
      while (cols(line) > w) { out.push([...line].slice(0, w).join('')); line = [...line].slice(w).join(''); }
    }
    out.push(line);
  }
  return out;
}
