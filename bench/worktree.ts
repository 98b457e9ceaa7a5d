// Benchmark of createWorktree against plain `git worktree add -b` on a 1,000-file repository,
// measured in the same run so the ratio ours/baseline is machine independent.
// Run: node --import tsx bench/worktree.ts
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createWorktree, removeWorktree } from '../src/git/worktree.js';

const execFileP = promisify(execFile);
const RUNS = 15;
const FILES = 1000;
const FOLDERS = 20;

async function gitRun(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileP('git', args, { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
  return stdout;
}

/** Nearest-rank percentile of already sorted samples. */
function pct(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

/** A repository with FILES small files spread over FOLDERS folders, one commit. */
async function makeRepo(dir: string): Promise<string> {
  await gitRun(dir, ['init', '-q', '-b', 'main']);
  await gitRun(dir, ['config', 'user.name', 'Bench']);
  await gitRun(dir, ['config', 'user.email', 'bench@localhost']);
  await gitRun(dir, ['config', 'commit.gpgsign', 'false']);
  for (let f = 0; f < FOLDERS; f++) await mkdir(path.join(dir, `pkg${f}`, 'src'), { recursive: true });
  await Promise.all(
    Array.from({ length: FILES }, (_, i) =>
      writeFile(path.join(dir, `pkg${i % FOLDERS}`, 'src', `file${i}.ts`), `export const v${i} = ${i};\n// ${'x'.repeat(200)}\n`),
    ),
  );
  await gitRun(dir, ['add', '-A']);
  await gitRun(dir, ['commit', '-q', '-m', 'initial']);
  return dir;
}

/** Remove a worktree and its branch (not timed). */
async function cleanup(repo: string, wtPath: string, branch: string): Promise<void> {
  await gitRun(repo, ['worktree', 'remove', '--force', wtPath]).catch(() => undefined);
  await gitRun(repo, ['branch', '-D', branch]).catch(() => undefined);
}

/** Measure createWorktree and the plain-git baseline, interleaved; figures in milliseconds. */
export async function benchWorktree(): Promise<{ p50: number; p90: number; baselineP50: number; ratio: number }> {
  const tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'overseer-bench-wt-')));
  try {
    const repo = await makeRepo(tmp);
    const ours: number[] = [];
    const base: number[] = [];
    // One untimed warm-up of each path (page cache, module loading).
    for (let i = -1; i < RUNS; i++) {
      const b1 = `bench/ours-${i + 1}`;
      const t0 = performance.now();
      const wt = await createWorktree({ repoRoot: repo, jobId: `ours-${i + 1}`, branch: b1, worktreesDir: path.join(tmp, 'worktrees') });
      const t1 = performance.now();
      await removeWorktree(repo, wt.path);
      await gitRun(repo, ['branch', '-D', b1]);

      const b2 = `bench/base-${i + 1}`;
      const p2 = path.join(tmp, 'plain-worktrees', `base-${i + 1}`);
      const t2 = performance.now();
      await execFileP('git', ['worktree', 'add', '-b', b2, p2], { cwd: repo });
      const t3 = performance.now();
      await cleanup(repo, p2, b2);

      if (i >= 0) {
        ours.push(t1 - t0);
        base.push(t3 - t2);
      }
    }
    ours.sort((a, b) => a - b);
    base.sort((a, b) => a - b);
    const p50 = pct(ours, 50);
    const p90 = pct(ours, 90);
    const min = ours[0] ?? NaN;
    const baselineP50 = pct(base, 50);
    const ratio = p50 / baselineP50;
    const f = (n: number): string => n.toFixed(1);
    process.stdout.write(
      `createWorktree (${FILES} files, ${RUNS} runs): p50 ${f(p50)} ms, p90 ${f(p90)} ms, min ${f(min)} ms\n` +
        `baseline git worktree add -b:         p50 ${f(baselineP50)} ms, p90 ${f(pct(base, 90))} ms, min ${f(base[0] ?? NaN)} ms\n` +
        `ratio ours/baseline (p50): ${ratio.toFixed(2)}\n`,
    );
    return { p50, p90, baselineP50, ratio };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchWorktree().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
