// `overseer queue [--ship] [--json]`: the merge queue of the running hub (merge_queue,
// docs/merge.md). Exit codes: 0 shown / all merged; 1 the ship stopped at a failure, or no hub;
// 2 bad input.
import type { Command } from 'commander';
import type { QueueView, ShipReport } from '../branches/mergeJobs.js';
import { MERGE_TIMEOUT_MS, mergeArgs, withHub, type MergeCliOpts } from './merge.js';
import { CliError, UsageError } from './errors.js';

export function queueText(v: QueueView): string {
  const lines = v.queue.length === 0 ? ['The merge queue is empty: no finished, unmerged worktree branch.'] : v.queue.map((e) => {
    const ov = e.overlaps.length ? `overlaps ${e.overlaps.map((o) => `${o.job_id} (${o.files.join(', ')})`).join('; ')}` : 'no overlap';
    return `${String(e.position).padStart(2)}. ${e.job_id}  ${e.branch} → ${e.target}  ${e.files.length} file${e.files.length === 1 ? '' : 's'}, ${e.lines} line${e.lines === 1 ? '' : 's'}  ${ov}  ${e.title}`;
  });
  for (const s of v.skipped) lines.push(`  skipped ${s.job_id} (${s.title}): ${s.reason}`);
  return `${lines.join('\n')}\n`;
}

export function registerQueue(program: Command): void {
  program.command('queue').description('finished, unmerged worktree branches in a proposed merge order; --ship merges them one by one')
    .option('--ship', 'merge them in order, stopping at the first conflict or failed check')
    .option('--rebase', 'with --ship: rebase each branch').option('--squash', 'with --ship: squash each branch')
    .option('--strategy <side>', 'with --ship: ours|theirs (git -X)')
    .option('--into <branch>', 'target branch (default: the branch checked out in each repository)')
    .option('--on-failure <what>', 'with --ship: stop|send-back: stop at the first failure (default: config mergeOnFailure), or send the failing branch back to its agent and go on')
    .option('--json', 'machine-readable output')
    .action(async (o: MergeCliOpts & { ship?: boolean }) => {
      if (o.onFailure !== undefined && !o.ship) throw new UsageError('--on-failure is for --ship: showing the queue merges nothing');
      const args = { ship: !!o.ship, ...mergeArgs(o) };
      const r = o.ship ? await withHub((h) => h.call('merge_queue', args, MERGE_TIMEOUT_MS)) : await showQueue(args);
      if (o.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      else process.stdout.write(o.ship ? `${(r as ShipReport).message}\n` : queueText(r as QueueView));
      if (o.ship && (r as ShipReport).failed) process.exitCode = 1;
    });
}

/** The order from the running hub, or, when none runs, from the state database read-only (git is only read). */
async function showQueue(args: Record<string, unknown>): Promise<QueueView> {
  try {
    return await withHub((h) => h.call('merge_queue', args, MERGE_TIMEOUT_MS)) as QueueView;
  } catch (err) {
    if (!(err instanceof CliError) || !/^No Overseer hub is running|did not answer/.test(err.message)) throw err; // only reading: the database will do
  }
  const [{ openState }, { MergeService }] = await Promise.all([import('./state.js'), import('../branches/mergeJobs.js')]);
  const s = await openState();
  try {
    const svc = new MergeService({ sql: s.sql.db, now: () => Date.now(), worktree: s.config!.worktree, env: process.env, bus: { emit: () => undefined } }); // only its queue is read: it merges nothing
    try {
      return await svc.queue(typeof args.into === 'string' ? { into: args.into } : {});
    } catch (err) {
      if (/no such table: job_merges/.test((err as Error).message)) throw new CliError(`The state at ${s.home} has no job_merges table yet: a hub of this version adds it when it starts.`);
      throw err;
    }
  } finally {
    await s.close();
  }
}
