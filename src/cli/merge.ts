// `overseer merge <job> [--rebase] [--squash] [--strategy ours|theirs] [--leave-conflicts] [--into <branch>] [--on-failure stop|send-back] [--json]`:
// the running hub's merge_branch tool (docs/merge.md). Exit codes: 0 merged; 1 not merged (a
// conflict, a failed check, conflicts left for you, sent back to its agent) or no hub; 2 refused
// (bad input, wrong state). `overseer send-back <job>`: the send_back tool (exit 0 sent back, 1
// the bound was reached and you are asked, 2 refused).
import type { Command } from 'commander';
import { UsageError } from './errors.js';
import type { HubTools } from './hubTools.js';

/** Merges and checks can take a while (a test suite on the merged result). */
export const MERGE_TIMEOUT_MS = 60 * 60_000;

export async function withHub<T>(f: (h: HubTools) => Promise<T>): Promise<T> {
  return (await import('./hubTools.js')).withHub(f);
}

export interface MergeCliOpts { rebase?: boolean; squash?: boolean; strategy?: string; leaveConflicts?: boolean; into?: string; json?: boolean; onFailure?: string }

/** The common merge options as tool arguments. */
export function mergeArgs(o: MergeCliOpts): Record<string, unknown> {
  if (o.rebase && o.squash) throw new UsageError('--rebase and --squash exclude each other: pick one');
  if (o.strategy !== undefined && o.strategy !== 'ours' && o.strategy !== 'theirs') throw new UsageError(`--strategy ${JSON.stringify(o.strategy)}: use ours or theirs`);
  if (o.onFailure !== undefined && o.onFailure !== 'stop' && o.onFailure !== 'send-back') throw new UsageError(`--on-failure ${JSON.stringify(o.onFailure)}: use stop or send-back`);
  if (o.onFailure === 'send-back' && o.leaveConflicts) throw new UsageError('--leave-conflicts and --on-failure send-back exclude each other: a conflict is either left in your checkout or sent back to the agent');
  return { mode: o.rebase ? 'rebase' : o.squash ? 'squash' : 'merge', ...(o.strategy ? { strategy: o.strategy } : {}), ...(o.into ? { into: o.into } : {}),
    ...(o.onFailure ? { on_failure: o.onFailure === 'send-back' ? 'send_back' : 'stop' } : {}) };
}

const ON_FAILURE = 'stop|send-back: when the checks fail or the branch conflicts, stop (default: config mergeOnFailure) or send it back to its agent to fix';

export function registerMerge(program: Command): void {
  program.command('merge <job>').description('merge a finished worktree job\'s branch into its target (checks run on the merged result first)')
    .option('--rebase', 'replay the branch\'s commits on the target, then fast-forward').option('--squash', 'one commit with the branch\'s changes')
    .option('--strategy <side>', 'ours|theirs: resolve conflicting hunks for one side (git -X)')
    .option('--leave-conflicts', 'on a conflict, leave the conflicted merge in your checkout to resolve')
    .option('--into <branch>', 'target branch (default: the branch checked out in the job\'s repository)')
    .option('--on-failure <what>', ON_FAILURE)
    .option('--json', 'machine-readable output')
    .action(async (job: string, o: MergeCliOpts) => {
      const args = { job_id: job, ...mergeArgs(o), leave_conflicts: !!o.leaveConflicts };
      const r = await withHub((h) => h.call('merge_branch', args, MERGE_TIMEOUT_MS));
      process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${r.message}\n`);
      if (!r.merged) process.exitCode = 1;
    });
  registerSendBack(program);
}

export function registerSendBack(program: Command): void {
  program.command('send-back <job>').description('send a finished worktree job whose merge failed (checks or a conflict) back to its agent, with what failed; its branch is merged again when it finishes')
    .option('--json', 'machine-readable output')
    .action(async (job: string, o: { json?: boolean }) => {
      const r = await withHub((h) => h.call('send_back', { job_id: job }, MERGE_TIMEOUT_MS));
      process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${r.message}\n`);
      if (!r.sent) process.exitCode = 1;
    });
}
