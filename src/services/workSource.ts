// Where a runner takes its work from (issue 30, docs/workers-plan.md §3): one interface, two
// implementations. A hub starts the queued jobs it owns and unowned ones (`HUB_WORK`: the
// runner's own `dispatchOnce`, over `queuedFor`); a worker (`overseer worker`, src/worker/)
// fetches attempts from the pg-boss queues it serves and claims each through compare-and-set.
// The composition root (src/compose.ts) injects one; the runner never asks which it has.
import type { JobRow } from '../store/jobs.js';
import type { JobStatus } from '../domain/job.js';
import type { HubContext } from './context.js';
import type { Limits } from '../limits/service.js';

/** What a claim function is given by the runner for the attempt it starts. */
export interface ClaimInput {
  now: number;
  /** The new attempt's token, hashed (jobs.token_hash). */
  tokenHash: string;
  /** The attempt's transcript and stderr files (by its job and number). */
  files: (jobId: string, n: number) => { transcript: string; stderr: string };
}

/** A won claim: the job as the claim left it (running), the attempt's number and kind. */
export interface Claimed { job: JobRow; n: number; kind: string }

/** The runner as a work source drives it. */
export interface WorkRunner {
  /** This process's hub id: the owner of what it claims. */
  readonly hubId: string;
  /** The hub's own round: its queued jobs, best first, within its cap and the provider limiters. */
  dispatchOnce(): Promise<void>;
  /** Claim through `claim` and, when it won, start the attempt by the one launch path (preparation,
   * launcher, confinement, lock hook, transcript). The job claimed, or undefined when the claim lost. */
  claimAndStart(claim: (c: ClaimInput) => Promise<Claimed | undefined>): Promise<JobRow | undefined>;
  /** Ask for another round (one runs at a time). */
  dispatch(): Promise<void>;
  /** One limiter per provider account (src/limits): no start while a provider's limit holds. */
  readonly limits: Pick<Limits, 'start' | 'room' | 'admit'>;
  /** It stops (shutdown or fenced): start nothing more. */
  readonly stopping: boolean;
}

export interface WorkSource {
  /** One dispatch round: start what this process should start now. */
  round(r: WorkRunner): Promise<void>;
  /**
   * Before a claimed job's child starts: make its working directory on this machine ready.
   * `local` is the hub's own preparation (its worktree made or attached, its base recorded) when
   * the job needs one, else a no-op. A rejection ends the attempt as a failed set-up.
   */
  prepare(job: JobRow, local: () => Promise<void>): Promise<void>;
  /** Whether a claimed job must go through `prepare` even when the hub would need nothing. */
  mustPrepare(job: JobRow): boolean;
  /** A worktree job's attempt ended (succeeded, failed or cancelled; written): close its work tree
   * before its dependents are settled. `local` is the hub's close (the agent's work committed in the
   * lead's repository); a worker commits in its own clone and pushes the branch to the shared remote. */
  finish(job: JobRow, local: () => Promise<void>): Promise<void>;
  /** A job's attempt ended (written and settled) with this status. */
  ended(jobId: string, status: JobStatus): void;
  /** The runner stops (after its children ended): no more rounds; what was owed is done. */
  close(): Promise<void>;
}

/** Builds the work source of a hub in worker mode over its context (src/worker/queueWork.ts). */
export type WorkSourceFactory = (s: { ctx: HubContext; hubId: string }) => WorkSource;

/** A hub's: the queued jobs it owns and unowned ones, from the database (`Runner.dispatchOnce`). */
export const HUB_WORK: WorkSource = {
  round: (r) => r.dispatchOnce(),
  prepare: (_job, local) => local(),
  mustPrepare: () => false,
  finish: (_job, local) => local(),
  ended: () => undefined,
  close: async () => undefined,
};
