// Benchmark: `overseer watch` (the built CLI, in a real terminal: tmux 100×30) against an
// in-process hub with 64 jobs (16 running a fake agent that only sleeps, 48 queued).
//   - refresh latency: a state change made through the hub (pause_agent freeze / resume_agent
//     of a running job, alternately) → the screen showing it (tmux capture-pane, polled
//     without blocking the hub). Baseline, same run: the same change reaching a bare client of
//     the hub's /api/floor/stream in the bench process (what the hub itself takes).
//   - the same with no hub: a change written to the database → the screen (the watch reads it
//     read-only, polling PRAGMA data_version every 250 ms).
//   - the watch's CPU (utime+stime from /proc/<pid>/stat) and RSS over 10 s idle and over 10 s
//     of changes (10 per second); baseline: `overseer status --watch` under the same load.
//   - the hub's cost of serving it: the hub process's CPU over the 10 s of changes with the
//     watch attached, against the same changes with no watcher.
// Needs dist/ (npm run build) and tmux. Run alone: node --import tsx bench/watch.ts
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { REPO_ROOT, cleanEnv, f1, f2, out, removeDir, startBenchHub, statLine, stats, tempDir, type BenchHub, type Stats } from './common.js';
import { SseParser } from '../src/http/sse.js';
import type { Floor } from '../src/floor/types.js';
import { getJob } from '../src/store/sql/jobs.js';

const JOBS = 64;
const CAP = 16;
const LATENCY_SAMPLES = 40;
const DB_SAMPLES = 20;
const WINDOW_MS = 10_000;
const CHANGES_PER_S = 10;
const MAIN = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
const CLK_TCK = 100;

export interface ProcFigures { cpuPct: number; rssMb: number }

export interface WatchBenchResult {
  jobs: number;
  /** change through the hub → watch screen (ms) */
  hubLatency: Stats;
  /** change through the hub → a bare /api/floor/stream client (ms): the baseline */
  streamLatency: Stats;
  /** change written to the database (no hub) → watch screen (ms) */
  dbLatency: Stats;
  watchIdle: ProcFigures;
  watchBusy: ProcFigures;
  statusIdle: ProcFigures;
  statusBusy: ProcFigures;
  /** watch peak RSS (VmHWM) over the run, MB */
  watchPeakMb: number;
  /** the hub process's CPU over the change window with no watcher and with one watch */
  hubCpuNoWatcherPct: number;
  hubCpuWithWatchPct: number;
  /** changes made per window (both hub CPU windows) */
  changes: number;
}

/** A command in a tmux pane of a server of its own, read without blocking the event loop. */
class Pane {
  private readonly socket = `ovs-bench-${process.pid}-${randomBytes(4).toString('hex')}`;
  constructor(private readonly env: NodeJS.ProcessEnv, private readonly cwd: string) {}

  private sync(args: string[]): string {
    const r = spawnSync('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { env: this.env, cwd: this.cwd, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  }

  start(argv: string[]): void {
    this.sync(['new-session', '-d', '-s', 'b', '-x', '100', '-y', '30', '-c', this.cwd, argv.map((a) => `'${a}'`).join(' ')]);
  }

  capture(): Promise<string> {
    return new Promise((resolve, reject) => execFile('tmux', ['-L', this.socket, 'capture-pane', '-p', '-t', 'b'], { env: this.env }, (err, stdout) => (err ? reject(err) : resolve(stdout))));
  }

  /** The pid of the command (tmux runs it through sh -c, which may or may not exec it). */
  pid(): number {
    let pid = Number(this.sync(['display-message', '-p', '-t', 'b', '#{pane_pid}']).trim());
    for (let i = 0; i < 3 && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sh'; i++) {
      pid = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0]);
    }
    return pid;
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { env: this.env });
    rmSync(path.join(this.env.TMUX_TMPDIR ?? '/tmp', `tmux-${process.getuid?.() ?? 0}`, this.socket), { force: true });
  }
}

/** Resolves with the time (performance.now) the screen first satisfies `pred`. */
async function screenUntil(p: Pane, what: string, pred: (s: string) => boolean, deadlineMs = 20_000): Promise<number> {
  const end = performance.now() + deadlineMs;
  for (;;) {
    const s = await p.capture();
    const t = performance.now();
    if (pred(s)) return t;
    if (t > end) throw new Error(`the screen did not show ${what} within ${deadlineMs} ms:\n${s}`);
  }
}

/** utime+stime of a process, in clock ticks. */
function cpuTicks(pid: number): number {
  const rest = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(rest[11]) + Number(rest[12]);
}

function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Toggles job `id` frozen/running `perS` times a second for `ms`; returns how many changes. */
async function churn(h: BenchHub, id: string, perS: number, ms: number, frozen: { v: boolean }): Promise<number> {
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) {
    const next = performance.now() + 1000 / perS;
    await h.call(frozen.v ? 'resume_agent' : 'pause_agent', { job_id: id, ...(frozen.v ? {} : { mode: 'freeze' }) });
    frozen.v = !frozen.v;
    n++;
    await pause(Math.max(0, next - performance.now())); // pacing of the load, not synchronisation
  }
  return n;
}

/** CPU % and RSS of `pid` over `ms` while `load` runs (or idle). */
async function measure(pid: number, ms: number, load?: () => Promise<unknown>): Promise<ProcFigures> {
  const t0 = cpuTicks(pid);
  const s0 = performance.now();
  if (load) await load();
  else await pause(ms);
  const secs = (performance.now() - s0) / 1000;
  return { cpuPct: ((cpuTicks(pid) - t0) / CLK_TCK / secs) * 100, rssMb: statusMb(pid, 'VmRSS') };
}

export async function benchWatch(): Promise<WatchBenchResult> {
  const dir = await tempDir('watch');
  const agent = path.join(dir, 'idle-agent.sh');
  writeFileSync(agent, '#!/usr/bin/env bash\n# prints nothing and stays alive until the hub stops it\nexec sleep 600\n');
  chmodSync(agent, 0o755);
  const h = await startBenchHub({ claudeBin: agent, config: { maxAgents: CAP } });
  const home = path.join(h.dir, 'state');
  const env = cleanEnv({ OVERSEER_HOME: home, TERM: 'xterm-256color' });
  delete env.CI;
  const panes: Pane[] = [];
  const pane = (): Pane => { const p = new Pane(env, h.project); panes.push(p); return p; };
  const ac = new AbortController();
  try {
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) ids.push((await h.call('spawn_agent', { prompt: `bench watch ${i}`, title: `bench job ${String(i).padStart(2, '0')}` })).job_id);
    const target = ids[0]!;
    for (const id of ids.slice(0, CAP)) {
      const end = Date.now() + 30_000;
      while ((await getJob(h.hub.ctx.sql.db, id))!.status !== 'running') {
        if (Date.now() > end) throw new Error(`job ${id} did not start`);
        await pause(20);
      }
    }
    const frozen = { v: false };

    // The hub's CPU with no watcher, over the same changes as later with one.
    const benchPid = process.pid;
    const noWatcher = await measure(benchPid, WINDOW_MS, () => churn(h, target, CHANGES_PER_S, WINDOW_MS, frozen));
    if (frozen.v) { await h.call('resume_agent', { job_id: target }); frozen.v = false; }

    // A bare stream client: the baseline of the latency.
    const token = readFileSync(path.join(home, 'lead.token'), 'utf8').trim();
    const url = new URL('/api/floor/stream', (JSON.parse(readFileSync(path.join(home, 'hub.json'), 'utf8')) as { url: string }).url);
    let lastStatus = '';
    let onStatus: ((s: string) => void) | undefined;
    void (async () => {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
      const sse = new SseParser();
      const dec = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const ev of sse.push(dec.decode(chunk, { stream: true }))) {
          if (ev.event !== 'floor') continue;
          const f = JSON.parse(ev.data) as Floor;
          const j = f.running.find((x) => x.job_id === target);
          if (j && j.status !== lastStatus) { lastStatus = j.status; onStatus?.(j.status); }
        }
      }
    })().catch(() => undefined);

    const w = pane();
    w.start([process.execPath, MAIN, 'watch']);
    await screenUntil(w, 'the running jobs', (s) => /RUNNING \(16\)/.test(s) && /bench job 00/.test(s));
    const watchPid = w.pid();
    const row = (s: string): string => s.split('\n').find((l) => /bench job 00\b/.test(l)) ?? '';

    const hubLat: number[] = [];
    const streamLat: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const want = frozen.v ? 'running' : 'frozen';
      const streamSeen = new Promise<number>((resolve) => { onStatus = (s) => { if (s === want) resolve(performance.now()); }; });
      const t0 = performance.now();
      await h.call(frozen.v ? 'resume_agent' : 'pause_agent', { job_id: target, ...(frozen.v ? {} : { mode: 'freeze' }) });
      frozen.v = !frozen.v;
      const shown = await screenUntil(w, `job 00 ${want}`, (s) => /\[frozen\]/.test(row(s)) === (want === 'frozen'));
      hubLat.push(shown - t0);
      streamLat.push((await streamSeen) - t0);
      await pause(100); // spacing between samples: more than the hub's 50 ms frame gap
    }
    out(statLine('   change → watch screen (hub stream)', stats(hubLat)));
    out(statLine('   change → bare stream client (baseline)', stats(streamLat)));

    const watchIdle = await measure(watchPid, WINDOW_MS);
    let changes = 0;
    const benchCpu0 = cpuTicks(benchPid);
    const s0 = performance.now();
    const watchBusy = await measure(watchPid, WINDOW_MS, async () => { changes = await churn(h, target, CHANGES_PER_S, WINDOW_MS, frozen); });
    const hubCpuWithWatchPct = ((cpuTicks(benchPid) - benchCpu0) / CLK_TCK / ((performance.now() - s0) / 1000)) * 100;
    const watchPeakMb = statusMb(watchPid, 'VmHWM');
    out(`   watch: idle ${f1(watchIdle.cpuPct)}% CPU, ${f1(watchIdle.rssMb)} MB RSS; ${changes} changes in 10 s: ${f1(watchBusy.cpuPct)}% CPU, ${f1(watchBusy.rssMb)} MB RSS (peak ${f1(watchPeakMb)} MB)\n`);
    out(`   hub CPU over the changes: ${f1(noWatcher.cpuPct)}% with no watcher, ${f1(hubCpuWithWatchPct)}% with the watch (+ the bench's own driving in both)\n`);
    w.kill();

    // Baseline: overseer status --watch under the same load.
    const st = pane();
    st.start([process.execPath, MAIN, 'status', '--watch']);
    await screenUntil(st, 'the status table', (s) => /bench job/.test(s));
    const statusPid = st.pid();
    const statusIdle = await measure(statusPid, WINDOW_MS);
    const statusBusy = await measure(statusPid, WINDOW_MS, () => churn(h, target, CHANGES_PER_S, WINDOW_MS, frozen));
    out(`   status --watch: idle ${f1(statusIdle.cpuPct)}% CPU, ${f1(statusIdle.rssMb)} MB RSS; changes: ${f1(statusBusy.cpuPct)}% CPU, ${f1(statusBusy.rssMb)} MB RSS\n`);
    st.kill();
    ac.abort();

    // No hub: the watch reads the database; changes are written to it directly.
    await h.hub.stop();
    const d = pane();
    d.start([process.execPath, MAIN, 'watch']);
    // Running jobs were interrupted by the stop; the first queued one heads the screen.
    const dbTarget = ids[CAP]!;
    await screenUntil(d, 'the read-only floor', (s) => /no hub: read-only/.test(s) && /bench job 16/.test(s));
    const db = new Database(path.join(home, 'state.db'));
    db.pragma('busy_timeout = 5000');
    const dbLat: number[] = [];
    for (let i = 0; i < DB_SAMPLES; i++) {
      const title = `bench job 16 mark ${i}`;
      const t0 = performance.now();
      db.prepare('UPDATE jobs SET title = ? WHERE id = ?').run(title, dbTarget);
      const shown = await screenUntil(d, title, (s) => s.includes(title));
      dbLat.push(shown - t0);
      await pause(Math.random() * 250); // spread the writes over the poll period
    }
    db.close();
    out(statLine('   change → watch screen (database, no hub)', stats(dbLat)));
    d.kill();

    return {
      jobs: JOBS, hubLatency: stats(hubLat), streamLatency: stats(streamLat), dbLatency: stats(dbLat),
      watchIdle, watchBusy, statusIdle, statusBusy, watchPeakMb,
      hubCpuNoWatcherPct: noWatcher.cpuPct, hubCpuWithWatchPct, changes,
    };
  } finally {
    ac.abort();
    for (const p of panes) p.kill();
    await h.stop();
    await removeDir(dir);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchWatch().then((r) => {
    out(`${JSON.stringify(r, null, 2)}\n`);
    out(`watch/stream p50 ratio ${f2(r.hubLatency.p50 / r.streamLatency.p50)}\n`);
  }, (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  });
}
