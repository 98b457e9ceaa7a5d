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

/** jobs: only the columns the moved modules use so far (requests: a job's needs_input); the
 * engine's move (docs/store-plan.md step 6) types the rest. */
export interface JobsTable {
  id: string;
  title: string;
  status: string;
  updated_at: number;
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

export interface Schema {
  notes: NotesTable;
  requests: RequestsTable;
  request_late_answers: RequestLateAnswersTable;
  jobs: JobsTable;
  runs: RunsTable;
  script_calls: ScriptCallsTable;
}
