// Benchmark P7: tool calls over HTTP under a crew's load (issue 14, "tool call over HTTP").
// The hub runs in this process (real SQLite, HTTP on 127.0.0.1:0); the load comes from a lean
// client on a worker thread of its own (bench/http-load-clients.ts: raw node:http, one
// keep-alive connection per session, pre-serialised bodies), so the client costs little and
// its event-loop use is reported (near 1 = the client, not the hub, was the limit).
//   (a) paced: 64 MCP sessions, each of its own agent (a crew of 64 children that never start a
//       model; normal initialize handshake), each calling a hot tool (3 read_note : 1 write_note,
//       its own key) once per 100 ms for PACED_MS: p50/p99.
//   (b) closed loop: the same 64 sessions back to back for CLOSED_MS: calls/s. Also reported: the
//       closed loop with the lead's token on all 64 sessions (a lead's call also runs its digest).
// Baseline in the same run: a bare node:http server in this process answering the same JSON
// body, driven by the same client (the floor of the machine). A real MCP SDK client checks that
// the lean client's results are the SDK's results.
// `npm run bench` runs it with the background hub's node flags (hubNodeArgs: --max-semi-space-size=1);
// alone, the same: node --max-semi-space-size=1 --import tsx bench/http-load.ts   (HTTP_LOAD_PROFILE=1: CPU profile of the
// hub's thread under the closed loop, written to bench/results/http-load.cpuprofile; =heap: what it
// allocates, bench/results/http-load.heapprofile; HTTP_LOAD_AB=<n>: only n 2 s closed rounds of the
// crew, each one's hub CPU a call, to run two builds side by side: docs/performance-native-mcp.md)
import { createServer, type Server } from 'node:http';
import { writeFile, mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import type { Worker } from 'node:worker_threads';
import { BENCH_DIR, TokenRecorder, f1, fixture, httpClient, out, runAlone, spawnHangingAgent, startBenchHub, startTsWorker, stats, workerRpc, type Stats } from './common.js';
import type { LoadRequest, LoadRunResult } from './http-load-clients.js';

export const SESSIONS = 64;
const PACED_MS = 8000;
const CLOSED_MS = 5000;
const PERIOD_MS = 100;

export interface LoadFigures {
  latency: Stats;
  /** CPU time of this process's main thread (the hub's or the bare server's) per call, µs */
  serverCpuUs: number;
  callsPerS: number;
  errors: number;
  clientElu: number;
  contentType: string;
}

export interface HttpLoadResult {
  sessions: number;
  /** the closed loop with the lead's token on all 64 sessions (each call also runs the lead's digest) */
  closedLead?: LoadFigures;
  /** hub: the hub's native MCP over HTTP (src/mcp); bare: a bare node:http server, same client */
  paced: { hub: LoadFigures; bare: LoadFigures };
  closed: { hub: LoadFigures; bare: LoadFigures };
  /** the lean client's results equal the MCP SDK client's */
  sdkSame: boolean;
}


/** CPU ms (user + system) of this process's main thread so far (Linux /proc; NaN elsewhere):
 * on a shared, loaded machine the wall figures swing, the CPU a call costs does not. */
function mainThreadCpuMs(): number {
  try {
    const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(rest[11]) + Number(rest[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return NaN;
  }
}

interface Round { r: LoadRunResult; cpuMs: number }

async function round(rpc: (m: Req) => Promise<any>, m: Req): Promise<Round> {
  const cpu0 = mainThreadCpuMs();
  const r = (await rpc(m)) as LoadRunResult;
  if (r.errors) throw new Error(`${r.errors} of ${r.calls} calls failed; first: ${r.firstError}`);
  return { r, cpuMs: mainThreadCpuMs() - cpu0 };
}

/** The figures of rounds taken together (samples pooled, calls over the summed wall time). */
function pooled(rounds: Round[]): LoadFigures {
  const calls = rounds.reduce((a, x) => a + x.r.calls, 0);
  const wall = rounds.reduce((a, x) => a + x.r.wallMs, 0);
  const cpu = rounds.reduce((a, x) => a + x.cpuMs, 0);
  const elu = rounds.reduce((a, x) => a + x.r.clientElu * x.r.wallMs, 0) / wall;
  return { latency: stats(rounds.flatMap((x) => x.r.samples)), serverCpuUs: (cpu * 1000) / calls, callsPerS: (calls / wall) * 1000, errors: 0, clientElu: elu, contentType: rounds.at(-1)!.r.contentType };
}

/** A bare node:http server answering every POST with `body` (after reading the request). */
async function bareServer(body: string): Promise<Server> {
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  s.keepAliveTimeout = 5000;
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return s;
}

function line(label: string, f: LoadFigures): string {
  return `${label}: p50 ${f1(f.latency.p50)} ms, p99 ${f1(f.latency.p99)} ms, max ${f1(f.latency.max)} ms, ${f.callsPerS.toFixed(0)} calls/s, server thread ${f.serverCpuUs.toFixed(0)} µs CPU/call (n=${f.latency.n}, client loop ${(f.clientElu * 100).toFixed(0)}% busy, ${f.contentType})\n`;
}

type Req = LoadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export async function benchHttpLoad(): Promise<HttpLoadResult> {
  // A crew: 64 agents (children that never start a model: sleep-agent.sh), each its own token and session.
  const rec = new TokenRecorder();
  const h = await startBenchHub({ claudeBin: fixture('sleep-agent.sh'), processes: rec, config: { maxAgents: SESSIONS, startConcurrency: 0 } });
  const worker = startTsWorker('http-load-clients.ts');
  const http = h.hub.http!;
  let bare: Server | undefined;
  try {
    const rpc = workerRpc<Req>(worker, 'http-load-clients');
    const url = http.url;
    for (let i = 0; i < SESSIONS; i++) await h.call('write_note', { key: `bench/load/c${i}`, value: `value of client ${i}` });
    const tokens: string[] = [];
    for (let i = 0; i < SESSIONS; i++) tokens.push((await spawnHangingAgent(h, rec, `load ${i}`)).token);

    // The same answers for the lean client and an MCP SDK client (a found note, a missing one, a
    // validation error, a write: its key, the version moves).
    await rpc({ cmd: 'connect', url, token: h.hub.leadToken, n: 1, handshake: true });
    const sdk = await httpClient(url, h.hub.leadToken, 'bench-load-sdk');
    let sdkSame = true;
    let sample = '';
    for (const [tool, args] of [['read_note', { key: 'bench/load/c0' }], ['read_note', { key: 'bench/load/none' }], ['read_note', { key: '' }], ['write_note', { key: 'bench/load/sdk', value: 'x' }]] as const) {
      const lean = (await rpc({ cmd: 'one', tool, args })) as { status: number; type: string; message: { result?: any } };
      if (!lean.type.startsWith('application/json')) throw new Error(`the hub did not answer ${tool} as JSON: ${lean.type}`);
      if (tool === 'read_note' && !sample) sample = JSON.stringify(lean.message);
      const results = [lean.message?.result, await sdk.client.callTool({ name: tool, arguments: args })];
      const norm = results.map((r: any) => (tool === 'write_note' ? JSON.parse(r.content[0].text).key : r));
      if (new Set(norm.map((x) => JSON.stringify(x))).size !== 1) {
        sdkSame = false;
        out(`  differs for ${tool} ${JSON.stringify(args)}:\n    lean client ${JSON.stringify(norm[0])}\n    SDK client  ${JSON.stringify(norm[1])}\n`);
      }
    }
    await sdk.close();
    out(`lean client = MCP SDK client results: ${sdkSame ? 'yes' : 'NO'}; node flags of the hub's process: ${process.execArgv.filter((a) => !a.includes('tsx') && a !== '--import').join(' ') || '(none)'}\n`);

    // HTTP_LOAD_AB=<n>: only n closed rounds of the crew, each one's hub CPU a call on a line of
    // its own, to compare two builds run at the same time (the machine's noise then hits both).
    const abRounds = Number(process.env.HTTP_LOAD_AB ?? 0);
    if (abRounds > 0) {
      await rpc({ cmd: 'connect', url, token: h.hub.leadToken, n: SESSIONS, handshake: true, tokens });
      await rpc({ cmd: 'run', mode: 'closed', ms: 1000 }); // warm-up
      for (let k = 0; k < abRounds; k++) {
        const r = await round(rpc, { cmd: 'run', mode: 'closed', ms: 2000 });
        out(`ab ${((r.cpuMs * 1000) / r.r.calls).toFixed(1)} µs ${((r.r.calls * 1000) / r.r.wallMs).toFixed(0)} calls/s\n`);
      }
      await rpc({ cmd: 'close' });
      return { sessions: SESSIONS, paced: undefined as never, closed: undefined as never, sdkSame };
    }

    // Baseline: the same client against a bare server answering a real call's JSON.
    bare = await bareServer(sample);
    const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/mcp`;
    await rpc({ cmd: 'connect', url: bareUrl, token: 'x', n: SESSIONS, handshake: false });
    const barePaced = pooled([await round(rpc, { cmd: 'run', mode: 'paced', ms: PACED_MS / 2, periodMs: PERIOD_MS })]);
    out(line(`bare node:http, ${SESSIONS} paced`, barePaced));
    const bareClosed = pooled([await round(rpc, { cmd: 'run', mode: 'closed', ms: CLOSED_MS })]);
    out(line(`bare node:http, ${SESSIONS} closed`, bareClosed));
    await rpc({ cmd: 'close' });
    await new Promise<void>((r) => bare!.close(() => r()));
    bare = undefined;

    await rpc({ cmd: 'connect', url, token: h.hub.leadToken, n: SESSIONS, handshake: true });
    await rpc({ cmd: 'run', mode: 'closed', ms: 1000 }); // warm-up
    const closedLead = pooled([await round(rpc, { cmd: 'run', mode: 'closed', ms: CLOSED_MS / 2 })]);
    out(line(`hub, ${SESSIONS} sessions of the lead's token, closed loop`, closedLead));
    await rpc({ cmd: 'close' });
    await rpc({ cmd: 'connect', url, token: h.hub.leadToken, n: SESSIONS, handshake: true, tokens });
    await rpc({ cmd: 'run', mode: 'closed', ms: 1000 }); // warm-up
    const rounds = { paced: [] as Round[], closed: [] as Round[] };
    const mode = process.env.HTTP_LOAD_PROFILE;
    const profile = mode === '1' || mode === 'heap' ? new Session() : undefined;
    for (let k = 0; k < 2; k++) {
      rounds.paced.push(await round(rpc, { cmd: 'run', mode: 'paced', ms: PACED_MS / 2, periodMs: PERIOD_MS }));
      if (profile && k === 1) {
        profile.connect();
        if (mode === 'heap') await profile.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
        else { await profile.post('Profiler.enable'); await profile.post('Profiler.setSamplingInterval', { interval: 100 }); await profile.post('Profiler.start'); }
      }
      rounds.closed.push(await round(rpc, { cmd: 'run', mode: 'closed', ms: CLOSED_MS / 2 }));
    }
    if (profile) {
      const { profile: p } = mode === 'heap' ? await profile.post('HeapProfiler.stopSampling') : await profile.post('Profiler.stop');
      await mkdir(path.join(BENCH_DIR, 'results'), { recursive: true });
      await writeFile(path.join(BENCH_DIR, 'results', mode === 'heap' ? 'http-load.heapprofile' : 'http-load.cpuprofile'), JSON.stringify(p));
      profile.disconnect();
    }
    const paced = { hub: pooled(rounds.paced), bare: barePaced };
    const closed = { hub: pooled(rounds.closed), bare: bareClosed };
    out(line(`hub, ${SESSIONS} agent sessions paced (1 call / ${PERIOD_MS} ms each)`, paced.hub));
    out(line(`hub, ${SESSIONS} agent sessions closed loop`, closed.hub));
    out(`closed loop: hub ${(closed.hub.callsPerS / bareClosed.callsPerS).toFixed(2)} of the bare server's calls/s; CPU per call ${(closed.hub.serverCpuUs / bareClosed.serverCpuUs).toFixed(1)}× the bare server's\n`);
    await rpc({ cmd: 'close' });
    return { sessions: SESSIONS, closedLead, paced, closed, sdkSame };
  } finally {
    if (bare) bare.close();
    await worker.terminate().catch(() => undefined);
    await h.stop();
  }
}

runAlone(import.meta.url, benchHttpLoad);
