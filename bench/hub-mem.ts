// Benchmark P6: resident memory of a real hub process (`node dist/cli/main.js serve`), idle and
// with 64 light children that each hold an MCP session open like a real child, against the
// floors measured in the same run: a bare `node -e "setInterval(()=>{},1e6)"`, and the floor under
// any hub of Overseer's parts: node:http + a better-sqlite3 WAL file + pino answering 200 GETs
// with one query each (bench/fixtures/min-server.mjs, same node flags), no Overseer code.
// The hub runs with OVERSEER_HOME in a temp dir, OVERSEER_MAX_AGENTS=64, OVERSEER_PORT=0 and
// CLAUDE_BIN=bench/fixtures/mcp-agent.sh (curl: initialize, initialized, tools/list with the
// child's own token, then holds the session's GET stream). A lead client connects over
// Streamable HTTP with the lead token. VmRSS (and its anonymous / file-backed parts) is read
// from /proc: idle (after one list_agents, settled), then with 64 jobs running and 64 agent
// sessions open. Then every job is cancelled and the hub gets SIGTERM.
// The hub runs with the node flags `overseer mcp` gives the hub it starts (hubNodeArgs);
// HUB_MEM_NODE_ARGS="--flag ..." replaces them (for experiments; "" for none); HUB_MEM_CLI=<main.js>
// measures another build (e.g. an older commit's dist/, to compare before and after).
// Needs dist/ (npm run build). Run alone: node --import tsx bench/hub-mem.ts
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { performance } from 'node:perf_hooks';
import { hubNodeArgs } from '../src/hubproc/spawn.js';
import { REPO_ROOT, cleanEnv, f1, fixture, out, pct, removeDir, tempDir } from './common.js';

const CHILDREN = 64;
const POLL_MS = 100;
const SETTLE_MS = 1000;
const CALLS = 200;

export interface Rss {
  /** VmRSS, MB */
  rss: number;
  /** RssAnon (heap, malloc: this process's own), MB */
  anon: number;
  /** RssFile (pages of the node binary and shared libraries, shared with every node process), MB */
  file: number;
}

export interface HubMemResult {
  floor: Rss;
  /** node:http + SQLite + pino serving 200 requests, the hub's node flags (bench/fixtures/min-server.mjs) */
  serverFloor: Rss;
  idle: Rss;
  children: Rss;
  peakMb: number;
  /** agent sessions the hub had open when `children` was read */
  agentSessions: number;
  perChildKb: number;
  leftoverChildren: number;
  nodeArgs: string[];
  /** list_agents round trip of the lead, idle, p50 ms */
  callP50Ms: number;
}

function procRss(pid: number): Rss & { hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Number(m[1]) / 1024;
  };
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), hwm: kb('VmHWM') };
}

function taggedPids(tag: string): number[] {
  const needle = `BENCH_MEM_TAG=${tag}`;
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (!readFileSync(`/proc/${e}/environ`, 'latin1').split('\0').includes(needle)) continue;
      if (/\)\s+Z\s/.test(readFileSync(`/proc/${e}/stat`, 'utf8'))) continue;
      pids.push(Number(e));
    } catch {
      /* gone, or not ours */
    }
  }
  return pids;
}

async function until<T>(what: () => string, deadlineMs: number, fn: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what()}`);
    await sleep(POLL_MS);
  }
}

function exited(p: ChildProcess): Promise<void> {
  return p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', () => r()));
}

async function exitedWithin(p: ChildProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited(p), new Promise<void>((r) => { timer = setTimeout(r, ms); })]);
  clearTimeout(timer);
  return p.exitCode !== null || p.signalCode !== null;
}

function killTagged(tag: string): number {
  const left = taggedPids(tag);
  for (const p of left) {
    try { process.kill(-p, 'SIGKILL'); } catch { /* not a group leader or gone */ }
    try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
  }
  return left.length;
}

/** RSS of process p after `work` and SETTLE_MS to settle; p is killed after. */
async function rssAfter(p: ChildProcess, work: () => Promise<void> = async () => undefined): Promise<Rss> {
  try {
    await work();
    await sleep(SETTLE_MS);
    const { rss, anon, file } = procRss(p.pid!);
    return { rss, anon, file };
  } finally {
    p.kill('SIGKILL');
    await exited(p);
  }
}

/** RSS of a bare node process that only waits: what any node process costs on this machine. */
export function nodeFloor(): Promise<Rss> {
  return rssAfter(spawn(process.execPath, ['-e', 'setInterval(()=>{},1e6)'], { stdio: 'ignore' }));
}

/**
 * RSS of the smallest server of Overseer's parts (node:http, better-sqlite3 in WAL mode, pino)
 * after answering CALLS requests, with the hub's node flags: what any hub costs before its own code.
 */
export function serverFloor(nodeArgs: string[], dir: string): Promise<Rss> {
  const p = spawn(process.execPath, [...nodeArgs, fixture('min-server.mjs'), dir], { stdio: ['ignore', 'pipe', 'ignore'] });
  return rssAfter(p, async () => {
    let text = '';
    const port = await new Promise<number>((resolve, reject) => {
      p.stdout!.on('data', (c: Buffer) => { text += c.toString(); if (text.includes('\n')) resolve(Number(text.trim())); });
      p.once('exit', () => reject(new Error('the floor server exited before it listened')));
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < CALLS; i++) {
      await new Promise<void>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject);
      });
    }
    agent.destroy();
  });
}

const fmt = (r: Rss): string => `${f1(r.rss)} MB (anon ${f1(r.anon)}, file ${f1(r.file)})`;

export async function benchHubMem(): Promise<HubMemResult> {
  const cli = process.env.HUB_MEM_CLI ?? path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  const floor = await nodeFloor();
  const dir = await tempDir('mem');
  const tag = path.basename(dir);
  const state = path.join(dir, 'state');
  // The flags `overseer mcp` starts its background hub with (src/hubproc/spawn.ts), unless
  // HUB_MEM_NODE_ARGS says otherwise ("" for none).
  const nodeArgs = process.env.HUB_MEM_NODE_ARGS !== undefined ? process.env.HUB_MEM_NODE_ARGS.split(/\s+/).filter(Boolean) : hubNodeArgs([], '');
  let hubProc: ChildProcess | undefined;
  let client: Client | undefined;
  let stderr = '';
  try {
    const minServer = await serverFloor(nodeArgs, dir);
    hubProc = spawn(process.execPath, [...nodeArgs, cli, 'serve'], {
      cwd: dir,
      env: cleanEnv({
        HOME: path.join(dir, 'home'),
        OVERSEER_HOME: state,
        OVERSEER_MAX_AGENTS: String(CHILDREN),
        OVERSEER_PORT: '0',
        OVERSEER_LOG_LEVEL: 'warn',
        CLAUDE_BIN: fixture('mcp-agent.sh'),
        BENCH_MEM_TAG: tag,
      }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const hub = hubProc;
    hub.stdout!.resume();
    hub.stderr!.setEncoding('utf8');
    hub.stderr!.on('data', (d: string) => { stderr = (stderr + d).slice(-4000); });
    const pid = hub.pid!;
    const info = await until(() => 'hub.json', 20_000, () => {
      if (hub.exitCode !== null) throw new Error(`the hub exited with ${hub.exitCode}: ${stderr}`);
      try {
        const i = JSON.parse(readFileSync(path.join(state, 'hub.json'), 'utf8')) as { url: string };
        return i.url ? i : undefined;
      } catch {
        return undefined;
      }
    });
    const token = readFileSync(path.join(state, 'lead.token'), 'utf8').trim();
    const c = new Client({ name: 'bench-mem-lead', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(info.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    client = c;
    const call = async (tool: string, args: Record<string, unknown>): Promise<any> => {
      const r = await c.callTool({ name: tool, arguments: args }, undefined, { timeout: 60_000 });
      const text = (r.content as { text: string }[]).map((x) => x.text).join('\n');
      if (r.isError) throw new Error(`${tool} failed: ${text}`);
      return JSON.parse(text);
    };
    const health = async (): Promise<{ agent: number }> => {
      const r = await fetch(new URL('/health', info.url), { headers: { Authorization: `Bearer ${token}` } });
      const h = (await r.json()) as { sessions?: { agent?: number } };
      return { agent: h.sessions?.agent ?? 0 };
    };

    // A lead's tool call round trip, so a flag that saves memory but slows the hub shows.
    const lat: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      await call('list_agents', {});
      lat.push(performance.now() - t0);
    }
    lat.sort((a, b) => a - b);
    const callP50Ms = pct(lat, 50);
    await sleep(SETTLE_MS);
    const idle = procRss(pid);

    const ids: string[] = [];
    for (let i = 0; i < CHILDREN; i++) ids.push((await call('spawn_agent', { prompt: `bench mem child ${i}`, title: `mem ${i}` })).job_id);
    let seen = 0;
    let sessions = 0;
    await until(() => `${CHILDREN} running jobs with a session each (saw ${seen} running, ${sessions} agent sessions)`, 60_000, async () => {
      let n = 0;
      let cursor: string | undefined;
      do {
        const l = await call('list_agents', { status: 'running', limit: 200, ...(cursor ? { cursor } : {}) });
        n += l.agents.length;
        cursor = l.next_cursor ?? undefined;
      } while (cursor);
      seen = n;
      sessions = (await health()).agent;
      return n >= CHILDREN && sessions >= CHILDREN ? true : undefined;
    });
    await sleep(SETTLE_MS);
    const withChildren = procRss(pid);

    await Promise.all(ids.map((id) => call('cancel_agent', { job_id: id })));
    await c.close().catch(() => undefined);
    client = undefined;
    hub.kill('SIGTERM');
    if (!(await exitedWithin(hub, 15_000))) {
      try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
      await exited(hub);
    }
    await sleep(200);
    const left = killTagged(tag);
    const perChildKb = ((withChildren.rss - idle.rss) / CHILDREN) * 1024;
    out(
      `bare node: ${fmt(floor)}; hub node flags: ${nodeArgs.join(' ') || '(none)'}\n` +
        `node:http + SQLite + pino, ${CALLS} requests served (bench/fixtures/min-server.mjs): ${fmt(minServer)}\n` +
        `hub idle: ${fmt(idle)}; ratio to bare node ${(idle.rss / floor.rss).toFixed(2)}, to the server floor ${(idle.rss / minServer.rss).toFixed(2)}; list_agents p50 ${callP50Ms.toFixed(2)} ms (n=${CALLS})\n` +
        `hub with ${CHILDREN} children (${sessions} agent sessions): ${fmt(withChildren)}; peak VmHWM ${f1(withChildren.hwm)} MB; per child ${perChildKb.toFixed(0)} kB\n` +
        `after hub SIGTERM: ${left} processes left${left ? ' (killed by the benchmark)' : ''}\n`,
    );
    return { floor, serverFloor: minServer, idle: strip(idle), children: strip(withChildren), peakMb: withChildren.hwm, agentSessions: sessions, perChildKb, leftoverChildren: left, callP50Ms, nodeArgs };
  } finally {
    await client?.close().catch(() => undefined);
    if (hubProc && hubProc.exitCode === null && hubProc.signalCode === null) {
      try { process.kill(-hubProc.pid!, 'SIGKILL'); } catch { /* gone */ }
      await exitedWithin(hubProc, 5000);
    }
    killTagged(tag);
    await removeDir(dir);
  }
}

function strip(r: Rss): Rss {
  return { rss: r.rss, anon: r.anon, file: r.file };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchHubMem().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
