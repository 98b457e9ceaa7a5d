// A job's changes: `git diff` of its work directory against the commit it started from (its
// base_commit), split per file, plus the files it added that git does not track yet; when its
// work tree is gone (a removed worktree), or it ran on a worker (its branch fetched from the
// shared remote first), its branch against the base in the repository.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobRow } from '../store/jobs.js';
import { git } from '../git/exec.js';
import { fetchJobBranch } from './workerBranch.js';

export interface FileDiff { path: string; patch: string }

export interface JobDiff {
  /** What is compared with what. */
  title: string;
  stat: string;
  files: FileDiff[];
  /** New files git does not track (not in the patches). */
  untracked: string[];
}

const OPTS = ['--no-color', '--no-ext-diff'];
/** Largest patch text returned per file. */
const FILE_CAP = 200_000;

/** Splits a unified diff into one patch per file (`diff --git a/x b/x` headers). */
export function splitPatch(patch: string): FileDiff[] {
  const out: FileDiff[] = [];
  for (const part of patch.split(/^(?=diff --git )/m)) {
    if (!part.startsWith('diff --git ')) continue;
    const m = /^diff --git a\/(.+?) b\/(.+)$/m.exec(part);
    const text = part.replace(/\n$/, '');
    out.push({ path: m ? m[2]! : '?', patch: text.length > FILE_CAP ? `${text.slice(0, FILE_CAP)}\n… (${text.length - FILE_CAP} more characters)` : text });
  }
  return out;
}

/** New files shown as patches (their contents), at most this many. */
const NEW_FILES = 50;

/** A file git does not track yet, as the patch that would add it. */
export function newFilePatch(dir: string, path: string): FileDiff {
  let text: string;
  try {
    const buf = readFileSync(join(dir, path));
    if (buf.includes(0)) return { path, patch: `diff --git a/${path} b/${path}\nnew file (binary, ${buf.length} bytes)` };
    text = buf.subarray(0, FILE_CAP).toString('utf8');
  } catch (err) {
    return { path, patch: `diff --git a/${path} b/${path}\nnew file (unreadable: ${(err as Error).message})` };
  }
  const lines = text.replace(/\n$/, '').split('\n');
  return { path, patch: [`diff --git a/${path} b/${path}`, 'new file (untracked)', '--- /dev/null', `+++ b/${path}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`)].join('\n') };
}

export async function diffOfJob(j: Pick<JobRow, 'id' | 'title' | 'work_dir' | 'cwd' | 'base_commit' | 'branch' | 'repo_root' | 'worktree' | 'worker'>): Promise<JobDiff> {
  const dir = j.work_dir ?? j.cwd;
  if (j.worker) {
    // It ran on a worker: its branch is on the shared remote (src/branches/workerBranch.ts), its folder on that machine.
    try {
      await fetchJobBranch(j);
    } catch (err) {
      return { title: `branch ${j.branch} of job ${j.id}, which ran on the worker ${j.worker}, could not be fetched: ${(err as Error).message}`, stat: '', files: [], untracked: [] };
    }
  } else if (existsSync(dir)) {
    const g = async (args: string[]): Promise<string> => (await git(args, { cwd: dir })).stdout;
    const base = j.base_commit ?? 'HEAD';
    const [stat, patch, untracked] = await Promise.all([
      g(['diff', ...OPTS, '--stat', base]),
      g(['diff', ...OPTS, base]),
      g(['ls-files', '--others', '--exclude-standard']),
    ]);
    const added = untracked.split('\n').filter(Boolean);
    return {
      title: `${dir} against ${j.base_commit ? j.base_commit.slice(0, 12) : 'HEAD (no base commit recorded)'}`,
      stat: stat.trimEnd(), files: [...splitPatch(patch), ...added.slice(0, NEW_FILES).map((f) => newFilePatch(dir, f))], untracked: added,
    };
  }
  if (j.branch && j.repo_root && j.base_commit && existsSync(j.repo_root)) {
    const g = async (args: string[]): Promise<string> => (await git(args, { cwd: j.repo_root! })).stdout;
    const range = [j.base_commit, j.branch];
    const [stat, patch] = await Promise.all([g(['diff', ...OPTS, '--stat', ...range]), g(['diff', ...OPTS, ...range])]);
    return { title: `branch ${j.branch} against ${j.base_commit.slice(0, 12)} (its work tree ${dir} is gone)`, stat: stat.trimEnd(), files: splitPatch(patch), untracked: [] };
  }
  return { title: `${dir} is gone${j.branch ? '' : ' and the job has no branch'}: nothing to diff`, stat: '', files: [], untracked: [] };
}
