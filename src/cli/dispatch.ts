// The CLI of runs (docs/dispatch.md): `overseer validate|dispatch|runs|run` and `overseer resume
// <run>`. validate works offline; dispatch validates first (nothing starts on a bad file), then
// talks to the hub of the state directory as the lead, starting a background hub when none runs
// (CI, no lead): it does not exit idle while the run has work.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig, settingsDirOf } from '../config.js';
import { CliError, UsageError } from './errors.js';
import type { HubTools } from './hubTools.js';
import { checkDispatch, formatOf, formatProblems, type DispatchSpec } from '../runs/file.js';
import { readRunView } from '../runs/runService.js';
import { getRun, listRuns, runIds } from '../store/sql/runs.js';
import type { Q } from '../store/sql/tx.js';

interface Common { json?: boolean }

const out = (s: string): void => void process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);

/** Read and validate a file: its spec, or the problems printed and exit code 1. */
function check(file: string): { spec?: DispatchSpec; text: string; problems: string } {
  const abs = resolve(file);
  if (!existsSync(abs)) throw new UsageError(`no dispatch file ${JSON.stringify(file)} (resolved to ${abs})`);
  const format = formatOf(abs);
  if (!format) throw new UsageError(`cannot tell the format of ${JSON.stringify(file)}: name it *.toml, *.yaml or *.yml`);
  const text = readFileSync(abs, 'utf8');
  const config = loadConfig();
  const r = checkDispatch(text, format, { baseDir: dirname(abs), templatesDir: join(settingsDirOf(config), 'templates') });
  return { spec: r.spec, text, problems: r.problems.length ? `${formatProblems(file, r.problems)}\n${r.problems.length} problem(s) in ${file}; nothing was started.` : '' };
}

export function runValidate(file: string, o: Common): void {
  const r = check(file);
  if (o.json) out(JSON.stringify(r.spec ? { ok: true, tasks: r.spec.tasks.map((t) => t.id), rules: r.spec.rules } : { ok: false, problems: r.problems.split('\n').slice(0, -1) }, null, 2));
  else out(r.spec ? `${file}: ok, ${r.spec.tasks.length} task(s)${r.spec.rules.concurrency ? `, concurrency ${r.spec.rules.concurrency}` : ''}${r.spec.rules.budget_usd ? `, budget $${r.spec.rules.budget_usd}` : ''}${r.spec.rules.timeout_s ? `, timeout ${r.spec.rules.timeout_s} s` : ''}` : r.problems);
  if (!r.spec) process.exitCode = 1;
}

/** The state directory's hub as the lead, started in the background when none answers. */
async function hubTools(): Promise<HubTools> {
  const config = loadConfig();
  const [{ locateHub }, { spawnHub }, { connectHub }, { ensureLeadToken }, { randomIds }] = await Promise.all([
    import('../hubproc/locate.js'), import('../hubproc/spawn.js'), import('./hubTools.js'), import('../hubfiles/hubLock.js'), import('../clock.js'),
  ]);
  mkdirSync(config.home, { recursive: true });
  ensureLeadToken(config.home, () => randomIds.token());
  await locateHub({ stateDir: config.home, start: () => { spawnHub({ stateDir: config.home, settingsDir: config.settingsDir, env: process.env, cwd: process.cwd() }); } });
  return connectHub(config.home);
}

export async function runDispatch(file: string, o: Common & { wait?: boolean; title?: string; timeout?: string; args?: string }): Promise<void> {
  const scripts = await import('./scriptRuns.js');
  if (scripts.isScriptFile(file)) return scripts.runDispatchScript(file, o, hubTools);
  if (o.args !== undefined) throw new UsageError('--args is for a script (.js): a dispatch file gives each task its prompt and context');
  const timeoutS = o.timeout === undefined ? 24 * 3600 : Number(o.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new UsageError(`--timeout ${JSON.stringify(o.timeout)} is not a number of seconds`);
  const c = check(file);
  if (!c.spec) {
    process.stderr.write(`${c.problems}\n`);
    process.exitCode = 1;
    return;
  }
  const h = await hubTools();
  try {
    let run = await h.call('dispatch', { file: resolve(file), ...(o.title ? { title: o.title } : {}) });
    if (!o.wait) {
      out(o.json ? JSON.stringify(run, null, 2) : `${run.run_id} ${run.status}\n${taskLines(run)}`);
      return;
    }
    if (!o.json) out(`${run.run_id} dispatched: ${run.tasks.length} task(s); waiting (overseer run ${run.run_id} shows it)`);
    const until = Date.now() + timeoutS * 1000;
    while (run.status === 'running') {
      if (Date.now() > until) {
        out(o.json ? JSON.stringify({ ...run, timed_out: true }, null, 2) : `timed out waiting; the run goes on: ${run.run_id}\n${summary(run)}`);
        process.exitCode = 124;
        return;
      }
      await new Promise((r) => setTimeout(r, 500));
      run = await h.call('get_run', { run_id: run.run_id });
    }
    out(o.json ? JSON.stringify(run, null, 2) : summary(run));
    process.exitCode = run.status === 'succeeded' ? 0 : 1;
  } finally {
    await h.close();
  }
}

export async function runResumeRun(id: string, o: Common): Promise<void> {
  const h = await hubTools();
  try {
    const run = await h.call('resume_run', { run_id: id });
    if (o.json) return out(JSON.stringify(run, null, 2));
    // A script run answers with its view (calls, log), a dispatch run with its tasks.
    out(run.kind === 'script' ? (await import('./scriptRuns.js')).scriptRunText(run) : `${run.run_id} ${run.status}\n${taskLines(run)}`);
  } finally {
    await h.close();
  }
}

/** Runs from the state database, read-only (works whether or not a hub runs), through the layer over the CLI's handle. */
async function withRuns<T>(f: (q: Q) => Promise<T>): Promise<T> {
  const { openState } = await import('./state.js');
  const s = await openState();
  try {
    return await f(s.sql.db);
  } catch (err) {
    if (/no such table: run/.test((err as Error).message)) throw new CliError('No runs yet (this state has never had a dispatch).');
    throw err;
  } finally {
    await s.close();
  }
}

/** Script runs and dispatch runs together, newest first; a script run as its view (src/scripts/view.ts). */
export async function runRuns(o: Common & { limit?: string }): Promise<void> {
  const { scriptRunView } = await import('../scripts/view.js');
  const views = await withRuns(async (q) => {
    const out: any[] = [];
    for (const r of await listRuns(q, Number(o.limit ?? 50) || 50)) out.push(r.kind === 'script' ? (await scriptRunView(q, r.id))! : { kind: 'dispatch', ...(await readRunView(q, r)) });
    return out;
  });
  if (o.json) return out(JSON.stringify({ runs: views.map(({ tasks: _t, calls: _c, log: _l, ...v }: any) => v) }, null, 2));
  if (!views.length) return out('No runs yet.');
  const { scriptRunLine } = await import('./scriptRuns.js');
  out(views.map((v: any) => (v.kind === 'script' ? scriptRunLine(v) : `${v.run_id}  dispatch  ${String(v.status).padEnd(9)}  ${countsText(v.counts)}  $${v.cost_usd}  ${v.created_at}  ${v.title}`)).join('\n'));
}

export async function runRun(id: string, o: Common): Promise<void> {
  const [{ scriptRunView }, { scriptRunText }] = await Promise.all([import('../scripts/view.js'), import('./scriptRuns.js')]);
  const script = await withRuns(async (q) => scriptRunView(q, id));
  if (script) return out(o.json ? JSON.stringify(script, null, 2) : scriptRunText(script));
  const v = await withRuns(async (q) => {
    const m = await runIds(q, id);
    const r = (await getRun(q, id)) ?? (() => { if (m.length > 1) throw new UsageError(`${JSON.stringify(id)} names ${m.length} runs: ${m.join(', ')}`); return undefined; })() ?? (m[0] ? await getRun(q, m[0]) : undefined);
    if (!r) {
      const recent = await runIds(q);
      throw new UsageError(`No run ${JSON.stringify(id)}. ${recent.length ? `Recent runs: ${recent.slice(0, 10).join(', ')}` : 'No runs exist yet.'}`);
    }
    return readRunView(q, r);
  });
  out(o.json ? JSON.stringify(v, null, 2) : summary(v));
}

function countsText(c: Record<string, number>): string {
  return Object.entries(c).map(([k, n]) => `${n} ${k}`).join(', ');
}

function taskLines(run: any): string {
  return (run.tasks as any[]).map((t) => `  ${String(t.task_id).padEnd(16)} ${String(t.status).padEnd(11)} ${t.job_id ?? '-'}${t.error ? `  ${String(t.error).replace(/\s+/g, ' ').slice(0, 160)}` : ''}`).join('\n');
}

function summary(run: any): string {
  return [
    `run ${run.run_id} (${run.title}): ${run.status}; ${countsText(run.counts)}; cost $${run.cost_usd}`,
    ...(run.note ? [`  ${run.note}`] : []),
    taskLines(run),
    ...(run.status !== 'succeeded' && run.status !== 'running' ? [`resume what did not succeed with: overseer resume ${run.run_id}`] : []),
  ].join('\n');
}
