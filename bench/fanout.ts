// Benchmark P8: fan-out of 8 real `claude` children at once, Overseer vs bare `claude -p`, both
// against one fake Anthropic API whose script answers with one text turn.
//   Overseer: the lead calls spawn_agent 8 times at once (Promise.all over the in-memory lead
//             client); per child, the time from ITS spawn reply to its first request at the fake
//             (fake.requests[].at, matched by the child's prompt marker).
//   Bare:     8 `claude -p "<same kind of prompt>"` spawned at once; per child, spawn → first
//             request.
// Reported per side and round: the first, median and last of the 8; over ROUNDS rounds
// (alternating which side goes first), the medians of each, and the ratios Overseer/bare.
// The gate (src/launch/startGate.ts) is whatever the hub's config says (OVERSEER_START_CONCURRENCY
// / startConcurrency); BENCH_FANOUT_GATE=<n> sets it for this run only (0 = off).
// Run alone: node --import tsx bench/fanout.ts
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startFakeAnthropic, promptOf, type FakeAnthropic } from '../src/testing/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeEnv, runClaude } from '../test/helpers/claude.js';
import { gateConcurrency } from '../src/launch/startGate.js';
import { f1, f2, out, removeDir, runAlone, tempDir } from './common.js';

const SCRIPT = 'bench-fanout';
const CHILDREN = 8;
const ROUNDS = 3;
const TIMEOUT_MS = 120_000;

/** first / median / last of one round's 8 start → first-request times (ms). */
export interface Spread {
  first: number;
  median: number;
  last: number;
}

export interface FanoutResult {
  children: number;
  rounds: number;
  /** the gate's concurrency the hub ran with (0 = no gate) */
  gate: number;
  overseer: Spread;
  bare: Spread;
  /** per round, for the report */
  overseerRounds: Spread[];
  bareRounds: Spread[];
  /** Overseer/bare of the medians of `last` */
  ratioLast: number;
  ratioFirst: number;
  ratioMedian: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function spread(xs: number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  return { first: s[0]!, median: median(s), last: s.at(-1)! };
}

const over = (rounds: Spread[]): Spread => ({
  first: median(rounds.map((r) => r.first)),
  median: median(rounds.map((r) => r.median)),
  last: median(rounds.map((r) => r.last)),
});

const prompt = (marker: string): string => `@script:${SCRIPT} Say hello (${marker}).`;

/** Arrival at the fake of the first request whose prompt carries `marker`. */
async function firstRequestAt(fake: FakeAnthropic, marker: string): Promise<number> {
  const r = await fake.waitForRequest((q) => q.step === 0 && promptOf(q.body).includes(`(${marker})`), TIMEOUT_MS);
  return r.at;
}

async function overseerRound(hub: TestHub, round: number): Promise<number[]> {
  const markers = Array.from({ length: CHILDREN }, (_, i) => `ovs-${round}-${i}`);
  const spawned = await Promise.all(markers.map(async (m) => {
    const { job_id } = await hub.call('spawn_agent', { prompt: prompt(m), title: m });
    return { m, job_id: job_id as string, replyAt: Date.now() };
  }));
  const times = await Promise.all(spawned.map(async (s) => (await firstRequestAt(hub.fake, s.m)) - s.replyAt));
  const w = await hub.call('wait_for_agents', { job_ids: spawned.map((s) => s.job_id), timeout_s: TIMEOUT_MS / 1000 });
  const bad = (w.done as { status: string }[] | undefined)?.filter((d) => d.status !== 'succeeded') ?? [];
  if (!w.done || w.done.length !== CHILDREN || bad.length) throw new Error(`Overseer round ${round}: not every child succeeded: ${JSON.stringify(w).slice(0, 800)}`);
  return times;
}

async function bareRound(fake: FakeAnthropic, cwd: string, env: NodeJS.ProcessEnv, round: number): Promise<number[]> {
  const markers = Array.from({ length: CHILDREN }, (_, i) => `bare-${round}-${i}`);
  const runs = markers.map((m) => {
    const start = Date.now();
    const run = runClaude(['-p', prompt(m), '--output-format', 'stream-json', '--verbose'], { cwd, env, timeoutMs: TIMEOUT_MS });
    return { m, start, run };
  });
  const times = await Promise.all(runs.map(async (r) => (await firstRequestAt(fake, r.m)) - r.start));
  for (const r of runs) {
    const done = await r.run;
    if (done.code !== 0) throw new Error(`bare claude ${r.m} exited ${done.code}: ${done.stderr.slice(-1000)}`);
  }
  return times;
}

const line = (who: string, s: Spread): string => `${who}: first ${f1(s.first)} ms, median ${f1(s.median)} ms, last ${f1(s.last)} ms`;

export async function benchFanout(): Promise<FanoutResult> {
  let fake: FakeAnthropic | undefined;
  let h: TestHub | undefined;
  let work: string | undefined;
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: [{ text: 'done' }] } });
    work = await tempDir('fanout');
    const bareHome = path.join(work, 'bare-home');
    const bareWork = path.join(work, 'bare-work');
    await Promise.all([mkdir(bareHome), mkdir(bareWork)]);
    const gateEnv = process.env.BENCH_FANOUT_GATE;
    const hub = (h = await startTestHub({ fake, config: { maxAgents: CHILDREN, ...(gateEnv !== undefined ? { startConcurrency: Number(gateEnv) } : {}) } }));
    const gate = gateConcurrency(gateEnv !== undefined ? Number(gateEnv) : 'auto')?.() ?? 0;
    const env = claudeEnv({ home: bareHome, baseUrl: fake.url });
    // One untimed child each way first: the CLI's files are in the page cache for both sides.
    await overseerRound(hub, -1);
    await bareRound(fake, bareWork, env, -1);
    const ovs: Spread[] = [];
    const bare: Spread[] = [];
    for (let n = 0; n < ROUNDS; n++) {
      const pair = async (first: 'o' | 'b'): Promise<void> => {
        if (first === 'o') ovs.push(spread(await overseerRound(hub, n)));
        else bare.push(spread(await bareRound(fake!, bareWork, env, n)));
      };
      // Alternate which side goes first: the machine's load drifts.
      const order: ('o' | 'b')[] = n % 2 === 0 ? ['o', 'b'] : ['b', 'o'];
      for (const s of order) await pair(s);
      out(`round ${n + 1}: ${line('Overseer', ovs.at(-1)!)} | ${line('bare', bare.at(-1)!)}\n`);
    }
    const o = over(ovs);
    const b = over(bare);
    const r: FanoutResult = {
      children: CHILDREN, rounds: ROUNDS, gate, overseer: o, bare: b, overseerRounds: ovs, bareRounds: bare,
      ratioLast: o.last / b.last, ratioFirst: o.first / b.first, ratioMedian: o.median / b.median,
    };
    out(
      `start gate: ${gate === 0 ? 'off' : `${gate} start(s) in flight`}\n` +
        `${line(`Overseer, spawn reply → first API request (${CHILDREN} children, medians of ${ROUNDS} rounds)`, o)}\n` +
        `${line(`bare claude -p, spawn → first API request (${CHILDREN} at once)`, b)}\n` +
        `ratios Overseer/bare: first ${f2(r.ratioFirst)}, median ${f2(r.ratioMedian)}, last ${f2(r.ratioLast)}\n`,
    );
    return r;
  } finally {
    await h?.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

runAlone(import.meta.url, benchFanout);
