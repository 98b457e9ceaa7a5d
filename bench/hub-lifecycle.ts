// Hub lifecycle figures. (1) A real hub process (`node dist/cli/main.js serve`) from spawn to
// its first answered MCP call (initialize with the lead token), on a fresh state directory
// and on one whose previous hub was killed with -9 (a stale claim and hub.json to take over).
// (2) `overseer mcp` cold: bridge spawn → its background hub started → initialize + tools/list
// answered through the bridge. (3) Memory per open MCP session: heap and RSS of an in-process
// hub before and after opening 400 Streamable-HTTP sessions. Medians; measured, not asserted.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_ROOT, cleanEnv, f1, out, removeDir, runAlone, startBenchHub, stats, tempDir, fixture, until as pollUntil } from './common.js';

const RUNS = 5;
const SESSIONS = 400;
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } };

export interface HubLifecycleResult {
  freshMs: number;
  takeoverMs: number;
  bridgeColdMs: number;
  heapPerSessionKb: number;
  rssPerSessionKb: number;
  runs: number;
  sessions: number;
}

const median = (xs: number[]): number => stats(xs).p50;

const until = <T>(what: string, ms: number, f: () => Promise<T | undefined> | T | undefined): Promise<T> => pollUntil(what, ms, f, 5);

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Spawn `serve` and time it to an answered initialize. Returns the ms and the process (still running). */
async function timedStart(cli: string, state: string, env: NodeJS.ProcessEnv): Promise<{ ms: number; proc: ChildProcess }> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [cli, 'serve'], { cwd: path.dirname(state), env: { ...env, OVERSEER_HOME: state }, detached: true, stdio: 'ignore' });
  const ms = await until('an answered initialize', 30_000, async () => {
    const info = readJson<{ pid: number; url: string }>(path.join(state, 'hub.json'));
    if (!info || info.pid !== proc.pid || !info.url) return undefined;
    const token = readFileSync(path.join(state, 'lead.token'), 'utf8').trim();
    const r = await fetch(info.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` }, body: JSON.stringify(INIT) }).catch(() => undefined);
    if (r?.status !== 200) return undefined;
    await r.text();
    return performance.now() - t0;
  });
  return { ms, proc };
}

const kill9 = (p: ChildProcess): Promise<void> => new Promise((r) => {
  if (p.exitCode !== null || p.signalCode !== null) return r();
  p.once('exit', () => r());
  process.kill(-p.pid!, 'SIGKILL');
});

export async function benchHubLifecycle(): Promise<HubLifecycleResult> {
  const cli = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  const dir = await tempDir('lifecycle');
  const env = cleanEnv({ HOME: path.join(dir, 'home'), OVERSEER_LOG_LEVEL: 'warn', CLAUDE_BIN: fixture('sleep-agent.sh') });
  try {
    const fresh: number[] = [];
    const takeover: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const state = path.join(dir, `state-${i}`);
      const a = await timedStart(cli, state, env);
      fresh.push(a.ms);
      await kill9(a.proc); // leaves hub.json and the (now free) claim of a dead hub
      const b = await timedStart(cli, state, env);
      takeover.push(b.ms);
      await kill9(b.proc);
    }
    out(`   hub start → first answered call: fresh p50 ${f1(median(fresh))} ms, after kill -9 (takeover) p50 ${f1(median(takeover))} ms (n=${RUNS})\n`);

    const cold: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const state = path.join(dir, `bridge-${i}`);
      const t0 = performance.now();
      const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp'], env: { ...env, OVERSEER_HOME: state } as Record<string, string>, cwd: dir, stderr: 'ignore' });
      const c = new Client({ name: 'bench-bridge', version: '1' });
      await c.connect(transport);
      await c.listTools();
      cold.push(performance.now() - t0);
      await c.close();
      const hub = readJson<{ pid: number }>(path.join(state, 'hub.json'));
      if (hub) process.kill(hub.pid, 'SIGTERM');
      await until('the hub to stop', 30_000, () => (existsSync(path.join(state, 'hub.json')) ? undefined : true));
    }
    out(`   overseer mcp cold (bridge + background hub) → tools/list answered: p50 ${f1(median(cold))} ms (n=${RUNS})\n`);

    const mem = await sessionMemory();
    out(`   per open MCP session (${SESSIONS} sessions): heap ${f1(mem.heapKb)} kB, RSS ${f1(mem.rssKb)} kB\n`);
    return { freshMs: median(fresh), takeoverMs: median(takeover), bridgeColdMs: median(cold), heapPerSessionKb: mem.heapKb, rssPerSessionKb: mem.rssKb, runs: RUNS, sessions: SESSIONS };
  } finally {
    await removeDir(dir);
  }
}

async function sessionMemory(): Promise<{ heapKb: number; rssKb: number }> {
  const h = await startBenchHub({ claudeBin: fixture('sleep-agent.sh'), config: { maxSessionsPerToken: SESSIONS + 100 } });
  // A full GC before each reading (without --expose-gc on the command line).
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  try {
    const open = async (): Promise<void> => {
      const r = await fetch(h.hub.http!.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${h.hub.leadToken}` }, body: JSON.stringify(INIT) });
      await r.text();
      if (r.status !== 200) throw new Error(`initialize answered ${r.status}`);
    };
    for (let i = 0; i < 20; i++) await open(); // warm up code paths
    gc();
    const before = process.memoryUsage();
    for (let i = 0; i < SESSIONS; i++) await open();
    gc();
    const after = process.memoryUsage();
    return { heapKb: (after.heapUsed - before.heapUsed) / SESSIONS / 1024, rssKb: (after.rss - before.rss) / SESSIONS / 1024 };
  } finally {
    await h.stop();
  }
}

runAlone(import.meta.url, benchHubLifecycle);
