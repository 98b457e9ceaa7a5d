// Shared pieces of the benchmarks: the wall clock the fake binaries' stamps use, percentiles,
// temp dirs, the stamp file, and an in-process hub whose children run a fake agent binary.
import { spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Hub } from '../src/hub.js';
import { loadConfigFrom, type Config } from '../src/config.js';
import type { ProcessLauncher } from '../src/launch/types.js';
import { TokenRecorder } from '../test/helpers/tokens.js';

export { TokenRecorder };

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(BENCH_DIR, '..');

/** A fixture script in bench/fixtures, made executable if a checkout lost the bit. */
export function fixture(name: string): string {
  const p = path.join(BENCH_DIR, 'fixtures', name);
  try {
    accessSync(p, constants.X_OK);
  } catch {
    chmodSync(p, 0o755);
  }
  return p;
}

/** Wall-clock milliseconds since the epoch with sub-millisecond resolution (same clock as bash's $EPOCHREALTIME). */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Milliseconds between the monotonic-based wallMs() and Date.now() (non-zero if the system clock stepped since start). */
export function clockSkewMs(): number {
  return Date.now() - wallMs();
}

export interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of already sorted samples. */
export function pct(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: pct(s, 50),
    p90: pct(s, 90),
    p99: pct(s, 99),
    min: s[0] ?? NaN,
    max: s.at(-1) ?? NaN,
    mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN,
  };
}

export const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : String(n));
export const f2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : String(n));

export function statLine(label: string, s: Stats, unit = 'ms'): string {
  return `${label}: p50 ${f1(s.p50)} ${unit}, p99 ${f1(s.p99)} ${unit}, min ${f1(s.min)} ${unit}, max ${f1(s.max)} ${unit} (n=${s.n})\n`;
}

export function out(text: string): void {
  process.stdout.write(text);
}

/** A fresh directory under `base` (default os.tmpdir(); symlinks resolved); the caller removes it.
 * Codex benchmarks pass /var/tmp: codex will not make its sandbox helper aliases under /tmp, which
 * it needs once bubblewrap is installed (docs/security.md). */
export async function tempDir(prefix: string, base = os.tmpdir()): Promise<string> {
  return realpath(await mkdtemp(path.join(base, `overseer-bench-${prefix}-`)));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

export interface Stamp {
  atMs: number;
  kind: 'start' | 'exit';
  id: string;
}

/** Lines "<epoch seconds.micros> <start|exit> <id>" written by bench/fixtures/fake-agent.sh. */
export function readStamps(file: string): Stamp[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const stamps: Stamp[] = [];
  for (const line of text.split('\n')) {
    const [t, kind, id] = line.trim().split(/\s+/);
    if (!t || !id || (kind !== 'start' && kind !== 'exit')) continue;
    // $EPOCHREALTIME uses the locale's decimal separator.
    stamps.push({ atMs: Number(t.replace(',', '.')) * 1000, kind, id });
  }
  return stamps;
}

export function stampOf(stamps: Stamp[], id: string, kind: Stamp['kind']): number | undefined {
  return stamps.find((s) => s.id === id && s.kind === kind)?.atMs;
}

/** Variables of an outer Claude Code session or shell that must not reach the fake children. */
function leaks(key: string): boolean {
  return key.startsWith('ANTHROPIC_') || key.startsWith('CLAUDE_') || key === 'CLAUDECODE' || key === 'AI_AGENT' || key.startsWith('OVERSEER_') || key.startsWith('BENCH_');
}

export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !leaks(k)) env[k] = v;
  return { ...env, LC_ALL: 'C', ...extra };
}

export interface BenchHub {
  hub: Hub;
  client: Client;
  dir: string;
  project: string;
  stampFile: string;
  call<T = any>(tool: string, args: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

/**
 * The Hub class users run: the build (dist/, tsc's output), not the sources through tsx, whose
 * keep-names wrappers (`__name`) cost about a tenth of a short tool call's CPU. `npm run bench`
 * builds first; a benchmark run alone needs `npm run build` after a change to src/.
 */
export async function builtHub(): Promise<typeof Hub> {
  const src = path.join(BENCH_DIR, '..', 'src');
  const dist = path.join(BENCH_DIR, '..', 'dist', 'hub.js');
  let built = 0;
  try { built = statSync(dist).mtimeMs; } catch { /* not built */ }
  const newest = (dir: string): number => Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? newest(p) : statSync(p).mtimeMs;
  }));
  if (built < newest(src)) throw new Error('dist/ is missing or older than src/: run `npm run build` (npm run bench does) before a benchmark');
  return ((await import(pathToFileURL(dist).href)) as typeof import('../src/hub.js')).Hub;
}

/**
 * An in-process hub like test/helpers/hub.ts startTestHub (real SQLite, HTTP on port 0, lead
 * client in memory), but with the fake agent binary as claudeBin and our own child environment
 * (BENCH_STAMP_FILE and friends), and no fake Anthropic API.
 */
export async function startBenchHub(o: { claudeBin: string; env?: Record<string, string>; config?: Partial<Config>; processes?: ProcessLauncher }): Promise<BenchHub> {
  const dir = await tempDir('hub');
  let hub: Hub | undefined;
  let client: Client | undefined;
  try {
    const project = path.join(dir, 'project');
    await mkdir(project);
    const stampFile = path.join(dir, 'stamps.txt');
    // Many benchmark clients share the lead token: lift the per-token session cap for them.
    const config = loadConfigFrom({ home: path.join(dir, 'state'), claudeBin: o.claudeBin, killGraceMs: 2000, worktreesDir: path.join(dir, 'worktrees'), maxSessionsPerToken: 1000, ...o.config });
    const childEnv = cleanEnv({ HOME: path.join(dir, 'home'), BENCH_STAMP_FILE: stampFile, ...o.env });
    const h = await (await builtHub()).open({ config, projectDir: project, childEnv, processes: o.processes });
    hub = h;
    await h.start();
    const [a, b] = InMemoryTransport.createLinkedPair();
    await h.server({ role: 'lead' }).connect(a);
    const c = new Client({ name: 'bench-lead', version: '1.0.0' });
    await c.connect(b);
    client = c;
    const call = async (tool: string, args: Record<string, unknown>): Promise<any> => {
      const r = await c.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 });
      const text = (r.content as { type: string; text: string }[]).map((x) => x.text).join('\n');
      if (r.isError) throw new Error(`${tool} failed: ${text}`);
      return JSON.parse(text);
    };
    return {
      hub: h, client: c, dir, project, stampFile, call,
      async stop() {
        await c.close().catch(() => undefined);
        await h.stop().catch(() => undefined);
        await removeDir(dir);
      },
    };
  } catch (err) {
    await client?.close().catch(() => undefined);
    await hub?.stop().catch(() => undefined);
    await removeDir(dir);
    throw err;
  }
}

/** Wait for a job to end through the hub (wait_for_agents); throws unless it succeeded. */
export async function awaitJob(h: BenchHub, jobId: string): Promise<any> {
  const w = await h.call('wait_for_agents', { job_ids: [jobId], timeout_s: 60 });
  const d = w.done?.[0];
  if (!d) throw new Error(`job ${jobId} did not end within 60 s`);
  if (d.status !== 'succeeded') throw new Error(`job ${jobId} ended ${d.status}: ${d.error ?? ''}`);
  return d;
}

/** Spawn a job whose fake binary hangs (sleep-agent.sh must be the hub's claudeBin); returns its id and agent token. */
export async function spawnHangingAgent(h: BenchHub, rec: TokenRecorder, title: string): Promise<{ jobId: string; token: string }> {
  const { job_id } = await h.call<{ job_id: string }>('spawn_agent', { prompt: `bench ${title}`, title });
  const token = await rec.token(job_id);
  return { jobId: job_id, token };
}

export interface ToolClient {
  client: Client;
  /** Call a tool; the parsed JSON result, or throws ToolCallError with the error text. */
  call<T = any>(tool: string, args: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

export class ToolCallError extends Error {}

function toolCaller(c: Client): ToolClient['call'] {
  return async (tool, args) => {
    const r = await c.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 });
    const text = (r.content as { type: string; text: string }[]).map((x) => x.text).join('\n');
    if (r.isError) throw new ToolCallError(`${tool} failed: ${text}`);
    return JSON.parse(text);
  };
}

/** A real MCP SDK client over Streamable HTTP with a bearer token (lead or agent). */
export async function httpClient(url: string, token: string, name = 'bench-http'): Promise<ToolClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, call: toolCaller(client), close: () => client.close().catch(() => undefined) };
}

/** A lead client linked to the hub in memory (no HTTP), as test/helpers/hub.ts does. */
export async function memoryClient(hub: Hub, name = 'bench-mem'): Promise<ToolClient> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await hub.server({ role: 'lead' }).connect(a);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(b);
  return { client, call: toolCaller(client), close: () => client.close().catch(() => undefined) };
}

/** Run `fn` for i = 0..n-1 with at most `limit` in flight. */
export async function pool<T>(n: number, limit: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const res: T[] = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, limit) }, async () => {
    while (next < n) {
      const i = next++;
      res[i] = await fn(i);
    }
  }));
  return res;
}

/**
 * A worker thread running a TypeScript module of bench/ (tsx is registered in the worker
 * first, since workers do not inherit the --import loader). Used to put the MCP clients of a
 * benchmark on their own event loop, apart from the in-process hub's.
 */
export function startTsWorker(file: string, workerData?: unknown): Worker {
  const target = pathToFileURL(path.isAbsolute(file) ? file : path.join(BENCH_DIR, file)).href;
  const code = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(target)}); });`;
  return new Worker(code, { eval: true, workerData });
}

/** Runs `bench` when the module `moduleUrl` (its import.meta.url) is the entry point (`node --import tsx bench/<file>.ts`); a failure sets the exit code. */
export function runAlone(moduleUrl: string, bench: () => Promise<unknown>): void {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  bench().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}

/** Deterministic PRNG (mulberry32) so every run builds the same corpus. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A request/answer channel to a benchmark worker thread: each message gets an id, the worker
 * answers `{ id, ok, result | error }`; a worker that fails or exits rejects what is pending.
 */
export function workerRpc<Req extends object>(w: Worker, name: string): (m: Req) => Promise<any> {
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  w.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.ok) p?.resolve(m.result);
    else p?.reject(new Error(`${name} worker: ${m.error}`));
  });
  const fail = (e: Error): void => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`${name} worker exited (${code})`)));
  return (m) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, { resolve, reject });
    w.postMessage({ ...m, id });
  });
}

/** One process run, timed from spawn to close, with `stdin` written and its output kept. */
export interface TimedRun { ms: number; code: number | null; stdout: string; stderr: string }

export interface Spawner {
  /** Start and time one command in the spawner process (spawn → closed, stdin written and closed, output drained). */
  run(bin: string, args: string[], o: { env: NodeJS.ProcessEnv; cwd: string; stdin: string }): Promise<TimedRun>;
  close(): Promise<void>;
}

/** A separate lean process that times the commands it is asked to run (bench/fixtures/spawner.mjs), one at a time. */
export function startSpawner(): Spawner {
  const p = spawn(process.execPath, [fixture('spawner.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map<number, { resolve(r: TimedRun): void; reject(e: Error): void }>();
  let next = 0;
  let buf = '';
  p.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const a = JSON.parse(buf.slice(0, nl)) as TimedRun & { id: number; error?: string };
      buf = buf.slice(nl + 1);
      const w = waiting.get(a.id);
      waiting.delete(a.id);
      if (a.error) w?.reject(new Error(a.error));
      else w?.resolve({ ms: a.ms, code: a.code, stdout: a.stdout, stderr: a.stderr });
    }
  });
  p.once('close', () => { for (const w of waiting.values()) w.reject(new Error('the spawner process ended')); waiting.clear(); });
  return {
    run: (bin, args, o) => new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      p.stdin!.write(`${JSON.stringify({ id, bin, args, env: o.env, cwd: o.cwd, stdin: o.stdin })}\n`);
    }),
    close: () => new Promise((resolve) => {
      if (p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once('close', () => resolve());
      p.stdin!.end();
    }),
  };
}

export function timedRun(bin: string, args: string[], o: { env: NodeJS.ProcessEnv; cwd: string; stdin: string }): Promise<TimedRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(bin, args, { env: o.env, cwd: o.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - t0, code, stdout, stderr }));
    child.stdin.end(o.stdin);
  });
}

/** Polls `f` until it gives a value (every `everyMs`), or throws after `ms` naming `what`. */
export async function until<T>(what: string, ms: number, f: () => Promise<T | undefined> | T | undefined, everyMs = 10): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
