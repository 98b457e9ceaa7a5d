// Issue 29 step 11: the same hub on SQLite and on PostgreSQL, measured in the same run, in what a
// person feels (docs/performance.md, "SQLite against PostgreSQL").
//   1. a tool call over the real HTTP MCP endpoint, as the lead and as an agent: write_note,
//      read_note, list_agents (16 agents), lock_files + release_files of a free file; and an
//      agent's edit through POST /hook (the path every edit of a child takes): a free file (check
//      + auto lock), a file it holds (the usual repeated edit), a file another agent holds (deny);
//   2. lock_files under contention: 4 and 16 agents for one file (each locks, holds 5 ms,
//      releases, again): the hand-over (the holder's release call → the next grant's answer in
//      another client) and the grants per client per second; and 4 agents locking crossing pairs
//      of 3 files all-or-nothing (every wait goes through the deadlock check);
//   3. the hub's start (Hub.open + start): on a new state (migrations included) and again on it.
// Both hubs live in this process for the whole run (HTTP on 127.0.0.1:0; PostgreSQL 15 on
// 127.0.0.1, a throwaway cluster from test/helpers/postgres.ts); the clients are real MCP SDK
// clients on a worker thread (bench/store-clients.ts), so the hubs' event loop does not also run
// them. The statements sent to PostgreSQL are counted per call (each one a round trip: what a
// network between the hub and its database multiplies). Every measure runs in blocks alternating between the two (the order flips each round), so
// load from other work on the machine falls on both alike; warm-up calls are not recorded; both
// get the same number of rounds.
// A regression guard, not a target: the run fails when PostgreSQL's median of any tool call is more
// than GUARD_RATIO × SQLite's, or its median hand-over is above GUARD_HANDOVER_MS and above
// GUARD_RATIO × SQLite's of the same run (docs/performance.md says why these bounds).
// Run alone: npm run build && node --import tsx bench/store-compare.ts
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { mkdir } from 'node:fs/promises';
import pg from 'pg';
import { loadConfigFrom } from '../src/config.js';
import { freshDatabase } from '../test/helpers/postgres.js';
import {
  TokenRecorder, builtHub, cleanEnv, f1, f2, fixture, out, removeDir, runAlone, spawnHangingAgent, startBenchHub, startTsWorker, stats, tempDir, workerRpc,
  type BenchHub, type Stats,
} from './common.js';
import type { CallOp, ContendResult, HookKind, StoreRequest } from './store-clients.js';

export const DIALECTS = ['sqlite', 'postgres'] as const;
export type Dialect = (typeof DIALECTS)[number];

const AGENTS = 16;
/** Tool calls: ROUNDS blocks of CALLS per hub and measure, WARMUP more at the start of each block. */
const ROUNDS = 4;
const CALLS = 30;
const WARMUP = 5;
const HOLD_MS = 5;
/** Contention: rounds per hub and level, grants per client per round (≈ 90 hand-overs per hub and level). */
const CONTEND_ROUNDS = 3;
const GRANTS: Record<number, number> = { 4: 8, 16: 2 };
const CROSSING_CLIENTS = 4;
const START_ROUNDS = 5;

/** The guard's bounds (docs/performance.md, "SQLite against PostgreSQL"). */
export const GUARD_RATIO = 10;
export const GUARD_HANDOVER_MS = 100;

export type Pair = Record<Dialect, Stats>;

export interface CallFigure {
  what: string;
  role: 'lead' | 'agent';
  pair: Pair;
  /** statements PostgreSQL was sent per call (each a round trip; the hook on a new file: its untimed release_files included) */
  pgStatements: number;
}

export interface ContentionFigure {
  what: string;
  clients: number;
  /** hand-over: the holder's release call → the next grant (single file only) */
  handover?: Pair;
  /** lock_files call → granted, the wait included */
  wait: Pair;
  /** grants per client per second */
  perClient: Record<Dialect, number>;
  /** statements PostgreSQL was sent per grant (its lock_files, the release before it, the waits' re-checks) */
  pgStatements: number;
}

export interface StoreCompareResult {
  calls: CallFigure[];
  contention: ContentionFigure[];
  start: { fresh: Pair; again: Pair };
  load: { start: string; end: string };
  /** statements per second the idle PostgreSQL hub sends of its own (16 live agents) */
  pgBackgroundPerS: number;
  /** what the guard found (empty: passed) */
  guard: string[];
}

type Req = StoreRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

interface Side {
  dialect: Dialect;
  h: BenchHub;
  agents: { jobId: string; token: string }[];
  url: string;
  drop?: () => Promise<void>;
}

const loadavg = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const ms = (x: number): string => `${f1(x)} ms`;

async function openSide(dialect: Dialect): Promise<Side> {
  const db = dialect === 'postgres' ? await freshDatabase() : undefined;
  const rec = new TokenRecorder();
  try {
    const h = await startBenchHub({
      claudeBin: fixture('hang-agent.sh'), processes: rec,
      config: { maxAgents: AGENTS + 2, startConcurrency: 0, ...(db ? { databaseUrl: db.url } : {}) },
    });
    if (h.hub.ctx.sql.dialect !== dialect) throw new Error(`the ${dialect} hub runs on ${h.hub.ctx.sql.dialect}`);
    const agents = [];
    for (let i = 0; i < AGENTS; i++) agents.push(await spawnHangingAgent(h, rec, `store ${dialect} ${i}`));
    return { dialect, h, agents, url: h.hub.http!.url, drop: db?.drop };
  } catch (err) {
    await db?.drop().catch(() => undefined);
    throw err;
  }
}

async function closeSide(s: Side): Promise<void> {
  await s.h.stop();
  await s.drop?.().catch(() => undefined);
}

/** Runs `block(side)` ROUNDS times per side, alternating sides (the first flips each round); the samples per side. */
async function alternate<T>(sides: Side[], rounds: number, block: (s: Side) => Promise<T[]>): Promise<Record<Dialect, T[]>> {
  const got: Record<Dialect, T[]> = { sqlite: [], postgres: [] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    for (const s of order) got[s.dialect].push(...(await block(s)));
  }
  return got;
}

const pair = (x: Record<Dialect, number[]>): Pair => ({ sqlite: stats(x.sqlite), postgres: stats(x.postgres) });

/**
 * Statements sent to PostgreSQL (BEGIN and COMMIT included), counted at pg's Client.query, which the
 * layer's pool calls for each: a count, not a change of what runs. Each is a round trip, which is
 * what a network between the hub and its database multiplies.
 */
let pgSent = 0;
let counted = false;
/** Installed by the benchmark when it runs (not on import: run.ts imports every benchmark). */
function countPgStatements(): void {
  if (counted) return;
  counted = true;
  const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  (pg.Client.prototype as { query: unknown }).query = function countedQuery(this: pg.Client, ...a: unknown[]): unknown {
    pgSent++;
    return query.apply(this, a);
  };
}

/**
 * The idle hub's own statements per second (its health monitor's tick: one read, then one UPDATE
 * per live job and warning kind, every second), measured over `ms` before the calls.
 */
let backgroundPerS = 0;
async function measureBackground(ms: number): Promise<number> {
  const before = pgSent;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms)); // a measuring window, not a sync
  backgroundPerS = (pgSent - before) / ((performance.now() - t0) / 1000);
  return backgroundPerS;
}

/** `block` for a side, and on PostgreSQL the statements it sent per call (`calls` calls a block), the idle hub's own in the same seconds taken out. */
function counting<T>(perCall: number[], calls: number, block: (s: Side) => Promise<T>): (s: Side) => Promise<T> {
  return async (s) => {
    const before = pgSent;
    const t0 = performance.now();
    const r = await block(s);
    const secs = (performance.now() - t0) / 1000;
    if (s.dialect === 'postgres') perCall.push(Math.max(0, pgSent - before - backgroundPerS * secs) / calls);
    return r;
  };
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

async function toolCalls(sides: Side[], rpc: (m: Req) => Promise<any>): Promise<CallFigure[]> {
  const figures: CallFigure[] = [];
  const ops: CallOp[] = ['write_note', 'read_note', 'list_agents', 'lock_release'];
  for (const op of ops) {
    for (const role of ['lead', 'agent'] as const) {
      const sent: number[] = [];
      const x = await alternate(sides, ROUNDS, counting(sent, CALLS + WARMUP, (s) => rpc({
        cmd: 'calls', set: `${s.dialect}:${role}`, client: 0, op, calls: CALLS, warmup: WARMUP,
        file: path.join(s.h.project, `lock-${role}.ts`),
      }) as Promise<number[]>));
      const f: CallFigure = { what: op === 'lock_release' ? 'lock_files + release_files' : op, role, pair: pair(x), pgStatements: mean(sent) };
      figures.push(f);
      out(line(`${f.what} (${role})`, f.pair, f.pgStatements));
    }
  }
  // The hook: agent 0 holds own.ts, agent 1 holds held.ts (taken through the hub's hook, untimed).
  const write = (file: string) => ({ tool_name: 'Write', tool_input: { file_path: file, content: 'x' } });
  for (const s of sides) {
    for (const [i, name] of [[0, 'own.ts'], [1, 'held.ts']] as const) {
      const v = await s.h.hub.hook.answer({ role: 'agent', jobId: s.agents[i]!.jobId }, write(path.join(s.h.project, name)));
      if (v.decision !== 'none') throw new Error(`${s.dialect}: agent ${i} could not take ${name}: ${JSON.stringify(v)}`);
    }
  }
  const label: Record<HookKind, string> = { free: 'hook: a new file (check + auto lock)', own: 'hook: a file it holds (repeated edit)', deny: 'hook: a file another holds (deny)' };
  for (const kind of ['free', 'own', 'deny'] as const) {
    let n = 0;
    const sent: number[] = [];
    const x = await alternate(sides, ROUNDS, counting(sent, CALLS + WARMUP, (s) => rpc({
      cmd: 'hook', set: `${s.dialect}:agent`, client: 0, kind, url: s.url, token: s.agents[0]!.token, cwd: s.h.project,
      file: path.join(s.h.project, kind === 'own' ? 'own.ts' : kind === 'deny' ? 'held.ts' : `free-${n++}`), calls: CALLS, warmup: WARMUP,
    }) as Promise<number[]>));
    const f: CallFigure = { what: label[kind], role: 'agent', pair: pair(x), pgStatements: mean(sent) };
    figures.push(f);
    out(line(`${f.what} (agent)`, f.pair, f.pgStatements));
  }
  return figures;
}

async function contention(sides: Side[], rpc: (m: Req) => Promise<any>): Promise<ContentionFigure[]> {
  const figures: ContentionFigure[] = [];
  const runs: { what: string; clients: number; files: (s: Side) => string[][]; grants: number }[] = [
    ...[4, 16].map((n) => ({ what: `${n} agents, one file`, clients: n, grants: GRANTS[n]!, files: (s: Side) => [[path.join(s.h.project, 'contended.ts')]] })),
    {
      what: `${CROSSING_CLIENTS} agents, crossing pairs of 3 files`, clients: CROSSING_CLIENTS, grants: GRANTS[4]!,
      files: (s: Side) => {
        const f = ['a', 'b', 'c'].map((x) => path.join(s.h.project, `cross-${x}.ts`));
        return Array.from({ length: CROSSING_CLIENTS }, (_, i) => (i % 2 === 0 ? [f[i % 3]!, f[(i + 1) % 3]!] : [f[(i + 1) % 3]!, f[i % 3]!]));
      },
    },
  ];
  for (const c of runs) {
    const sent: number[] = [];
    const x = await alternate(sides, CONTEND_ROUNDS, counting(sent, c.clients * (c.grants + 1), async (s) => [await rpc({
      cmd: 'contend', set: `${s.dialect}:agent`, clients: c.clients, files: c.files(s), holdMs: HOLD_MS, grants: c.grants, warmup: 1,
    }) as ContendResult]));
    const all = (d: Dialect, k: 'handovers' | 'waits'): number[] => x[d].flatMap((r) => r[k]);
    const rate = (d: Dialect): number => {
      const grants = x[d].reduce((a, r) => a + r.perClient.reduce((p, q) => p + q, 0), 0);
      const secs = x[d].reduce((a, r) => a + r.wallMs, 0) / 1000;
      return grants / c.clients / secs;
    };
    const single = all('sqlite', 'handovers').length > 0;
    const f: ContentionFigure = {
      what: c.what, clients: c.clients,
      ...(single ? { handover: { sqlite: stats(all('sqlite', 'handovers')), postgres: stats(all('postgres', 'handovers')) } } : {}),
      wait: { sqlite: stats(all('sqlite', 'waits')), postgres: stats(all('postgres', 'waits')) },
      perClient: { sqlite: rate('sqlite'), postgres: rate('postgres') },
      pgStatements: mean(sent),
    };
    figures.push(f);
    if (f.handover) out(line(`${c.what}: hand-over`, f.handover));
    out(line(`${c.what}: lock_files wait`, f.wait));
    out(`  ${c.what}: ${f1(f.perClient.sqlite)} vs ${f1(f.perClient.postgres)} grants per client per second (SQLite vs PostgreSQL, hold ${HOLD_MS} ms); PostgreSQL ${f1(f.pgStatements)} statements per grant\n`);
  }
  return figures;
}

/** Hub.open + start on a new state (PostgreSQL: a new empty database, made untimed), then again on the same state. */
async function hubStarts(): Promise<{ fresh: Pair; again: Pair }> {
  const Hub = await builtHub();
  const fresh: Record<Dialect, number[]> = { sqlite: [], postgres: [] };
  const again: Record<Dialect, number[]> = { sqlite: [], postgres: [] };
  for (let r = 0; r < START_ROUNDS; r++) {
    for (const d of r % 2 === 0 ? DIALECTS : [...DIALECTS].reverse()) {
      const dir = await tempDir('store-start');
      const db = d === 'postgres' ? await freshDatabase() : undefined;
      try {
        const project = path.join(dir, 'project');
        await mkdir(project);
        const config = loadConfigFrom({ home: path.join(dir, 'state'), claudeBin: fixture('hang-agent.sh'), worktreesDir: path.join(dir, 'worktrees'), ...(db ? { databaseUrl: db.url } : {}) });
        const o = { config, projectDir: project, childEnv: cleanEnv({ HOME: path.join(dir, 'home') }), kbGlobalDb: path.join(dir, 'global-kb.db') };
        for (const into of [fresh, again]) {
          const t0 = performance.now();
          const hub = await Hub.open(o);
          await hub.start();
          const took = performance.now() - t0;
          await hub.stop();
          if (hub.ctx.sql.dialect !== d) throw new Error(`the ${d} hub ran on ${hub.ctx.sql.dialect}`);
          into[d].push(took);
        }
      } finally {
        await db?.drop().catch(() => undefined);
        await removeDir(dir);
      }
    }
  }
  const f = pair(fresh);
  const a = pair(again);
  out(line('hub start (Hub.open + start), new state', f));
  out(line('hub start (Hub.open + start), again on it', a));
  return { fresh: f, again: a };
}

function line(what: string, p: Pair, statements?: number): string {
  const sent = statements === undefined ? '' : `, ${f1(statements)} statements`;
  return `  ${what}: SQLite p50 ${ms(p.sqlite.p50)} p90 ${ms(p.sqlite.p90)} | PostgreSQL p50 ${ms(p.postgres.p50)} p90 ${ms(p.postgres.p90)}${sent} | +${f1(p.postgres.p50 - p.sqlite.p50)} ms, ×${f2(p.postgres.p50 / p.sqlite.p50)} (n=${p.sqlite.n}/${p.postgres.n})\n`;
}

/** The guard (a regression guard, not a target): what is out of bounds, empty when all is in. */
export function guardOf(r: Pick<StoreCompareResult, 'calls' | 'contention'>): string[] {
  const bad: string[] = [];
  for (const c of r.calls) {
    const ratio = c.pair.postgres.p50 / c.pair.sqlite.p50;
    if (!(ratio <= GUARD_RATIO)) bad.push(`${c.what} (${c.role}): PostgreSQL's median ${f1(c.pair.postgres.p50)} ms is ×${f2(ratio)} SQLite's ${f1(c.pair.sqlite.p50)} ms (guard ≤ ×${GUARD_RATIO})`);
  }
  for (const c of r.contention) {
    if (!c.handover) continue;
    const bound = handoverBound(c.handover.sqlite.p50);
    const h = c.handover.postgres.p50;
    if (!(h <= bound)) bad.push(`${c.what}: PostgreSQL's median hand-over ${f1(h)} ms is above ${f1(bound)} ms (guard: ≤ ${GUARD_HANDOVER_MS} ms, or ×${GUARD_RATIO} SQLite's ${f1(c.handover.sqlite.p50)} ms in the same run when the machine is that slow)`);
  }
  return bad;
}

/** PostgreSQL's median hand-over may be GUARD_HANDOVER_MS, or GUARD_RATIO × SQLite's of the same minutes on a loaded machine. */
export function handoverBound(sqliteP50: number): number {
  return Math.max(GUARD_HANDOVER_MS, GUARD_RATIO * sqliteP50);
}

export async function benchStoreCompare(): Promise<StoreCompareResult> {
  countPgStatements();
  const loadStart = loadavg();
  const t0 = performance.now();
  out(`load average at start ${loadStart}\n`);
  const sides: Side[] = [];
  const worker = startTsWorker('store-clients.ts');
  try {
    for (const d of DIALECTS) sides.push(await openSide(d));
    const rpc = workerRpc<Req>(worker, 'store-clients');
    for (const s of sides) {
      await rpc({ cmd: 'connect', set: `${s.dialect}:lead`, url: s.url, tokens: [s.h.hub.leadToken] });
      await rpc({ cmd: 'connect', set: `${s.dialect}:agent`, url: s.url, tokens: s.agents.map((a) => a.token) });
    }
    out(`the idle PostgreSQL hub with ${AGENTS} live agents sends ${f1(await measureBackground(3000))} statements a second of its own (taken out of the counts below)\n`);
    out(`1. a tool call over HTTP (${ROUNDS} alternating blocks of ${CALLS} calls per hub, ${WARMUP} warm-up calls before each)\n`);
    const calls = await toolCalls(sides, rpc);
    out(`   (${((performance.now() - t0) / 1000).toFixed(1)} s so far)\n`);
    out(`2. lock_files under contention (${CONTEND_ROUNDS} alternating rounds per hub, one warm-up grant per client before each)\n`);
    const cont = await contention(sides, rpc);
    out(`   (${((performance.now() - t0) / 1000).toFixed(1)} s so far)\n`);
    await rpc({ cmd: 'close' });
    for (const s of sides.splice(0)) await closeSide(s);
    out(`3. the hub's start (${START_ROUNDS} alternating rounds)\n`);
    const start = await hubStarts();
    const r: StoreCompareResult = { calls, contention: cont, start, load: { start: loadStart, end: loadavg() }, pgBackgroundPerS: backgroundPerS, guard: [] };
    r.guard = guardOf(r);
    out(`load average at end ${r.load.end}; ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    out(r.guard.length ? `GUARD FAILED:\n${r.guard.map((g) => `  ${g}\n`).join('')}` : `guard: every PostgreSQL median tool call ≤ ×${GUARD_RATIO} SQLite's, every PostgreSQL median hand-over ≤ ${GUARD_HANDOVER_MS} ms (or ×${GUARD_RATIO} SQLite's)\n`);
    return r;
  } finally {
    await worker.terminate().catch(() => undefined);
    for (const s of sides) await closeSide(s).catch(() => undefined);
  }
}

runAlone(import.meta.url, async () => {
  const r = await benchStoreCompare();
  if (r.guard.length) process.exitCode = 1;
});
