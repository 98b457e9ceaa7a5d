// The tables as Kysely sees them. A table is typed here when the first module that reads it moves
// onto this layer (docs/decisions.md, "One data-access layer over Kysely"); the DDL of both
// dialects is in src/store/migrations.ts (SQLite) and ./migrate.ts (PostgreSQL).
import type { Generated } from 'kysely';

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

/**
 * jobs: only the columns the moved modules use so far (requests: needs_input; the claim of
 * src/store/sql/claims.ts); the rest is typed when the job engine moves (docs/store-plan.md step 6).
 */
export interface JobsTable {
  id: string;
  title: string;
  status: string;
  hub_id: string | null;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
  token_hash: string | null;
  result: string | null;
  outcome: string | null;
}

/** workflows, debates: only their owner (migration 27) for adoption; the rest comes with their modules. */
export interface OwnedTable {
  id: string;
  status: string;
  hub_id: string | null;
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
  workflows: OwnedTable;
  debates: OwnedTable;
}
