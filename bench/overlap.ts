// Benchmark 23: the conflict guard (docs/worktrees.md) with 16 live worktree jobs (children
// scripted in process, hanging: the worktrees are real, made by the runner). Each sample: one job
// commits a file in its worktree, the job of another worktree then commits the same file and the
// hook's lock event for it arrives (as when the lock hook auto-locks a file before an edit): the
// latency is from that event to the overlap recorded (the `overlap` bus event), p50 / p99. It
// includes the guard's debounce (100 ms: one scan per burst of edits). Baseline in the same run:
// the scan's own git work for one worktree (`git diff --name-only <base>` and
// `git ls-files --others`) measured alone.
// Run alone: node --import tsx bench/overlap.ts
import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { f1, f2, fixture, out, runAlone, startBenchHub, stats, type Stats } from './common.js';
import { ScriptedLauncher } from '../test/helpers/fakeLauncher.js';
import { initRepo } from '../test/helpers/git.js';
import { gitOut } from '../src/git/exec.js';
import { getJob } from '../src/store/sql/jobs.js';
import { sql } from 'kysely';

const JOBS = 16;
const SAMPLES = 30;

export interface OverlapBenchResult { jobs: number; latency: Stats; gitScan: Stats; debounceMs: number }

const commit = (dir: string, file: string, text: string): void => {
  writeFileSync(join(dir, file), text);
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', 'add', file], { cwd: dir });
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '-m', file], { cwd: dir });
};

export async function benchOverlap(): Promise<OverlapBenchResult> {
  const h = await startBenchHub({ claudeBin: fixture('fake-agent.sh'), config: { maxAgents: JOBS + 4 }, processes: new ScriptedLauncher(() => ({ hang: true })) });
  try {
    const repo = await initRepo(join(h.dir, 'repo'));
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) ids.push((await h.call('spawn_agent', { prompt: `bench ${i}`, cwd: repo, worktree: true })).job_id);
    const dirs = new Map<string, string>();
    const t0 = Date.now();
    while (dirs.size < JOBS) {
      for (const id of ids) {
        const j = (await getJob(h.hub.ctx.sql.db, id))!;
        if (j.status === 'running' && j.work_dir && j.base_commit) dirs.set(id, j.work_dir);
      }
      if (Date.now() - t0 > 120_000) throw new Error(`only ${dirs.size} of ${JOBS} worktrees were made`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const guard = h.hub.overlaps;
    for (const id of ids) guard.schedule(id);
    await guard.settled();
    const samples: number[] = [];
    for (let s = 0; s < SAMPLES; s++) {
      const a = ids[s % JOBS]!;
      const b = ids[(s + 1 + (s % (JOBS - 1))) % JOBS]!;
      const file = `shared-${s}.txt`;
      commit(dirs.get(b)!, file, 'b\n');
      h.hub.ctx.bus.emit('lock', { holder: b });
      await guard.settled();
      commit(dirs.get(a)!, file, 'a\n');
      const seen = new Promise<void>((resolve) => {
        const off = h.hub.ctx.bus.on('overlap', (e) => { if (e.files.includes(file)) { off(); resolve(); } });
      });
      const start = performance.now();
      h.hub.ctx.bus.emit('lock', { holder: a });
      await seen;
      samples.push(performance.now() - start);
    }
    const recorded = Number((await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM overlaps WHERE file LIKE 'shared-%'`.execute(h.hub.ctx.sql.db)).rows[0]!.n);
    if (recorded !== SAMPLES) throw new Error(`${recorded} overlaps recorded for ${SAMPLES} samples`);
    const scans: number[] = [];
    const dir = dirs.get(ids[0]!)!;
    const base = (await getJob(h.hub.ctx.sql.db, ids[0]!))!.base_commit!;
    for (let s = 0; s < SAMPLES; s++) {
      const t = performance.now();
      await Promise.all([gitOut(['diff', '--name-only', '--no-renames', base], { cwd: dir }), gitOut(['ls-files', '--others', '--exclude-standard'], { cwd: dir })]);
      scans.push(performance.now() - t);
    }
    const latency = stats(samples);
    const gitScan = stats(scans);
    out(`  overlap detection with ${JOBS} live worktrees: p50 ${f1(latency.p50)} ms, p99 ${f1(latency.p99)} ms (100 ms of it the debounce); the scan's git work alone p50 ${f1(gitScan.p50)} ms; ratio ${f2(latency.p50 / gitScan.p50)}\n`);
    return { jobs: JOBS, latency, gitScan, debounceMs: 100 };
  } finally {
    await h.stop();
  }
}

runAlone(import.meta.url, benchOverlap);
