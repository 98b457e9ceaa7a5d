// Worker thread of bench/http-load.ts (started with startTsWorker): a lean load generator for
// the hub's MCP endpoint. N sessions, each on its own keep-alive connection (raw node:http, one
// agent with one socket per session), opened through the normal MCP handshake (initialize,
// notifications/initialized) with a bearer token; tool calls are pre-serialised bodies (only the
// JSON-RPC id changes). Latency is timed here, from the request written to the answer read.
// Not a benchmark by itself.
//
// Messages in:  { id, cmd: 'connect', url, token, n, handshake } | { id, cmd: 'run', mode, ms, periodMs? } |
//               { id, cmd: 'one', tool, args } | { id, cmd: 'close' }
// Messages out: { id, ok: true, result } | { id, ok: false, error }
import http from 'node:http';
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';

export type LoadRequest =
  | { id: number; cmd: 'connect'; url: string; token: string; n: number; handshake: boolean; tokens?: string[] }
  | { id: number; cmd: 'run'; mode: 'paced' | 'closed'; ms: number; periodMs?: number }
  | { id: number; cmd: 'one'; tool: string; args: Record<string, unknown> }
  | { id: number; cmd: 'close' };

export interface LoadRunResult {
  /** per call, ms */
  samples: number[];
  calls: number;
  errors: number;
  firstError?: string;
  wallMs: number;
  /** event-loop utilisation of this worker over the run (1 = the load generator was saturated) */
  clientElu: number;
  /** Content-Type of the last answer (SSE or JSON) */
  contentType: string;
}

interface Session {
  agent: http.Agent;
  sid?: string;
  /** calls made so far (the JSON-RPC ids) */
  n: number;
  /** its Authorization header (one token for all, or each session its own: a crew's agents) */
  auth: string;
  /** pre-serialised pieces of this session's calls */
  read: [string, string];
  write: [string, string];
}

let sessions: Session[] = [];
let target: URL | undefined;
let auth = '';
const PROTOCOL = '2025-06-18';

interface Answer { status: number; type: string; text: string; sid?: string }

function post(s: Session, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: s.auth,
      'content-length': Buffer.byteLength(body),
      'mcp-protocol-version': PROTOCOL,
    };
    if (s.sid) headers['mcp-session-id'] = s.sid;
    const req = http.request({ host: target!.hostname, port: target!.port, path: target!.pathname, method: 'POST', agent: s.agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        const sid = res.headers['mcp-session-id'];
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text, sid: typeof sid === 'string' ? sid : undefined });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The JSON-RPC message of an answer (SSE `data:` line or a JSON body). */
export function messageOf(a: { type: string; text: string }): any {
  if (a.type.startsWith('text/event-stream')) {
    const line = a.text.split('\n').find((l) => l.startsWith('data: '));
    return line ? JSON.parse(line.slice(6)) : undefined;
  }
  return a.text ? JSON.parse(a.text) : undefined;
}

function pieces(tool: string, args: Record<string, unknown>): [string, string] {
  const rest = JSON.stringify({ method: 'tools/call', params: { name: tool, arguments: args } }).slice(1);
  return ['{"jsonrpc":"2.0","id":', `,${rest}`];
}

async function connect(url: string, token: string, n: number, handshake: boolean, tokens?: string[]): Promise<unknown> {
  await closeAll();
  target = new URL(url);
  auth = `Bearer ${token}`;
  for (let i = 0; i < n; i++) {
    sessions.push({
      agent: new http.Agent({ keepAlive: true, maxSockets: 1 }), n: 0,
      auth: tokens?.length ? `Bearer ${tokens[i % tokens.length]}` : auth,
      read: pieces('read_note', { key: `bench/load/c${i}` }),
      write: pieces('write_note', { key: `bench/load/c${i}`, value: `value of client ${i}` }),
    });
  }
  if (handshake) {
    // A few at a time: 64 handshakes at once would only measure the burst.
    for (let i = 0; i < n; i += 8) {
      await Promise.all(sessions.slice(i, i + 8).map(async (s) => {
        const init = await post(s, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench-load', version: '1.0.0' } } }));
        if (init.status !== 200 || !init.sid) throw new Error(`initialize: HTTP ${init.status} ${init.text.slice(0, 200)}`);
        s.sid = init.sid;
        const ack = await post(s, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
        if (ack.status !== 202) throw new Error(`notifications/initialized: HTTP ${ack.status} ${ack.text.slice(0, 200)}`);
        s.n = 1;
      }));
    }
  }
  return { connected: sessions.length };
}

/** One call of session s: three reads to one write (its own note). */
async function call(s: Session): Promise<Answer> {
  const k = ++s.n;
  const [a, b] = k % 4 === 0 ? s.write : s.read;
  return post(s, a + k + b);
}

const ok = (a: Answer): boolean => a.status === 200 && a.text.includes('"result"') && !a.text.includes('"isError":true');

async function run(mode: 'paced' | 'closed', ms: number, periodMs = 100): Promise<LoadRunResult> {
  const samples: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let contentType = '';
  const one = async (s: Session): Promise<void> => {
    const t = performance.now();
    const a = await call(s);
    samples.push(performance.now() - t);
    contentType = a.type;
    if (!ok(a)) { errors++; firstError ??= `HTTP ${a.status} ${a.text.slice(0, 300)}`; }
  };
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const end = t0 + ms;
  if (mode === 'closed') {
    await Promise.all(sessions.map(async (s) => { while (performance.now() < end) await one(s); }));
  } else {
    // Each session calls once per period, the sessions spread evenly over the period; a call
    // still running when the next is due delays that one (not counted twice).
    await Promise.all(sessions.map(async (s, i) => {
      let due = t0 + (i * periodMs) / sessions.length;
      while (due < end) {
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await one(s);
        due += periodMs;
      }
    }));
  }
  const wallMs = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  return { samples, calls: samples.length, errors, firstError, wallMs, clientElu: elu.utilization, contentType };
}

async function closeAll(): Promise<void> {
  await Promise.all(sessions.map(async (s) => {
    if (s.sid) {
      await new Promise<void>((resolve) => {
        const req = http.request({ host: target!.hostname, port: target!.port, path: target!.pathname, method: 'DELETE', agent: s.agent, headers: { authorization: s.auth, 'mcp-session-id': s.sid, 'mcp-protocol-version': PROTOCOL } }, (res) => { res.resume(); res.on('end', () => resolve()); });
        req.on('error', () => resolve());
        req.end();
      });
    }
    s.agent.destroy();
  }));
  sessions = [];
}

async function handle(m: LoadRequest): Promise<unknown> {
  switch (m.cmd) {
    case 'connect': return connect(m.url, m.token, m.n, m.handshake, m.tokens);
    case 'run': return run(m.mode, m.ms, m.periodMs);
    case 'one': {
      const s = sessions[0]!;
      const k = ++s.n;
      const [a, b] = pieces(m.tool, m.args);
      const ans = await post(s, a + k + b);
      return { status: ans.status, type: ans.type, message: messageOf(ans) };
    }
    case 'close': await closeAll(); return { closed: true };
  }
}

parentPort?.on('message', (m: LoadRequest) => {
  handle(m).then(
    (result) => parentPort!.postMessage({ id: m.id, ok: true, result }),
    (err: unknown) => parentPort!.postMessage({ id: m.id, ok: false, error: err instanceof Error ? err.stack ?? err.message : String(err) }),
  );
});
