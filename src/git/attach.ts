// Re-attach a job's worktree on its existing branch (resume after the worktree was closed,
// or after a crash left the directory gone). Counterpart of createWorktree; the job keeps
// its original base commit, so diffs and checks still compare against where it started.
import { existsSync } from 'node:fs';
import { gitOut, withLock } from './exec.js';
import type { WorktreeInfo } from './create.js';

export async function attachWorktree(o: { repoRoot: string; path: string; branch: string; baseCommit: string }): Promise<WorktreeInfo> {
  if (!existsSync(o.path)) {
    await withLock(`worktrees:${o.repoRoot}`, async () => {
      await gitOut(['worktree', 'prune'], { cwd: o.repoRoot });
      await gitOut(['worktree', 'add', o.path, o.branch], { cwd: o.repoRoot });
    });
  }
  return { repoRoot: o.repoRoot, path: o.path, branch: o.branch, baseCommit: o.baseCommit };
}
