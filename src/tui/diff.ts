// A job's changes for the watch's diff view: `git diff` of its work directory against the
// commit it started from (base_commit in its row), plus the files it added that git does not
// track yet. When the work tree is gone (a removed worktree), the diff of its branch against
// the base in the repository. Reads the job row from the database read-only.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { JobStore } from '../store/jobs.js';
import { git } from '../git/exec.js';

export interface JobDiff {
  /** One line saying what is compared with what. */
  title: string;
  lines: string[];
}

/** The diff of job `jobId` of the state in `home`. Throws with what is missing. */
export async function jobDiff(home: string, jobId: string): Promise<JobDiff> {
  const file = join(home, 'state.db');
  if (!existsSync(file)) throw new Error(`no state database at ${file}`);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  let j;
  try {
    j = new JobStore(db).get(jobId);
  } finally {
    db.close();
  }
  if (!j) throw new Error(`job ${jobId} is not in ${file}`);
  const dir = j.work_dir ?? j.cwd;
  const opts = ['--no-color', '--no-ext-diff'];
  if (existsSync(dir)) {
    const g = git(dir);
    const base = j.base_commit ?? 'HEAD';
    const [stat, patch, untracked] = await Promise.all([
      g.raw(['diff', ...opts, '--stat', base]),
      g.raw(['diff', ...opts, base]),
      g.raw(['ls-files', '--others', '--exclude-standard']),
    ]);
    const added = untracked.split('\n').filter(Boolean);
    const lines = [...stat.split('\n'), ...(added.length ? ['untracked (new, not in the diff):', ...added.map((f) => `  ${f}`)] : []), '', ...patch.split('\n')];
    const empty = !stat.trim() && !added.length;
    return {
      title: `${dir} against ${j.base_commit ? j.base_commit.slice(0, 12) : 'HEAD (no base commit recorded)'}${empty ? ': no changes' : ''}`,
      lines: empty ? [] : trimEnd(lines),
    };
  }
  if (j.branch && j.repo_root && j.base_commit && existsSync(j.repo_root)) {
    const g = git(j.repo_root);
    const range = [j.base_commit, j.branch];
    const [stat, patch] = await Promise.all([g.raw(['diff', ...opts, '--stat', ...range]), g.raw(['diff', ...opts, ...range])]);
    return { title: `branch ${j.branch} against ${j.base_commit.slice(0, 12)} (its work tree ${dir} is gone)`, lines: trimEnd([...stat.split('\n'), '', ...patch.split('\n')]) };
  }
  throw new Error(`job ${jobId} has no work tree left (${dir} is gone)${j.branch ? '' : ' and no branch'}: nothing to diff`);
}

function trimEnd(lines: string[]): string[] {
  let n = lines.length;
  while (n > 0 && lines[n - 1] === '') n--;
  return lines.slice(0, n);
}
