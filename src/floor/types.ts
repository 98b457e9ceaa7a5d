// The floor: what a person sees of the crew, shared by `overseer status`, `overseer watch` and
// the dashboard. Plain data (JSON over the hub's /api/floor), built by the pure model
// (src/floor/model.ts) from the rows src/floor/source.ts reads. Times are epoch ms.
import type { FloorLimit } from '../limits/view.js';

export type { FloorLimit } from '../limits/view.js';

export type SectionName = 'needs_you' | 'ready_to_ship' | 'running' | 'queued' | 'done';

/** Why a row is in NEEDS YOU. */
export type NeedKind = 'approval' | 'question' | 'permission' | 'warning' | 'failed' | 'workflow_blocked' | 'workflow_approval' | 'lock_violation' | 'overlap' | 'run_failed'
  | 'worker_lost' | 'worker_fenced';

export interface FloorWarning {
  id: number;
  kind: 'stalled' | 'turns_high' | 'budget_high' | 'time_high' | 'long_running' | 'commands_failed';
  detail: string;
  raised_at: number;
}

export interface FloorJob {
  job_id: string;
  title: string;
  status: string;
  parent_id: string | null;
  depth: number;
  provider: string;
  /** Where it runs or ran: its worker's name, else its hub's host (src/services/summary.ts hostOf); always set by the model. */
  host?: string;
  model: string | null;
  /** For a job spawned with model "auto" once decided: its tier, or "fallback" (src/models). */
  model_tier?: string;
  /** Its role when not the default implementer (reviewer, planner, a custom role); absent for an implementer. */
  role?: string;
  labels: string[];
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  /** ms since started_at (running) or its duration (ended); null when never started. */
  elapsed_ms: number | null;
  turns: number;
  max_turns: number | null;
  cost_usd: number;
  cost_unknown: boolean;
  budget_usd: number | null;
  input_tokens: number;
  output_tokens: number;
  progress: number | null;
  /** The agent's last report_status message, else its last tool call or text. */
  last_line: string | null;
  /** Last output from the child; null before the first. */
  last_event_at: number | null;
  /** Paths this job waits to lock, and who holds them. */
  lock_waits: { paths: string[]; holders: string[] }[];
  /** Open health warnings. */
  warnings: FloorWarning[];
  /** Queued/waiting: why (cap, priority, dependency on which job, frozen by whom). */
  why_waiting: string | null;
  /** Ended: result's first line, or the error with its failure_class. */
  result_line: string | null;
  failure_class: string | null;
  branch: string | null;
  diff_stat: string | null;
  pr_url: string | null;
  workflow_id: string | null;
  /** Children in the RUNNING tree (only filled in `sections.running`). */
  children: FloorJob[];
  /** Running/needs_input/frozen: ms since the child's last output (`now - last_event_at`); null before the first or when not live. */
  idle_ms?: number | null;
  /** The last tool call or text in the agent's transcript (live jobs), whatever its status line says. */
  last_activity?: string | null;
  /** Scheduling priority (higher starts first). */
  priority?: number;
  /** Scheduled jobs (src/runs/schedules.ts): when it may start (epoch ms), and the series it belongs to. */
  run_at?: number | null;
  schedule_id?: string;
  occurrence?: number | null;
  /** The job's project (src/projects); null: none. */
  project?: string | null;
}

export interface NeedsYouItem {
  kind: NeedKind;
  /** Stable key for selection: `req:<id>`, `warn:<id>`, `job:<id>`, `wf:<id>`, `run:<id>`, `worker:<name>` (lost), `fenced:<name>`. */
  key: string;
  job_id: string | null;
  title: string;
  /** What is asked or what went wrong, one line. */
  text: string;
  request_id?: string;
  workflow_id?: string;
  /** A script run's item (run_failed), or a request an approve() of that run opened. */
  run_id?: string;
  /** For approvals: the options the answer may take. */
  options?: string[];
  at: number;
  /** The CLI command that acts on it. */
  command: string;
  /** Requests: who may answer (the person only, the lead only, or either). */
  who?: 'person' | 'lead' | 'any';
  /** Requests: when the request times out (null: never). */
  expires_at?: number | null;
  /** Requests: the whole summary (`text` is its first line). */
  summary?: string;
  /** An approval's plan (request_approval's `plan`): the sections it gave, each as text or a list. */
  plan?: RequestPlan;
}

/** request_approval's plan as the floor shows it: labelled sections, each one text or a list of items. */
export interface RequestPlan {
  rationale?: string;
  resources?: string | string[];
  risks?: string | string[];
  rollback?: string;
}

/** What a finished job's completion checks said: `passed`, `failed` (the job failed on them), or `not_run` (it has none). */
export type ShipChecks = 'passed' | 'failed' | 'not_run';

/** A row of READY TO SHIP: a finished worktree job whose branch is not merged and not dismissed. */
export interface ShipItem {
  job_id: string;
  title: string;
  /** succeeded, or failed when its checks failed. */
  status: string;
  branch: string;
  repo_root: string;
  diff_stat: string | null;
  checks: ShipChecks;
  /** The checks it has (`command: npm test`, …) and, when they failed, the first line of why. */
  check_names: string[];
  check_detail: string | null;
  /** Other unmerged or live branches the conflict guard saw changing the same files. */
  overlaps: { job_id: string; title: string; files: string[] }[];
  ended_at: number | null;
  /** ms since it ended. */
  age_ms: number | null;
  project: string | null;
  /** The CLI command that merges it. */
  command: string;
  /**
   * Its last failed merge and the rounds it was sent back (src/branches/sendBack.ts), null when none
   * is on record. `sendable`: a failed merge the lane's "send back" verb can return to its agent.
   */
  send_back: { round: number; max: number; status: string; reason: string; sendable: boolean; request_id: string | null } | null;
  /** Its role, when not the default implementer (docs/decisions.md "Roles"). */
  role: string | null;
}

export interface FloorWorkflow {
  workflow_id: string;
  title: string;
  status: string;
  phase: string;
  cycle: number;
  max_cycles: number;
  milestones_done: number;
  milestones_total: number;
  /** e.g. `3/5 · cycle 4 · review` */
  bar: string;
  current_job: string | null;
  /** Blocked: the reason (`code: message`). */
  blocked_reason?: string | null;
  /** Waiting for approval: the request that approves its plan. */
  approval_request?: string | null;
}

/** One call of a script run (src/scripts/view.ts): an agent() with its job, or an approve() with its request. */
export interface FloorRunCall {
  seq: number;
  kind: string;
  label: string | null;
  phase: string | null;
  /** The call: running, done or failed. */
  status: string;
  job_id: string | null;
  /** The job's title and status (agent calls). */
  job_title: string | null;
  job_status: string | null;
  request_id: string | null;
  cost_usd: number;
}

/** A script run (run_script, `overseer dispatch <file.js>`): running, or ended within the failed window. */
export interface FloorRun {
  run_id: string;
  kind: 'script';
  title: string;
  /** running, succeeded, failed, cancelled. */
  status: string;
  /** No new call starts (pause_run); running agents go on. */
  paused: boolean;
  /** The last phase() the script entered (null before the first). */
  phase: string | null;
  counts: { done: number; running: number; failed: number };
  cost_usd: number;
  budget_usd: number | null;
  /** Failed or cancelled: why (a script error names its line). */
  error: string | null;
  /** An approve() of the run waiting for the person: its request. */
  waiting_request: string | null;
  created_at: number;
  ended_at: number | null;
  calls: FloorRunCall[];
  /** The run's last log lines (log, phase, replay), oldest first. */
  log: { at: number; kind: string; text: string }[];
}

export interface FloorLock {
  path: string;
  holder: string;
  holder_title: string | null;
  expires_at: number;
  waiters: string[];
}

export interface FloorTotals {
  running: number;
  queued: number;
  done: number;
  failed: number;
  needs_you: number;
  cost_usd: number;
  cost_unknown: boolean;
  /** The hub's cap on concurrently running agents (config maxAgents). */
  cap: number;
  /** Counted apart from `running` (running + needs_input); frozen jobs hold a slot under the cap. */
  frozen?: number;
  /** Cancelled or interrupted (neither `done` = succeeded nor `failed`). */
  cancelled?: number;
}

/** The crew brief (src/brief, docs/floor.md "The crew brief"): the standing text every new agent reads first. */
export interface FloorBrief {
  text: string;
  /** +1 at every set or clear. */
  version: number;
  set_by: 'lead' | 'person';
  set_at: number;
}

export interface Floor {
  at: number;
  /** Where the data came from: the running hub, or the database read-only (no hub). */
  source: 'hub' | 'database';
  hub: { url: string | null; pid: number | null; started_at: number | null; uptime_ms: number | null; version: string | null };
  totals: FloorTotals;
  /** The crew brief in force; null when there is none (never set, or cleared). Absent from a floor of an older hub. */
  brief?: FloorBrief | null;
  needs_you: NeedsYouItem[];
  /** Finished worktree jobs whose branch is not merged and not dismissed (src/floor/ship.ts), oldest first. */
  ready_to_ship?: ShipItem[];
  /** Roots of the RUNNING tree (lead's children first), each with its `children`. */
  running: FloorJob[];
  queued: FloorJob[];
  /** Recent ended jobs, newest first. */
  done: FloorJob[];
  workflows: FloorWorkflow[];
  /** Script runs: running ones first (oldest first), then those that ended within the failed window (newest first). */
  runs?: FloorRun[];
  locks: FloorLock[];
  /** Provider limits in force (src/limits): who is held and until when; empty when none. */
  limits?: FloorLimit[];
  /** The crew has worker hosts, or its jobs ran on more than one host: watch and the dashboard show each row's host. */
  show_host?: boolean;
}
