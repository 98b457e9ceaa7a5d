// The CLI of script runs (docs/scripts.md, docs/dispatch.md): `overseer dispatch <file.js>` starts
// one through the hub's run_script (the script is checked here first: a syntax error names its
// line and nothing is started, no hub either), `--wait` blocks in get_run's wait_s; `overseer run
// <id>` of a script run shows it from the state database (src/scripts/view.ts).
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from './errors.js';
import type { HubTools } from './hubTools.js';

interface Opts { json?: boolean; wait?: boolean; title?: string; timeout?: string; args?: string }

/** get_run's wait_s is at most an hour; each wait asks for at most this many seconds. */
const WAIT_SLICE_S = 600;

const out = (s: string): void => void process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);

export const isScriptFile = (file: string): boolean => /\.(js|mjs)$/i.test(file);

/** `--args <json>`: the script's args, or a usage error that says how to write it. */
export function parseArgs(text: string | undefined): { args?: unknown } {
  if (text === undefined) return {};
  try {
    return { args: JSON.parse(text) as unknown };
  } catch (err) {
    throw new UsageError(`--args is not JSON (${(err as Error).message}): pass one JSON value, quoted for the shell, e.g. --args '{"files":["a.ts","b.ts"]}' or --args '"text"'. Nothing was started.`);
  }
}

export async function runDispatchScript(file: string, o: Opts, connect: () => Promise<HubTools>): Promise<void> {
  const timeoutS = o.timeout === undefined ? 24 * 3600 : Number(o.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new UsageError(`--timeout ${JSON.stringify(o.timeout)} is not a number of seconds`);
  const abs = resolve(file);
  if (!existsSync(abs)) throw new UsageError(`no script file ${JSON.stringify(file)} (resolved to ${abs})`);
  const args = parseArgs(o.args);
  const script = readFileSync(abs, 'utf8');
  const { checkSyntax } = await import('../scripts/sandbox.js');
  const problem = await checkSyntax(script);
  if (problem) {
    const where = problem.line ? `${file}:${problem.line}${problem.column ? `:${problem.column}` : ''}` : file;
    process.stderr.write(`${where}: ${problem.name}: ${problem.message}\nThe script does not parse; nothing was started. Fix it and dispatch it again.\n`);
    process.exitCode = 1;
    return;
  }
  const h = await connect();
  try {
    const started = await h.call('run_script', { script, ...(o.title ? { title: o.title } : {}), ...args });
    const id = started.run_id as string;
    if (!o.wait) {
      out(o.json ? JSON.stringify(started, null, 2) : `${id} running: ${started.title} (overseer run ${id} shows it)`);
      return;
    }
    if (!o.json) out(`${id} started: ${started.title}; waiting (overseer run ${id} shows it)`);
    const until = Date.now() + timeoutS * 1000;
    for (;;) {
      const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
      const waitS = Math.min(left, WAIT_SLICE_S);
      const v = await h.call('get_run', { run_id: id, wait_s: waitS }, (waitS + 30) * 1000);
      if (v.status !== 'running') {
        out(o.json ? JSON.stringify(v, null, 2) : scriptRunText(v));
        process.exitCode = v.status === 'succeeded' ? 0 : 1;
        return;
      }
      if (left === 0 || Date.now() >= until) {
        out(o.json ? JSON.stringify({ ...v, timed_out: true }, null, 2) : `timed out waiting; the run goes on: ${id}\n${scriptRunText(v)}`);
        process.exitCode = 124;
        return;
      }
    }
  } finally {
    await h.close();
  }
}

const money = (n: number | null | undefined): string => `$${(n ?? 0).toFixed(4)}`;
const clip = (s: string, n: number): string => { const one = s.replace(/\s+/g, ' ').trim(); return one.length > n ? `${one.slice(0, n - 1)}…` : one; };

/** A script run view (get_run's) as `overseer run` prints it. */
export function scriptRunText(v: any): string {
  const calls = (v.calls ?? []) as any[];
  const phases = new Map<string, number>();
  for (const c of calls) if (c.phase) phases.set(c.phase, (phases.get(c.phase) ?? 0) + 1);
  const n = (s: string): number => calls.filter((c) => c.status === s && c.replaced !== true).length;
  const lines = [
    `run ${v.run_id} (${v.title}): ${v.status}${v.paused ? ' · paused (no new call starts)' : ''} · ${calls.length} call(s): ${n('done')} done, ${n('running')} running, ${n('failed')} failed · cost ${money(v.cost_usd)}${v.budget_usd !== null && v.budget_usd !== undefined ? ` of ${money(v.budget_usd)}` : ''}`,
  ];
  if (v.status === 'succeeded') lines.push(`  result: ${clip(JSON.stringify(v.result ?? null), 400)}`);
  else if (v.error) lines.push(`  error: ${clip(String(v.error), 400)}`);
  if (phases.size) lines.push(`  phases: ${[...phases].map(([p, k]) => `${p} (${k})`).join(', ')}`);
  if (calls.length) {
    const rows = [['SEQ', 'KIND', 'LABEL', 'PHASE', 'STATUS', 'JOB', 'COST'], ...calls.map((c) => [
      String(c.seq), c.kind, clip(c.label ?? '-', 40), clip(c.phase ?? '-', 20),
      c.replaced ? `${c.status} (replaced)` : c.job_status && c.job_status !== 'succeeded' && c.job_status !== c.status ? `${c.status} (${c.job_status})` : c.request_id && c.status === 'running' ? `running (waits for you: ${c.request_id})` : c.status,
      c.job_id ?? c.request_id ?? '-', c.kind === 'agent' ? money(c.cost_usd) : '-',
    ])];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    lines.push(...rows.map((r) => `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}`));
  }
  const log = ((v.log ?? []) as any[]).slice(-15);
  if (log.length) lines.push(`  log (last ${log.length}):`, ...log.map((l) => `    ${String(l.at).slice(11, 19)} ${l.kind === 'log' ? '' : `[${l.kind}] `}${clip(l.text, 200)}`));
  return lines.join('\n');
}

/** One line of `overseer runs` for a script run view. */
export function scriptRunLine(v: any): string {
  const calls = (v.calls ?? []) as any[];
  const n = (s: string): number => calls.filter((c) => c.status === s && c.replaced !== true).length;
  return `${v.run_id}  script    ${String(v.status).padEnd(9)}  ${n('done')} done, ${n('running')} running, ${n('failed')} failed${v.paused ? ', paused' : ''}  $${v.cost_usd}  ${v.created_at}  ${v.title}`;
}
