// Worker thread of bench/coord-latency.ts (started with startTsWorker): holds N real MCP SDK
// clients over Streamable HTTP (lead token) on its own event loop and runs closed-loop call
// rounds when asked, timing each call on the client side. Not a benchmark by itself.
//
// Messages in:  { id, cmd: 'connect', url, token, n } | { id, cmd: 'run', op, calls, warmup } | { id, cmd: 'close' }
// Messages out: { id, ok: true, result } | { id, ok: false, error }
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { httpClient, type ToolClient } from './common.js';

export type CoordOp = 'write_note' | 'read_note' | 'lock_release';

export type CoordRequest =
  | { id: number; cmd: 'connect'; url: string; token: string; n: number }
  | { id: number; cmd: 'run'; op: CoordOp; calls: number; warmup: number }
  | { id: number; cmd: 'close' };

export interface CoordRunResult {
  /** per call (per lock+release pair for lock_release), ms */
  samples: number[];
  /** lock_release only: the two calls of each pair on their own */
  lock?: number[];
  release?: number[];
  /** wall time of the measured part, ms */
  wallMs: number;
}

let clients: ToolClient[] = [];

async function closeAll(): Promise<void> {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
}

async function run(op: CoordOp, calls: number, warmup: number): Promise<CoordRunResult> {
  const samples: number[] = [];
  const lock: number[] = [];
  const release: number[] = [];
  const one = async (c: ToolClient, i: number, k: number, record: boolean): Promise<void> => {
    const t0 = performance.now();
    if (op === 'write_note') {
      await c.call('write_note', { key: `bench/latency/c${i}`, value: `value ${k}` });
    } else if (op === 'read_note') {
      const r = await c.call<{ found?: boolean }>('read_note', { key: `bench/latency/c${i}` });
      if (r.found === false) throw new Error(`read_note: bench/latency/c${i} not found`);
    } else {
      const file = `latency/c${i}.txt`;
      const l = await c.call<{ acquired: string[] }>('lock_files', { files: [file], timeout_s: 0 });
      if (l.acquired.length !== 1) throw new Error(`lock_files acquired ${JSON.stringify(l)}`);
      const t1 = performance.now();
      const r = await c.call<{ released: string[] }>('release_files', { files: [file] });
      if (r.released.length !== 1) throw new Error(`release_files released ${JSON.stringify(r)}`);
      if (record) {
        lock.push(t1 - t0);
        release.push(performance.now() - t1);
      }
    }
    if (record) samples.push(performance.now() - t0);
  };
  // Warm-up (not recorded), then the measured closed loops: every client back to back.
  await Promise.all(clients.map(async (c, i) => { for (let k = 0; k < warmup; k++) await one(c, i, k, false); }));
  const t0 = performance.now();
  await Promise.all(clients.map(async (c, i) => { for (let k = 0; k < calls; k++) await one(c, i, k, true); }));
  const wallMs = performance.now() - t0;
  return op === 'lock_release' ? { samples, lock, release, wallMs } : { samples, wallMs };
}

async function handle(m: CoordRequest): Promise<unknown> {
  switch (m.cmd) {
    case 'connect':
      await closeAll();
      clients = [];
      // Connect a few at a time: 64 initialize handshakes at once would only measure the burst.
      for (let i = 0; i < m.n; i += 8) {
        clients.push(...(await Promise.all(Array.from({ length: Math.min(8, m.n - i) }, (_, j) => httpClient(m.url, m.token, `bench-coord-${i + j}`)))));
      }
      return { connected: clients.length };
    case 'run':
      return run(m.op, m.calls, m.warmup);
    case 'close':
      await closeAll();
      return { closed: true };
  }
}

parentPort?.on('message', (m: CoordRequest) => {
  handle(m).then(
    (result) => parentPort!.postMessage({ id: m.id, ok: true, result }),
    (err: unknown) => parentPort!.postMessage({ id: m.id, ok: false, error: err instanceof Error ? err.stack ?? err.message : String(err) }),
  );
});
