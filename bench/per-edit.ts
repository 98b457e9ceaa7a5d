// Benchmark P2: what each edit costs an Overseer claude child beyond a bare `claude -p`. Both the
// REAL claude CLI against one scripted fake Anthropic API whose script writes 10 files in a row
// (one Write per model turn), then ends with a text turn. The gap between two consecutive
// requests at the fake is one edit's full round: the model's answer streamed, the PreToolUse hook
// (Overseer), the permission decision (Overseer: the hook's policy answer, or check_permission),
// the write itself and the next request. The per-edit overhead is the median gap of the Overseer
// child minus the bare CLI's, measured in the same run (sides alternating, ROUNDS rounds after a
// warm-up of each).
// Run alone: node --import tsx bench/per-edit.ts
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startFakeAnthropic, promptOf, type FakeAnthropic, type Script } from '../src/fakemodel/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeEnv, runClaude } from '../test/helpers/claude.js';
import { f1, out, removeDir, runAlone, statLine, stats, tempDir, type Stats, builtHub } from './common.js';
import { TIMEOUT_MS } from './vsBare.js';

const SCRIPT = 'bench-ten-writes';
const WRITES = 10;
const ROUNDS = 3;

/** Writes <dir>/w-<k>.txt at step k (k < WRITES), the dir named in the prompt ("… into <dir>"), then a text turn. */
const tenWrites: Script = (ctx) => {
  const dir = /into (\S+)/.exec(ctx.prompt)?.[1];
  if (dir && ctx.step < WRITES) return { tools: [{ name: 'Write', input: { file_path: path.join(dir, `w-${ctx.step}.txt`), content: `edit ${ctx.step}\n` } }] };
  return { text: 'done' };
};

export interface PerEditResult {
  overseer: Stats;
  bare: Stats;
  /** median gap difference, ms */
  overheadMs: number;
}

/** The gaps between consecutive requests of the run whose prompt names `dir`. */
function gaps(fake: FakeAnthropic, dir: string): number[] {
  const at = fake.requests.filter((r) => promptOf(r.body).includes(dir)).map((r) => r.at);
  if (at.length !== WRITES + 1) throw new Error(`expected ${WRITES + 1} requests for ${dir}, got ${at.length}`);
  return at.slice(1).map((t, i) => t - at[i]!);
}

export async function benchPerEdit(): Promise<PerEditResult> {
  let fake: FakeAnthropic | undefined;
  let h: TestHub | undefined;
  let work: string | undefined;
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: tenWrites } });
    work = await tempDir('per-edit');
    const bareHome = path.join(work, 'bare-home');
    await mkdir(bareHome);
    const hub = (h = await startTestHub({ hubClass: await builtHub(), fake }));
    const env = claudeEnv({ home: bareHome, baseUrl: fake.url });
    const ovs: number[] = [];
    const bare: number[] = [];
    for (let n = 0; n <= ROUNDS; n++) {
      const od = path.join(work, `ovs-${n}`);
      const bd = path.join(work, `bare-${n}`);
      await Promise.all([mkdir(od), mkdir(bd)]);
      const { job_id } = await hub.call('spawn_agent', { prompt: `@script:${SCRIPT} write ten files into ${od}`, cwd: od, title: `per-edit ${n}` });
      const w = await hub.call('wait_for_agents', { job_ids: [job_id], timeout_s: TIMEOUT_MS / 1000 });
      if (w.done?.[0]?.status !== 'succeeded') throw new Error(`Overseer child ${job_id} did not succeed: ${JSON.stringify(w).slice(0, 600)}`);
      const run = await runClaude(['-p', `@script:${SCRIPT} write ten files into ${bd}`, '--output-format', 'stream-json', '--verbose', '--permission-mode', 'dontAsk', '--allowedTools', 'Write'], { cwd: bd, env, timeoutMs: TIMEOUT_MS });
      if (run.code !== 0) throw new Error(`bare claude exited ${run.code}: ${run.stderr.slice(-1000)}`);
      if (n === 0) continue; // warm-up
      ovs.push(...gaps(fake, od));
      bare.push(...gaps(fake, bd));
    }
    const r: PerEditResult = { overseer: stats(ovs), bare: stats(bare), overheadMs: NaN };
    r.overheadMs = r.overseer.p50 - r.bare.p50;
    out(
      statLine(`Overseer child: gap between consecutive requests (${ROUNDS} runs × ${WRITES} Writes)`, r.overseer) +
        statLine('bare claude -p (dontAsk, --allowedTools Write)', r.bare) +
        `per-edit overhead (median gap difference): ${f1(r.overheadMs)} ms\n`,
    );
    return r;
  } finally {
    await h?.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

runAlone(import.meta.url, benchPerEdit);
