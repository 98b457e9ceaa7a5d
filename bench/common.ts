// Shared pieces of the benchmarks: the wall clock the fake binaries' stamps use, percentiles,
// temp dirs, the stamp file, and an in-process hub whose children run a fake agent binary.
import { accessSync, chmodSync, constants, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Hub } from '../src/hub.js';
import { loadConfigFrom, type Config } from '../src/config.js';

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

/** A fresh directory under os.tmpdir() (symlinks resolved); the caller removes it. */
export async function tempDir(prefix: string): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), `overseer-bench-${prefix}-`)));
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
 * An in-process hub like test/helpers/hub.ts startTestHub (real SQLite, HTTP on port 0, lead
 * client in memory), but with the fake agent binary as claudeBin and our own child environment
 * (BENCH_STAMP_FILE and friends), and no fake Anthropic API.
 */
export async function startBenchHub(o: { claudeBin: string; env?: Record<string, string>; config?: Partial<Config> }): Promise<BenchHub> {
  const dir = await tempDir('hub');
  let hub: Hub | undefined;
  let client: Client | undefined;
  try {
    const project = path.join(dir, 'project');
    await mkdir(project);
    const stampFile = path.join(dir, 'stamps.txt');
    const config = loadConfigFrom({ home: path.join(dir, 'state'), claudeBin: o.claudeBin, killGraceMs: 2000, ...o.config });
    const childEnv = cleanEnv({ HOME: path.join(dir, 'home'), BENCH_STAMP_FILE: stampFile, ...o.env });
    const h = new Hub({ config, projectDir: project, childEnv });
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
