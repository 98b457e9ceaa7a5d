// The transcript index in the hub's state database (migration 12): `transcript_rows` holds each
// row's text and facts, `transcript_fts` is an external-content FTS5 index over it (kept in step
// by triggers; columnsize=0 — results are ordered by time, not bm25), `transcript_index_state`
// how many lines of each attempt's transcript are indexed and whether it is complete.
//
// Row ids are time: id = at_ms * 1024 + n (n < 1024 rows in one millisecond; more spill into the
// next one). FTS5 walks a match in rowid order, so "newest first" is `ORDER BY rowid DESC LIMIT n`
// with no sort and no visit of older matches, and `since` ends the walk at the first older row.
// The `job` column indexes one token per row, 'j' || hex(job_id), so a job filter is an FTS5 AND
// (doclist intersection), not a scan.
import { performance } from 'node:perf_hooks';
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

  /** The last id this writer gave out: rows arrive mostly in time order, so the next one is usually free. */
  private last = -1;

  insert(r: NewRow): void {
    const st = this.db.prepare('INSERT INTO transcript_rows (id, job_id, attempt, line, at, kind, tool, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const base = Math.max(0, Math.floor(r.at)) * ROWS_PER_MS;
    let id = this.last >= base && this.last < base + ROWS_PER_MS - 1 ? this.last + 1 : base;
    const args = [r.jobId, r.attempt, r.line, Math.floor(r.at), r.kind, r.tool ?? null, r.text] as const;
    try {
      st.run(id, ...args);
    } catch (err) {
      // Taken (rows of that millisecond written earlier, e.g. by a catch-up): look for a free one.
      // Only this statement failed; the surrounding transaction goes on.
      if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw err;
      id = this.allocId(r.at);
      st.run(id, ...args);
    }
    this.last = id;
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
  /** Lowest row id (from `since`); 0 for none. */
  minId: number;
  /** Keep only these jobs by a join (many jobs: too many tokens for MATCH). */
  jobIds?: readonly string[];
  limit: number;
  snippetTokens: number;
}

// One pass, newest first: the first `limit` matches are the results (only they get a snippet), the
// walk then goes on counting for total_hint up to `cap` matches or `budgetMs`. `since` ends the
// walk at the first older row rather than being a `rowid >= ?` bound in SQL: FTS5 walking newest
// first with a lower bound visits every older match when none is above it (measured: 25-40 ms on
// 10,000 transcripts for an empty window). One pass also means an expensive match (a prefix
// expanding to many words) is set up once, not once for the results and again for the count.

/** Results and how many rows match (counted up to `cap` or for `budgetMs` after the results; `complete`: exact). */
export interface HitPass {
  hits: IndexedHit[];
  total: { n: number; complete: boolean };
}

const TAKE = 'overseer_search_take';

/** The SQL function that lets snippet() run for the first rows of a pass only (better-sqlite3 functions are per connection). */
function taker(db: Db): { arm(n: number): void } {
  const known = takers.get(db);
  if (known) return known;
  let left = 0;
  db.function(TAKE, { deterministic: false, varargs: false }, () => (left > 0 ? (left--, 1) : 0));
  const t = { arm: (n: number): void => { left = n; } };
  takers.set(db, t);
  return t;
}
const takers = new WeakMap<Db, { arm(n: number): void }>();

export function searchPass(db: Db, q: HitQuery, cap: number, budgetMs: number): HitPass {
  const take = taker(db);
  // The walk reads the index alone (and the rows only when it must filter by job): counting a
  // match then costs next to nothing. The results' facts are read afterwards, by id.
  const walk = db.prepare(`SELECT transcript_fts.rowid AS id,
        CASE WHEN ${TAKE}() THEN snippet(transcript_fts, 0, '«', '»', '…', ${Math.floor(q.snippetTokens)}) END AS snip
      FROM transcript_fts${q.jobIds ? ' JOIN transcript_rows r ON r.id = transcript_fts.rowid' : ''}
      WHERE transcript_fts MATCH @match${q.jobIds ? ' AND r.job_id IN (SELECT value FROM json_each(@ids))' : ''}
      ORDER BY transcript_fts.rowid DESC`);
  const found: { id: number; snip: string | null }[] = [];
  let n = 0;
  let complete = true;
  let deadline = Infinity;
  take.arm(q.limit);
  try {
    for (const h of walk.iterate({ match: q.match, ...(q.jobIds ? { ids: JSON.stringify(q.jobIds) } : {}) }) as IterableIterator<{ id: number; snip: string | null }>) {
      if (h.id < q.minId) break;
      if (found.length < q.limit) {
        found.push(h);
        if (found.length === q.limit) deadline = performance.now() + budgetMs;
      } else if (n >= cap || ((n & 63) === 0 && performance.now() > deadline)) {
        complete = false;
        break;
      }
      n++;
    }
  } finally {
    take.arm(0);
  }
  if (found.length === 0) return { hits: [], total: { n, complete } };
  const facts = db.prepare(`SELECT r.id, r.job_id, r.attempt, r.line, r.at, r.kind, r.tool, j.title
      FROM transcript_rows r LEFT JOIN jobs j ON j.id = r.job_id WHERE r.id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(found.map((f) => f.id))) as Omit<IndexedHit, 'snip'>[];
  const byId = new Map(facts.map((f) => [f.id, f]));
  const hits = found.flatMap((f) => {
    const row = byId.get(f.id);
    return row ? [{ ...row, snip: f.snip }] : [];
  });
  return { hits, total: { n, complete } };
}
