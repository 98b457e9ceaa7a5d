// Benchmark 4: an Overseer-spawned child vs bare `claude -p`, both the REAL claude CLI
// (devDependency) against one scripted fake Anthropic API whose script calls Write once and
// then ends with a text turn.
//   Overseer: wall time from the spawn_agent call to the wait_for_agents return (in-process
//             hub from test/helpers/hub.ts, lead client in memory).
//   Bare:     `claude -p "<same prompt>" --output-format stream-json --verbose
//             --permission-mode dontAsk --allowedTools Write` spawned directly (runClaude),
//             wall time to exit.
// The two alternate, 7 timed runs each after one untimed warm-up of each. Also reported:
// start → first API request at the fake (fake.requests[].at), which makes the child's MCP
// connect to the hub (and the rest of its start-up) visible.
// Run alone: node --import tsx bench/vs-bare.ts
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startFakeAnthropic, promptOf, type FakeAnthropic, type Script } from '../src/testing/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeEnv, runClaude } from '../test/helpers/claude.js';
import { f1, f2, out, removeDir, statLine, stats, tempDir, type Stats } from './common.js';

const RUNS = 7;
const TIMEOUT_MS = 120_000;
const SCRIPT = 'bench-write';

export interface VsBareResult {
  overseer: Stats;
  bare: Stats;
  ratioP50: number;
  /** start → first request at the fake API */
  overseerFirstRequest: Stats;
  bareFirstRequest: Stats;
  /** first request → end (wait return / process exit) */
  overseerRest: Stats;
  bareRest: Stats;
}

/** Writes the file named in the prompt ("… into <path>"), then ends with a text turn. */
const writeOnce: Script = (ctx) => {
  const file = /into (\S+)/.exec(ctx.prompt)?.[1];
  if (ctx.step === 0 && file) return { tools: [{ name: 'Write', input: { file_path: file, content: 'bench\n' } }] };
  return { text: 'done' };
};

function promptFor(file: string): string {
  return `@script:${SCRIPT} write one file into ${file}`;
}

/** Arrival time of the first request at the fake for this run's prompt (Date.now() clock). */
function firstRequestAt(fake: FakeAnthropic, file: string): number | undefined {
  return fake.requests.find((r) => promptOf(r.body).includes(file))?.at;
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

export async function benchVsBare(): Promise<VsBareResult> {
  let fake: FakeAnthropic | undefined;
  let h: TestHub | undefined;
  let work: string | undefined;
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: writeOnce } });
    work = await tempDir('vs-bare');
    const bareHome = path.join(work, 'bare-home');
    const ovsWork = path.join(work, 'ovs-work');
    const bareWork = path.join(work, 'bare-work');
    await Promise.all([mkdir(bareHome), mkdir(ovsWork), mkdir(bareWork)]);
    h = await startTestHub({ fake });
    const env = claudeEnv({ home: bareHome, baseUrl: fake.url });

    const ovs: number[] = [];
    const bare: number[] = [];
    const ovsFirst: number[] = [];
    const bareFirst: number[] = [];
    const ovsRest: number[] = [];
    const bareRest: number[] = [];
    for (let i = -1; i < RUNS; i++) {
      // Overseer child. Date.now() is the fake's clock for request arrival.
      const f1File = path.join(ovsWork, `out-${i + 1}.txt`);
      const t0 = Date.now();
      const p0 = performance.now();
      const { job_id } = await h.call('spawn_agent', { prompt: promptFor(f1File), cwd: ovsWork, title: `vs-bare ${i + 1}` });
      const w = await h.call('wait_for_agents', { job_ids: [job_id], timeout_s: TIMEOUT_MS / 1000 });
      const oMs = performance.now() - p0;
      const oEnd = t0 + oMs;
      if (w.done?.[0]?.status !== 'succeeded') throw new Error(`Overseer child ${job_id} did not succeed: ${JSON.stringify(w.done?.[0] ?? w).slice(0, 800)}`);
      checkWritten(f1File, 'Overseer');
      const oFirst = firstRequestAt(fake, f1File);

      // Bare claude -p.
      const f2File = path.join(bareWork, `out-${i + 1}.txt`);
      const b0 = Date.now();
      const q0 = performance.now();
      const run = await runClaude(
        ['-p', promptFor(f2File), '--output-format', 'stream-json', '--verbose', '--permission-mode', 'dontAsk', '--allowedTools', 'Write'],
        { cwd: bareWork, env, timeoutMs: TIMEOUT_MS },
      );
      const bMs = performance.now() - q0;
      const bEnd = b0 + bMs;
      if (run.code !== 0) throw new Error(`bare claude exited ${run.code}: ${run.stderr.slice(-2000)}`);
      checkWritten(f2File, 'bare');
      const bFirst = firstRequestAt(fake, f2File);

      if (i < 0) continue;
      ovs.push(oMs);
      bare.push(bMs);
      if (oFirst !== undefined) {
        ovsFirst.push(oFirst - t0);
        ovsRest.push(oEnd - oFirst);
      }
      if (bFirst !== undefined) {
        bareFirst.push(bFirst - b0);
        bareRest.push(bEnd - bFirst);
      }
    }
    const r: VsBareResult = {
      overseer: stats(ovs),
      bare: stats(bare),
      ratioP50: NaN,
      overseerFirstRequest: stats(ovsFirst),
      bareFirstRequest: stats(bareFirst),
      overseerRest: stats(ovsRest),
      bareRest: stats(bareRest),
    };
    r.ratioP50 = r.overseer.p50 / r.bare.p50;
    out(
      statLine(`Overseer child: spawn_agent → wait_for_agents return (${RUNS} runs)`, r.overseer) +
        statLine('bare claude -p: spawn → exit', r.bare) +
        `ratio Overseer/bare (median): ${f2(r.ratioP50)}  (difference ${f1(r.overseer.p50 - r.bare.p50)} ms)\n` +
        `split, medians: start → first API request: Overseer ${f1(r.overseerFirstRequest.p50)} ms vs bare ${f1(r.bareFirstRequest.p50)} ms ` +
        `(Δ ${f1(r.overseerFirstRequest.p50 - r.bareFirstRequest.p50)} ms: MCP connect to the hub + longer argv/system prompt); ` +
        `first request → end: Overseer ${f1(r.overseerRest.p50)} ms vs bare ${f1(r.bareRest.p50)} ms\n`,
    );
    return r;
  } finally {
    await h?.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchVsBare().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
