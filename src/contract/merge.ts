// Inputs of merge_branch and merge_queue (docs/merge.md), and the queue merge_queue returns.
import { z } from 'zod';

const into = z.string().min(1).max(250).regex(/^(?!-)(?!.*\.\.)[^\s~^:?*[\\]+$/, 'a branch name (no spaces, ~^:?*[\\ or .., not starting with -)').optional()
  .describe('Target branch; default: the branch checked out in the job\'s repository (what its worktree was based on).');
const mode = z.enum(['merge', 'rebase', 'squash']).default('merge')
  .describe('merge (default): a merge commit (--no-ff); rebase: the branch\'s commits replayed on the target, then a fast-forward; squash: one commit with the branch\'s changes.');
const strategy = z.enum(['ours', 'theirs']).optional()
  .describe('Resolve conflicting hunks for one side (git -X ours|theirs; with rebase, git swaps them: ours = the target).');

const onFailure = z.enum(['stop', 'send_back']).optional()
  .describe('When the checks fail or the branch conflicts: stop (report it; the default unless config mergeOnFailure says otherwise) or send_back: resume the job\'s own agent in its worktree with the failing checks\' output or the conflicting files (the target merged into its branch first, conflicts left for it); when it finishes its branch is merged again. At most config sendBackRounds rounds (default 2), then the person is asked.');

export const MergeBranchInput = z.object({
  job_id: z.string().min(1).max(100).describe('The finished worktree job whose branch to merge (id or unique prefix).'),
  into, mode, strategy,
  leave_conflicts: z.boolean().default(false).describe('On a conflict, leave the conflicted merge in the person\'s checkout for a person to resolve (not with rebase) instead of stopping with the target untouched.'),
  on_failure: onFailure,
}).strict();

export const MergeQueueInput = z.object({
  ship: z.boolean().default(false).describe('true: merge the queue one by one in its order (re-computed after each merge), stopping at the first conflict or failed check (with on_failure send_back: that branch goes back to its agent and the ship goes on). false (default): only show the order.'),
  into, mode, strategy,
  on_failure: onFailure,
}).strict();

export const SendBackInput = z.object({
  job_id: z.string().min(1).max(100).describe('The finished worktree job whose last merge failed (checks or a conflict), id or unique prefix.'),
}).strict();

export interface QueueEntry {
  position: number;
  job_id: string;
  title: string;
  branch: string;
  repo_root: string;
  target: string;
  files: string[];
  lines: number;
  overlaps: { job_id: string; files: string[] }[];
  ended_at: string | null;
}

export interface QueueView {
  queue: QueueEntry[];
  /** Finished worktree jobs left out, and why (branch gone, no change, already in the target). */
  skipped: { job_id: string; title: string; branch: string | null; reason: string }[];
}
