// The tables as Kysely sees them. A table is typed here when the first module that reads it moves
// onto this layer (docs/decisions.md, "One data-access layer over Kysely"); the DDL of both
// dialects is in src/store/migrations.ts (SQLite) and ./migrate.ts (PostgreSQL). A table or column
// of one dialect only says so.
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

export interface Schema {
  notes: NotesTable;
  transcript_rows: TranscriptRowsTable;
  transcript_fts: TranscriptFtsTable;
  transcript_index_state: TranscriptIndexStateTable;
  entries: EntriesTable;
  kb_entries: KbEntriesTable;
}
