// Benchmark 13: an Overseer-spawned Codex child vs bare `codex exec`, both the REAL codex CLI
// (devDependency, codex-cli 0.169.0) against one scripted fake Responses API whose script runs
// one shell command and then ends with a text message.
//   Overseer: wall time from the spawn_agent call (provider "codex") to the wait_for_agents
//             return (in-process hub from test/helpers/hub.ts, lead client in memory). The child
//             carries what Overseer adds: the overseer MCP server over HTTP (required), the lock
//             hook on the shell call, the preamble, the prompt on stdin, the end-of-turn
//             lock-violation check.
//   Bare:     `codex exec --json --skip-git-repo-check -C <dir> -s workspace-write -m fake-model
//             "<same prompt>"` spawned directly (test/helpers/codex.ts runCodex) with its own
//             CODEX_HOME on the same fake provider and model catalog, wall time to exit.
//   Overseer, lockMode off: the same child from a second hub with locks off (no lock hook, no
//             lock-violation check), which shows what the hook costs.
// The three alternate, 7 timed runs each after one untimed warm-up of each. Also reported:
// start → first API request at the fake (fake.requests[].at), which makes the child's MCP
// connect to the hub (and the rest of its start-up) visible.
// Run alone: node --import tsx bench/vs-bare-codex.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fakeModelCatalog, startFakeOpenAI, type CodexScript, type FakeOpenAI } from '../src/testing/fakeOpenAI.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { codexBin, codexEnv, codexHome, execFlags, FAKE_API_KEY, FAKE_MODEL, runCodex } from '../test/helpers/codex.js';
import { f1, f2, out, removeDir, statLine, stats, tempDir, type Stats } from './common.js';

const RUNS = 7;
const TIMEOUT_MS = 120_000;
const SCRIPT = 'bench-shell';

export interface VsBareCodexResult {
  overseer: Stats;
  bare: Stats;
  ratioP50: number;
  /** start → first request at the fake API */
  overseerFirstRequest: Stats;
  bareFirstRequest: Stats;
  /** first request → end (wait return / process exit) */
  overseerRest: Stats;
  bareRest: Stats;
  /** first request → second request: the shell call (with Overseer's lock hook in front of it) */
  overseerToolCall: Stats;
  bareToolCall: Stats;
  /** last request → end: codex finishing and exiting, then (Overseer) the hub settling the job and waking the wait */
  overseerTail: Stats;
  bareTail: Stats;
  /** the same Overseer child from a hub with lockMode "off" (no lock hook, no lock-violation check) */
  overseerNoLocks: Stats;
  ratioNoLocksP50: number;
}

/** Runs one shell command writing the file named in the prompt ("… write one file into <path>"), then ends with a text message. */
const shellOnce: CodexScript = (ctx) => {
  const file = /write one file into (\S+)/.exec(ctx.prompt)?.[1];
  if (ctx.step === 0 && file) return { calls: [{ shell: `echo bench > ${file}` }] };
  return { text: 'done' };
};

function promptFor(file: string): string {
  return `@script:${SCRIPT} write one file into ${file}`;
}

/** Arrival times of the requests at the fake for this run's prompt (Date.now() clock). */
function requestTimes(fake: FakeOpenAI, file: string): number[] {
  return fake.requests.filter((r) => r.prompt.includes(file)).map((r) => r.at);
}

function checkWritten(file: string, who: string): void {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    /* reported below */
  }
  if (text !== 'bench\n') throw new Error(`${who} run did not write ${file}`);
}

/** One Overseer codex child that writes `file`; returns spawn_agent → wait_for_agents return in ms. */
async function overseerRun(hub: TestHub, file: string, title: string): Promise<number> {
  const p0 = performance.now();
  const { job_id } = await hub.call('spawn_agent', { prompt: promptFor(file), cwd: path.dirname(file), provider: 'codex', title });
  const w = await hub.call('wait_for_agents', { job_ids: [job_id], timeout_s: TIMEOUT_MS / 1000 });
  const ms = performance.now() - p0;
  if (w.done?.[0]?.status !== 'succeeded') throw new Error(`Overseer codex child ${job_id} did not succeed: ${JSON.stringify(w.done?.[0] ?? w).slice(0, 800)}`);
  checkWritten(file, 'Overseer');
  return ms;
}

export async function benchVsBareCodex(): Promise<VsBareCodexResult> {
  let fake: FakeOpenAI | undefined;
  let h: TestHub | undefined;
  let hOff: TestHub | undefined;
  let work: string | undefined;
  try {
    fake = await startFakeOpenAI({ scripts: { [SCRIPT]: shellOnce } });
    work = await tempDir('vs-bare-codex');
    const bareHome = path.join(work, 'bare-home');
    const bareCodexHome = path.join(work, 'bare-codex-home');
    const ovsWork = path.join(work, 'ovs-work');
    const bareWork = path.join(work, 'bare-work');
    const hubDir = path.join(work, 'hub');
    const offDir = path.join(work, 'hub-off');
    await Promise.all([mkdir(bareHome), mkdir(bareCodexHome), mkdir(ovsWork), mkdir(bareWork), mkdir(hubDir), mkdir(offDir)]);
    // Same provider settings and model catalog on both sides.
    await codexHome(bareCodexHome, fake.url);
    const catalog = path.join(hubDir, 'models.json');
    writeFileSync(catalog, JSON.stringify(fakeModelCatalog([FAKE_MODEL])));
    const hubConfig = {
      codexProvider: { base_url: fake.url, env_key: 'FAKE_API_KEY', request_max_retries: 0, stream_max_retries: 0 },
      codexModel: FAKE_MODEL, codexModelCatalog: catalog, codexBin: codexBin(),
    };
    h = await startTestHub({ dir: hubDir, extraEnv: { FAKE_API_KEY }, config: hubConfig });
    hOff = await startTestHub({ dir: offDir, extraEnv: { FAKE_API_KEY }, config: { ...hubConfig, lockMode: 'off' } });
    const env = codexEnv({ home: bareHome, codexHome: bareCodexHome });

    const ovs: number[] = [];
    const off: number[] = [];
    const bare: number[] = [];
    const ovsFirst: number[] = [];
    const bareFirst: number[] = [];
    const ovsRest: number[] = [];
    const bareRest: number[] = [];
    const ovsTool: number[] = [];
    const bareTool: number[] = [];
    const ovsTail: number[] = [];
    const bareTail: number[] = [];
    for (let i = -1; i < RUNS; i++) {
      // Overseer child. Date.now() is the fake's clock for request arrival.
      const f1File = path.join(ovsWork, `out-${i + 1}.txt`);
      const t0 = Date.now();
      const oMs = await overseerRun(h, f1File, `vs-bare-codex ${i + 1}`);
      const oEnd = t0 + oMs;
      const oReqs = requestTimes(fake, f1File);
      const offMs = await overseerRun(hOff, path.join(ovsWork, `off-${i + 1}.txt`), `vs-bare-codex no locks ${i + 1}`);

      // Bare codex exec.
      const f2File = path.join(bareWork, `out-${i + 1}.txt`);
      const b0 = Date.now();
      const q0 = performance.now();
      const run = await runCodex(['exec', ...execFlags(bareWork), '-m', FAKE_MODEL, promptFor(f2File)], { cwd: bareWork, env, timeoutMs: TIMEOUT_MS });
      const bMs = performance.now() - q0;
      const bEnd = b0 + bMs;
      if (run.code !== 0) throw new Error(`bare codex exited ${run.code}: ${run.stderr.slice(-2000)}`);
      checkWritten(f2File, 'bare');
      const bReqs = requestTimes(fake, f2File);

      if (i < 0) continue;
      ovs.push(oMs);
      off.push(offMs);
      bare.push(bMs);
      if (oReqs.length === 2) {
        ovsFirst.push(oReqs[0]! - t0);
        ovsRest.push(oEnd - oReqs[0]!);
        ovsTool.push(oReqs[1]! - oReqs[0]!);
        ovsTail.push(oEnd - oReqs[1]!);
      }
      if (bReqs.length === 2) {
        bareFirst.push(bReqs[0]! - b0);
        bareRest.push(bEnd - bReqs[0]!);
        bareTool.push(bReqs[1]! - bReqs[0]!);
        bareTail.push(bEnd - bReqs[1]!);
      }
    }
    const r: VsBareCodexResult = {
      overseer: stats(ovs),
      bare: stats(bare),
      ratioP50: NaN,
      overseerFirstRequest: stats(ovsFirst),
      bareFirstRequest: stats(bareFirst),
      overseerRest: stats(ovsRest),
      bareRest: stats(bareRest),
      overseerToolCall: stats(ovsTool),
      bareToolCall: stats(bareTool),
      overseerTail: stats(ovsTail),
      bareTail: stats(bareTail),
      overseerNoLocks: stats(off),
      ratioNoLocksP50: NaN,
    };
    r.ratioP50 = r.overseer.p50 / r.bare.p50;
    r.ratioNoLocksP50 = r.overseerNoLocks.p50 / r.bare.p50;
    out(
      statLine(`Overseer codex child: spawn_agent → wait_for_agents return (${RUNS} runs)`, r.overseer) +
        statLine('bare codex exec: spawn → exit', r.bare) +
        statLine('Overseer codex child, lockMode off (no lock hook)', r.overseerNoLocks) +
        `ratio Overseer/bare (median): ${f2(r.ratioP50)}  (difference ${f1(r.overseer.p50 - r.bare.p50)} ms); ` +
        `lockMode off: ${f2(r.ratioNoLocksP50)} (difference ${f1(r.overseerNoLocks.p50 - r.bare.p50)} ms)\n` +
        `split, medians: start → first API request: Overseer ${f1(r.overseerFirstRequest.p50)} ms vs bare ${f1(r.bareFirstRequest.p50)} ms ` +
        `(Δ ${f1(r.overseerFirstRequest.p50 - r.bareFirstRequest.p50)} ms: MCP connect to the hub + preamble); ` +
        `first request → end: Overseer ${f1(r.overseerRest.p50)} ms vs bare ${f1(r.bareRest.p50)} ms, of which ` +
        `the shell call (1st → 2nd request): Overseer ${f1(r.overseerToolCall.p50)} ms vs bare ${f1(r.bareToolCall.p50)} ms (Δ: the lock hook) and ` +
        `last request → end: Overseer ${f1(r.overseerTail.p50)} ms vs bare ${f1(r.bareTail.p50)} ms\n`,
    );
    return r;
  } finally {
    await h?.stop().catch(() => undefined);
    await hOff?.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchVsBareCodex().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
