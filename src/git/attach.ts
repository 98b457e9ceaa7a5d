// Re-attach a job's worktree on its existing branch (resume after the worktree was closed,
// or after a crash left the directory half-gone). Counterpart of createWorktree.
import { existsSync } from 'node:fs';
import { simpleGit } from 'simple-git';
import type { WorktreeInfo } from './worktree.js';

export async function attachWorktree(o: { repoRoot: string; path: string; branch: string }): Promise<WorktreeInfo> {
  const git = simpleGit(o.repoRoot).env({ ...process.env, GIT_TERMINAL_PROMPT: '0' });
  if (!existsSync(o.path)) {
    await git.raw(['worktree', 'prune']);
    await git.raw(['worktree', 'add', o.path, o.branch]);
  }
  const head = (await simpleGit(o.path).revparse(['HEAD'])).trim();
  return { repoRoot: o.repoRoot, path: o.path, branch: o.branch, baseCommit: head };
}
