// The transcript index in the hub's state database (migration 12): `transcript_rows` holds each
// row's text and facts, `transcript_fts` is an external-content FTS5 index over it (kept in step
// by triggers; columnsize=0 — results are ordered by time, not bm25), `transcript_index_state`
// how many lines of each attempt's transcript are indexed and whether it is complete.
//
// Row ids are time: id = at_ms * 1024 + n (n < 1024 rows in one millisecond; more spill into the
// next one). FTS5 walks a match in rowid order, so "newest first" is `ORDER BY rowid DESC LIMIT n`
// with no sort and no visit of older matches, and `since` is a rowid range FTS5 applies itself.
// The `job` column indexes one token per row, 'j' || hex(job_id), so a job filter is an FTS5 AND
// (doclist intersection), not a scan.
import type { Db } from '../store/db.js';
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
  snip: string;
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

/** Does this database have the index (a state file a hub of this version has opened)? */
export function hasIndex(db: Db): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'transcript_fts'").get() !== undefined;
}

/** Writes of the index. Callers group them in one transaction (`tx`). */
export class IndexWriter {
  constructor(private readonly db: Db) {}

  /** A free id at (or just after) time `at`. */
  private allocId(at: number): number {
    const st = this.db.prepare('SELECT id FROM transcript_rows WHERE id >= ? AND id < ? ORDER BY id DESC LIMIT 1');
    let base = Math.max(0, Math.floor(at)) * ROWS_PER_MS;
    for (;;) {
      const top = (st.get(base, base + ROWS_PER_MS) as { id: number } | undefined)?.id;
      if (top === undefined) return base;
      if (top < base + ROWS_PER_MS - 1) return top + 1;
      base += ROWS_PER_MS;
    }
  }

  insert(r: NewRow): void {
    this.db.prepare('INSERT INTO transcript_rows (id, job_id, attempt, line, at, kind, tool, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(this.allocId(r.at), r.jobId, r.attempt, r.line, Math.floor(r.at), r.kind, r.tool ?? null, r.text);
  }

  /** Record that `lines` lines of the attempt are indexed (`done`: all of it, for good). */
  setState(jobId: string, attempt: number, lines: number, done: boolean): void {
    this.db.prepare(`INSERT INTO transcript_index_state (job_id, attempt, lines, done) VALUES (?, ?, ?, ?)
      ON CONFLICT (job_id, attempt) DO UPDATE SET lines = MAX(lines, excluded.lines), done = MAX(done, excluded.done)`)
      .run(jobId, attempt, lines, done ? 1 : 0);
  }

  /** Lines of the attempt already indexed (0 when none). */
  indexedLines(jobId: string, attempt: number): { lines: number; done: boolean } {
    const r = this.db.prepare('SELECT lines, done FROM transcript_index_state WHERE job_id = ? AND attempt = ?').get(jobId, attempt) as { lines: number; done: number } | undefined;
    return { lines: r?.lines ?? 0, done: r?.done === 1 };
  }

  /** Ended attempts whose transcript is not completely indexed, newest first. */
  pending(limit: number, skip: readonly string[] = []): PendingAttempt[] {
    return this.db.prepare(`SELECT a.job_id, a.n, a.transcript, a.started_at, COALESCE(s.lines, 0) AS lines
      FROM attempts a LEFT JOIN transcript_index_state s ON s.job_id = a.job_id AND s.attempt = a.n
      WHERE a.status != 'running' AND COALESCE(s.done, 0) = 0
        AND (a.job_id || ':' || a.n) NOT IN (SELECT value FROM json_each(?))
      ORDER BY a.started_at DESC LIMIT ?`).all(JSON.stringify(skip), limit) as PendingAttempt[];
  }
}

export interface HitQuery {
  /** The whole FTS5 MATCH expression (body terms, and the job tokens when filtering by few jobs). */
  match: string;
  /** Lowest row id (from `since`). */
  minId: number;
  /** Keep only these jobs by a join (many jobs: too many tokens for MATCH). */
  jobIds?: readonly string[];
  limit: number;
  snippetTokens: number;
}

/** Newest matches first, with their job's title and a snippet (matches in «», cuts as …). */
export function queryHits(db: Db, q: HitQuery): IndexedHit[] {
  const join = q.jobIds ? 'AND r.job_id IN (SELECT value FROM json_each(@ids))' : '';
  return db.prepare(`SELECT r.id, r.job_id, r.attempt, r.line, r.at, r.kind, r.tool, j.title,
        snippet(transcript_fts, 0, '«', '»', '…', ${Math.floor(q.snippetTokens)}) AS snip
      FROM transcript_fts JOIN transcript_rows r ON r.id = transcript_fts.rowid
        LEFT JOIN jobs j ON j.id = r.job_id
      WHERE transcript_fts MATCH @match AND transcript_fts.rowid >= @minId ${join}
      ORDER BY transcript_fts.rowid DESC LIMIT @limit`)
    .all({ match: q.match, minId: q.minId, limit: q.limit, ...(q.jobIds ? { ids: JSON.stringify(q.jobIds) } : {}) }) as IndexedHit[];
}

/** How many rows match, counted up to `cap`. */
export function countHits(db: Db, q: Omit<HitQuery, 'limit' | 'snippetTokens'>, cap: number): number {
  const join = q.jobIds ? 'JOIN transcript_rows r ON r.id = transcript_fts.rowid AND r.job_id IN (SELECT value FROM json_each(@ids))' : '';
  return (db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM transcript_fts ${join}
      WHERE transcript_fts MATCH @match AND transcript_fts.rowid >= @minId LIMIT @cap)`)
    .get({ match: q.match, minId: q.minId, cap, ...(q.jobIds ? { ids: JSON.stringify(q.jobIds) } : {}) }) as { n: number }).n;
}
