// A worker's own repositories (issue 30 step 3, docs/workers-plan.md §3): the lead's checkout is
// on another machine, so a worker keeps one clone per repository under <its state>/repos/<key>
// (the repository key of docs/decisions.md "Locks keyed by repository", from jobs.repo_remote),
// cloned the first time and fetched after. A job's worktree is made there as the hub makes it
// (JobWorktrees.make: stacked on its base or dependencies, bootstrapped, recorded on its row),
// except that every branch it starts from is first fetched from the shared remote; a later
// attempt continues the job's own branch (this worker's, or the one another worker pushed). At
// its end the worktree is finished as on the hub (the agent's work committed, the diff measured,
// the folder removed) and the branch pushed to the remote, where the hub fetches it to merge.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { HubContext } from '../services/context.js';
import type { JobRow } from '../store/jobs.js';
import { getJob, updateJob } from '../store/sql/jobs.js';
import { JobWorktrees, SetupFailed, type WorktreeSite } from '../branches/jobWorktrees.js';
import { normaliseOrigin } from '../domain/lockKeys.js';
import { attachWorktree } from '../git/attach.js';
import { finishWorktree } from '../git/finish.js';
import { removeWorktree } from '../git/create.js';
import { errText, git, gitOut, outLines, realPathOrUndefined, withLock } from '../git/exec.js';
import { worktreeFolder } from '../git/placement.js';
import { cloneOnce, fetchBranches, fetchCommit, isAncestor, pushToOrigin, REMOTE_REFS, RemoteError, remoteDefault, tip } from '../git/remote.js';
import type { WorktreeInfo } from '../git/create.js';

/** What a worker's job works in: its worktree, its branch and the commit its diff is measured from. */
export interface PreparedWork {
  workDir: string;
  branch: string;
  baseCommit: string;
}

/** The folder name of a repository's clone: its key (`github.com/o/r`, `file:/srv/r`) made a file name, and a hash of the key so two keys never share one. */
export function cloneDirName(key: string): string {
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return `${key.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 80) || 'repo'}-${hash}`;
}

export class WorkerRepos {
  private readonly worktrees: JobWorktrees;
  /** How many clones this process made (a second job on one repository fetches, never clones again). */
  clones = 0;

  /** `stateDir`: the worker's state directory (its OVERSEER_HOME); clones live in <stateDir>/repos. */
  constructor(private readonly ctx: HubContext, private readonly stateDir: string) {
    this.worktrees = new JobWorktrees(ctx);
  }

  /** The clone of the job's repository on this worker (not made here). */
  cloneDir(job: Pick<JobRow, 'id' | 'repo_remote'>): string {
    const url = job.repo_remote;
    if (!url) throw new SetupFailed(`job ${job.id} records no shared remote (jobs.repo_remote), so a worker cannot fetch its repository; spawn it from a repository with an origin remote`);
    const key = normaliseOrigin(url, '/');
    if (!key) throw new SetupFailed(`job ${job.id}'s remote ${JSON.stringify(url)} names no repository`);
    return path.join(this.stateDir, 'repos', cloneDirName(key));
  }

  /**
   * The job's worktree on this worker, before an attempt: the clone made or fetched (one at a time
   * per repository in this process), then its worktree — attached when it is still here, on its
   * own branch when an earlier attempt left one (here, or pushed by another worker), else made as
   * the hub makes it from its base fetched from the remote. The row gets work_dir / branch /
   * base_commit. SetupFailed (the job fails as setup_failed) when the remote refuses or lacks a base.
   */
  async prepare(job: JobRow): Promise<PreparedWork> {
    if (job.worktree !== 1 || !job.branch) throw new SetupFailed(`job ${job.id} has no worktree of its own (worktree: true) and so cannot leave the hub's machine`);
    const dir = this.cloneDir(job);
    try {
      await this.serial(dir, async () => {
        if (await cloneOnce(job.repo_remote!, dir)) {
          this.clones++;
          this.ctx.log.info({ jobId: job.id, remote: job.repo_remote, dir }, 'cloned the repository');
        }
      });
      // A new worktree's base is where it starts (after any merges of its dependencies), as on the hub.
      const wt = await this.continued(job, dir) ?? await this.worktrees.make({ ...job, base_commit: null }, this.site(job, dir));
      return { workDir: wt.path, branch: wt.branch, baseCommit: wt.baseCommit };
    } catch (err) {
      // What the remote lacks or refuses fails the job (setup_failed); a remote out of reach is a crash its retry policy may retry.
      if (err instanceof RemoteError && err.kind !== 'unreachable') throw new SetupFailed(err.message, { cause: err });
      throw err;
    }
  }

  /** Where the hub's JobWorktrees makes a new one here: the clone, each branch fetched from the remote first. */
  private site(job: JobRow, dir: string): WorktreeSite {
    return {
      repoRoot: dir,
      ref: async (branch) => { await this.serial(dir, () => fetchBranches(dir, [branch])); return `origin/${branch}`; },
      // No base: the commit the spawn recorded (the lead's HEAD), else what the remote's HEAD names.
      start: () => this.serial(dir, async () => {
        if (!job.base_commit) return remoteDefault(dir);
        await fetchCommit(dir, job.base_commit);
        return job.base_commit;
      }),
    };
  }

  /** A later attempt: its worktree still here, or its branch (local, or fetched from the remote) in a new folder. Undefined: no branch yet, make one. */
  private async continued(job: JobRow, dir: string): Promise<WorktreeInfo | undefined> {
    const branch = job.branch!;
    const mine = job.work_dir && existsSync(job.work_dir) && (await this.worktreeOf(dir, job.work_dir));
    if (mine && job.base_commit) {
      const wt = await attachWorktree({ repoRoot: dir, path: job.work_dir!, branch, baseCommit: job.base_commit });
      await this.worktrees.record(job, wt, false);
      return wt;
    }
    const start = await this.serial(dir, async () => {
      await git(['worktree', 'prune'], { cwd: dir, allowFail: true }); // folders removed by hand no longer hold their branch
      const remote = await fetchBranches(dir, [branch]).then(() => tip(dir, `${REMOTE_REFS}/${branch}`), (err: unknown) => {
        if (err instanceof RemoteError && err.kind === 'missing') return undefined;
        throw err;
      });
      const local = await tip(dir, `refs/heads/${branch}`);
      if (!remote) return local;
      if (local && local !== remote && !(await isAncestor(dir, remote, local))) {
        // The remote's is newer (another worker's attempt) or went another way: the remote's wins, as what was published.
        await gitOut(['branch', '--force', branch, remote], { cwd: dir });
      } else if (!local) {
        await gitOut(['branch', '--no-track', branch, remote], { cwd: dir });
      }
      return remote;
    });
    if (!start) return undefined;
    if (!job.base_commit) throw new SetupFailed(`job ${job.id}'s branch ${branch} exists but the job records no base commit to measure its diff from`);
    await this.serial(dir, () => fetchCommit(dir, job.base_commit!));
    const top = (await realPathOrUndefined(dir)) ?? dir;
    const wtPath = worktreeFolder(this.ctx.config.worktreesDir, top, branch, job.id).path;
    const wt = await attachWorktree({ repoRoot: dir, path: wtPath, branch, baseCommit: job.base_commit });
    await this.worktrees.record(job, wt, true);
    return wt;
  }

  /**
   * At the job's end: the same finish as on the hub (the agent's work committed, the diff against
   * its base measured, the folder removed, the branch kept), then the branch pushed to the shared
   * remote. diff_stat and git_note go on the row; a refused push is a RemoteError saying why.
   */
  async publish(job: JobRow): Promise<void> {
    const row = (await getJob(this.ctx.sql.db, job.id)) ?? job;
    if (!row.work_dir || !row.branch || !row.base_commit) throw new SetupFailed(`job ${job.id} has no worktree on this worker to publish (prepare it first)`);
    const dir = this.cloneDir(row);
    const r = await finishWorktree(
      { repoRoot: dir, path: row.work_dir, branch: row.branch, baseCommit: row.base_commit },
      { message: `overseer: ${row.title} (${row.id})`, push: false },
    );
    const notes = (r.note ?? '').split('; ').filter((n) => n && n !== 'push disabled' && n !== 'no changes to push');
    let refused: unknown;
    try {
      await this.serial(dir, () => pushToOrigin(dir, row.branch!));
    } catch (err) {
      refused = err;
      notes.push(errText(err));
    }
    await updateJob(this.ctx.sql.db, row.id, { diff_stat: r.diffStat || '(no changes)', git_note: notes.length ? notes.join('; ') : null }, this.ctx.clock.now());
    if (refused) throw refused;
    this.ctx.log.info({ jobId: row.id, branch: row.branch, remote: row.repo_remote }, 'pushed the job\'s branch');
  }

  /** The job's worktree and local branch gone from this worker's clone (the remote keeps what was pushed). */
  async remove(job: JobRow): Promise<void> {
    const dir = this.cloneDir(job);
    if (!existsSync(dir)) return;
    if (job.work_dir && (await this.worktreeOf(dir, job.work_dir))) await removeWorktree(dir, job.work_dir);
    if (job.branch) await this.serial(dir, () => git(['branch', '-D', job.branch!], { cwd: dir, allowFail: true }));
  }

  /** One clone, fetch or push at a time per repository in this process. */
  private serial<T>(dir: string, fn: () => Promise<T>): Promise<T> {
    return withLock(`clone:${dir}`, fn);
  }

  /** Is `p` one of the clone's worktrees. */
  private async worktreeOf(dir: string, p: string): Promise<boolean> {
    const real = (await realPathOrUndefined(p)) ?? p;
    const out = (await git(['worktree', 'list', '--porcelain'], { cwd: dir, allowFail: true })).stdout;
    for (const l of outLines(out)) {
      if (l.startsWith('worktree ') && ((await realPathOrUndefined(l.slice(9))) ?? l.slice(9)) === real) return true;
    }
    return false;
  }
}
