// The hub's side of a branch a worker pushed (issue 30, docs/worktrees.md "Jobs that ran on a
// worker"): a job that ran on another machine (jobs.worker set) left its branch on the shared
// remote, not in the lead's repository. Before a merge, the merge queue or the lane's ship, the
// branch is fetched from origin into the local branch of that name — created, or moved forward —
// so merging works as for a local job; a local branch that went another way is never overwritten.
import type { JobRow } from '../store/jobs.js';
import { InvalidStateError } from '../errors.js';
import { fetchBranchHere, RemoteError, type FetchedBranch } from '../git/remote.js';

type Fetchable = Pick<JobRow, 'id' | 'title' | 'worker' | 'worktree' | 'branch' | 'repo_root'>;

/** The raw fetch (RemoteError when refused); undefined for a job of the hub's machine. */
export async function fetchJobBranch(job: Fetchable): Promise<FetchedBranch | undefined> {
  if (!job.worker || job.worktree !== 1 || !job.branch || !job.repo_root) return undefined;
  return fetchBranchHere(job.repo_root, job.branch);
}

/** Fetch the job's branch when a worker ran it (a no-op for a job of the hub's machine). A refusal is an InvalidStateError saying what to do. */
export async function fetchWorkerBranch(job: Fetchable): Promise<FetchedBranch | undefined> {
  try {
    return await fetchJobBranch(job);
  } catch (err) {
    if (err instanceof RemoteError) throw new InvalidStateError(`cannot merge job ${job.id} (${job.title}), which ran on the worker ${job.worker}: ${err.message}`);
    throw err;
  }
}

/** The same for many jobs (the merge queue): why, per job id, a branch could not be fetched. */
export async function fetchWorkerBranches(jobs: readonly Fetchable[]): Promise<Map<string, string>> {
  const failed = new Map<string, string>();
  for (const job of jobs) {
    try {
      await fetchJobBranch(job);
    } catch (err) {
      failed.set(job.id, err instanceof Error ? err.message : String(err));
    }
  }
  return failed;
}
