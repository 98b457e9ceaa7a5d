// The tables as Kysely sees them. A table is typed here when the first module that reads it moves
// onto this layer (docs/decisions.md, "One data-access layer over Kysely"); the DDL of both
// dialects is in src/store/migrations.ts (SQLite) and ./migrate.ts (PostgreSQL). Ids a database
// assigns are `Generated` (optional on insert). One block per table, so the helpers moving modules
// in parallel merge cleanly.
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

// --- jobs (read by the leaf stores of step 3: projects' stats, template stats, messages' reach;
// written through the synchronous JobStore until the engine moves, docs/store-plan.md step 6)
export interface JobsTable {
  id: string;
  seq: number;
  parent_id: string | null;
  title: string;
  provider: string;
  model: string | null;
  template: string | null;
  branch: string | null;
  status: string;
  turns: number;
  cost_usd: number;
  cost_unknown: number;
  project: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
}

// --- events (the job's log: appended by every module, read by the events view)
export interface EventsTable {
  id: Generated<number>;
  job_id: string;
  /** ms since the epoch */
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

export interface Schema {
  notes: NotesTable;
  // step 3 (leaf stores)
  jobs: JobsTable;
  events: EventsTable;
  messages: MessagesTable;
  projects: ProjectsTable;
  provider_limits: ProviderLimitsTable;
  job_warnings: JobWarningsTable;
  overlaps: OverlapsTable;
  job_setup: JobSetupTable;
}
