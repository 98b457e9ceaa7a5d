// merge_branch, merge_queue and send_back (issue 13 point 4, issue 31 point 2): thin adapters over
// src/branches/mergeJobs.ts and src/branches/sendBack.ts. Lead only.
import type { MergeService } from '../branches/mergeJobs.js';
import type { SendBackService } from '../branches/sendBack.js';
import { defineTool, type ToolDef, type ToolExtra } from './registry.js';
import { MergeBranchInput, MergeQueueInput, SendBackInput } from '../contract/merge.js';
import { InvalidInputError } from '../errors.js';

/** Progress notifications while a merge runs (its checks may take minutes): keeps the caller's timeout from firing. */
async function ticking<T>(x: ToolExtra, everyMs: number, what: string, work: Promise<T>): Promise<T> {
  const started = Date.now();
  let n = 0;
  const t = setInterval(() => { n += 1; x.progress(n, undefined, `${what} for ${Math.round((Date.now() - started) / 1000)}s`); }, everyMs);
  try {
    return await work;
  } finally {
    clearInterval(t);
  }
}

export function mergeTools(m: MergeService, s: SendBackService, progressEveryMs = 10_000): ToolDef[] {
  return [
    defineTool({
      name: 'merge_branch', roles: ['lead'], title: 'Merge a job\'s branch',
      description: 'Merge a finished worktree job\'s branch into the target branch (default: the branch checked out in its repository). The job\'s command checks run first on the merged result in a scratch worktree; a failed check or a conflict returns merged: false with the check output or the conflicting files, and leaves the target untouched — and with on_failure: "send_back" the job\'s agent is resumed in its worktree to fix it (send_back: {round, max}), its branch merged again when it finishes. After a merge the job\'s worktree folder is removed (the branch is kept) and the merge is recorded (event merged).',
      input: MergeBranchInput, annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
      handler: (i, _c, x) => {
        if (i.leave_conflicts && i.on_failure === 'send_back') throw new InvalidInputError('leave_conflicts and on_failure "send_back" exclude each other: a conflict is either left in your checkout or sent back to the agent; pick one');
        const o = { mode: i.mode, ...(i.strategy ? { strategy: i.strategy } : {}), ...(i.into ? { into: i.into } : {}), leaveConflicts: i.leave_conflicts, ...(i.on_failure ? { onFailure: i.on_failure } : {}) };
        return ticking(x, progressEveryMs, 'merging (checks on the merged result)', i.leave_conflicts ? m.mergeJob(i.job_id, o) : s.merge(i.job_id, o));
      },
    }),
    defineTool({
      name: 'merge_queue', roles: ['lead'], title: 'Merge queue',
      description: 'Finished (succeeded), unmerged worktree branches in a proposed merge order: fewest overlaps with the other queued branches first (files both change, and the conflict guard\'s records), then the smallest diff. ship: true merges them in that order, stopping at the first conflict or failed check with what merged, what failed and why, and what is left; with on_failure: "send_back" a failing branch goes back to its agent (carried) and the ship goes on.',
      input: MergeQueueInput, annotations: { openWorldHint: false },
      handler: (i, _c, x) => {
        const o = { mode: i.mode, ...(i.strategy ? { strategy: i.strategy } : {}), ...(i.into ? { into: i.into } : {}), ...(i.on_failure ? { onFailure: i.on_failure } : {}) };
        return i.ship ? ticking(x, progressEveryMs, 'shipping the merge queue', s.ship(o)) : m.queue(o);
      },
    }),
    defineTool({
      name: 'send_back', roles: ['lead'], title: 'Send a branch back to its agent',
      description: 'Send a finished worktree job whose last merge failed (its checks, or a conflict with the target) back to its own agent: the target is merged into its branch (a conflict left in its worktree for it), and its session is resumed with the failing checks\' output or the conflicting files. When it finishes, its branch is merged again with the same options. At most config sendBackRounds rounds; then the person is asked instead. Refused for a job still running, one without a worktree, or one with no failed merge.',
      input: SendBackInput, annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
      handler: (i) => s.sendBack(i.job_id),
    }),
  ];
}
