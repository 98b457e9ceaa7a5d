// Benchmark 21: batch dispatch of 200 tasks (docs/dispatch.md). An in-process hub whose
// children are scripted in process (test/helpers/fakeLauncher.ts; each hangs, so the figure is
// the scheduling, not the agents' work; OVERSEER_MAX_AGENTS=8, so 8 run and the rest queue).
// Measured: the `dispatch` call with a file of 200 independent tasks, from the call to its reply
// — by then every task's job is created (queued or running) — and the process's RSS before and
// after. Baseline in the same run, on a fresh hub: 200 spawn_agent calls one after the other
// (what a lead does without a file), time to the last reply and the RSS before and after.
// Both hubs are in this process: RSS is the process's, measured after a GC where possible.
// Run alone: node --import tsx bench/dispatch.ts
import { performance } from 'node:perf_hooks';
import { f1, f2, fixture, out, runAlone, startBenchHub, type BenchHub } from './common.js';
import { ScriptedLauncher } from '../test/helpers/fakeLauncher.js';
import { runTasks } from '../src/store/sql/runs.js';

const TASKS = 200;

export interface DispatchBenchResult {
  tasks: number;
  dispatchMs: number;
  spawnsMs: number;
  ratio: number;
  dispatchRssBeforeMb: number;
  dispatchRssAfterMb: number;
  spawnsRssBeforeMb: number;
  spawnsRssAfterMb: number;
  validateMs: number;
}

const rssMb = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss / 1024 / 1024;
};

function file(n: number): string {
  const lines = ['title = "bench"'];
  for (let i = 0; i < n; i++) lines.push('[[task]]', `id = "t${i}"`, `prompt = "bench task ${i}: do the thing"`, `labels = ["bench"]`);
  return lines.join('\n');
}

async function hub(): Promise<BenchHub> {
  return startBenchHub({ claudeBin: fixture('fake-agent.sh'), config: { maxAgents: 8 }, processes: new ScriptedLauncher(() => ({ hang: true })) });
}

export async function benchDispatch(): Promise<DispatchBenchResult> {
  const content = file(TASKS);
  // Dispatch.
  const a = await hub();
  let dispatchMs: number;
  let dispatchRssBeforeMb: number;
  let dispatchRssAfterMb: number;
  let validateMs: number;
  try {
    const { checkDispatch } = await import('../src/runs/file.js');
    const v0 = performance.now();
    checkDispatch(content, 'toml', { baseDir: a.project, templatesDir: a.dir });
    validateMs = performance.now() - v0;
    dispatchRssBeforeMb = rssMb();
    const t0 = performance.now();
    const r = await a.call('dispatch', { content, format: 'toml' });
    dispatchMs = performance.now() - t0;
    dispatchRssAfterMb = rssMb();
    const withJob = (await runTasks(a.hub.ctx.sql.db, r.run_id)).filter((t) => t.job_id).length;
    if (withJob !== TASKS) throw new Error(`only ${withJob} of ${TASKS} tasks had a job when dispatch returned`);
    out(`  dispatch of ${TASKS} tasks: ${f1(dispatchMs)} ms to every job created (${f2(dispatchMs / TASKS)} ms a task; validation alone ${f1(validateMs)} ms); RSS ${f1(dispatchRssBeforeMb)} → ${f1(dispatchRssAfterMb)} MB\n`);
  } finally {
    await a.stop();
  }
  // Baseline: one spawn_agent call after the other.
  const b = await hub();
  let spawnsMs: number;
  let spawnsRssBeforeMb: number;
  let spawnsRssAfterMb: number;
  try {
    spawnsRssBeforeMb = rssMb();
    const t0 = performance.now();
    for (let i = 0; i < TASKS; i++) await b.call('spawn_agent', { prompt: `bench task ${i}: do the thing`, labels: ['bench'] });
    spawnsMs = performance.now() - t0;
    spawnsRssAfterMb = rssMb();
    out(`  baseline, ${TASKS} spawn_agent calls in a row: ${f1(spawnsMs)} ms (${f2(spawnsMs / TASKS)} ms a call); RSS ${f1(spawnsRssBeforeMb)} → ${f1(spawnsRssAfterMb)} MB\n`);
  } finally {
    await b.stop();
  }
  const ratio = dispatchMs / spawnsMs;
  out(`  ratio dispatch / spawn_agent calls: ${f2(ratio)}\n`);
  return { tasks: TASKS, dispatchMs, spawnsMs, ratio, dispatchRssBeforeMb, dispatchRssAfterMb, spawnsRssBeforeMb, spawnsRssAfterMb, validateMs };
}

runAlone(import.meta.url, benchDispatch);
