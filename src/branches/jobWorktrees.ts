// A worktree job's worktree through its life: made before its first attempt (stacked on its
// dependencies' branches, then bootstrapped) or attached again for a later one, and closed after
// its end (committed, measured, pushed, removed; src/git/finish.ts). Closing takes seconds; until
// it is done the job is not settled for its dependents (who merge its branch) nor for a wait.
// A worker makes its jobs' worktrees with the same code in its own clone (WorktreeSite,
// src/worker/repos.ts).
import { existsSync } from 'node:fs';
import type { HubContext } from '../services/context.js';
import type { JobRow } from '../store/jobs.js';
import { batch } from '../store/sql/tx.js';
import { addEvent, eventInsert, getJob, jobUpdate, updateJob } from '../store/sql/jobs.js';
import { unclosedWorktrees } from '../store/sql/branches.js';
import { setSetupStack, setupBase, setupRecordStatement, setupReport, setupSkipped } from '../store/sql/setup.js';
import { createWorktree, finishWorktree, headCommit, type WorktreeInfo } from '../git/worktree.js';
import { integrate, planStack } from './stack.js';
import { attachWorktree } from '../git/attach.js';
import { bootstrapWorktree, setupFailure } from '../git/bootstrap.js';
import { errorMessage } from '../errors.js';
import { RemoteError } from '../git/remote.js';

/** A worktree setup command failed: the job fails with failure_class setup_failed and this message. */
export class SetupFailed extends Error {}
/** The branches of a job's worktree dependencies do not merge: failure_class dependency_conflict. */
export class DependencyConflict extends SetupFailed {}

/**
 * Where a job's new worktree is made: the hub makes it in the job's repository; a worker in its
 * own clone of the repository's shared remote (src/worker/repos.ts), where another job's branch
 * is the one fetched from the remote.
 */
export interface WorktreeSite {
  /** The repository the worktree is added to. */
  repoRoot: string;
  /** The ref there of a branch of the job's repository (fetched first, on a worker). */
  ref(branch: string): Promise<string>;
  /** What a job with no base and no worktree dependency starts from; undefined: the site's HEAD. */
  start?(): Promise<string | undefined>;
}

/** The hub's site: the job's own repository, its branches as they are. */
export const hubSite = (repoRoot: string): WorktreeSite => ({ repoRoot, ref: (branch) => Promise.resolve(branch) });

export class JobWorktrees {
  /** Jobs whose end is written but whose worktree is still being committed and closed. */
  private readonly closing = new Set<string>();

  constructor(private readonly ctx: HubContext) {}

  /** The job's worktree before an attempt: attached when it has one, else made; bootstrapped when new (or its last bootstrap failed). */
  async prepare(job: JobRow): Promise<void> {
    // A worktree made now is bootstrapped; so is one whose last bootstrap failed (a resume after setup_failed).
    const fresh = !job.work_dir || !existsSync(job.work_dir);
    if (job.work_dir && job.branch && job.repo_root) {
      await this.record(job, await attachWorktree({ repoRoot: job.repo_root, path: job.work_dir, branch: job.branch, baseCommit: job.base_commit! }), fresh);
    } else {
      await this.make(job, hubSite(job.repo_root!));
    }
  }

  /**
   * A new worktree for `job` in `site` (the hub: the job's repository; a worker: its clone of the
   * shared remote, src/worker/repos.ts), on its base (src/branches/stack.ts): its `base`, else its
   * one worktree dependency's branch, else the site's start (HEAD); several worktree dependencies
   * are merged in, and a conflict fails the job as dependency_conflict naming the files (the merge
   * is aborted). Recorded on the job's row and bootstrapped, as every new worktree.
   */
  async make(job: JobRow, site: WorktreeSite): Promise<WorktreeInfo> {
    const wt = await this.stacked(job, site);
    await this.record(job, wt, true);
    return wt;
  }

  /** The worktree on the job's row (its base kept once recorded), bootstrapped when new or when its last bootstrap failed. */
  async record(job: JobRow, wt: WorktreeInfo, fresh: boolean): Promise<void> {
    await updateJob(this.ctx.sql.db, job.id, { work_dir: wt.path, branch: wt.branch, base_commit: job.base_commit ?? wt.baseCommit }, this.ctx.clock.now());
    if (fresh || (await setupReport(this.ctx.sql.db, job.id))?.status === 'failed') await this.bootstrap(job, wt.path, wt.repoRoot);
  }

  private async stacked(job: JobRow, site: WorktreeSite): Promise<WorktreeInfo> {
    const { ctx } = this;
    const q = ctx.sql.db;
    const deps: JobRow[] = [];
    for (const id of JSON.parse(job.depends_on_json) as string[]) { const d = await getJob(q, id); if (d) deps.push(d); }
    const base = await setupBase(q, job.id);
    const asDep = (d: JobRow) => ({ id: d.id, title: d.title, worktree: d.worktree === 1, branch: d.branch, repoRoot: d.repo_root });
    const baseJob = base?.startsWith('job:') ? await getJob(q, base.slice('job:'.length)) : undefined;
    const plan = planStack({ base, repoRoot: job.repo_root!, deps: deps.map(asDep), ...(baseJob ? { baseJob: asDep(baseJob) } : {}) });
    let wt: WorktreeInfo;
    try {
      const start = plan.base ? await site.ref(plan.base.ref) : await site.start?.();
      wt = await createWorktree({ repoRoot: site.repoRoot, jobId: job.id, branch: job.branch!, worktreesDir: ctx.config.worktreesDir, base: start });
    } catch (err) {
      if (plan.base) throw new SetupFailed(`could not start the worktree from ${plan.base.ref}${plan.base.jobId ? ` (the branch of ${plan.base.jobId})` : ''}: ${errorMessage(err)}`);
      if (err instanceof RemoteError && err.kind !== 'unreachable') throw new SetupFailed(`could not start the worktree: ${err.message}`);
      throw err;
    }
    if (!plan.base) return wt;
    let merges = plan.merge;
    try {
      merges = await Promise.all(plan.merge.map(async (m) => ({ ...m, branch: await site.ref(m.branch) })));
    } catch (err) {
      throw new SetupFailed(`could not bring in its dependencies' branches: ${errorMessage(err)}`);
    }
    const r = await integrate(wt.path, merges);
    const now = ctx.clock.now();
    await setSetupStack(q, job.id, { branch: plan.base.ref, ...(plan.base.jobId ? { jobId: plan.base.jobId } : {}), merged: r.merged }, now);
    await addEvent(q, job.id, now, 'stacked', { base: plan.base.ref, base_job: plan.base.jobId ?? null, merged: r.merged, ...(r.ok ? {} : { conflict: { branch: r.branch, job_id: r.jobId, files: r.files } }) });
    if (!r.ok) {
      throw new DependencyConflict(`its dependencies' branches conflict: merging ${r.branch} (${r.jobId}) into ${plan.base.ref} (${plan.base.jobId}${r.merged.length ? ` + ${r.merged.join(', ')}` : ''}) ${r.files.length ? `conflicts in ${r.files.join(', ')}` : `failed: ${r.error}`}. The agent was not started. Merge those branches yourself (or have an agent do it) and spawn again with base: "<the merged branch>", or depend on one of them only.`);
    }
    // The job's own diff is measured from after the merges.
    return r.merged.length ? { ...wt, baseCommit: await headCommit(wt.path) ?? wt.baseCommit } : wt;
  }

  /** Copy the configured files into a fresh worktree and run its setup commands (src/git/bootstrap.ts); SetupFailed when one fails. */
  private async bootstrap(job: JobRow, path: string, repoRoot: string): Promise<void> {
    const { ctx } = this;
    const q = ctx.sql.db;
    await updateJob(q, job.id, { status_message: 'setting up its worktree' }, ctx.clock.now());
    const report = await bootstrapWorktree({ repoRoot, worktree: path, config: ctx.config.worktree, env: ctx.childEnv, skip: await setupSkipped(q, job.id) });
    const now = ctx.clock.now();
    // The report, the status line cleared and the setup event land together.
    await batch(q, [
      setupRecordStatement(q, job.id, report, now),
      jobUpdate(q, job.id, { status_message: null }, now),
      eventInsert(q, job.id, now, 'setup', { status: report.status, source: report.source, copied: report.copied.length, commands: report.commands.map((c) => c.command), duration_ms: report.duration_ms, ...(report.note ? { note: report.note } : {}) }),
    ]);
    if (report.status === 'failed') throw new SetupFailed(setupFailure(report));
  }

  /** Is the job's end written but its worktree not yet committed and closed? */
  isClosing(jobId: string): boolean {
    return this.closing.has(jobId);
  }

  /** Commit what the agent left, measure the diff, push, remove the folder (keeping the branch): src/git/finish.ts. */
  async close(jobId: string): Promise<void> {
    const { ctx } = this;
    const q = ctx.sql.db;
    this.closing.add(jobId);
    const job = (await getJob(q, jobId))!;
    try {
      const r = await finishWorktree(
        { repoRoot: job.repo_root!, path: job.work_dir!, branch: job.branch!, baseCommit: job.base_commit! },
        { message: `overseer: ${job.title} (${job.id})` },
      );
      await updateJob(q, jobId, { diff_stat: r.diffStat || '(no changes)', pr_url: r.prUrl ?? null, git_note: r.note ?? null }, ctx.clock.now());
    } catch (err) {
      ctx.log.error({ err, jobId }, 'closing the worktree failed');
      await updateJob(q, jobId, { git_note: `closing the worktree failed: ${errorMessage(err)}` }, ctx.clock.now());
    } finally {
      this.closing.delete(jobId);
    }
  }

  /** Settled worktree jobs whose worktree a stopped hub left open (the end was written, the close was not): marked closing, for the caller to close. */
  async unclosed(): Promise<string[]> {
    const ids = await unclosedWorktrees(this.ctx.sql.db);
    for (const id of ids) this.closing.add(id);
    return ids;
  }
}
