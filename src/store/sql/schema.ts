// The tables as Kysely sees them. A table is typed here when the first module that reads it moves
// onto this layer (docs/decisions.md, "One data-access layer over Kysely"); the DDL of both
// dialects is in src/store/migrations.ts (SQLite) and ./migrate.ts (PostgreSQL). Ids a database
// assigns are `Generated` (optional on insert). One block per table, so the helpers moving modules
// in parallel merge cleanly. A table or column of one dialect only
// says so.
import type { ColumnType, Generated } from 'kysely';
import type { AttemptRow, JobRow } from '../jobs.js';
import type { WorkflowRow } from '../workflows.js';
import type { LockRow } from '../locks.js';

/** notes: key → value, with a version that grows by one on every write (compare-and-set). */
export interface NotesTable {
  key: string;
  value: string;
  version: number;
  author: string;
  /** ms since the epoch */
  updated_at: number;
}

/** requests: approvals, questions and permission prompts waiting for the person or the lead. */
export interface RequestsTable {
  id: string;
  /** The asking job, or a script run's id (tool_name 'overseer:script'). */
  job_id: string;
  kind: string;
  summary: string;
  plan_json: string | null;
  options_json: string | null;
  /** pending | answered | timed_out | cancelled */
  status: string;
  decision: string | null;
  answer: string | null;
  comment: string | null;
  created_at: number;
  answered_at: number | null;
  tool_name: string | null;
  tool_input_json: string | null;
  expires_at: number | null;
  answered_by: string | null;
  /** person | lead | any */
  who: string;
  lead_seen_at: number | null;
}

/** request_late_answers: answers that came after their request had closed. */
export interface RequestLateAnswersTable {
  id: Generated<number>;
  request_id: string;
  job_id: string;
  answered_by: string;
  decision: string | null;
  answer: string | null;
  comment: string | null;
  at: number;
  lead_seen_at: number | null;
}

/** runs: a dispatch run (src/runs/store.ts) or a script run (src/scripts); kind says which. */
export interface RunsTable {
  id: string;
  kind: ColumnType<string, string | undefined, string>;
  title: string;
  file: string | null;
  content: string;
  format: string;
  status: string;
  note: string | null;
  rules_json: string;
  deadline_at: number | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
  lead_seen_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1: a script run paused (pause_run). */
  paused: Generated<number>;
  /** The hub that drives it (migration 27). */
  hub_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** run_tasks: a dispatch run's task, its state in the run and its job(s) (src/runs/store.ts RunTaskRow). */
export interface RunTasksTable {
  run_id: string;
  task_id: string;
  n: number;
  spec_json: string;
  state: 'pending' | 'started' | 'skipped' | 'error';
  job_id: string | null;
  job_ids_json: string;
  error: string | null;
}

/** schedules (migration 18): a series of jobs (src/store/sql/schedules.ts ScheduleRow). */
export interface SchedulesTable {
  id: string;
  seq: number;
  title: string;
  created_by: string;
  kind: 'once' | 'every' | 'cron';
  every_s: number | null;
  cron: string | null;
  first_at: number;
  until_at: number | null;
  max_runs: number | null;
  spec_json: string;
  status: 'active' | 'done' | 'stopped' | 'cancelled';
  stop_reason: string | null;
  runs: number;
  current_job: string | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

/** debates (migration 21): one per debate (src/store/sql/debates.ts DebateRow). */
export interface DebatesTable {
  id: string;
  title: string;
  task: string;
  status: 'running' | 'consensus' | 'disagreement' | 'failed' | 'cancelled';
  cwd: string;
  repo_root: string | null;
  worktree_path: string | null;
  branch: string | null;
  base_commit: string | null;
  sides_json: string;
  max_rounds: number;
  loops: number;
  post_action: string | null;
  post_action_side: number;
  verify: number;
  error: string | null;
  project: string | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
  hub_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** debate_turns: one per side's job of a debate (PK debate_id, loop, kind, round, side). */
export interface DebateTurnsTable {
  debate_id: string;
  loop: number;
  kind: 'answer' | 'post_action' | 'review' | 'response';
  round: number;
  side: 0 | 1;
  job_id: string;
  status: 'running' | 'done' | 'failed';
  verdict: string | null;
  position: string | null;
  reasoning: string | null;
  open_points: string | null;
  text: string | null;
  error: string | null;
  created_at: number;
  ended_at: number | null;
}

/** script_calls: a script run's journal, one row per call (src/scripts/journal.ts). */
export interface ScriptCallsTable {
  run_id: string;
  seq: number;
  kind: string;
  args_json: string;
  scope: Generated<string>;
  label: string | null;
  phase: string | null;
  status: string;
  limited: Generated<number>;
  job_id: string | null;
  request_id: string | null;
  outcome_json: string | null;
  started_at: number;
  ended_at: number | null;
  replaced: Generated<number>;
  source: string | null;
}

/** script_log: a script run's log, phases and replay/pause notes, numbered per run. */
export interface ScriptLogTable {
  run_id: string;
  n: number;
  at: number;
  kind: string;
  text: string;
}

/** hubs (migration 27): the processes that serve the crew; times are the database's clock, ms. */
export interface HubsTable {
  id: string;
  host: string;
  pid: number;
  url: string | null;
  state_dir: string;
  version: string;
  started_at: number;
  heartbeat_at: number;
  stopped_at: number | null;
  dead_at: number | null;
}

/** workers (migration 30): the worker hosts (`overseer worker`, issue 30; docs/workers-plan.md). One row per
 * name; `epoch` (the lease epoch) grows at each registration under that name, and every write a worker
 * makes for its own row carries it, so an older process under the same name is fenced. */
export interface WorkersTable {
  name: string;
  host: string;
  pid: number;
  capacity: number;
  /** JSON array of strings. */
  labels_json: string;
  /** JSON object: CLI name → its `--version` line. */
  clis_json: string;
  version: string;
  /** How long a heartbeat holds the lease, ms (the worker's own `--lease`). */
  lease_ms: number;
  epoch: number;
  state: 'live' | 'stopped' | 'lost';
  started_at: number;
  heartbeat_at: number;
  stopped_at: number | null;
  lost_at: number | null;
  /** The worker process's row in `hubs` once it runs agents (docs/workers-plan.md); NULL until then. */
  hub_id: string | null;
}

/** job_commands (migration 27): what another hub asks of a job's owner; done_at once the owner ran it. */
export interface JobCommandsTable {
  id: Generated<number>;
  job_id: string;
  kind: JobCommandKind;
  reason: string | null;
  by: string;
  created_at: number;
  done_at: number | null;
  outcome: string | null;
}

export type JobCommandKind = 'cancel' | 'stop' | 'freeze' | 'thaw';

/** workflows: one row per implement/review workflow (hub_id: its owner, migration 27). */
export interface WorkflowsTable extends Omit<WorkflowRow, 'project'> {
  project: string | null;
  hub_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** workflow_milestones: the hub's record of a workflow's plan, one row per milestone. */
export interface WorkflowMilestonesTable {
  workflow_id: string;
  idx: number;
  text: string;
  done_at: number | null;
  done_cycle: number | null;
  done_job: string | null;
}

/** Counters with a default of 0: optional when a row is inserted. */
type Counters = 'turns' | 'cost_usd' | 'input_tokens' | 'output_tokens' | 'cost_unknown' | 'cache_read_tokens' | 'cache_creation_tokens';

/** jobs: one row per agent job (src/store/jobs.ts JobRow; the optional columns came with later migrations). */
export type JobsTable = { [K in keyof Required<JobRow>]-?: K extends Counters ? Generated<number> : undefined extends JobRow[K] ? Exclude<JobRow[K], undefined> | null : JobRow[K] };

/** attempts: one row per start of a job's child (PK job_id, n). */
export type AttemptsTable = { [K in keyof Required<AttemptRow>]-?: K extends Counters ? Generated<number> : undefined extends AttemptRow[K] ? Exclude<AttemptRow[K], undefined> | null : AttemptRow[K] };

/** events: a job's log, append-only. */
export interface EventsTable {
  id: Generated<number>;
  job_id: string;
  at: number;
  kind: string;
  data_json: string | null;
}

// --- messages
export interface MessagesTable {
  id: Generated<number>;
  from_id: string;
  to_id: string;
  text: string;
  created_at: number;
  delivered_at: number | null;
  read_at: number | null;
}

// --- projects (migration 19)
export interface ProjectsTable {
  name: string;
  archived_at: number | null;
  flagged: Generated<number>;
  note: string | null;
  created_at: number;
}

// --- provider_limits (migration 23)
export interface ProviderLimitsTable {
  account: string;
  provider: string;
  endpoint: string;
  key_hash: string;
  phase: string;
  kind: string | null;
  status: number | null;
  reason: string | null;
  opened_at: number | null;
  until_at: number | null;
  basis: string | null;
  failures: number;
  hits: number;
  paused_json: string;
  updated_at: number;
}

// --- job_warnings
export interface JobWarningsTable {
  id: Generated<number>;
  job_id: string;
  kind: string;
  detail: string;
  raised_at: number;
  cleared_at: number | null;
  lead_seen_at: number | null;
  reaction: string | null;
}

// --- overlaps
export interface OverlapsTable {
  id: Generated<number>;
  repo_root: string;
  file: string;
  job_a: string;
  job_b: string;
  locks_conflict: number;
  detected_at: number;
  cleared_at: number | null;
  lead_seen_at: number | null;
}

// --- job_setup
export interface JobSetupTable {
  job_id: string;
  skip: Generated<number>;
  report_json: string | null;
  base: string | null;
  stack_json: string | null;
  updated_at: number;
}

/** transcript_rows: what the agents said, one row per text part, tool call or result (src/search). */
export interface TranscriptRowsTable {
  /** at * 1024 + n: newest first is id order (src/search/store.ts). */
  id: number;
  job_id: string;
  attempt: number;
  /** 1-based line of the attempt's transcript file. */
  line: number;
  at: number;
  kind: string;
  tool: string | null;
  body: string;
  /** PostgreSQL only (migration 28): the row's words as a tsvector, written with the row (src/search/pgText.ts). */
  search_doc: string | null;
}

/** SQLite only: the FTS5 index over transcript_rows (external content, kept by triggers); its rowid is the row's id. */
export interface TranscriptFtsTable {
  body: string;
  /** 'j' || hex(job_id): a job filter inside MATCH. */
  job: string;
}

/** transcript_index_state: how many lines of each attempt's transcript are indexed, and whether all of it. */
export interface TranscriptIndexStateTable {
  job_id: string;
  attempt: number;
  lines: number;
  /** 0 | 1 */
  done: number;
}

/** The columns a knowledge-base entry has on both dialects (src/kb/store.ts). */
interface KbEntryColumns {
  id: Generated<number>;
  title: string;
  content: string;
  tags_json: string;
  scope: 'project' | 'global';
  source_job: string | null;
  /** Global entries: the project they were reported from (provenance). */
  project: string | null;
  norm_title: string;
  created_at: number;
  updated_at: number;
  merged_count: Generated<number>;
  sources_json: string;
}

/** entries: SQLite only, in a knowledge-base file of its own (one per project and one global, src/kb/store.ts KB_MIGRATIONS). */
export type EntriesTable = KbEntryColumns;

/** kb_entries: PostgreSQL only (migration 28): every knowledge base of the crew in one table. */
export interface KbEntriesTable extends KbEntryColumns {
  /** The project a 'project' entry belongs to (src/kb/sqlEntries.ts says what names it); '' for global entries. */
  project_key: string;
  /** Title (weight A), tags (B) and content (D) as a tsvector, written with the entry. */
  search_doc: string;
}

/** job_deps: `job_id` waits for `dep_id`. */
export interface JobDepsTable {
  job_id: string;
  dep_id: string;
}

/** budget_reservations: what a live job holds of its budgets (src/money). */
export interface BudgetReservationsTable {
  job_id: string;
  amount_usd: number;
  base_cost_usd: number;
  basis: string;
  reserved_at: number;
  released_at: number | null;
  booked_usd: number | null;
}

/** usage: the hub's own model calls (retry diagnosis, KB triage, model choice), priced. */
export interface UsageTable {
  id: Generated<number>;
  job_id: string | null;
  attempt: number | null;
  kind: string;
  model: string | null;
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  cache_read_tokens: Generated<number>;
  cache_creation_tokens: Generated<number>;
  cost_usd: Generated<number>;
  cost_unknown: Generated<number>;
  created_at: number;
}

/** job_send_backs: a worktree job whose merge failed, and its rounds back to its agent (src/branches/sendBack.ts). */
export interface JobSendBacksTable {
  job_id: string;
  round: Generated<number>;
  max_rounds: number;
  status: string;
  reason: string;
  detail_json: string;
  options_json: string;
  request_id: string | null;
  updated_at: number;
}

/** job_merges: a worktree job's branch merged (src/branches/mergeJobs.ts): at most one row per job. */
export interface JobMergesTable {
  id: Generated<number>;
  job_id: string;
  repo_root: string;
  branch: string;
  target: string;
  mode: string;
  strategy: string | null;
  commit_sha: string;
  previous: string;
  checks_json: Generated<string>;
  merged_at: number;
}

/** locks: one row per held key (src/store/locks.ts LockRow: repo and rel_path, migration 29). */
export type LocksTable = LockRow;

/** lock_waits: a lock_files call waiting for all of its paths, served in id order. */
export interface LockWaitsTable {
  id: Generated<number>;
  holder: string;
  /** JSON array of absolute real paths, in the waiter's tree */
  paths_json: string;
  /** JSON array of the paths' keys, [repo, rel_path] each (migration 29; NULL: keyed by the paths) */
  keys_json: string | null;
  reason: string | null;
  ttl_s: number;
  status: ColumnType<'waiting' | 'granted', 'waiting' | 'granted' | undefined, 'waiting' | 'granted'>;
  /** ms since the epoch */
  created_at: number;
}

/** crew_brief: the one standing text of the crew (src/brief/store.ts, migration 33): at most one row, id 1. */
export interface CrewBriefTable {
  id: number;
  text: string | null;
  set_by: string;
  version: number;
  set_at: number;
}

export interface Schema {
  notes: NotesTable;
  requests: RequestsTable;
  request_late_answers: RequestLateAnswersTable;
  jobs: JobsTable;
  runs: RunsTable;
  run_tasks: RunTasksTable;
  schedules: SchedulesTable;
  debate_turns: DebateTurnsTable;
  script_calls: ScriptCallsTable;
  script_log: ScriptLogTable;
  hubs: HubsTable;
  workers: WorkersTable;
  job_commands: JobCommandsTable;
  workflows: WorkflowsTable;
  workflow_milestones: WorkflowMilestonesTable;
  debates: DebatesTable;
  // step 3 (leaf stores)
  events: EventsTable;
  messages: MessagesTable;
  projects: ProjectsTable;
  provider_limits: ProviderLimitsTable;
  job_warnings: JobWarningsTable;
  overlaps: OverlapsTable;
  job_setup: JobSetupTable;
  transcript_rows: TranscriptRowsTable;
  transcript_fts: TranscriptFtsTable;
  transcript_index_state: TranscriptIndexStateTable;
  entries: EntriesTable;
  kb_entries: KbEntriesTable;
  attempts: AttemptsTable;
  job_deps: JobDepsTable;
  budget_reservations: BudgetReservationsTable;
  usage: UsageTable;
  job_merges: JobMergesTable;
  job_send_backs: JobSendBacksTable;
  locks: LocksTable;
  lock_waits: LockWaitsTable;
  crew_brief: CrewBriefTable;
}
