// Benchmark 9: event-driven wake-ups of the coordination layer, beside a 1 s polling baseline.
// In-process hub; every client is a real MCP SDK client over Streamable HTTP. Two jobs whose
// fake binary hangs (sleep-agent.sh) give two agent identities (tokens captured from their
// launch commands), since the lead's own locks never block the lead.
//   - note → watcher: the watcher (lead) has watch_notes {keys:[k], after_version: v} in
//     flight (the hub has subscribed: a new 'note' listener on the bus); the writer (another
//     lead client) calls write_note. Latency = write_note call start → watch_notes returns.
//   - release → waiter: agent A holds a file; agent B's lock_files on it (timeout_s 30) is
//     waiting (its row is in lock_waits); A calls release_files. Latency = release_files call
//     start → B's lock_files returns (granted). B then releases it.
// 50 samples each after 3 warm-up rounds, one at a time.
// Baseline: 40 pollers that read_note every 1 s (each its own client, key and random phase);
// each key is written once at a random moment; detection latency = write_note call start →
// return of the first read_note that sees the new version. Run concurrently (~3 s in all).
// Run alone: node --import tsx bench/wakeups.ts
import type { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { TokenRecorder, f1, fixture, httpClient, out, spawnHangingAgent, startBenchHub, statLine, stats, type BenchHub, type Stats, type ToolClient } from './common.js';

const RUNS = 50;
const WARMUP = 3;
const POLLERS = 40;
const POLL_MS = 1000;

export interface WakeupsResult {
  note: Stats;
  /** write_note call start → its own reply (for scale). */
  noteWriteCall: Stats;
  lock: Stats;
  /** release_files call start → its own reply (for scale). */
  releaseCall: Stats;
  polling: Stats;
}

/** Number of bus listeners for an event (the hub subscribes a waiter before its first check). */
function listeners(h: BenchHub, event: 'note' | 'lock'): number | undefined {
  const ee = (h.hub.ctx.bus as unknown as { ee?: EventEmitter }).ee;
  return ee?.listenerCount(event);
}

async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await fn())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}

async function noteWakeups(h: BenchHub, watcher: ToolClient, writer: ToolClient): Promise<{ lat: number[]; call: number[] }> {
  const key = 'bench/wakeup/note';
  let v = (await writer.call<{ version: number }>('write_note', { key, value: 'start' })).version;
  const lat: number[] = [];
  const call: number[] = [];
  for (let i = -WARMUP; i < RUNS; i++) {
    const before = listeners(h, 'note');
    const watch = watcher.call<{ notes: { version: number }[]; timed_out: boolean }>('watch_notes', { keys: [key], after_version: v, timeout_s: 30 });
    let woke = NaN;
    void watch.then(() => { woke = performance.now(); }, () => undefined);
    if (before === undefined) await sleep(20);
    else await until('the watch to subscribe', () => (listeners(h, 'note') ?? 0) > before);
    const t0 = performance.now();
    const w = await writer.call<{ version: number }>('write_note', { key, value: `v${i}` });
    const t1 = performance.now();
    const r = await watch;
    if (r.timed_out || r.notes[0]?.version !== w.version) throw new Error(`watch_notes did not return the write: ${JSON.stringify(r)}`);
    v = w.version;
    if (i >= 0) {
      lat.push(woke - t0);
      call.push(t1 - t0);
    }
  }
  return { lat, call };
}

async function lockWakeups(h: BenchHub, a: ToolClient, b: ToolClient): Promise<{ lat: number[]; call: number[] }> {
  const file = 'wakeup/contended.txt';
  const lat: number[] = [];
  const call: number[] = [];
  for (let i = -WARMUP; i < RUNS; i++) {
    await a.call('lock_files', { files: [file], timeout_s: 0 });
    const waiting = (await h.hub.locks.waiting()).length;
    const req = b.call<{ acquired: string[] }>('lock_files', { files: [file], timeout_s: 30 });
    let granted = NaN;
    void req.then(() => { granted = performance.now(); }, () => undefined);
    await until("B's lock request to wait", async () => (await h.hub.locks.waiting()).length > waiting);
    const t0 = performance.now();
    const rel = await a.call<{ released: string[] }>('release_files', { files: [file] });
    const t1 = performance.now();
    if (rel.released.length !== 1) throw new Error(`A released ${JSON.stringify(rel)}`);
    const r = await req;
    if (r.acquired.length !== 1) throw new Error(`B acquired ${JSON.stringify(r)}`);
    await b.call('release_files', { files: [file] });
    if (i >= 0) {
      lat.push(granted - t0);
      call.push(t1 - t0);
    }
  }
  return { lat, call };
}

/** 40 concurrent 1 s pollers, each key written once at a random moment. */
async function pollingBaseline(url: string, token: string): Promise<number[]> {
  const clients = await Promise.all(Array.from({ length: POLLERS }, (_, j) => httpClient(url, token, `bench-poller-${j}`)));
  const writer = await httpClient(url, token, 'bench-poll-writer');
  try {
    const keys = clients.map((_, j) => `bench/poll/k${j}`);
    const v0 = await Promise.all(keys.map(async (key) => (await writer.call<{ version: number }>('write_note', { key, value: 'old' })).version));
    const start = performance.now() + 100;
    const written: number[] = new Array(POLLERS).fill(NaN);
    const seen: number[] = new Array(POLLERS).fill(NaN);
    const at = (t: number): Promise<void> => sleep(Math.max(0, t - performance.now()));
    await Promise.all([
      // The pollers: read_note at start + phase + k × 1 s until the new version shows.
      ...clients.map(async (c, j) => {
        const phase = Math.random() * POLL_MS;
        for (let k = 0; ; k++) {
          await at(start + phase + k * POLL_MS);
          const r = await c.call<{ version?: number }>('read_note', { key: keys[j]! });
          if ((r.version ?? 0) > v0[j]! && Number.isFinite(written[j]!)) {
            seen[j] = performance.now();
            return;
          }
          if (k > 10) throw new Error(`poller ${j} never saw its note change`);
        }
      }),
      // The writes: one per key, at a random moment in [start + 1 s, start + 2 s).
      ...keys.map(async (key, j) => {
        await at(start + POLL_MS + Math.random() * POLL_MS);
        written[j] = performance.now();
        await writer.call('write_note', { key, value: 'new' });
      }),
    ]);
    return seen.map((s, j) => s - written[j]!);
  } finally {
    await Promise.all([...clients, writer].map((c) => c.close()));
  }
}

export async function benchWakeups(): Promise<WakeupsResult> {
  const rec = new TokenRecorder();
  const h = await startBenchHub({ claudeBin: fixture('sleep-agent.sh'), processes: rec, config: { maxAgents: 4 } });
  const clients: ToolClient[] = [];
  const connect = async (token: string, name: string): Promise<ToolClient> => {
    const c = await httpClient(h.hub.http!.url, token, name);
    clients.push(c);
    return c;
  };
  try {
    const watcher = await connect(h.hub.leadToken, 'bench-watcher');
    const writer = await connect(h.hub.leadToken, 'bench-writer');
    const a = await connect((await spawnHangingAgent(h, rec, 'holder A')).token, 'bench-agent-a');
    const b = await connect((await spawnHangingAgent(h, rec, 'waiter B')).token, 'bench-agent-b');

    const n = await noteWakeups(h, watcher, writer);
    const l = await lockWakeups(h, a, b);
    const poll = await pollingBaseline(h.hub.http!.url, h.hub.leadToken);
    const r: WakeupsResult = { note: stats(n.lat), noteWriteCall: stats(n.call), lock: stats(l.lat), releaseCall: stats(l.call), polling: stats(poll) };
    out(
      statLine(`note write → watch_notes returns (${RUNS} samples)`, r.note) +
        statLine('  for scale: write_note call → its own reply', r.noteWriteCall) +
        statLine(`release_files → waiting lock_files returns granted (${RUNS} samples)`, r.lock) +
        statLine('  for scale: release_files call → its own reply', r.releaseCall) +
        statLine(`baseline: read_note every 1 s, write → detected (${POLLERS} pollers, random phase)`, r.polling) +
        `  polling mean ${f1(r.polling.mean)} ms\n`,
    );
    return r;
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await h.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchWakeups().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
