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
 * jobs: only the columns the claim writes (src/store/sql/hubs.ts `claimJob`); the rest is typed
 * when the job engine moves onto this layer (docs/store-plan.md step 6).
 */
export interface JobsTable {
  id: string;
  status: string;
  hub_id: string | null;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
  token_hash: string | null;
  result: string | null;
  outcome: string | null;
}

/** runs, workflows, debates: only their owner (migration 27) for adoption; the rest comes with their modules. */
export interface OwnedTable {
  id: string;
  status: string;
  hub_id: string | null;
}

export interface Schema {
  notes: NotesTable;
  hubs: HubsTable;
  job_commands: JobCommandsTable;
  jobs: JobsTable;
  runs: OwnedTable;
  workflows: OwnedTable;
  debates: OwnedTable;
}
