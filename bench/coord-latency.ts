// Benchmark 8: coordination tool-call latency over HTTP at 1, 16 and 64 concurrent clients.
// The hub runs in this process (real SQLite, HTTP on 127.0.0.1:0); the clients are real MCP SDK
// clients (Streamable HTTP, lead token) on a worker thread of their own (bench/coord-clients.ts),
// so the hub's event loop does not also run the clients (2 event loops ≈ the hub and a separate
// Claude Code process). Each client runs a closed loop (next call when the previous returns):
//   write_note (its own key), read_note (its own key), lock_files + release_files (one pair,
//   its own file, timeout_s 0),
// CALLS[level] measured calls per client per op after WARMUP calls; latency is timed in the
// client (call start → result). Throughput = calls / wall time of the round.
// Every client is the lead (one holder, 'lead'), and any call of a holder renews all of its
// locks, so in the lock+release round each call also rewrites the TTL of up to N lead-held
// lock rows (agents would each renew only their own).
// In a closed loop, latency ≈ N / throughput (Little's law): p50 ≤ 2 ms at 64 clients needs
// ≥ 32,000 calls/s from the hub.
// Run alone: node --import tsx bench/coord-latency.ts
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { f1, fixture, out, startBenchHub, startTsWorker, stats, workerRpc, type Stats } from './common.js';
import type { CoordOp, CoordRequest, CoordRunResult } from './coord-clients.js';

export const LEVELS = [1, 16, 64] as const;
/** Calls per client per op; fewer at 64 to keep the run short (64 × 60 = 3,840 per op). */
const CALLS: Record<number, number> = { 1: 200, 16: 200, 64: 60 };
const WARMUP = 5;
const OPS: CoordOp[] = ['write_note', 'read_note', 'lock_release'];

export interface CoordOpFigures {
  latency: Stats;
  /** calls (pairs for lock_release) per second over the round */
  throughput: number;
  lock?: Stats;
  release?: Stats;
}

export interface CoordLatencyResult {
  /** level (number of clients) → op → figures */
  levels: Record<string, Record<CoordOp, CoordOpFigures>>;
  callsPerClient: Record<number, number>;
}

export const opLabel = (op: CoordOp): string => (op === 'lock_release' ? 'lock+release' : op);

type Req = CoordRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export async function benchCoordLatency(): Promise<CoordLatencyResult> {
  const h = await startBenchHub({ claudeBin: fixture('sleep-agent.sh') });
  const worker = startTsWorker('coord-clients.ts');
  try {
    const rpc = workerRpc<Req>(worker, 'coord-clients');
    const url = h.hub.http!.url;
    const levels: CoordLatencyResult['levels'] = {};
    for (const n of LEVELS) {
      await rpc({ cmd: 'connect', url, token: h.hub.leadToken, n });
      const byOp = {} as Record<CoordOp, CoordOpFigures>;
      for (const op of OPS) {
        const r: CoordRunResult = await rpc({ cmd: 'run', op, calls: CALLS[n]!, warmup: WARMUP });
        const fig: CoordOpFigures = { latency: stats(r.samples), throughput: (r.samples.length / r.wallMs) * 1000 };
        if (r.lock) fig.lock = stats(r.lock);
        if (r.release) fig.release = stats(r.release);
        byOp[op] = fig;
        out(
          `${String(n).padStart(2)} client(s) ${opLabel(op).padEnd(12)}: p50 ${f1(fig.latency.p50)} ms, p99 ${f1(fig.latency.p99)} ms, max ${f1(fig.latency.max)} ms (n=${fig.latency.n}), ${fig.throughput.toFixed(0)} ${op === 'lock_release' ? 'pairs' : 'calls'}/s` +
            (fig.lock && fig.release ? ` [lock p50 ${f1(fig.lock.p50)} / release p50 ${f1(fig.release.p50)} ms]` : '') + '\n',
        );
      }
      levels[String(n)] = byOp;
    }
    await rpc({ cmd: 'close' });
    return { levels, callsPerClient: CALLS };
  } finally {
    await worker.terminate().catch(() => undefined);
    await h.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchCoordLatency().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
