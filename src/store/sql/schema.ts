// The tables as Kysely sees them. A table is typed here when the first module that reads it moves
// onto this layer (docs/decisions.md, "One data-access layer over Kysely"); the DDL of both
// dialects is in src/store/migrations.ts (SQLite) and ./migrate.ts (PostgreSQL). Ids a database
// assigns are `Generated` (optional on insert). One block per table, so the helpers moving modules
// in parallel merge cleanly. A table or column of one dialect only
// says so.
import type { ColumnType, Generated } from 'kysely';
import type { AttemptRow, JobRow } from '../jobs.js';
import type { WorkflowRow } from '../workflows.js';

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

/** runs: the columns the lead's run attention reads (src/services/runAttention.ts); step 7 types the rest. */
export interface RunsTable {
  id: string;
  kind: string;
  title: string;
  status: string;
  note: string | null;
  rules_json: string;
  ended_at: number | null;
  lead_seen_at: number | null;
  /** The hub that drives it (migration 27). */
  hub_id: string | null;
}

/** script_calls: the columns the lead's run attention reads; step 7 types the rest. */
export interface ScriptCallsTable {
  run_id: string;
  seq: number;
  kind: string;
  label: string | null;
  status: string;
  request_id: string | null;
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

/** workflows, debates: only their owner (migration 27) for adoption; the rest comes with their modules. */
export interface OwnedTable {
  id: string;
  status: string;
  hub_id: string | null;
}


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

/** locks: one row per held path (absolute real path), its holder (a job id or 'lead') and its TTL. */
export interface LocksTable {
  path: string;
  holder: string;
  reason: string | null;
  ttl_s: number;
  /** ms since the epoch */
  acquired_at: number;
  /** ms since the epoch; renewed by any call of the holder */
  expires_at: number;
}

/** lock_waits: a lock_files call waiting for all of its paths, served in id order. */
export interface LockWaitsTable {
  id: Generated<number>;
  holder: string;
  /** JSON array of absolute real paths */
  paths_json: string;
  reason: string | null;
  ttl_s: number;
  status: ColumnType<'waiting' | 'granted', 'waiting' | 'granted' | undefined, 'waiting' | 'granted'>;
  /** ms since the epoch */
  created_at: number;
}

export interface Schema {
  notes: NotesTable;
  requests: RequestsTable;
  request_late_answers: RequestLateAnswersTable;
  jobs: JobsTable;
  runs: RunsTable;
  script_calls: ScriptCallsTable;
  hubs: HubsTable;
  job_commands: JobCommandsTable;
  workflows: WorkflowsTable;
  workflow_milestones: WorkflowMilestonesTable;
  debates: OwnedTable;
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
  locks: LocksTable;
  lock_waits: LockWaitsTable;
}
