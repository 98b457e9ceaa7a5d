// Benchmark of the merge queue (docs/merge.md): `queue --ship` of 10 small finished worktree
// branches (each its own file, no checks) against plain `git merge --no-ff` of the same 10
// branches in the checkout, measured in the same run, interleaved. Real git, no children: the
// branches and their succeeded job rows are made directly. The queue's extra cost is the scratch
// worktree per merge and re-computing the order (a diff per queued branch) after each merge.
// Run: node --import tsx bench/merge-queue.ts
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { sqlOver } from '../src/store/sql/open.js';
import { f1, f2, out, runAlone, tempDir } from './common.js';
import { openDb } from '../src/store/db.js';
import { insertJob } from '../src/store/sql/jobs.js';
import { MergeService } from '../src/branches/mergeJobs.js';
import { Bus } from '../src/services/bus.js';

const execFileP = promisify(execFile);
const BRANCHES = 10;
const ROUNDS = 3;

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileP('git', args, { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' } });
  return stdout.trim();
}

export interface MergeQueueBenchResult { branches: number; shipMs: number; baselineMs: number; ratio: number; queueMs: number }

export async function benchMergeQueue(): Promise<MergeQueueBenchResult> {
  const dir = await tempDir('merge-queue');
  try {
    const repo = path.join(dir, 'repo');
    await execFileP('git', ['init', '-q', '-b', 'main', repo]);
    for (const [k, v] of [['user.name', 'Bench'], ['user.email', 'bench@localhost'], ['commit.gpgsign', 'false']]) await git(repo, ['config', k!, v!]);
    await writeFile(path.join(repo, 'README.md'), '# bench\n');
    await git(repo, ['add', '-A']);
    await git(repo, ['commit', '-q', '-m', 'initial']);
    const initial = await git(repo, ['rev-parse', 'HEAD']);
    const branches: string[] = [];
    for (let i = 0; i < BRANCHES; i++) {
      const b = `overseer/bench-${i}`;
      await git(repo, ['checkout', '-q', '-b', b, initial]);
      await writeFile(path.join(repo, `file${i}.txt`), `${Array.from({ length: i + 1 }, (_, k) => `line ${k}`).join('\n')}\n`);
      await git(repo, ['add', '-A']);
      await git(repo, ['commit', '-q', '-m', `branch ${i}`]);
      branches.push(b);
    }
    await git(repo, ['checkout', '-q', 'main']);

    const db = openDb(path.join(dir, 'state.db'));
    const layer = sqlOver(db).db;
    const now = Date.now();
    for (const [i, b] of branches.entries()) {
      await insertJob(layer, {
        id: `job-${i}`, parent_id: null, depth: 1, title: `bench ${i}`, prompt: 'p', provider: 'claude', model: null, cwd: repo, work_dir: null, repo_root: repo, worktree: 1,
        branch: b, base_commit: initial, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null, checks_json: '[]', retry: 'none',
        labels_json: '[]', depends_on_json: '[]', status: 'succeeded', session_id: `s-${i}`, token_hash: null, workflow_id: null, phase: null, cycle: null, json_schema: null,
      }, now);
    }
    const svc = new MergeService({ sql: layer, now: () => Date.now(), worktree: { copy: [], setup: [], setupTimeoutS: 60, detect: false }, env: process.env, bus: new Bus() });

    const ship: number[] = [];
    const base: number[] = [];
    let queueMs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let t0 = performance.now();
      for (const b of branches) await git(repo, ['merge', '-q', '--no-ff', '--no-edit', b]);
      base.push(performance.now() - t0);
      await git(repo, ['reset', '-q', '--hard', initial]);

      t0 = performance.now();
      const q = await svc.queue();
      queueMs = performance.now() - t0;
      if (q.queue.length !== BRANCHES) throw new Error(`queue has ${q.queue.length} branches, expected ${BRANCHES}`);
      t0 = performance.now();
      const r = await svc.ship();
      ship.push(performance.now() - t0);
      if (r.merged.length !== BRANCHES) throw new Error(`ship merged ${r.merged.length}: ${r.message}`);
      await git(repo, ['reset', '-q', '--hard', initial]);
      db.prepare('DELETE FROM job_merges').run();
    }
    db.close();
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const shipMs = med(ship);
    const baselineMs = med(base);
    out(`  queue --ship of ${BRANCHES} small branches: ${f1(shipMs)} ms (${f1(shipMs / BRANCHES)} ms a branch; median of ${ROUNDS}); the order alone: ${f1(queueMs)} ms\n`);
    out(`  baseline, git merge --no-ff of the same ${BRANCHES} branches: ${f1(baselineMs)} ms; ratio ${f2(shipMs / baselineMs)}\n`);
    return { branches: BRANCHES, shipMs, baselineMs, ratio: shipMs / baselineMs, queueMs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

runAlone(import.meta.url, benchMergeQueue);
