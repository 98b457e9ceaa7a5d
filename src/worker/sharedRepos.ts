// Where a worker's job works until the worker keeps clones of its own (h/p30repo's
// src/worker/repos.ts, docs/workers-plan.md §3 "Repositories"): in the job's own directory, which
// must be on this machine's file system (a worker beside the hub, or a shared path). The hub's own
// preparation makes a worktree job's worktree in its repository; nothing is pushed (the branch is
// in the repository the hub merges from). A job whose directory this machine does not have fails
// its set-up saying so, and is never run elsewhere than where it was asked.
import { existsSync } from 'node:fs';
import type { JobRow } from '../store/jobs.js';
import { SetupFailed } from '../branches/jobWorktrees.js';
import type { WorkerRepoPort } from './queueWork.js';

export class SharedRepos implements WorkerRepoPort {
  constructor(private readonly workerName: string) {}

  async prepare(job: JobRow, local: () => Promise<void>): Promise<void> {
    const dir = job.worktree === 1 ? job.repo_root ?? job.cwd : job.cwd;
    if (!existsSync(dir)) {
      throw new SetupFailed(`worker ${this.workerName} has no ${dir} (the job's ${job.worktree === 1 ? 'repository' : 'directory'}): until workers keep their own clones, a worker runs only jobs whose directory is on its file system; start the worker where that path exists, or spawn the job without host/labels`);
    }
    await local();
  }

  async publish(): Promise<void> {
    // The branch is in the job's own repository already.
  }
}
