// How much later a Claude Code session reaches its first model request when its project has
// Overseer (issue 27 point 4): Claude Code holds the first /v1/messages request until every
// stdio MCP server has answered initialize and tools/list, so `overseer mcp` start-up is on the
// person's critical path. Real claude (node_modules/.bin) against the fake Anthropic API, the
// same prompt and flags, a fresh HOME each run, stdin closed, its own process group; timed
// from the spawn to the fake receiving the run's first request:
//   without:  `claude -p … --strict-mcp-config`
//   cold:     the same with `--mcp-config <project>/.mcp.json` (a real `overseer mcp` from
//             dist/) and no hub running for its state directory (the bridge starts one)
//   warm:     the same with the hub already running (`overseer serve`, started once)
// One untimed run of each, then RUNS rounds in shuffled order; medians. Also the bridge alone:
// `node dist/cli/main.js mcp` spawned → initialize and tools/list answered (hub cold and warm).
// FIRST_REQUEST_BASE_CLI=<another build's dist/cli/main.js> adds its cold and warm runs to the
// same rounds (before/after figures from one run).
// Run alone: npm run build && node --import tsx bench/first-request-time.ts
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startFakeAnthropic, promptOf, type FakeAnthropic } from '../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv } from '../test/helpers/claude.js';
import { runProcess } from '../test/helpers/process.js';
import { REPO_ROOT, cleanEnv, f1, out, prng, removeDir, runAlone, stats, tempDir, until } from './common.js';

const RUNS = Number(process.env.BENCH_FIRST_REQUEST_RUNS ?? 7);
const SCRIPT = 'bench-first-request-time';
const TIMEOUT_MS = 60_000;
const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
const BASE_CLI = process.env.FIRST_REQUEST_BASE_CLI;
type Variant = 'without' | 'cold' | 'warm' | 'cold-base' | 'warm-base';
const VARIANTS: readonly Variant[] = ['without', 'cold', 'warm', ...(BASE_CLI ? (['cold-base', 'warm-base'] as const) : [])];

export interface FirstRequestTimeResult {
  runs: number;
  /** spawn → first model request, median ms */
  without: number;
  cold: number;
  warm: number;
  /** `overseer mcp` spawn → initialize and tools/list answered, median ms */
  bridgeCold: { init: number; list: number };
  bridgeWarm: { init: number; list: number };
  /** The other build's (FIRST_REQUEST_BASE_CLI), when given. */
  base?: { cold: number; warm: number };
  samples: Partial<Record<Variant, number[]>>;
}

const median = (xs: number[]): number => stats(xs).p50;


const hubPid = (state: string): number | undefined => {
  try {
    return (JSON.parse(readFileSync(path.join(state, 'hub.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stop the hub of `state` (SIGTERM) and wait until its process is gone. */
async function stopHub(state: string): Promise<void> {
  const pid = hubPid(state);
  if (!pid || !alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  await until(`the hub (pid ${pid}) to stop`, 30_000, () => (alive(pid) ? undefined : true));
}

/** `overseer serve` for `state` (foreground: no idle exit), once it answers. */
async function startHub(cli: string, state: string, env: NodeJS.ProcessEnv, cwd: string): Promise<ChildProcess> {
  const p = spawn(process.execPath, [cli, 'serve'], { cwd, env: { ...env, OVERSEER_HOME: state }, detached: true, stdio: 'ignore' });
  await until('the warm hub to publish hub.json', 30_000, async () => {
    const pid = hubPid(state);
    if (pid !== p.pid) return undefined;
    const info = JSON.parse(readFileSync(path.join(state, 'hub.json'), 'utf8')) as { url: string };
    const r = await fetch(info.url, { method: 'GET' }).catch(() => undefined);
    if (!r) return undefined;
    await r.body?.cancel();
    return true;
  });
  return p;
}

/** Spawn → the run's first request at the fake, in ms (Date.now() clock on both ends). */
async function firstRequestMs(o: { fake: FakeAnthropic; cwd: string; home: string; state: string; mcp?: string; tag: string }): Promise<number> {
  await mkdir(o.home, { recursive: true });
  const env = { ...claudeEnv({ home: o.home, baseUrl: o.fake.url, extra: { ENABLE_TOOL_SEARCH: 'true' } }), OVERSEER_HOME: o.state, OVERSEER_LOG_LEVEL: 'warn' };
  const marker = `(${o.tag})`;
  const args = ['-p', `@script:${SCRIPT} say hello ${marker}`, '--output-format', 'stream-json', '--verbose', '--strict-mcp-config'];
  if (o.mcp) args.push('--mcp-config', o.mcp);
  const t0 = Date.now();
  const run = runProcess(claudeBin(), args, { cwd: o.cwd, env, timeoutMs: TIMEOUT_MS });
  const [r] = await Promise.all([run, o.fake.waitForRequest((x) => x.step === 0 && promptOf(x.body).includes(marker), TIMEOUT_MS)]);
  const req = o.fake.requests.find((x) => x.step === 0 && promptOf(x.body).includes(marker))!;
  if (r.code !== 0) throw new Error(`claude (${o.tag}) exited ${r.code}: ${r.stderr.slice(-2000)}`);
  if (o.mcp) {
    const init = r.events.find((e) => e.type === 'system' && e.subtype === 'init');
    const status = (init?.mcp_servers as { name: string; status: string }[] | undefined)?.find((s) => s.name === 'overseer')?.status;
    if (status !== 'connected') throw new Error(`claude (${o.tag}): the overseer server is ${status ?? 'missing'} in system/init`);
  }
  return req.at - t0;
}

/** `overseer mcp` alone: spawn → initialize answered → tools/list answered (raw JSON lines on stdio). */
async function bridgeAlone(state: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ init: number; list: number }> {
  const t0 = performance.now();
  const p = spawn(process.execPath, [CLI, 'mcp'], { cwd, env: { ...env, OVERSEER_HOME: state }, stdio: ['pipe', 'pipe', 'ignore'] });
  const answers = new Map<number, number>();
  let buf = '';
  p.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const m = JSON.parse(buf.slice(0, nl)) as { id?: number };
      buf = buf.slice(nl + 1);
      if (typeof m.id === 'number') answers.set(m.id, performance.now() - t0);
    }
  });
  const send = (m: object): void => void p.stdin!.write(`${JSON.stringify(m)}\n`);
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'bench', version: '1' } } });
  await until('the bridge to answer initialize', 30_000, () => answers.get(0));
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  await until('the bridge to answer tools/list', 30_000, () => answers.get(1));
  const exited = new Promise((r) => p.once('exit', r));
  p.stdin!.end();
  await exited;
  return { init: answers.get(0)!, list: answers.get(1)! };
}

export async function benchFirstRequestTime(): Promise<FirstRequestTimeResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  let fake: FakeAnthropic | undefined;
  let warmHub: ChildProcess | undefined;
  let baseWarmHub: ChildProcess | undefined;
  const dir = await tempDir('first-request-time');
  const warmState = path.join(dir, 'state-warm');
  const baseWarmState = path.join(dir, 'state-warm-base');
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: [{ text: 'done' }] } });
    const project = path.join(dir, 'project');
    await mkdir(project);
    const mcpConfig = (cli: string, name: string): string => {
      const file = path.join(dir, name);
      writeFileSync(file, `${JSON.stringify({ mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [cli, 'mcp'] } } }, null, 2)}\n`);
      return file;
    };
    const ours = mcpConfig(CLI, 'mcp.json');
    const base = BASE_CLI ? mcpConfig(BASE_CLI, 'mcp-base.json') : undefined;
    const hubEnv = cleanEnv({ HOME: path.join(dir, 'hub-home'), OVERSEER_LOG_LEVEL: 'warn' });
    warmHub = await startHub(CLI, warmState, hubEnv, project);
    if (BASE_CLI) baseWarmHub = await startHub(BASE_CLI, baseWarmState, hubEnv, project);

    let n = 0;
    const once = async (v: Variant): Promise<number> => {
      const i = ++n;
      const state = v === 'warm' ? warmState : v === 'warm-base' ? baseWarmState : path.join(dir, `state-${i}`);
      const mcp = v === 'without' ? undefined : v.endsWith('-base') ? base : ours;
      try {
        return await firstRequestMs({ fake: fake!, cwd: project, home: path.join(dir, `home-${i}`), state, mcp, tag: `${v} ${i}` });
      } finally {
        if (v.startsWith('cold')) await stopHub(state);
      }
    };
    for (const v of VARIANTS) await once(v); // warm-up, untimed
    const samples: Partial<Record<Variant, number[]>> = Object.fromEntries(VARIANTS.map((v) => [v, []]));
    // Each round in a shuffled order (the same every run): a variant is not always timed right
    // after the same other one (a cold run leaves a hub's state directory being written).
    const random = prng(27);
    for (let round = 0; round < RUNS; round++) {
      const order = [...VARIANTS];
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const v of order) samples[v]!.push(await once(v));
    }

    const bridgeEnv = cleanEnv({ HOME: path.join(dir, 'bridge-home'), OVERSEER_LOG_LEVEL: 'warn' });
    const cold: { init: number; list: number }[] = [];
    const warm: { init: number; list: number }[] = [];
    for (let i = 0; i < RUNS; i++) {
      const state = path.join(dir, `bridge-state-${i}`);
      cold.push(await bridgeAlone(state, project, bridgeEnv));
      await stopHub(state);
      warm.push(await bridgeAlone(warmState, project, bridgeEnv));
    }
    const pick = (xs: { init: number; list: number }[]) => ({ init: median(xs.map((x) => x.init)), list: median(xs.map((x) => x.list)) });

    const r: FirstRequestTimeResult = {
      runs: RUNS,
      without: median(samples.without!),
      cold: median(samples.cold!),
      warm: median(samples.warm!),
      base: BASE_CLI ? { cold: median(samples['cold-base']!), warm: median(samples['warm-base']!) } : undefined,
      bridgeCold: pick(cold),
      bridgeWarm: pick(warm),
      samples,
    };
    const line = (v: Variant): string => `   ${v.padEnd(9)} spawn → first model request: median ${f1(median(samples[v]!))} ms (${samples[v]!.map((x) => x.toFixed(0)).join(', ')})\n`;
    out(VARIANTS.map(line).join('')
      + `   with Overseer, hub cold: +${f1(r.cold - r.without)} ms; hub warm: +${f1(r.warm - r.without)} ms (goal: ≤ +200 ms)\n`
      + (r.base ? `   base build (${BASE_CLI}): hub cold +${f1(r.base.cold - r.without)} ms; hub warm +${f1(r.base.warm - r.without)} ms\n` : '')
      + `   overseer mcp alone, spawn → initialize / tools/list answered: hub cold ${f1(r.bridgeCold.init)} / ${f1(r.bridgeCold.list)} ms, warm ${f1(r.bridgeWarm.init)} / ${f1(r.bridgeWarm.list)} ms (n=${RUNS})\n`);
    return r;
  } finally {
    await fake?.close().catch(() => undefined);
    if (warmHub?.pid && alive(warmHub.pid)) await stopHub(warmState).catch(() => undefined);
    if (baseWarmHub?.pid && alive(baseWarmHub.pid)) await stopHub(baseWarmState).catch(() => undefined);
    await removeDir(dir);
  }
}

runAlone(import.meta.url, benchFirstRequestTime);
