// Benchmark 2: dependency done → dependent exec.
// Job A (fake-agent.sh) runs for BENCH_EXIT_DELAY, then stamps its exit time right before it
// prints its result and exits; job B depends_on A and stamps its exec time first thing.
// Latency = B's exec stamp − A's exit stamp: the hub noticing A's exit, ending A's attempt,
// waking B and launching it. 20 pairs, one pair at a time.
// Run alone: node --import tsx bench/dependency-latency.ts
import { pathToFileURL } from 'node:url';
import { awaitJob, clockSkewMs, f1, fixture, out, readStamps, startBenchHub, stampOf, statLine, stats, type Stats } from './common.js';
import { getJob } from '../src/store/sql/jobs.js';

const PAIRS = 20;
const WARMUP = 2;
/** How long each fake child runs: long enough for B's spawn to land while A still runs. */
const EXIT_DELAY_S = '0.1';

export interface DependencyLatencyResult {
  latency: Stats;
  /** A's exit stamp → A's job row ended (the hub noticing the exit and settling the attempt). */
  exitNoticed: Stats;
  /** Pairs where B was not `waiting` right after its spawn (A ended first); left out of the figures. */
  skipped: number;
}

export async function benchDependencyLatency(): Promise<DependencyLatencyResult> {
  const h = await startBenchHub({ claudeBin: fixture('fake-agent.sh'), env: { BENCH_EXIT_DELAY: EXIT_DELAY_S }, config: { maxAgents: 8 } });
  try {
    const skew = clockSkewMs();
    if (Math.abs(skew) > 2) out(`  (note: Date.now() − performance clock = ${f1(skew)} ms; the system clock stepped)\n`);
    const lat: number[] = [];
    const noticed: number[] = [];
    let skipped = 0;
    for (let i = -WARMUP; i < PAIRS; i++) {
      const a = await h.call<{ job_id: string }>('spawn_agent', { prompt: `bench dependency A ${i}`, title: `dep A ${i}` });
      const b = await h.call<{ job_id: string; status: string }>('spawn_agent', { prompt: `bench dependency B ${i}`, title: `dep B ${i}`, depends_on: [a.job_id] });
      await awaitJob(h, b.job_id);
      if (i < 0) continue;
      if (b.status !== 'waiting') {
        skipped++;
        continue;
      }
      const st = readStamps(h.stampFile);
      const aExit = stampOf(st, a.job_id, 'exit');
      const bStart = stampOf(st, b.job_id, 'start');
      if (aExit === undefined || bStart === undefined) throw new Error(`missing stamps for pair ${a.job_id} → ${b.job_id}`);
      lat.push(bStart - aExit);
      const aRow = await getJob(h.hub.ctx.sql.db, a.job_id);
      if (aRow?.ended_at != null) noticed.push(aRow.ended_at - aExit);
    }
    const latency = stats(lat);
    const exitNoticed = stats(noticed);
    out(
      statLine(`dependency A exit → dependent B exec (${PAIRS} pairs)`, latency) +
        statLine('  of which A exit → A settled in the hub (ended_at, ms resolution)', exitNoticed) +
        (skipped ? `  (${skipped} pair(s) skipped: B was not waiting when spawned)\n` : ''),
    );
    return { latency, exitNoticed, skipped };
  } finally {
    await h.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchDependencyLatency().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
