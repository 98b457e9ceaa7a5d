// Benchmark 1: spawn_agent call → child exec, with free capacity.
// The child is bench/fixtures/fake-agent.sh, which stamps $EPOCHREALTIME first thing. t0 is
// taken just before the spawn_agent call; latency = stamp − t0. 50 spawns, one at a time
// (each job ends before the next spawn). Baseline, interleaved in the same run: the same
// script started directly with child_process.spawn (detached, piped stdio, like the hub),
// so the ratio shows the hub's own overhead on top of fork/exec + bash start-up.
// Run alone: node --import tsx bench/spawn-latency.ts
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { awaitJob, cleanEnv, clockSkewMs, f1, f2, fixture, out, readStamps, startBenchHub, stampOf, statLine, stats, wallMs, type Stats } from './common.js';

const RUNS = 50;
const WARMUP = 3;

export interface SpawnLatencyResult {
  hub: Stats;
  /** spawn_agent call → its reply in the client (the exec stamp usually comes after it). */
  callReturn: Stats;
  baseline: Stats;
  ratioP50: number;
  overheadP50Ms: number;
}

/** Start the fake binary directly, as the hub would (own process group, piped stdio), and wait for it to exit. */
function spawnDirect(bin: string, env: NodeJS.ProcessEnv, id: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [], { env: { ...env, OVERSEER_AGENT_ID: id }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.stdin.on('error', () => undefined);
    child.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: 'direct' } })}\n`);
    child.on('error', reject);
    child.on('close', () => resolve());
  });
}

export async function benchSpawnLatency(): Promise<SpawnLatencyResult> {
  const bin = fixture('fake-agent.sh');
  const h = await startBenchHub({ claudeBin: bin, config: { maxAgents: 8 } });
  try {
    const skew = clockSkewMs();
    if (Math.abs(skew) > 2) out(`  (note: Date.now() − performance clock = ${f1(skew)} ms; the system clock stepped)\n`);
    const directEnv = cleanEnv({ BENCH_STAMP_FILE: h.stampFile });
    const hubLat: number[] = [];
    const callLat: number[] = [];
    const baseLat: number[] = [];
    for (let i = -WARMUP; i < RUNS; i++) {
      // Through the hub.
      const t0 = wallMs();
      const r = await h.call<{ job_id: string; status: string }>('spawn_agent', { prompt: `bench spawn ${i}`, title: `spawn ${i}` });
      const tRet = wallMs();
      await awaitJob(h, r.job_id);
      const stamp = stampOf(readStamps(h.stampFile), r.job_id, 'start');
      if (stamp === undefined) throw new Error(`no exec stamp from job ${r.job_id}`);

      // Baseline: the same script, spawned directly.
      const id = `direct-${i}`;
      const b0 = wallMs();
      await spawnDirect(bin, directEnv, id);
      const bStamp = stampOf(readStamps(h.stampFile), id, 'start');
      if (bStamp === undefined) throw new Error(`no exec stamp from the direct run ${id}`);

      if (i >= 0) {
        hubLat.push(stamp - t0);
        callLat.push(tRet - t0);
        baseLat.push(bStamp - b0);
      }
    }
    const hub = stats(hubLat);
    const callReturn = stats(callLat);
    const baseline = stats(baseLat);
    const ratioP50 = hub.p50 / baseline.p50;
    const overheadP50Ms = hub.p50 - baseline.p50;
    out(
      statLine(`spawn_agent → child exec (${RUNS} spawns, free capacity)`, hub) +
        statLine('  spawn_agent call → reply in the lead client', callReturn) +
        statLine('baseline child_process.spawn → exec (same script)', baseline) +
        `ratio hub/baseline (p50): ${f2(ratioP50)}  (hub overhead p50 ${f1(overheadP50Ms)} ms)\n`,
    );
    return { hub, callReturn, baseline, ratioP50, overheadP50Ms };
  } finally {
    await h.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchSpawnLatency().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
