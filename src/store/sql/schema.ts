// The tables as Kysely sees them. A table is typed here when the first module that reads it moves
// onto this layer (docs/decisions.md, "One data-access layer over Kysely"); the DDL of both
// dialects is in src/store/migrations.ts (SQLite) and ./migrate.ts (PostgreSQL).
import type { Generated } from 'kysely';
import type { AttemptRow, JobRow } from '../jobs.js';

/** notes: key → value, with a version that grows by one on every write (compare-and-set). */
export interface NotesTable {
  key: string;
  value: string;
  version: number;
  author: string;
  /** ms since the epoch */
  updated_at: number;
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

export interface Schema {
  notes: NotesTable;
  jobs: JobsTable;
  attempts: AttemptsTable;
  events: EventsTable;
  job_deps: JobDepsTable;
  budget_reservations: BudgetReservationsTable;
  usage: UsageTable;
}
