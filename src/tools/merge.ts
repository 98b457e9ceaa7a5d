// merge_branch and merge_queue (issue 13 point 4): thin adapters over src/branches/mergeJobs.ts. Lead only.
import type { MergeService } from '../branches/mergeJobs.js';
import { defineTool, type ToolDef, type ToolExtra } from './registry.js';
import { MergeBranchInput, MergeQueueInput } from '../contract/merge.js';

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

export function mergeTools(m: MergeService, progressEveryMs = 10_000): ToolDef[] {
  return [
    defineTool({
      name: 'merge_branch', roles: ['lead'], title: 'Merge a job\'s branch',
      description: 'Merge a finished worktree job\'s branch into the target branch (default: the branch checked out in its repository). The job\'s command checks run first on the merged result in a scratch worktree; a failed check or a conflict returns merged: false with the check output or the conflicting files, and leaves the target untouched. After a merge the job\'s worktree folder is removed (the branch is kept) and the merge is recorded (event merged).',
      input: MergeBranchInput, annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
      handler: (i, _c, x) => ticking(x, progressEveryMs, 'merging (checks on the merged result)', m.mergeJob(i.job_id, { mode: i.mode, ...(i.strategy ? { strategy: i.strategy } : {}), ...(i.into ? { into: i.into } : {}), leaveConflicts: i.leave_conflicts })),
    }),
    defineTool({
      name: 'merge_queue', roles: ['lead'], title: 'Merge queue',
      description: 'Finished (succeeded), unmerged worktree branches in a proposed merge order: fewest overlaps with the other queued branches first (files both change, and the conflict guard\'s records), then the smallest diff. ship: true merges them in that order, stopping at the first conflict or failed check with what merged, what failed and why, and what is left.',
      input: MergeQueueInput, annotations: { openWorldHint: false },
      handler: (i, _c, x) => {
        const o = { mode: i.mode, ...(i.strategy ? { strategy: i.strategy } : {}), ...(i.into ? { into: i.into } : {}) };
        return i.ship ? ticking(x, progressEveryMs, 'shipping the merge queue', m.ship(o)) : m.queue(o);
      },
    }),
  ];
}
