// Worker thread of bench/store-compare.ts (started with startTsWorker): holds the real MCP SDK
// clients (Streamable HTTP) of the hubs under comparison, one set per hub, on an event loop of
// its own, and runs what it is asked, timing each call on the client side (performance.now(),
// one clock for every client, so a release in one client and the grant in another compare).
// Not a benchmark by itself.
//
// Messages in:  { id, cmd: 'connect', set, url, tokens } — clients[set] = one client per token
//               { id, cmd: 'calls', set, client, op, calls, warmup, file? } — closed loop, one client
//               { id, cmd: 'hook', set, client, kind, url, cwd, files, calls, warmup } — POST /hook
//               { id, cmd: 'contend', set, clients, files, holdMs, grants, warmup } — lock contention
//               { id, cmd: 'close' }
// Messages out: { id, ok: true, result } | { id, ok: false, error }
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import { httpClient, type ToolClient } from './common.js';

export type CallOp = 'write_note' | 'read_note' | 'list_agents' | 'lock_release';
export type HookKind = 'free' | 'own' | 'deny';

export type StoreRequest =
  | { id: number; cmd: 'connect'; set: string; url: string; tokens: string[] }
  | { id: number; cmd: 'calls'; set: string; client: number; op: CallOp; calls: number; warmup: number; file: string }
  | { id: number; cmd: 'hook'; set: string; client: number; kind: HookKind; url: string; token: string; cwd: string; file: string; calls: number; warmup: number }
  | { id: number; cmd: 'contend'; set: string; clients: number; files: string[][]; holdMs: number; grants: number; warmup: number }
  | { id: number; cmd: 'close' };

export interface ContendResult {
  /** release call's start (holder lets go) → the next grant's answer in another client, ms; single-file only */
  handovers: number[];
  /** lock_files call → its answer (the wait included), ms */
  waits: number[];
  /** grants per client in the measured part */
  perClient: number[];
  wallMs: number;
}

const sets = new Map<string, ToolClient[]>();
// Keep-alive like an MCP client's fetch: the hook's time is then the hub's, not a TCP handshake's.
const keepAlive = new Agent({ keepAlive: true, maxSockets: 4 });

function clientOf(set: string, i: number): ToolClient {
  const c = sets.get(set)?.[i];
  if (!c) throw new Error(`no client ${i} in set ${set}`);
  return c;
}

async function calls(m: Extract<StoreRequest, { cmd: 'calls' }>): Promise<number[]> {
  const c = clientOf(m.set, m.client);
  const key = `bench/store/${m.set}/c${m.client}`;
  if (m.op === 'read_note') await c.call('write_note', { key, value: 'read me' });
  const samples: number[] = [];
  for (let k = -m.warmup; k < m.calls; k++) {
    const t0 = performance.now();
    if (m.op === 'write_note') {
      await c.call('write_note', { key, value: `value ${k}` });
    } else if (m.op === 'read_note') {
      const r = await c.call<{ found?: boolean }>('read_note', { key });
      if (r.found === false) throw new Error(`read_note: ${key} not found`);
    } else if (m.op === 'list_agents') {
      const r = await c.call<{ agents?: unknown[] }>('list_agents', {});
      if (!Array.isArray(r.agents)) throw new Error(`list_agents answered ${JSON.stringify(r).slice(0, 200)}`);
    } else {
      const l = await c.call<{ acquired: string[] }>('lock_files', { files: [m.file], timeout_s: 0 });
      if (l.acquired.length !== 1) throw new Error(`lock_files acquired ${JSON.stringify(l)}`);
      const r = await c.call<{ released: string[] }>('release_files', { files: [m.file] });
      if (r.released.length !== 1) throw new Error(`release_files released ${JSON.stringify(r)}`);
    }
    if (k >= 0) samples.push(performance.now() - t0);
  }
  return samples;
}

function postHook(url: string, token: string, body: string): Promise<string> {
  const u = new URL('/hook', url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: keepAlive,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => { text += d; });
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`POST /hook answered ${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const hookInput = (cwd: string, file: string): string => JSON.stringify({
  session_id: 'bench-store', transcript_path: '/dev/null', cwd, permission_mode: 'default', hook_event_name: 'PreToolUse',
  tool_name: 'Write', tool_input: { file_path: file, content: 'export const x = 1;\n' },
});

/**
 * A child's edit through the hub's /hook: `free` a new file each time (check + auto lock; the
 * agent's MCP client releases it after the sample, untimed, so every sample is the same case),
 * `own` a file the agent holds already (the usual repeated edit), `deny` a file another holds.
 */
async function hook(m: Extract<StoreRequest, { cmd: 'hook' }>): Promise<number[]> {
  const c = clientOf(m.set, m.client);
  const samples: number[] = [];
  for (let k = -m.warmup; k < m.calls; k++) {
    const file = m.kind === 'free' ? `${m.file}-${k + m.warmup}.ts` : m.file;
    const t0 = performance.now();
    const text = await postHook(m.url, m.token, hookInput(m.cwd, file));
    const ms = performance.now() - t0;
    if (m.kind === 'deny' ? !text.includes('"deny"') : text.includes('"deny"')) throw new Error(`POST /hook (${m.kind}) answered ${text}`);
    if (m.kind === 'free') {
      const r = await c.call<{ released: string[] }>('release_files', { files: [file] });
      if (r.released.length !== 1) throw new Error(`the hook did not auto-lock ${file}: release_files released ${JSON.stringify(r)}`);
    }
    if (k >= 0) samples.push(ms);
  }
  return samples;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Clients 0..n-1 of the set each lock their files (waiting as long as needed), hold them
 * `holdMs`, release, and again: `warmup` rounds each first (not recorded), then `grants` each.
 */
async function contend(m: Extract<StoreRequest, { cmd: 'contend' }>): Promise<ContendResult> {
  const cs = Array.from({ length: m.clients }, (_, i) => clientOf(m.set, i));
  const loop = async (record: boolean, n: number, events: { t: number; grant: boolean }[], waits: number[], perClient: number[]): Promise<void> => {
    await Promise.all(cs.map(async (c, i) => {
      const files = m.files[i % m.files.length]!;
      for (let g = 0; g < n; g++) {
        const t0 = performance.now();
        const l = await c.call<{ acquired: string[] }>('lock_files', { files, timeout_s: 120 });
        const tg = performance.now();
        if (l.acquired.length !== files.length) throw new Error(`lock_files acquired ${JSON.stringify(l)}`);
        if (record) {
          events.push({ t: tg, grant: true });
          waits.push(tg - t0);
          perClient[i]!++;
        }
        await sleep(m.holdMs); // the agent's work while it holds the file (simulated, not a sync)
        if (record) events.push({ t: performance.now(), grant: false });
        const r = await c.call<{ released: string[] }>('release_files', { files });
        if (r.released.length !== files.length) throw new Error(`release_files released ${JSON.stringify(r)}`);
      }
    }));
  };
  await loop(false, m.warmup, [], [], []);
  const events: { t: number; grant: boolean }[] = [];
  const waits: number[] = [];
  const perClient = new Array<number>(m.clients).fill(0);
  const t0 = performance.now();
  await loop(true, m.grants, events, waits, perClient);
  const wallMs = performance.now() - t0;
  // One file: grants and releases alternate in time; a grant right after a release is a hand-over
  // (the first grant of the round follows no release and is not one).
  const handovers: number[] = [];
  if (m.files.length === 1 && m.files[0]!.length === 1) {
    events.sort((a, b) => a.t - b.t);
    for (let i = 1; i < events.length; i++) if (events[i]!.grant && !events[i - 1]!.grant) handovers.push(events[i]!.t - events[i - 1]!.t);
  }
  return { handovers, waits, perClient, wallMs };
}

async function handle(m: StoreRequest): Promise<unknown> {
  switch (m.cmd) {
    case 'connect': {
      for (const c of sets.get(m.set) ?? []) await c.close();
      const cs: ToolClient[] = [];
      for (let i = 0; i < m.tokens.length; i += 8) {
        cs.push(...(await Promise.all(m.tokens.slice(i, i + 8).map((t, j) => httpClient(m.url, t, `bench-store-${m.set}-${i + j}`)))));
      }
      sets.set(m.set, cs);
      return { connected: cs.length };
    }
    case 'calls':
      return calls(m);
    case 'hook':
      return hook(m);
    case 'contend':
      return contend(m);
    case 'close':
      await Promise.all([...sets.values()].flat().map((c) => c.close()));
      sets.clear();
      keepAlive.destroy();
      return { closed: true };
  }
}

parentPort?.on('message', (m: StoreRequest) => {
  handle(m).then(
    (result) => parentPort!.postMessage({ id: m.id, ok: true, result }),
    (err: unknown) => parentPort!.postMessage({ id: m.id, ok: false, error: err instanceof Error ? err.stack ?? err.message : String(err) }),
  );
});
