// Benchmark P8: fan-out of 8 real `claude` children at once, Overseer vs bare `claude -p`, both
// against one fake Anthropic API whose script answers with one text turn.
//   Overseer: the lead calls spawn_agent 8 times at once (Promise.all over the in-memory lead
//             client); per child, the time from ITS spawn reply to its first request at the fake
//             (fake.requests[].at, matched by the child's prompt marker).
//   Bare:     8 `claude -p "<same kind of prompt>"` spawned at once; per child, spawn → first
//             request.
// Reported per side and round: the first, median and last of the 8; over ROUNDS rounds
// (alternating which side goes first), the medians of each, and the ratios Overseer/bare.
// Two Overseer sides: no start gate (startConcurrency 0, the default) and the gate
// (src/launch/startGate.ts) at one start per core (BENCH_FANOUT_GATE=<n> for another number).
// Run alone: node --import tsx bench/fanout.ts
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFakeAnthropic, promptOf, type FakeAnthropic } from '../src/fakemodel/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeEnv, runClaude } from '../test/helpers/claude.js';
import { f1, f2, out, removeDir, runAlone, tempDir, builtHub } from './common.js';

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
  /** the start gate's concurrency of the gated side */
  gate: number;
  /** Overseer with no gate (startConcurrency 0, the default) */
  overseer: Spread;
  /** Overseer with the gate at `gate` starts in flight */
  gated: Spread;
  bare: Spread;
  /** per round, for the report */
  overseerRounds: Spread[];
  gatedRounds: Spread[];
  bareRounds: Spread[];
  /** Overseer/bare of the medians: no gate */
  ratioLast: number;
  ratioFirst: number;
  ratioMedian: number;
  /** gated/bare */
  gatedRatioLast: number;
  gatedRatioFirst: number;
  gatedRatioMedian: number;
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
  const hubs: TestHub[] = [];
  let work: string | undefined;
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: [{ text: 'done' }] } });
    work = await tempDir('fanout');
    const bareHome = path.join(work, 'bare-home');
    const bareWork = path.join(work, 'bare-work');
    await Promise.all([mkdir(bareHome), mkdir(bareWork)]);
    // The gated side: BENCH_FANOUT_GATE starts in flight, else one per core (what "auto" gives on
    // a machine others do not saturate).
    const gate = Number(process.env.BENCH_FANOUT_GATE ?? os.availableParallelism());
    const off = await startTestHub({ hubClass: await builtHub(), fake, config: { maxAgents: CHILDREN, startConcurrency: 0 } });
    hubs.push(off);
    const gatedHub = await startTestHub({ hubClass: await builtHub(), fake, config: { maxAgents: CHILDREN, startConcurrency: gate } });
    hubs.push(gatedHub);
    const env = claudeEnv({ home: bareHome, baseUrl: fake.url });
    // One untimed round each first: the CLI's files are in the page cache for every side.
    await overseerRound(off, -1);
    await overseerRound(gatedHub, -2);
    await bareRound(fake, bareWork, env, -1);
    const sides = {
      o: { rounds: [] as Spread[], run: (n: number) => overseerRound(off, n) },
      g: { rounds: [] as Spread[], run: (n: number) => overseerRound(gatedHub, 100 + n) },
      b: { rounds: [] as Spread[], run: (n: number) => bareRound(fake!, bareWork, env, n) },
    };
    const orders: (keyof typeof sides)[][] = [['o', 'g', 'b'], ['b', 'o', 'g'], ['g', 'b', 'o']];
    for (let n = 0; n < ROUNDS; n++) {
      // Rotate which side goes first: the machine's load drifts.
      for (const k of orders[n % orders.length]!) sides[k].rounds.push(spread(await sides[k].run(n)));
      out(`round ${n + 1}: ${line('Overseer', sides.o.rounds.at(-1)!)} | ${line(`gated ${gate}`, sides.g.rounds.at(-1)!)} | ${line('bare', sides.b.rounds.at(-1)!)}\n`);
    }
    const o = over(sides.o.rounds);
    const g = over(sides.g.rounds);
    const b = over(sides.b.rounds);
    const r: FanoutResult = {
      children: CHILDREN, rounds: ROUNDS, gate, overseer: o, gated: g, bare: b,
      overseerRounds: sides.o.rounds, gatedRounds: sides.g.rounds, bareRounds: sides.b.rounds,
      ratioLast: o.last / b.last, ratioFirst: o.first / b.first, ratioMedian: o.median / b.median,
      gatedRatioLast: g.last / b.last, gatedRatioFirst: g.first / b.first, gatedRatioMedian: g.median / b.median,
    };
    out(
      `${line(`Overseer, no start gate: spawn reply → first API request (${CHILDREN} children, medians of ${ROUNDS} rounds)`, o)}\n` +
        `${line(`Overseer, start gate ${gate}`, g)}\n` +
        `${line(`bare claude -p, spawn → first API request (${CHILDREN} at once)`, b)}\n` +
        `ratios vs bare: no gate first ${f2(r.ratioFirst)}, median ${f2(r.ratioMedian)}, last ${f2(r.ratioLast)}; ` +
        `gate ${gate} first ${f2(r.gatedRatioFirst)}, median ${f2(r.gatedRatioMedian)}, last ${f2(r.gatedRatioLast)}\n`,
    );
    return r;
  } finally {
    for (const h of hubs) await h.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

runAlone(import.meta.url, benchFanout);
