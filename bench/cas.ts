// Benchmark 10: compare-and-set under contention. 64 clients each do 1,000 increments of one
// note: read_note, then write_note with expected_version = the version read; on a version
// conflict, yield one event-loop turn (setImmediate), read again and retry. The note must end at exactly 64,000 (version 64,001: the
// create is version 1), with no lost update. Printed: final value, conflicts, total time.
// Transport: real MCP SDK clients over Streamable HTTP (lead token) if the run would fit in
// 90 s; a 3 s probe over HTTP measures the increment rate first and projects the full run.
// Otherwise the 64 clients are linked in memory (hub.server({role:'lead'}) + InMemoryTransport,
// as test/helpers/hub.ts does), which still goes through the MCP server, tool schemas, the
// note service and SQLite, minus HTTP; the output says which was used and why.
// Run alone: node --import tsx bench/cas.ts
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { ToolCallError, f1, fixture, httpClient, memoryClient, out, startBenchHub, type ToolClient } from './common.js';

const CLIENTS = 64;
const INCREMENTS = 1000;
const HTTP_BUDGET_S = 90;
const PROBE_MS = 3000;

export interface CasResult {
  transport: 'http' | 'memory';
  /** Why this transport (the HTTP probe's projection). */
  why: string;
  clients: number;
  increments: number;
  expected: number;
  finalValue: number;
  finalVersion: number;
  conflicts: number;
  /** read_note + write_note pairs, successful or not */
  attempts: number;
  seconds: number;
  /** successful increments per second */
  rate: number;
  /** HTTP probe: successful increments per second with 64 clients, and the projected full run */
  probeRate: number;
  probeProjectedS: number;
  exact: boolean;
}

interface Counters {
  conflicts: number;
  attempts: number;
  done: number;
}

/** One client's CAS loop: `n` successful increments (or until `stopAt`, a performance.now() deadline). */
async function casLoop(c: ToolClient, key: string, n: number, k: Counters, stopAt = Infinity): Promise<void> {
  for (let done = 0; done < n && performance.now() < stopAt; ) {
    const r = await c.call<{ value: string; version: number }>('read_note', { key });
    k.attempts++;
    try {
      await c.call('write_note', { key, value: String(Number(r.value) + 1), expected_version: r.version });
      done++;
      k.done++;
    } catch (err) {
      if (!(err instanceof ToolCallError) || !/is at version/.test(err.message)) throw err;
      k.conflicts++;
      // Yield one macrotask turn before retrying. Without it, in-memory clients move in
      // lockstep (all read version v, all write, one wins, repeat) and nearly livelock.
      await new Promise<void>((r) => setImmediate(r));
    }
  }
}

export async function benchCas(): Promise<CasResult> {
  const h = await startBenchHub({ claudeBin: fixture('sleep-agent.sh') });
  const clients: ToolClient[] = [];
  try {
    // Probe over HTTP: 64 clients for PROBE_MS on a scratch note.
    const url = h.hub.http!.url;
    for (let i = 0; i < CLIENTS; i++) clients.push(await httpClient(url, h.hub.leadToken, `bench-cas-http-${i}`));
    const probeKey = 'bench/cas/probe';
    await clients[0]!.call('write_note', { key: probeKey, value: '0', expected_version: 0 });
    const pk: Counters = { conflicts: 0, attempts: 0, done: 0 };
    const p0 = performance.now();
    await Promise.all(clients.map((c) => casLoop(c, probeKey, INCREMENTS, pk, p0 + PROBE_MS)));
    const probeS = (performance.now() - p0) / 1000;
    const probeRate = pk.done / probeS;
    const probeProjectedS = (CLIENTS * INCREMENTS) / probeRate;
    const probeNote = await clients[0]!.call<{ value: string }>('read_note', { key: probeKey });
    if (Number(probeNote.value) !== pk.done) throw new Error(`HTTP probe: note at ${probeNote.value} after ${pk.done} successful increments`);
    const useHttp = probeProjectedS <= HTTP_BUDGET_S;
    const why = `HTTP probe: ${pk.done} increments in ${probeS.toFixed(1)} s (${probeRate.toFixed(0)}/s, ${pk.conflicts} conflicts) → full run ≈ ${probeProjectedS.toFixed(0)} s ${useHttp ? '≤' : '>'} ${HTTP_BUDGET_S} s`;
    out(`${why}: ${useHttp ? 'running over HTTP' : 'running with in-memory linked clients (MCP server + tools + SQLite, no HTTP)'}\n`);
    if (!useHttp) {
      await Promise.all(clients.map((c) => c.close()));
      clients.length = 0;
      for (let i = 0; i < CLIENTS; i++) clients.push(await memoryClient(h.hub, `bench-cas-mem-${i}`));
    }

    const key = 'bench/cas/counter';
    await clients[0]!.call('write_note', { key, value: '0', expected_version: 0 });
    const k: Counters = { conflicts: 0, attempts: 0, done: 0 };
    const t0 = performance.now();
    await Promise.all(clients.map((c) => casLoop(c, key, INCREMENTS, k)));
    const seconds = (performance.now() - t0) / 1000;
    const final = await clients[0]!.call<{ value: string; version: number }>('read_note', { key });
    const expected = CLIENTS * INCREMENTS;
    const r: CasResult = {
      transport: useHttp ? 'http' : 'memory', why, clients: CLIENTS, increments: INCREMENTS, expected,
      finalValue: Number(final.value), finalVersion: final.version, conflicts: k.conflicts, attempts: k.attempts,
      seconds, rate: k.done / seconds, probeRate, probeProjectedS,
      exact: Number(final.value) === expected && final.version === expected + 1,
    };
    out(
      `${CLIENTS} clients × ${INCREMENTS} CAS increments (${r.transport === 'http' ? 'HTTP' : 'in-memory clients'}): final value ${r.finalValue} (expected ${expected}, version ${r.finalVersion}) — ${r.exact ? 'exact' : 'WRONG'}\n` +
        `  conflicts ${r.conflicts} (${f1((r.conflicts / r.attempts) * 100)}% of ${r.attempts} attempts), total ${r.seconds.toFixed(1)} s, ${r.rate.toFixed(0)} increments/s\n` +
        (r.transport === 'memory'
          ? '  (in memory a read_note + write_note pair completes within one event-loop turn, so once the first round\n' +
            '   desynchronises the clients they barely overlap: few conflicts. The HTTP probe above shows real contention.)\n'
          : ''),
    );
    return r;
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await h.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchCas().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
