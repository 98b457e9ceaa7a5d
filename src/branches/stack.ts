// Stacked dependencies (docs/worktrees.md): which commit a worktree job starts from. An explicit
// `base` (a job's branch or a branch name) wins; otherwise a job with exactly one worktree
// dependency branches from that dependency's branch, and one with several starts from the first
// and merges the others in (an integration branch); a conflict there is reported, never left
// half-merged. `planStack` is pure; `integrate` runs the merges in the new worktree.
import { errText, firstLine, gitOut, outLines } from '../git/exec.js';
import { identityArgs } from '../git/finish.js';

export interface StackDep {
  id: string;
  title: string;
  worktree: boolean;
  branch: string | null;
  repoRoot: string | null;
}

export interface StackPlan {
  /** The ref the new branch starts at (undefined: the repository's HEAD). */
  base?: { ref: string; jobId?: string };
  /** Branches merged into the new branch, in order, after it is created. */
  merge: { branch: string; jobId: string; title: string }[];
}

/** `base` as spawn_agent recorded it: `job:<id>` or `branch:<name>`. */
export function planStack(o: { base: string | null; repoRoot: string; deps: readonly StackDep[]; baseJob?: StackDep }): StackPlan {
  if (o.base?.startsWith('branch:')) return { base: { ref: o.base.slice('branch:'.length) }, merge: [] };
  if (o.base?.startsWith('job:')) {
    // `baseJob` is that job's row: a dependency, or the spawning agent itself (which it does not wait for).
    const b = o.baseJob;
    return b?.branch ? { base: { ref: b.branch, jobId: b.id }, merge: [] } : { merge: [] };
  }
  const stacked = o.deps.filter((d) => d.worktree && d.branch !== null && d.repoRoot === o.repoRoot);
  if (stacked.length === 0) return { merge: [] };
  const [first, ...rest] = stacked;
  return { base: { ref: first!.branch!, jobId: first!.id }, merge: rest.map((d) => ({ branch: d.branch!, jobId: d.id, title: d.title })) };
}

export type IntegrateResult =
  | { ok: true; merged: string[] }
  | { ok: false; merged: string[]; branch: string; jobId: string; files: string[]; error?: string };

/**
 * Merge each branch into the worktree's branch (`--no-ff`, no hooks). On a conflict the merge is
 * aborted (the worktree is left at the last clean merge) and the conflicting files returned.
 */
export async function integrate(worktree: string, merges: StackPlan['merge']): Promise<IntegrateResult> {
  const g = (args: string[]): Promise<string> => gitOut(args, { cwd: worktree });
  const ident = await identityArgs(worktree);
  const merged: string[] = [];
  for (const m of merges) {
    try {
      // A conflicted merge prints to stdout and exits 1: git() rejects, the catch reads the conflicted files.
      await gitOut([...ident, '-c', 'core.hooksPath=/dev/null', 'merge', '--no-ff', '--no-edit', `--message=overseer: integrate ${m.branch} (${m.jobId}: ${m.title})`, m.branch], { cwd: worktree });
      merged.push(m.branch);
    } catch (err) {
      const files = outLines(await g(['diff', '--name-only', '--diff-filter=U']).catch(() => ''));
      await g(['merge', '--abort']).catch(() => undefined);
      return { ok: false, merged, branch: m.branch, jobId: m.jobId, files, ...(files.length ? {} : { error: firstLine(errText(err)) }) };
    }
  }
  return { ok: true, merged };
}
