// Job, attempt, event and message rows: their types, read and written by the layer
// (src/store/sql/jobs.ts, messages.ts, events.ts) on SQLite and PostgreSQL alike.
import type { FailureClass, JobStatus } from '../domain/job.js';

/** Bumped on every write of a job's token_hash (a token given or revoked): src/server/tokenAuth.ts
 * remembers which token is whose only while it has not moved. Every token write goes through
 * updateJob / claimJob of src/store/sql/jobs.ts (runner, reconcile, takeover). One counter for the
 * process: a bump for another database only costs one more lookup. */
let epoch = 0;
export const tokenEpoch = (): number => epoch;
export const bumpTokenEpoch = (): void => { epoch++; };

export interface JobRow {
  id: string;
  seq: number;
  parent_id: string | null;
  depth: number;
  title: string;
  prompt: string;
  provider: string;
  model: string | null;
  cwd: string;
  work_dir: string | null;
  repo_root: string | null;
  worktree: number;
  branch: string | null;
  base_commit: string | null;
  priority: number;
  max_turns: number | null;
  budget_usd: number | null;
  timeout_s: number | null;
  context_json: string | null;
  template: string | null;
  checks_json: string;
  retry: 'none' | 'same' | 'analyze';
  labels_json: string;
  depends_on_json: string;
  status: JobStatus;
  status_message: string | null;
  progress: number | null;
  result: string | null;
  outcome: string | null;
  error: string | null;
  failure_class: FailureClass | null;
  session_id: string | null;
  turns: number;
  cost_usd: number;
  pid: number | null;
  pr_url: string | null;
  diff_stat: string | null;
  git_note: string | null;
  token_hash: string | null;
  /** The hub that runs it (migration 27): many hubs on one database; set by the claim. */
  hub_id?: string | null;
  resume_message: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
  workflow_id: string | null;
  phase: string | null;
  cycle: number | null;
  json_schema: string | null;
  structured_json: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_unknown: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  thread_usage_json: string | null;
  lock_violations_json: string | null;
  /** Last output from the child (ms), written by the health monitor; null before the first. */
  last_event_at: number | null;
  /** What the child last did (a tool call, a line of text), written with last_event_at. */
  last_activity: string | null;
  /** Model auto-choice (src/models/choice.ts): tier, reason, classifier, fallback; null unless spawned with model "auto". */
  model_choice_json?: string | null;
  /** Schedules (src/runs/schedules.ts): the job stays `waiting` until this time (ms); null/absent: no time set. */
  not_before?: number | null;
  /** The schedule this job is an occurrence of, and its number in the series (from 1). */
  schedule_id?: string | null;
  occurrence?: number | null;
  /** The project the job belongs to (src/projects); null: none. */
  project?: string | null;
  /** Its role (migration 31, src/roles): a name; null: implementer (every job before roles). */
  role?: string | null;
  /** The role as resolved when it was spawned (src/roles/role.ts RoleSpec); null: an implementer. */
  role_json?: string | null;
  /** Placement (migration 34, src/worker/placement.ts, docs/workers-plan.md): null or 'hub' = the hub's
   * machine; 'queue' = a worker takes it from queue_name (pg-boss job queue_id). */
  placement?: 'hub' | 'queue' | null;
  queue_name?: string | null;
  queue_id?: string | null;
  /** The worker (workers.name) that claimed its current attempt, and that worker's lease epoch then. */
  worker?: string | null;
  worker_epoch?: number | null;
  /** The shared remote (origin's URL at spawn) a worker fetches the base from and pushes the branch to. */
  repo_remote?: string | null;
  /** What the spawn asked: this worker only (spawn_agent host), and the labels a worker must all have. */
  place_host?: string | null;
  place_labels_json?: string | null;
}

export type NewJob = Omit<JobRow, 'seq' | 'created_at' | 'structured_json' | 'input_tokens' | 'output_tokens' | 'cost_unknown' | 'cache_read_tokens' | 'cache_creation_tokens' | 'thread_usage_json' | 'lock_violations_json' | 'last_event_at' | 'last_activity' | 'status_message' | 'progress' | 'result' | 'outcome' | 'error' | 'failure_class' | 'turns' | 'cost_usd' | 'pid' | 'pr_url' | 'diff_stat' | 'git_note' | 'resume_message' | 'started_at' | 'ended_at' | 'updated_at' | 'session_id' | 'project'> & { session_id: string; project?: string | null };

export interface AttemptRow {
  job_id: string;
  n: number;
  kind: 'initial' | 'retry' | 'resume' | 'takeover';
  status: string;
  started_at: number;
  ended_at: number | null;
  session_id: string | null;
  pid: number | null;
  exit_code: number | null;
  signal: string | null;
  turns: number;
  cost_usd: number;
  failure_class: string | null;
  error: string | null;
  diagnosis: string | null;
  transcript: string;
  input_tokens?: number;
  output_tokens?: number;
  cost_unknown?: number;
  cache_read_tokens?: number;
  cache_creation_tokens?: number;
  /** The child's stderr file (bounded), when kept. */
  stderr?: string | null;
}

export interface MessageRow {
  id: number;
  from_id: string;
  to_id: string;
  text: string;
  created_at: number;
  delivered_at: number | null;
  read_at: number | null;
}
