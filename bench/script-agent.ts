// agent() over spawn_agent (issue 28): how much later a child reaches its first model request
// when a script starts it than when the lead calls spawn_agent directly. Real claude children
// (node_modules/.bin) on the fake model, one built hub (dist/), the lead's client in memory. One
// sample of each kind a round, the order alternating every round so that drift hits both:
//   direct: spawn_agent { prompt }                         → the child's first /v1/messages
//   script: run_script { script: 'return await agent(args.prompt)' } → the same
// Each timed from just before the tool call to the fake's receipt of the child's first request
// (Date.now() on both ends, one process). Each child ends (and its run) before the next starts.
// Where the script's extra time goes, per sample: call → the job's row (the hub's work before
// the job exists: for run_script the syntax check, the run's row, the sandbox's start and the
// agent() call), and the job's row → first request (the same engine for both). Also timed alone
// in this process, from the build: checkSyntax of the script, and a sandbox from its start to
// the script's first call.
// Run alone: npm run build && node --import tsx bench/script-agent.ts  (BENCH_SCRIPT_AGENT_RUNS=20)
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { newQuickJSWASMModule, RELEASE_SYNC } from 'quickjs-emscripten';
import { startFakeAnthropic, promptOf, type FakeAnthropic } from '../src/fakemodel/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { BENCH_DIR, builtHub, f1, out, runAlone, stats, type Stats } from './common.js';
import { getJob } from '../src/store/sql/jobs.js';

const RUNS = Number(process.env.BENCH_SCRIPT_AGENT_RUNS ?? 20);
const SCRIPT = 'bench-script-agent';
const TIMEOUT_MS = 120_000;
const SOURCE = 'return await agent(args.prompt)';
const GOAL_MS = 100;

type Kind = 'direct' | 'script';

interface Sample {
  /** tool call → the child's first model request */
  total: number;
  /** tool call → the job's row created */
  toJob: number;
  /** job row → the child's first model request */
  jobToRequest: number;
  /** job row → the child's process started (the hub's start of it) */
  jobToSpawn: number;
  /** tool call → the tool's reply */
  reply: number;
  /** the hub's (this process's) garbage collection between the call and the first request, ms */
  gc: number;
  /** this process's CPU time (all its threads: the hub, its GC and compiler threads) between the call and the first request, ms */
  cpu: number;
  /** the hub's thread busy (event-loop utilisation's active time) between the call and the first request, ms: the child's MCP handshake with the hub waits on it */
  busy: number;
}

/** Garbage-collection pauses of this process (the in-process hub's), as [start, end] in performance time. */
const gcPauses: [number, number][] = [];
const gcObserver = new PerformanceObserver((l) => { for (const e of l.getEntries()) gcPauses.push([e.startTime, e.startTime + e.duration]); });
function gcWithin(from: number, to: number): number {
  return gcPauses.reduce((a, [s, e]) => a + Math.max(0, Math.min(e, to) - Math.max(s, from)), 0);
}

export interface ScriptAgentResult {
  runs: number;
  direct: Stats;
  script: Stats;
  /** script median − direct median, ms */
  diffMs: number;
  /** medians of the parts (see Sample) */
  parts: Record<Kind, { toJob: number; jobToRequest: number; jobToSpawn: number; reply: number; gc: number; cpu: number; busy: number }>;
  /** median over the rounds of (script − direct) in the same round, ms */
  pairedDiffMs: number;
  /** the script path's parts alone, from the build, CPU ms (medians; see sandboxParts) */
  alone: { wasmModule: number; checkSyntax: number; sharedModuleCheck: number; sandboxToFirstCall: number };
  samples: Record<Kind, number[]>;
}

const median = (xs: number[]): number => stats(xs).p50;

async function once(h: TestHub, fake: FakeAnthropic, kind: Kind, tag: string): Promise<Sample> {
  const marker = `(${kind} ${tag})`;
  const prompt = `@script:${SCRIPT} say hello ${marker}`;
  const t0 = Date.now();
  const p0 = performance.now();
  const c0 = process.cpuUsage();
  const e0 = performance.eventLoopUtilization();
  let jobId: string;
  let runId: string | undefined;
  if (kind === 'direct') {
    jobId = (await h.call('spawn_agent', { prompt, title: `direct ${tag}` })).job_id as string;
  } else {
    runId = (await h.call('run_script', { script: SOURCE, args: { prompt }, title: `script ${tag}` })).run_id as string;
  }
  const reply = Date.now() - t0;
  const req = await fake.waitForRequest((r) => r.step === 0 && promptOf(r.body).includes(marker), TIMEOUT_MS);
  const gc = gcWithin(p0, p0 + (req.at - t0));
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1000;
  const busy = performance.eventLoopUtilization(e0).active;
  if (runId) {
    const v = await h.call('get_run', { run_id: runId, wait_s: TIMEOUT_MS / 1000 });
    if (v.status !== 'succeeded') throw new Error(`run ${runId} ended ${v.status}: ${JSON.stringify(v).slice(0, 500)}`);
    jobId = v.calls[0].job_id as string;
  } else {
    // A script run that ended meanwhile wakes the wait with its attention item (told once): wait again.
    let w = await h.call('wait_for_agents', { job_ids: [jobId!], timeout_s: TIMEOUT_MS / 1000 });
    for (let i = 0; i < 3 && !w.done?.length && !w.timed_out; i++) w = await h.call('wait_for_agents', { job_ids: [jobId!], timeout_s: TIMEOUT_MS / 1000 });
    if (w.done?.[0]?.status !== 'succeeded') throw new Error(`job ${jobId!} did not succeed: ${JSON.stringify(w).slice(0, 500)}`);
  }
  const job = (await getJob(h.hub.ctx.sql.db, jobId!))!;
  return { total: req.at - t0, toJob: job.created_at - t0, jobToRequest: req.at - job.created_at, jobToSpawn: (job.started_at ?? NaN) - job.created_at, reply, gc, cpu, busy };
}

/** CPU time (this process, all threads) of f, ms. */
async function cpuOf(f: () => Promise<unknown>): Promise<number> {
  const c0 = process.cpuUsage();
  await f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

/** The script path's own parts, timed alone from the build in CPU ms (medians of n; wall time on a
 * shared machine is mostly waiting for a core): a new QuickJS WebAssembly module, checkSyntax (which
 * makes one), the same syntax check in a fresh context of a module made once, and a sandbox from its
 * start to the script's first call (runInSandbox makes a module too). */
async function sandboxParts(n: number): Promise<ScriptAgentResult['alone']> {
  const sb = (await import(pathToFileURL(path.join(BENCH_DIR, '..', 'dist', 'scripts', 'sandbox.js')).href)) as typeof import('../src/scripts/sandbox.js');
  const shared = await newQuickJSWASMModule(RELEASE_SYNC);
  const xs: Record<keyof ScriptAgentResult['alone'], number[]> = { wasmModule: [], checkSyntax: [], sharedModuleCheck: [], sandboxToFirstCall: [] };
  for (let i = 0; i < n + 1; i++) {
    const wasmModule = await cpuOf(() => newQuickJSWASMModule(RELEASE_SYNC));
    const checkSyntax = await cpuOf(async () => {
      const problem = await sb.checkSyntax(SOURCE);
      if (problem) throw new Error(`checkSyntax refused the benchmark's script: ${problem.message}`);
    });
    const sharedModuleCheck = await cpuOf(async () => {
      const vm = shared.newContext();
      const r = vm.evalCode(`(async () => {${SOURCE}\n})()`, 'script.js', { compileOnly: true });
      (r.error ?? r.value).dispose();
      vm.dispose();
    });
    let atCall: NodeJS.CpuUsage | undefined;
    const c0 = process.cpuUsage();
    const o = await sb.runInSandbox({ source: SOURCE, args: { prompt: 'x' }, host: { call: async () => { atCall ??= process.cpuUsage(c0); return 'ok'; }, log: () => undefined, phase: () => undefined, budget: () => ({ total: null, spent: 0, reserved: 0 }) } });
    if (o.status !== 'returned' || !atCall) throw new Error(`the sandbox did not run the benchmark's script: ${JSON.stringify(o)}`);
    if (i === 0) continue; // warm-up
    xs.wasmModule.push(wasmModule);
    xs.checkSyntax.push(checkSyntax);
    xs.sharedModuleCheck.push(sharedModuleCheck);
    xs.sandboxToFirstCall.push((atCall.user + atCall.system) / 1000);
  }
  return { wasmModule: median(xs.wasmModule), checkSyntax: median(xs.checkSyntax), sharedModuleCheck: median(xs.sharedModuleCheck), sandboxToFirstCall: median(xs.sandboxToFirstCall) };
}

export async function benchScriptAgent(): Promise<ScriptAgentResult> {
  let fake: FakeAnthropic | undefined;
  let h: TestHub | undefined;
  gcObserver.observe({ entryTypes: ['gc'] });
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: [{ text: 'done' }] } });
    h = await startTestHub({ hubClass: await builtHub(), fake });
    await once(h, fake, 'direct', 'warm-up');
    await once(h, fake, 'script', 'warm-up');
    const samples: Record<Kind, Sample[]> = { direct: [], script: [] };
    for (let i = 0; i < RUNS; i++) {
      const order: Kind[] = i % 2 === 0 ? ['direct', 'script'] : ['script', 'direct'];
      for (const k of order) samples[k].push(await once(h, fake, k, String(i)));
    }
    const part = (k: Kind) => ({
      toJob: median(samples[k].map((s) => s.toJob)),
      jobToRequest: median(samples[k].map((s) => s.jobToRequest)),
      jobToSpawn: median(samples[k].map((s) => s.jobToSpawn)),
      gc: median(samples[k].map((s) => s.gc)),
      cpu: median(samples[k].map((s) => s.cpu)),
      busy: median(samples[k].map((s) => s.busy)),
      reply: median(samples[k].map((s) => s.reply)),
    });
    const direct = stats(samples.direct.map((s) => s.total));
    const script = stats(samples.script.map((s) => s.total));
    const parts = { direct: part('direct'), script: part('script') };
    const alone = await sandboxParts(RUNS);
    const r: ScriptAgentResult = {
      runs: RUNS, direct, script, diffMs: script.p50 - direct.p50, parts, alone,
      pairedDiffMs: median(samples.script.map((s, i) => s.total - samples.direct[i]!.total)),
      samples: { direct: samples.direct.map((s) => s.total), script: samples.script.map((s) => s.total) },
    };
    const line = (k: Kind, s: Stats): string =>
      `   ${k.padEnd(6)} call → child's first model request: median ${f1(s.p50)} ms (min ${f1(s.min)}, max ${f1(s.max)}, n=${s.n}); `
      + `call → reply ${f1(parts[k].reply)}, call → job row ${f1(parts[k].toJob)}, job row → first request ${f1(parts[k].jobToRequest)} ms (of which job row → process started ${f1(parts[k].jobToSpawn)}); in that window the hub's process used ${f1(parts[k].cpu)} ms of CPU, its thread was busy ${f1(parts[k].busy)} ms, ${f1(parts[k].gc)} ms of GC pauses\n`
      + `          samples: ${samples[k].map((x) => x.total).join(', ')}\n`;
    out(line('direct', direct) + line('script', script)
      + `   agent() over spawn_agent: ${r.diffMs >= 0 ? '+' : ''}${f1(r.diffMs)} ms between the medians, ${f1(r.pairedDiffMs)} ms the median of the rounds' differences (goal: under +${GOAL_MS} ms)\n`
      + `   the script's own part (call → the job's row): +${f1(parts.script.toJob - parts.direct.toJob)} ms; after the job's row both are the same engine\n`
      + `   alone, from the build, CPU: a QuickJS WebAssembly module ${f1(alone.wasmModule)} ms; checkSyntax ${f1(alone.checkSyntax)} ms (on a module made once: ${f1(alone.sharedModuleCheck)} ms); a sandbox's start → the script's first call ${f1(alone.sandboxToFirstCall)} ms\n`);
    return r;
  } finally {
    gcObserver.disconnect();
    await h?.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
  }
}

export const SCRIPT_AGENT_GOAL_MS = GOAL_MS;

runAlone(import.meta.url, benchScriptAgent);
