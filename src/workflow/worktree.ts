// A workflow's worktree: verified (re-attached when missing) before each phase, and the
// hub's commit of whatever a phase left uncommitted.
import { existsSync } from 'node:fs';
import type { BlockedCode } from '../domain/workflow.js';
import type { WorkflowRow } from './rows.js';
import { branchExists } from '../git/worktree.js';
import { attachWorktree } from '../git/attach.js';
import { gitOut } from '../git/exec.js';
import { errorMessage } from '../errors.js';

/** The workflow's worktree must exist and be on its branch; a missing one is re-attached.
 * Returns why it cannot be used, or undefined when it can. */
export async function worktreeProblem(w: WorkflowRow): Promise<{ code: BlockedCode; message: string } | undefined> {
  if (!w.worktree_path || !w.repo_root || !w.branch) return undefined;
  if (!(await branchExists(w.repo_root, w.branch))) return { code: 'branch_missing', message: `the workflow's branch ${w.branch} no longer exists in ${w.repo_root}` };
  try {
    if (!existsSync(w.worktree_path)) await attachWorktree({ repoRoot: w.repo_root, path: w.worktree_path, branch: w.branch, baseCommit: w.base_commit ?? '' });
    const head = (await gitOut(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: w.worktree_path })).trim();
    if (head !== w.branch) return { code: 'branch_missing', message: `the worktree ${w.worktree_path} is on ${head}, not on the workflow's branch ${w.branch}` };
  } catch (err) {
    return { code: 'worktree_missing', message: `the worktree ${w.worktree_path} could not be restored: ${errorMessage(err)}` };
  }
  return undefined;
}

/** `git add -A && git commit` when there is anything to commit; returns the short sha or ''. */
export async function commitAll(dir: string, message: string): Promise<string> {
  try {
    if (!(await gitOut(['status', '--porcelain'], { cwd: dir })).trim()) return '';
    await gitOut(['add', '-A'], { cwd: dir });
    await gitOut(['-c', 'user.name=Overseer', '-c', 'user.email=overseer@localhost', '-c', 'core.hooksPath=/dev/null', 'commit', '--no-verify', '-q', '-m', message], { cwd: dir });
    return (await gitOut(['rev-parse', '--short', 'HEAD'], { cwd: dir })).trim();
  } catch {
    return '';
  }
}
