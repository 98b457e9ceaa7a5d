// Benchmark 16: the hub's cost of serving the floor (src/floor) with 64 jobs.
//   A. Building it: readFloor (its SQL reads + buildFloor) on a 64-job database — 16 running in
//      a tree, 8 queued, 8 waiting on dependencies, 32 ended; 4 pending requests, 4 warnings,
//      6 locks, 2 lock waits, 2 workflows — beside the baseline `SELECT * FROM jobs` that
//      `overseer status` reads for its table (same connection, same run). Also buildFloor alone
//      and JSON.stringify of the floor (a frame). 1,000 samples each after 100 warm-up.
//   B. Serving it: a real hub (in this process) with 64 jobs of its own (16 running sleep agents
//      under a cap of 16, 24 queued, 24 cancelled); the watchers are real /api/floor/stream
//      connections on a worker thread (bench/floor-watchers.ts), so the hub's event loop does
//      not also parse frames. A change is the lead's lock_files (in memory); latency = the call's
//      start → stream 0 receives a frame with that lock (wall clocks of both threads). 100
//      samples, one at a time, 60 ms apart (past the 50 ms coalescing gap, so each is a leading
//      edge), with 0 and with 4 other watchers; the lock_files call itself is timed too, and
//      also with no stream open at all (baseline: what the floor adds to the change's own path),
//      and the hub's event-loop utilisation over each round.
// Run alone: node --import tsx bench/floor.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { openDb, type Db } from '../src/store/db.js';
import type { NewJob } from '../src/store/jobs.js';
import { insertRequestRow } from '../test/helpers/requests.js';
import { insertWorkflow, setPlan } from '../src/store/sql/workflows.js';
import { sqlOver } from '../src/store/sql/open.js';
import { buildFloor } from '../src/floor/model.js';
import { readFloor, readFloorInput } from '../src/floor/source.js';
import { f1, fixture, out, runAlone, startBenchHub, startTsWorker, stats, wallMs, type Stats } from './common.js';
import { countByStatus, insertJob, listJobs, updateJob } from '../src/store/sql/jobs.js';
import type { FrameNote, WatcherRequest } from './floor-watchers.js';

const ITER = 1000;
const WARM = 100;
const SAMPLES = 100;
const EXTRA_WATCHERS = [0, 4] as const;

export interface FloorBenchResult {
  readFloor: Stats;
  buildFloor: Stats;
  stringify: Stats;
  /** baseline: SELECT * FROM jobs (what `overseer status` reads) */
  selectJobs: Stats;
  frameBytes: number;
  /** change → frame on stream 0, by number of other watchers */
  latency: Record<string, Stats>;
  /** the lock_files call itself: with no stream ('none'), and with 1 and 5 streams */
  changeCall: Record<string, Stats>;
  /** the hub's event-loop utilisation during each round (0..1) */
  elu: Record<string, number>;
}

async function timeAsync(n: number, fn: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < WARM; i++) await fn();
  const s: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    s.push(performance.now() - t0);
  }
  return stats(s);
}

function time(n: number, fn: () => unknown): Stats {
  for (let i = 0; i < WARM; i++) fn();
  const s: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    fn();
    s.push(performance.now() - t0);
  }
  return stats(s);
}

const newJob = (id: string, o: Partial<NewJob> = {}): NewJob => ({
  id, parent_id: null, depth: 1, title: `bench job ${id}`, prompt: 'p', provider: 'claude', model: 'claude-sonnet-4-5', cwd: '/r', work_dir: null, repo_root: null,
  worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: 50, budget_usd: 2, timeout_s: null, context_json: null, template: null, checks_json: '[]',
  retry: 'none', labels_json: '["bench"]', depends_on_json: '[]', status: 'queued', session_id: `s-${id}`, token_hash: null, workflow_id: null, phase: null, cycle: null,
  json_schema: null, ...o,
});

/** The 64-job database of part A. */
async function seed(db: Db, now: number): Promise<void> {
  const q = sqlOver(db).db;
  let n = 0;
  const add = async (status: string, o: Partial<NewJob> = {}, fields: Record<string, unknown> = {}): Promise<string> => {
    const id = `j-${String(++n).padStart(8, '0')}`;
    await insertJob(q, newJob(id, { status: status as NewJob['status'], ...o }), now - 3_600_000 + n * 1000);
    await updateJob(q, id, { started_at: now - 600_000, turns: 7, cost_usd: 0.0123, input_tokens: 12_000, output_tokens: 900, status_message: `step ${n} of the plan`, progress: 0.4, ...fields }, now - 1000);
    return id;
  };
  const running: string[] = [];
  for (let r = 0; r < 4; r++) {
    const root = await add('running');
    running.push(root);
    for (let c = 0; c < 3; c++) running.push(await add('running', { parent_id: root, depth: 2 }));
  }
  for (let i = 0; i < 8; i++) await add('queued', {}, { started_at: null });
  for (let i = 0; i < 8; i++) await add('waiting', { depends_on_json: JSON.stringify([running[i]!]) }, { started_at: null });
  for (let i = 0; i < 32; i++) {
    const status = i % 8 === 0 ? 'failed' : i % 8 === 1 ? 'cancelled' : 'succeeded';
    await add(status, {}, { ended_at: now - 100_000 + i, result: `done ${i}\nmore`, error: status === 'failed' ? 'exit 1' : null, failure_class: status === 'failed' ? 'crashed' : null, branch: `overseer/b${i}`, diff_stat: '3 files changed, 40 insertions(+)' });
  }
  for (let i = 0; i < 4; i++) insertRequestRow(db, { id: `r-${i}`, job_id: running[i]!, kind: i % 2 ? 'question' : 'approval', summary: `may I do thing ${i}?`, plan_json: null, options_json: null, created_at: now - 1000 + i, tool_name: null, tool_input_json: null, expires_at: now + 60_000, who: 'any' });
  const warn = db.prepare('INSERT INTO job_warnings (job_id, kind, detail, raised_at) VALUES (?, ?, ?, ?)');
  for (let i = 0; i < 4; i++) warn.run(running[4 + i]!, i % 2 ? 'turns_high' : 'stalled', 'no output for 612 s', now - 500);
  // The rows the lock service writes (src/store/sql/locks.ts), as a synchronous fixture.
  const lock = db.prepare('INSERT INTO locks (rel_path, path, holder, reason, ttl_s, acquired_at, expires_at) VALUES (?, ?, ?, ?, 600, ?, ?)');
  for (let i = 0; i < 6; i++) lock.run(`/repo/src/file${i}.ts`, `/repo/src/file${i}.ts`, running[i]!, 'editing', now, now + 600_000);
  const wait = db.prepare('INSERT INTO lock_waits (holder, paths_json, reason, ttl_s, created_at) VALUES (?, ?, NULL, 600, ?)');
  wait.run(running[10]!, JSON.stringify(['/repo/src/file0.ts']), now);
  wait.run(running[11]!, JSON.stringify(['/repo/src/file1.ts', '/repo/src/file2.ts']), now);
  for (let i = 0; i < 2; i++) {
    await insertWorkflow(q, {
      id: `wf-${i}`, title: `workflow ${i}`, task: 't', status: i ? 'blocked' : 'running', cycle: 3, phase: 'review', cwd: '/r', repo_root: null, worktree_path: null, branch: null,
      base_commit: null, implementer_json: '{}', reviewer_json: '{}', max_cycles: 6, approve_plan: 0, plan_approved: 1, checks_json: '[]', template: null, phase_limits_json: null,
      state_json: '{}', blocked_json: i ? JSON.stringify({ code: 'max_cycles', message: 'six cycles without approval', phase: 'review', cycle: 3, job_id: null }) : null,
      current_job: null, approval_request: null, pr_url: null, git_note: null, created_at: now - 60_000, ended_at: null, plan_text: '- [x] a\n- [ ] b',
    });
    await setPlan(q, `wf-${i}`, '- [x] a\n- [ ] b\n- [ ] c', [{ text: 'a', done: true, cycle: 1, job: null }, { text: 'b', done: false, cycle: null, job: null }, { text: 'c', done: false, cycle: null, job: null }], now);
  }
}

async function partA(): Promise<Pick<FloorBenchResult, 'readFloor' | 'buildFloor' | 'stringify' | 'selectJobs' | 'frameBytes'>> {
  const dir = mkdtempSync(join(tmpdir(), 'overseer-bench-floor-'));
  try {
    const db = openDb(join(dir, 'state.db'));
    const now = Date.now();
    await seed(db, now);
    const o = { now, hub: { url: 'http://127.0.0.1:1/mcp', pid: 1, started_at: now - 1000, version: '0' }, cap: 16, source: 'hub' as const };
    const q = sqlOver(db).db;
    const selectJobs = await timeAsync(ITER, () => listJobs(q, { limit: 10_000 }));
    const read = await timeAsync(ITER, () => readFloor(q, o));
    const input = await readFloorInput(q, o);
    const build = time(ITER, () => buildFloor(input, now));
    const floor = buildFloor(input, now);
    const stringify = time(ITER, () => JSON.stringify(floor));
    const jobs = floor.running.length + floor.queued.length;
    out(`64 jobs (${floor.totals.running} running, ${floor.totals.queued} queued, ${floor.done.length} of ${floor.totals.done + floor.totals.failed + (floor.totals.cancelled ?? 0)} ended shown, ${floor.needs_you.length} need you; ${jobs} root/queued rows)\n`);
    out(`readFloor (SQL + model): p50 ${f1(read.p50 * 1000)} µs, p99 ${f1(read.p99 * 1000)} µs · buildFloor alone: p50 ${f1(build.p50 * 1000)} µs · JSON.stringify: p50 ${f1(stringify.p50 * 1000)} µs (${JSON.stringify(floor).length} B)\n`);
    out(`baseline SELECT * FROM jobs: p50 ${f1(selectJobs.p50 * 1000)} µs, p99 ${f1(selectJobs.p99 * 1000)} µs → ratio ${(read.p50 / selectJobs.p50).toFixed(2)}\n`);
    db.close();
    return { readFloor: read, buildFloor: build, stringify, selectJobs, frameBytes: JSON.stringify(floor).length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function rpcOf(w: Worker, onFrame: (f: FrameNote) => void): (m: Omit<WatcherRequest, 'id'> & Record<string, unknown>) => Promise<unknown> {
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  w.on('message', (m: { id?: number; ok?: boolean; result?: unknown; error?: string; frame?: FrameNote }) => {
    if (m.frame) return onFrame(m.frame);
    const p = pending.get(m.id!);
    pending.delete(m.id!);
    if (m.ok) p?.resolve(m.result);
    else p?.reject(new Error(`floor-watchers worker: ${m.error}`));
  });
  w.on('error', (e) => { for (const p of pending.values()) p.reject(e); });
  return (m) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, { resolve, reject });
    w.postMessage({ ...m, id });
  });
}

async function partB(): Promise<Pick<FloorBenchResult, 'latency' | 'changeCall' | 'elu'>> {
  const h = await startBenchHub({ claudeBin: fixture('sleep-agent.sh'), config: { maxAgents: 16 } });
  const frames: FrameNote[] = [];
  const waiters: (() => void)[] = [];
  const worker = startTsWorker('floor-watchers.ts');
  const rpc = rpcOf(worker, (f) => { frames.push(f); for (const w of waiters.splice(0)) w(); });
  /** The first frame from index `from` on whose locks satisfy `pred`. */
  const frameWhere = async (from: number, pred: (locks: string[]) => boolean): Promise<FrameNote> => {
    const deadline = performance.now() + 10_000;
    for (let i = from; ; i++) {
      while (i >= frames.length) {
        if (performance.now() > deadline) throw new Error('no frame with the change within 10 s');
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 1000).unref(); });
      }
      if (pred(frames[i]!.locks)) return frames[i]!;
    }
  };
  try {
    const ids: string[] = [];
    for (let i = 0; i < 64; i++) ids.push((await h.call<{ job_id: string }>('spawn_agent', { prompt: `bench floor ${i}`, title: `floor job ${i}` })).job_id);
    for (const id of ids.slice(40)) await h.call('cancel_agent', { job_id: id });
    const q = h.hub.ctx.sql.db;
    out(`hub: ${await countByStatus(q, 'running')} running, ${await countByStatus(q, 'queued')} queued, ${await countByStatus(q, 'cancelled')} cancelled\n`);

    const changeCall: Record<string, Stats> = {};
    const latency: Record<string, Stats> = {};
    const elu: Record<string, number> = {};
    const round = async (label: string, measureFrames: boolean): Promise<void> => {
      const call: number[] = [];
      const lat: number[] = [];
      const e0 = performance.eventLoopUtilization();
      for (let i = -5; i < SAMPLES; i++) {
        const file = `floor-bench-${label}-${i + 5}.txt`;
        const from = frames.length;
        const t0 = wallMs();
        const c0 = performance.now();
        await h.call('lock_files', { files: [file] });
        const c = performance.now() - c0;
        if (measureFrames) {
          const f = await frameWhere(from, (locks) => locks.some((p) => p.endsWith(file)));
          if (i >= 0) lat.push(f.wall - t0);
        }
        if (i >= 0) call.push(c);
        const from2 = frames.length;
        await h.call('release_files', { files: [file] });
        if (measureFrames) await frameWhere(from2, (locks) => !locks.some((p) => p.endsWith(file)));
        await sleep(60);
      }
      elu[label] = performance.eventLoopUtilization(e0).utilization;
      changeCall[label] = stats(call);
      if (measureFrames) latency[label] = stats(lat);
      out(`${label.padEnd(22)}: lock_files call p50 ${f1(stats(call).p50)} ms${measureFrames ? `, change → frame p50 ${f1(stats(lat).p50)} ms, p99 ${f1(stats(lat).p99)} ms` : ''}, hub event loop ${(elu[label]! * 100).toFixed(1)}% busy\n`);
    };
    await round('no stream', false);
    const url = h.hub.http!.url;
    let open = 0;
    for (const extra of EXTRA_WATCHERS) {
      open = (await rpc({ cmd: 'open', url, token: h.hub.leadToken, n: 1 + extra - open })) as number;
      await round(`${extra} other watchers`, true);
    }
    await rpc({ cmd: 'close' });
    return { latency, changeCall, elu };
  } finally {
    await worker.terminate().catch(() => undefined);
    await h.stop();
  }
}

export async function benchFloor(): Promise<FloorBenchResult> {
  const a = await partA();
  const b = await partB();
  return { ...a, ...b };
}

runAlone(import.meta.url, benchFloor);
