// The tables as Kysely sees them. A table is typed here when the first module that reads it moves
// onto this layer (docs/decisions.md, "One data-access layer over Kysely"); the DDL of both
// dialects is in src/store/migrations.ts (SQLite) and ./migrate.ts (PostgreSQL).

/** notes: key → value, with a version that grows by one on every write (compare-and-set). */
export interface NotesTable {
  key: string;
  value: string;
  version: number;
  author: string;
  /** ms since the epoch */
  updated_at: number;
}

export interface Schema {
  notes: NotesTable;
}
