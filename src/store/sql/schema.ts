// The tables as Kysely sees them. A table is typed here when the first module that reads it moves
// onto this layer (docs/decisions.md, "One data-access layer over Kysely"); the DDL of both
// dialects is in src/store/migrations.ts (SQLite) and ./migrate.ts (PostgreSQL).
import type { ColumnType, Generated } from 'kysely';

/** notes: key → value, with a version that grows by one on every write (compare-and-set). */
export interface NotesTable {
  key: string;
  value: string;
  version: number;
  author: string;
  /** ms since the epoch */
  updated_at: number;
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
  locks: LocksTable;
  lock_waits: LockWaitsTable;
}
