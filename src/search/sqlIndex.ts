// The transcript index over the asynchronous data layer (issue 29, step 8): the same rows, states
// and searches as search/store.ts, on SQLite through FTS5 (migration 12's transcript_fts, kept by
// its triggers) and on PostgreSQL through a tsvector column with a GIN index (migration 28). Every
// method takes the queryable (a Kysely or a transaction): callers group a batch of rows and the
// state of their attempts in one transaction, as the indexer does today.
//
// What differs between the two, on purpose (docs/decisions.md, "Full-text search on both
// databases"): SQLite walks matches newest first and stops counting total_hint after `budgetMs`;
// PostgreSQL counts up to `cap` first, in one capped query (no time budget), and takes the newest
// `limit` matches by the plan that count calls for. The words are split alike on both
// (src/search/pgText.ts), so the same rows match, in the same order.
import { sql, type InsertObject, type Kysely, type RawBuilder } from 'kysely';
import { performance } from 'node:perf_hooks';
import type { Schema } from '../store/sql/schema.js';
import type { SqlDialect } from '../store/sql/open.js';
import { InvalidInputError } from '../errors.js';
import { fts5Of, parseQuery, type ParsedQuery } from './query.js';
import { indexDocument, snippetOf, tsqueryOf } from './pgText.js';
import { jobToken, ROWS_PER_MS, type HitPass, type IndexedHit, type NewRow, type PendingAttempt } from './store.js';
import type { RowKind } from './extract.js';

export type { HitPass, IndexedHit, NewRow, PendingAttempt };

type Db = Kysely<Schema>;

/** A search of the index. */
export interface TranscriptQuery {
  /** In the syntax of search/query.ts (parsed here; a bad query is an InvalidInputError). */
  query: string;
  /** Only these jobs (none: every job; []: nothing). */
  jobIds?: readonly string[];
  /** Lowest row id (`since` × ROWS_PER_MS); 0 or none for all. */
  minId?: number;
  /** Results, newest first; only they get a snippet. */
  limit: number;
  /** total_hint counts matches up to this many. */
  cap: number;
  /** SQLite: longest the count may go on after the results (ms). PostgreSQL counts up to `cap`. */
  budgetMs?: number;
  /** Words of context in a snippet. */
  snippetTokens: number;
}

export interface TranscriptIndex {
  readonly dialect: SqlDialect;
  /** Add rows (ids from their time, the next free one when taken: by an earlier batch, a catch-up or another hub). */
  insert(db: Db, rows: readonly NewRow[]): Promise<void>;
  /** Record that `lines` lines of the attempt are indexed (`done`: all of it); never goes back. */
  setState(db: Db, jobId: string, attempt: number, lines: number, done: boolean): Promise<void>;
  indexedLines(db: Db, jobId: string, attempt: number): Promise<{ lines: number; done: boolean }>;
  /** Ended attempts whose transcript is not completely indexed, newest first; `skip`: `job:attempt` keys. */
  pending(db: Db, limit: number, skip?: readonly string[]): Promise<PendingAttempt[]>;
  /** The newest matches with their facts and snippets, and how many match (see TranscriptQuery). */
  search(db: Db, q: TranscriptQuery): Promise<HitPass>;
}

/** Up to this many jobs are filtered inside FTS5 as job tokens; more by a join (as search/service.ts). */
export const MAX_TOKEN_JOBS = 64;
/** Rows per INSERT statement (SQLite allows 32,766 parameters, PostgreSQL 65,535; a row takes 9). */
const CHUNK = 500;

export function transcriptIndex(dialect: SqlDialect): TranscriptIndex {
  return dialect === 'postgres' ? new PgTranscriptIndex() : new SqliteTranscriptIndex();
}

type Facts = Omit<IndexedHit, 'snip'>;
type Row = InsertObject<Schema, 'transcript_rows'>;

abstract class BaseIndex implements TranscriptIndex {
  abstract readonly dialect: SqlDialect;
  /** The last id this instance gave out: rows arrive mostly in time order, so the next one is usually free. */
  private last = -1;

  protected abstract values(id: number, r: NewRow): Row;
  protected abstract greatest(a: string, b: string): RawBuilder<number>;
  abstract pending(db: Db, limit: number, skip?: readonly string[]): Promise<PendingAttempt[]>;
  protected abstract searchParsed(db: Db, parsed: ParsedQuery, q: TranscriptQuery): Promise<HitPass>;

  async insert(db: Db, rows: readonly NewRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) await this.insertChunk(db, rows.slice(i, i + CHUNK));
  }

  private async insertChunk(db: Db, rows: readonly NewRow[]): Promise<void> {
    if (rows.length === 0) return;
    const used = new Set<number>();
    const planned = rows.map((r) => {
      const base = Math.max(0, Math.floor(r.at)) * ROWS_PER_MS;
      let id = this.last >= base && this.last < base + ROWS_PER_MS - 1 ? this.last + 1 : base;
      while (used.has(id)) id++;
      used.add(id);
      this.last = id;
      return { id, r };
    });
    const got = await db.insertInto('transcript_rows').values(planned.map((p) => this.values(p.id, p.r)))
      .onConflict((oc) => oc.column('id').doNothing()).returning('id').execute();
    const inserted = new Set(got.map((g) => g.id));
    // Taken ids (rows of that millisecond written before): each such row looks for a free one.
    for (const p of planned) if (!inserted.has(p.id)) await this.insertOne(db, p.r);
  }

  private async insertOne(db: Db, r: NewRow): Promise<void> {
    for (;;) {
      const id = await this.freeId(db, r.at);
      const got = await db.insertInto('transcript_rows').values(this.values(id, r))
        .onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst();
      if (got) {
        this.last = id;
        return;
      }
    }
  }

  /** A free id at (or just after) time `at`. */
  private async freeId(db: Db, at: number): Promise<number> {
    let base = Math.max(0, Math.floor(at)) * ROWS_PER_MS;
    for (;;) {
      const top = (await db.selectFrom('transcript_rows').select('id').where('id', '>=', base).where('id', '<', base + ROWS_PER_MS)
        .orderBy('id', 'desc').limit(1).executeTakeFirst())?.id;
      if (top === undefined) return base;
      if (top < base + ROWS_PER_MS - 1) return top + 1;
      base += ROWS_PER_MS;
    }
  }

  async setState(db: Db, jobId: string, attempt: number, lines: number, done: boolean): Promise<void> {
    await db.insertInto('transcript_index_state').values({ job_id: jobId, attempt, lines, done: done ? 1 : 0 })
      .onConflict((oc) => oc.columns(['job_id', 'attempt']).doUpdateSet({
        lines: this.greatest('transcript_index_state.lines', 'excluded.lines'),
        done: this.greatest('transcript_index_state.done', 'excluded.done'),
      })).execute();
  }

  async indexedLines(db: Db, jobId: string, attempt: number): Promise<{ lines: number; done: boolean }> {
    const r = await db.selectFrom('transcript_index_state').select(['lines', 'done'])
      .where('job_id', '=', jobId).where('attempt', '=', attempt).executeTakeFirst();
    return { lines: r?.lines ?? 0, done: r?.done === 1 };
  }

  async search(db: Db, q: TranscriptQuery): Promise<HitPass> {
    const parsed = parseQuery(q.query);
    if (q.jobIds && q.jobIds.length === 0) return { hits: [], total: { n: 0, complete: true } };
    try {
      return await this.searchParsed(db, parsed, q);
    } catch (err) {
      // A refusal the parser did not foresee is still a bad query, never a SQL error.
      const msg = err instanceof Error ? err.message : String(err);
      if (/fts5|MATCH|tsquery|syntax error/i.test(msg)) throw new InvalidInputError(`the index could not read this query (${msg}): search with plain words, "phrases", word*, OR and -word.`);
      throw err;
    }
  }
}

class SqliteTranscriptIndex extends BaseIndex {
  readonly dialect = 'sqlite' as const;

  protected values(id: number, r: NewRow): Row {
    return { id, job_id: r.jobId, attempt: r.attempt, line: r.line, at: Math.floor(r.at), kind: r.kind, tool: r.tool ?? null, body: r.text };
  }

  protected greatest(a: string, b: string): RawBuilder<number> {
    return sql<number>`MAX(${sql.ref(a)}, ${sql.ref(b)})`;
  }

  async pending(db: Db, limit: number, skip: readonly string[] = []): Promise<PendingAttempt[]> {
    return (await sql<PendingAttempt>`SELECT a.job_id, a.n, a.transcript, a.started_at, COALESCE(s.lines, 0) AS lines
      FROM attempts a LEFT JOIN transcript_index_state s ON s.job_id = a.job_id AND s.attempt = a.n
      WHERE a.status != 'running' AND COALESCE(s.done, 0) = 0
        AND (a.job_id || ':' || a.n) NOT IN (SELECT value FROM json_each(${JSON.stringify(skip)}))
      ORDER BY a.started_at DESC LIMIT ${limit}`.execute(db)).rows;
  }

  // Two walks, newest first, each ended by the first row older than minId (a `rowid >= ?` bound
  // makes FTS5 visit every older match when none is newer): the results with their snippets,
  // then, only when they filled `limit`, the count behind total_hint within cap and budget.
  protected async searchParsed(db: Db, parsed: ParsedQuery, q: TranscriptQuery): Promise<HitPass> {
    const useTokens = q.jobIds !== undefined && q.jobIds.length <= MAX_TOKEN_JOBS;
    const match = `body : (${fts5Of(parsed)})${useTokens ? ` AND job : (${q.jobIds!.map((j) => `"${jobToken(j)}"`).join(' OR ')})` : ''}`;
    const minId = q.minId ?? 0;
    const base = () => {
      const from = db.selectFrom('transcript_fts').where(sql<boolean>`transcript_fts MATCH ${match}`).orderBy(sql`transcript_fts.rowid`, 'desc');
      return q.jobIds && !useTokens
        ? from.innerJoin('transcript_rows as r', (j) => j.on(sql<boolean>`r.id = transcript_fts.rowid`))
          .where(sql<boolean>`r.job_id IN (SELECT value FROM json_each(${JSON.stringify(q.jobIds)}))`)
        : from;
    };
    const found: { id: number; snip: string }[] = [];
    const withSnip = base().select([
      sql<number>`transcript_fts.rowid`.as('id'),
      sql<string>`snippet(transcript_fts, 0, '«', '»', '…', ${sql.lit(Math.floor(q.snippetTokens))})`.as('snip'),
    ]);
    for await (const h of withSnip.stream()) {
      if (h.id < minId || found.length === q.limit) break;
      found.push(h);
    }
    let n = found.length;
    let complete = true;
    if (found.length === q.limit) {
      n = 0;
      const deadline = performance.now() + (q.budgetMs ?? Infinity);
      for await (const h of base().select(sql<number>`transcript_fts.rowid`.as('id')).stream()) {
        if (h.id < minId) break;
        if (n >= q.limit && (n >= q.cap || ((n & 63) === 0 && performance.now() > deadline))) {
          complete = false;
          break;
        }
        n++;
      }
    }
    if (found.length === 0) return { hits: [], total: { n, complete } };
    const facts = (await sql<Facts>`SELECT r.id, r.job_id, r.attempt, r.line, r.at, r.kind, r.tool, j.title
        FROM transcript_rows r LEFT JOIN jobs j ON j.id = r.job_id WHERE r.id IN (SELECT value FROM json_each(${JSON.stringify(found.map((f) => f.id))}))`.execute(db)).rows;
    const byId = new Map(facts.map((f) => [f.id, f]));
    return { hits: found.flatMap((f) => { const r = byId.get(f.id); return r ? [{ ...r, snip: f.snip }] : []; }), total: { n, complete } };
  }
}

class PgTranscriptIndex extends BaseIndex {
  readonly dialect = 'postgres' as const;

  protected values(id: number, r: NewRow): Row {
    return {
      id, job_id: r.jobId, attempt: r.attempt, line: r.line, at: Math.floor(r.at), kind: r.kind, tool: r.tool ?? null, body: r.text,
      search_doc: sql<string>`${indexDocument(r.text)}::tsvector`,
    };
  }

  protected greatest(a: string, b: string): RawBuilder<number> {
    return sql<number>`GREATEST(${sql.ref(a)}, ${sql.ref(b)})`;
  }

  async pending(db: Db, limit: number, skip: readonly string[] = []): Promise<PendingAttempt[]> {
    return (await sql<PendingAttempt>`SELECT a.job_id, a.n, a.transcript, a.started_at, COALESCE(s.lines, 0) AS lines
      FROM attempts a LEFT JOIN transcript_index_state s ON s.job_id = a.job_id AND s.attempt = a.n
      WHERE a.status != 'running' AND COALESCE(s.done, 0) = 0
        AND NOT ((a.job_id || ':' || a.n) = ANY(${[...skip]}::text[]))
      ORDER BY a.started_at DESC LIMIT ${limit}`.execute(db)).rows;
  }

  // The count first (capped), then the newest `limit` matches. With few matches (within the cap)
  // they are all taken from the GIN index and sorted: a plain `ORDER BY id DESC LIMIT n` may be
  // planned as a walk back along the primary key, which reads every row for a rare or absent
  // word (EXPLAIN ANALYZE on 50,000 rows: an absent word 88.7 ms that way, 2.5 ms from the GIN
  // index; a word in 10 rows 48.4 / 1.8 ms; in 516 rows 0.6 / 2.5 ms). With many, that walk finds
  // the newest ones soon. Then the facts of those rows only. Snippets are cut in JS from the
  // words that matched.
  protected async searchParsed(db: Db, parsed: ParsedQuery, q: TranscriptQuery): Promise<HitPass> {
    const where = sql`r.search_doc @@ ${tsqueryOf(parsed)}::tsquery AND r.id >= ${q.minId ?? 0}${q.jobIds ? sql` AND r.job_id = ANY(${[...q.jobIds]}::text[])` : sql``}`;
    const c = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM (SELECT 1 FROM transcript_rows r WHERE ${where} LIMIT ${q.cap + 1}) m`.execute(db)).rows[0]!.n;
    const total = { n: Math.min(c, q.cap), complete: c <= q.cap };
    if (c === 0) return { hits: [], total };
    const newest = c <= q.cap
      ? sql`WITH m AS MATERIALIZED (SELECT r.id FROM transcript_rows r WHERE ${where}) SELECT id FROM m ORDER BY id DESC LIMIT ${q.limit}`
      : sql`SELECT r.id FROM transcript_rows r WHERE ${where} ORDER BY r.id DESC LIMIT ${q.limit}`;
    const rows = (await sql<Facts & { body: string }>`SELECT r.id, r.job_id, r.attempt, r.line, r.at, r.kind, r.tool, r.body, j.title
      FROM (${newest}) n JOIN transcript_rows r ON r.id = n.id LEFT JOIN jobs j ON j.id = r.job_id
      ORDER BY r.id DESC`.execute(db)).rows;
    const snip = { size: q.snippetTokens, open: '«', close: '»', cut: '…' };
    const hits = rows.map(({ body, ...f }) => ({ ...f, kind: f.kind as RowKind, snip: snippetOf(body, parsed, snip) }));
    return { hits, total };
  }
}
