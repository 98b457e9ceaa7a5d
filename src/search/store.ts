// The transcript index's shapes and ids (the statements are in sqlIndex.ts, on the layer).
// In the hub's state database (migration 12): `transcript_rows` holds each
// row's text and facts, `transcript_fts` is an external-content FTS5 index over it (kept in step
// by triggers; columnsize=0 — results are ordered by time, not bm25), `transcript_index_state`
// how many lines of each attempt's transcript are indexed and whether it is complete.
//
// Row ids are time: id = at_ms * 1024 + n (n < 1024 rows in one millisecond; more spill into the
// next one). FTS5 walks a match in rowid order, so "newest first" is `ORDER BY rowid DESC LIMIT n`
// with no sort and no visit of older matches, and `since` ends the walk at the first older row.
// The `job` column indexes one token per row, 'j' || hex(job_id), so a job filter is an FTS5 AND
// (doclist intersection), not a scan.
import { sql } from 'kysely';
import type { SqlDb } from '../store/sql/open.js';
import type { RowKind } from './extract.js';

export const ROWS_PER_MS = 1024;

export interface NewRow {
  jobId: string;
  attempt: number;
  line: number;
  at: number;
  kind: RowKind;
  tool?: string;
  text: string;
}

export interface IndexedHit {
  id: number;
  job_id: string;
  attempt: number;
  line: number;
  at: number;
  kind: RowKind;
  tool: string | null;
  title: string | null;
  /** Only for the rows returned as results. */
  snip: string | null;
}

export interface PendingAttempt {
  job_id: string;
  n: number;
  transcript: string;
  started_at: number;
  /** Lines already indexed (0 when never). */
  lines: number;
}

/** The job token the `job` column holds for `jobId` (as SQLite's 'j' || hex(job_id)). */
export const jobToken = (jobId: string): string => `j${Buffer.from(jobId, 'utf8').toString('hex').toUpperCase()}`;

/** Whether the state has the transcript index: an old SQLite state file (before migration 12)
 * has not; on PostgreSQL it is part of every migrated schema (the CLI opens only those). */
export async function hasIndex(s: SqlDb): Promise<boolean> {
  if (s.dialect === 'postgres') return true;
  return (await sql`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'transcript_fts'`.execute(s.db)).rows.length > 0;
}

/** Results and how many rows match (counted up to `cap` or for `budgetMs` after the results; `complete`: exact). */
export interface HitPass {
  hits: IndexedHit[];
  total: { n: number; complete: boolean };
}
