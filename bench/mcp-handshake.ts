// Benchmark P7b: the MCP handshake a child pays before its first model request (issue 14, "the
// hub"): Codex runs initialize → notifications/initialized → tools/list one after the other, on a
// new connection, before it sends anything to the model. Measured against a real hub process
// (`node dist/cli/main.js serve`, the flags `overseer mcp` starts it with) with the lead token
// (the lead's tool list is the largest). Baseline in the same run: a bare node:http server
// answering the same three bodies (the hub's own answers, recorded first). Rounds interleave.
// HANDSHAKE_BASE_CLI=<main.js of another build> adds that build's hub, interleaved too (before/after).
// Needs dist/ (npm run build). Run alone: node --import tsx bench/mcp-handshake.ts
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { hubNodeArgs } from '../src/hubproc/spawn.js';
import { REPO_ROOT, cleanEnv, f1, out, removeDir, runAlone, stats, tempDir, type Stats } from './common.js';

const ROUNDS = 30;
const WARMUP = 2;
const PROTOCOL = '2025-06-18';

interface Target { url: string; token: string }
interface Step { status: number; sid?: string; text: string }
export interface HandshakeFigures { total: Stats; initialize: Stats; list: Stats; listBytes: number }
export interface HandshakeResult { hub: HandshakeFigures; bare: HandshakeFigures; base?: HandshakeFigures }

/** One POST on a fresh connection (a child's first contact has none to reuse). */
function post(t: Target, body: string, sid?: string): Promise<Step> {
  const u = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false, headers: {
      authorization: `Bearer ${t.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(body), ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL } : {}),
    } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, sid: res.headers['mcp-session-id'] as string | undefined, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench-handshake', version: '1' } } });
const ACK = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

/** One handshake: ms of initialize, of tools/list, and of the three together; the list's text. */
async function handshake(t: Target): Promise<{ init: number; list: number; total: number; listText: string; initText: string }> {
  const t0 = performance.now();
  const init = await post(t, INIT);
  if (init.status !== 200) throw new Error(`initialize: HTTP ${init.status} ${init.text.slice(0, 200)}`);
  const t1 = performance.now();
  const ack = await post(t, ACK, init.sid);
  if (ack.status !== 202) throw new Error(`notifications/initialized: HTTP ${ack.status}`);
  const t2 = performance.now();
  const list = await post(t, LIST, init.sid);
  if (list.status !== 200 || !list.text.includes('spawn_agent')) throw new Error(`tools/list: HTTP ${list.status} ${list.text.slice(0, 200)}`);
  const t3 = performance.now();
  if (init.sid) await new Promise<void>((r) => { const u = new URL(t.url); request({ host: u.hostname, port: u.port, path: u.pathname, method: 'DELETE', agent: false, headers: { authorization: `Bearer ${t.token}`, 'mcp-session-id': init.sid } }, (res) => { res.resume(); res.on('end', () => r()); }).on('error', () => r()).end(); });
  return { init: t1 - t0, list: t3 - t2, total: t3 - t0, listText: list.text, initText: init.text };
}

async function startHub(cli: string, dir: string): Promise<{ proc: ChildProcess; target: Target }> {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  const state = path.join(dir, 'state');
  const proc = spawn(process.execPath, [...hubNodeArgs([], ''), cli, 'serve'], {
    cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], detached: true,
    env: cleanEnv({ HOME: path.join(dir, 'home'), OVERSEER_HOME: state, OVERSEER_PORT: '0', OVERSEER_LOG_LEVEL: 'warn' }),
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000); });
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`the hub exited: ${stderr}`);
    try {
      const info = JSON.parse(readFileSync(path.join(state, 'hub.json'), 'utf8')) as { url?: string };
      if (info.url) return { proc, target: { url: info.url, token: readFileSync(path.join(state, 'lead.token'), 'utf8').trim() } };
    } catch { /* not yet */ }
    await sleep(100);
  }
  throw new Error(`no hub.json after 30 s: ${stderr}`);
}

/** A bare node:http server answering the three messages with the hub's own bodies. */
async function bareServer(initText: string, listText: string): Promise<Server> {
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(200).end();
      const m = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method: string };
      if (m.method === 'notifications/initialized') return void res.writeHead(202).end();
      const body = m.method === 'initialize' ? initText : listText;
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'bare' }).end(body);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return s;
}

function figures(rounds: Awaited<ReturnType<typeof handshake>>[]): HandshakeFigures {
  return { total: stats(rounds.map((r) => r.total)), initialize: stats(rounds.map((r) => r.init)), list: stats(rounds.map((r) => r.list)), listBytes: rounds[0]?.listText.length ?? 0 };
}

export async function benchHandshake(): Promise<HandshakeResult> {
  const dirs: string[] = [];
  const procs: ChildProcess[] = [];
  let bare: Server | undefined;
  try {
    const targets: { name: 'hub' | 'base' | 'bare'; t: Target; rounds: Awaited<ReturnType<typeof handshake>>[] }[] = [];
    const add = async (name: 'hub' | 'base', cli: string): Promise<void> => {
      const dir = await tempDir(`handshake-${name}`);
      dirs.push(dir);
      const h = await startHub(cli, dir);
      procs.push(h.proc);
      targets.push({ name, t: h.target, rounds: [] });
    };
    await add('hub', path.join(REPO_ROOT, 'dist', 'cli', 'main.js'));
    if (process.env.HANDSHAKE_BASE_CLI) await add('base', process.env.HANDSHAKE_BASE_CLI);
    const first = await handshake(targets[0]!.t);
    bare = await bareServer(first.initText.startsWith('{') ? first.initText : JSON.stringify({ jsonrpc: '2.0', id: 0, result: {} }), first.listText);
    targets.push({ name: 'bare', t: { url: `http://127.0.0.1:${(bare.address() as AddressInfo).port}/mcp`, token: 'x' }, rounds: [] });
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      for (const x of targets) {
        const r = await handshake(x.t);
        if (i >= WARMUP) x.rounds.push(r);
      }
    }
    const by = (n: string): HandshakeFigures | undefined => { const x = targets.find((y) => y.name === n); return x ? figures(x.rounds) : undefined; };
    const result: HandshakeResult = { hub: by('hub')!, bare: by('bare')!, base: by('base') };
    for (const [label, f] of [['hub (this build)', result.hub], ['hub (HANDSHAKE_BASE_CLI)', result.base], ['bare node:http, same bodies', result.bare]] as const) {
      if (!f) continue;
      out(`${label}: initialize → initialized → tools/list p50 ${f1(f.total.p50)} ms (initialize ${f1(f.initialize.p50)}, tools/list ${f1(f.list.p50)} ms, ${f.listBytes} bytes), p99 ${f1(f.total.p99)} ms (n=${f.total.n})\n`);
    }
    return result;
  } finally {
    bare?.close();
    for (const p of procs) { try { process.kill(-p.pid!, 'SIGTERM'); } catch { /* gone */ } }
    await sleep(500);
    for (const p of procs) { try { process.kill(-p.pid!, 'SIGKILL'); } catch { /* gone */ } }
    for (const d of dirs) await removeDir(d);
  }
}

runAlone(import.meta.url, benchHandshake);
