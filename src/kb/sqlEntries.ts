// One knowledge base's entries over the asynchronous data layer (issue 29, step 8), with the
// semantics the synchronous KbStore had (kb/store.ts keeps the file schema): the same entries, ids, lists, duplicates by title and search
// (any of the query's words, best first, a snippet of the content with the matches in **bold**).
//   SQLite: a knowledge-base file of its own, as today (`openKbFile`: its `entries` table and the
//     FTS5 index its triggers keep; bm25 with title 10, content 1, tags 4).
//   PostgreSQL: the shared database's `kb_entries` (migration 28), one table for every knowledge
//     base of the crew: a project's entries carry `scope` 'project' and `project_key` (the
//     project's root directory, real path: what picks its state directory today, config.ts
//     projectStateDir), global ones 'global' and ''. Each entry's `search_doc` is written with it
//     from the words kb/text.ts splits, stemmed by the overseer_kb configuration, weighted title A,
//     tags B, content D; ts_rank_cd's default weights (1.0, 0.4, 0.1) are bm25's 10 : 4 : 1.
// Every method takes the queryable (a Kysely, or a transaction of the caller's).
// docs/decisions.md, "Full-text search on both databases", says what ranks differently.
import { Kysely, SqliteDialect, sql, type RawBuilder, type Selectable } from 'kysely';
import { openDb, type Db as RawDb } from '../store/db.js';
import { StoreBusyError } from '../errors.js';
import type { Schema, KbEntriesTable } from '../store/sql/schema.js';
import type { SqlDialect } from '../store/sql/open.js';
import { BM25_WEIGHTS, KB_MIGRATIONS, SNIPPET_TOKENS, noWords, type EntryPatch, type KbEntry, type KbSearchHit, type ListFilter, type NewEntry } from './store.js';
import { ftsQueryOfTerms, normTitle, queryWords, queryWordsOf, tokens } from './text.js';
import type { KbScope } from './triage.js';

type Db = Kysely<Schema>;

export interface KbEntries {
  readonly dialect: SqlDialect;
  readonly scope: KbScope;
  insert(db: Db, e: NewEntry): Promise<KbEntry>;
  get(db: Db, id: number): Promise<KbEntry | undefined>;
  /** Change an entry (its search words follow); undefined if there is none. */
  update(db: Db, id: number, p: EntryPatch): Promise<KbEntry | undefined>;
  /** Read-modify-write with the entry held (in `db` when it is a transaction, else in one of its own). */
  modify(db: Db, id: number, fn: (e: KbEntry) => EntryPatch): Promise<KbEntry | undefined>;
  delete(db: Db, id: number): Promise<boolean>;
  /** The oldest entry with this normalised title. */
  byNormTitle(db: Db, norm: string): Promise<KbEntry | undefined>;
  /** Newest first, optionally with a tag, paged by id. */
  list(db: Db, f?: ListFilter): Promise<KbEntry[]>;
  count(db: Db): Promise<number>;
  /** Ids closest to `id` (for "not found" messages). */
  nearbyIds(db: Db, id: number, n?: number): Promise<number[]>;
  /** Best matches for user text, best first; text without a letter or digit is an InvalidInputError. */
  search(db: Db, query: string, limit?: number): Promise<KbSearchHit[]>;
  /** Best matches for already extracted terms (any of them); [] when there are none. */
  searchTerms(db: Db, terms: readonly string[], limit?: number): Promise<KbSearchHit[]>;
}

export type KbEntriesOf =
  | { dialect: 'sqlite'; scope: KbScope }
  /** `project`: the project's key (see above); only for scope 'project'. */
  | { dialect: 'postgres'; scope: KbScope; project?: string };

export function kbEntries(o: KbEntriesOf, now: () => number = Date.now): KbEntries {
  if (o.dialect === 'sqlite') return new SqliteKbEntries(o.scope, now);
  if (o.scope === 'project' && !o.project) throw new Error('kbEntries: a project knowledge base on PostgreSQL needs the project\'s key');
  return new PgKbEntries(o.scope, o.scope === 'project' ? o.project! : '', now);
}

/** A knowledge-base file (created and migrated when new) as the layer's queryable: SQLite's KB lives in files of its own. */
export function openKbFile(file: string): Db {
  return kbFileOver(openDb(file, KB_MIGRATIONS));
}

/** The layer over a KB file already open (destroying it closes the file). */
export function kbFileOver(raw: RawDb): Db {
  return new Kysely<Schema>({ dialect: new SqliteDialect({ database: raw }) });
}

const COLUMNS = ['id', 'title', 'content', 'tags_json', 'scope', 'source_job', 'project', 'norm_title', 'created_at', 'updated_at', 'merged_count', 'sources_json'] as const;
type Row = Pick<Selectable<KbEntriesTable>, (typeof COLUMNS)[number]>;

function toEntry(r: Row): KbEntry {
  const { tags_json, sources_json, ...rest } = r;
  return { ...rest, tags: JSON.parse(tags_json) as string[], sources: JSON.parse(sources_json) as string[] };
}

/** The columns a patch sets (updated_at always). */
function changes(p: EntryPatch, now: number) {
  return {
    updated_at: now,
    ...(p.title !== undefined ? { title: p.title, norm_title: normTitle(p.title) } : {}),
    ...(p.content !== undefined ? { content: p.content } : {}),
    ...(p.tags !== undefined ? { tags_json: JSON.stringify(p.tags) } : {}),
    ...(p.merged_count !== undefined ? { merged_count: p.merged_count } : {}),
    ...(p.sources !== undefined ? { sources_json: JSON.stringify(p.sources) } : {}),
  };
}

/** Run `fn` in `db` when it is a transaction, else in one of its own (SQLITE_BUSY: the StoreBusyError that says to retry). */
async function within<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  try {
    return await db.transaction().execute(fn);
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw new StoreBusyError(err);
    throw err;
  }
}

class SqliteKbEntries implements KbEntries {
  readonly dialect = 'sqlite' as const;
  constructor(readonly scope: KbScope, private readonly now: () => number) {}

  async insert(db: Db, e: NewEntry): Promise<KbEntry> {
    const t = this.now();
    return toEntry(await db.insertInto('entries').values({
      title: e.title, content: e.content, tags_json: JSON.stringify(e.tags ?? []), scope: this.scope,
      source_job: e.source_job ?? null, project: e.project ?? null, norm_title: normTitle(e.title),
      created_at: t, updated_at: t, sources_json: JSON.stringify(e.source_job ? [e.source_job] : []),
    }).returning(COLUMNS).executeTakeFirstOrThrow());
  }

  async get(db: Db, id: number): Promise<KbEntry | undefined> {
    const r = await db.selectFrom('entries').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return r && toEntry(r);
  }

  async update(db: Db, id: number, p: EntryPatch): Promise<KbEntry | undefined> {
    // The FTS index follows through the update trigger.
    const r = await db.updateTable('entries').set(changes(p, this.now())).where('id', '=', id).returning(COLUMNS).executeTakeFirst();
    return r && toEntry(r);
  }

  modify(db: Db, id: number, fn: (e: KbEntry) => EntryPatch): Promise<KbEntry | undefined> {
    return within(db, async (trx) => {
      // Kysely begins SQLite's transactions deferred: write first, so the read below is under the write lock.
      await trx.updateTable('entries').set({ updated_at: sql`updated_at` }).where('id', '=', id).execute();
      const cur = await this.get(trx, id);
      return cur ? this.update(trx, id, fn(cur)) : undefined;
    });
  }

  async delete(db: Db, id: number): Promise<boolean> {
    return (await db.deleteFrom('entries').where('id', '=', id).executeTakeFirst()).numDeletedRows > 0n;
  }

  async byNormTitle(db: Db, norm: string): Promise<KbEntry | undefined> {
    const r = await db.selectFrom('entries').select(COLUMNS).where('norm_title', '=', norm).orderBy('id').limit(1).executeTakeFirst();
    return r && toEntry(r);
  }

  async list(db: Db, f: ListFilter = {}): Promise<KbEntry[]> {
    let q = db.selectFrom('entries').select(COLUMNS);
    if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
    if (f.tag !== undefined) q = q.where(sql<boolean>`EXISTS (SELECT 1 FROM json_each(entries.tags_json) WHERE value = ${f.tag})`);
    return (await q.orderBy('id', 'desc').limit(f.limit ?? 50).execute()).map(toEntry);
  }

  async count(db: Db): Promise<number> {
    return (await db.selectFrom('entries').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
  }

  async nearbyIds(db: Db, id: number, n = 5): Promise<number[]> {
    return (await db.selectFrom('entries').select('id').orderBy(sql`abs(id - ${id})`).orderBy('id', 'desc').limit(n).execute()).map((r) => r.id);
  }

  async search(db: Db, query: string, limit = 10): Promise<KbSearchHit[]> {
    const words = queryWordsOf(query);
    if (words === undefined) throw noWords(query);
    return this.match(db, ftsQueryOfTerms(words), limit);
  }

  searchTerms(db: Db, terms: readonly string[], limit = 10): Promise<KbSearchHit[]> {
    return this.match(db, ftsQueryOfTerms(terms), limit);
  }

  // `rank MATCH 'bm25(…)'` + `ORDER BY rank`: FTS5 sorts by itself and snippet() runs for the rows returned only.
  private async match(db: Db, q: string | undefined, limit: number): Promise<KbSearchHit[]> {
    if (q === undefined) return [];
    const rows = (await sql<Row & { rank: number; snip: string }>`SELECT e.id, e.title, e.content, e.tags_json, e.scope, e.source_job, e.project,
        e.norm_title, e.created_at, e.updated_at, e.merged_count, e.sources_json, entries_fts.rank AS rank,
        snippet(entries_fts, 1, '**', '**', '…', ${sql.lit(SNIPPET_TOKENS)}) AS snip
      FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
      WHERE entries_fts MATCH ${q} AND entries_fts.rank MATCH ${`bm25(${BM25_WEIGHTS.join(', ')})`}
      ORDER BY entries_fts.rank LIMIT ${limit}`.execute(db)).rows;
    return rows.map(({ rank, snip, ...r }) => ({ entry: toEntry(r), score: -rank, snippet: snip }));
  }
}

/** A word as PostgreSQL's index keeps it: diacritics removed (FTS5's remove_diacritics 2), stemmed by overseer_kb after. */
const plain = (w: string): string => w.normalize('NFD').replace(/\p{M}+/gu, '');
/** Text as the words kb/text.ts splits, for to_tsvector: PostgreSQL's parser then sees plain words only. */
const words = (text: string): string => tokens(text).map(plain).filter(Boolean).join(' ');

class PgKbEntries implements KbEntries {
  readonly dialect = 'postgres' as const;
  constructor(readonly scope: KbScope, private readonly key: string, private readonly now: () => number) {}

  private doc(title: string, content: string, tags: readonly string[]): RawBuilder<string> {
    return sql<string>`setweight(to_tsvector('overseer_kb', ${words(title)}), 'A') || setweight(to_tsvector('overseer_kb', ${words(tags.join(' '))}), 'B')
      || setweight(to_tsvector('overseer_kb', ${words(content)}), 'D')`;
  }

  private mine(db: Db) {
    return db.selectFrom('kb_entries').where('scope', '=', this.scope).where('project_key', '=', this.key);
  }

  async insert(db: Db, e: NewEntry): Promise<KbEntry> {
    const t = this.now();
    return toEntry(await db.insertInto('kb_entries').values({
      scope: this.scope, project_key: this.key,
      title: e.title, content: e.content, tags_json: JSON.stringify(e.tags ?? []),
      source_job: e.source_job ?? null, project: e.project ?? null, norm_title: normTitle(e.title),
      created_at: t, updated_at: t, sources_json: JSON.stringify(e.source_job ? [e.source_job] : []),
      search_doc: this.doc(e.title, e.content, e.tags ?? []),
    }).returning(COLUMNS).executeTakeFirstOrThrow());
  }

  async get(db: Db, id: number): Promise<KbEntry | undefined> {
    const r = await this.mine(db).select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return r && toEntry(r);
  }

  update(db: Db, id: number, p: EntryPatch): Promise<KbEntry | undefined> {
    return this.modify(db, id, () => p);
  }

  // The search words are made from all three fields, so a change of one reads the others, under the row's lock.
  modify(db: Db, id: number, fn: (e: KbEntry) => EntryPatch): Promise<KbEntry | undefined> {
    return within(db, async (trx) => {
      const r = await this.mine(trx).select(COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
      if (!r) return undefined;
      const cur = toEntry(r);
      const p = fn(cur);
      const set = {
        ...changes(p, this.now()),
        ...(p.title !== undefined || p.content !== undefined || p.tags !== undefined
          ? { search_doc: this.doc(p.title ?? cur.title, p.content ?? cur.content, p.tags ?? cur.tags) } : {}),
      };
      return toEntry(await trx.updateTable('kb_entries').set(set).where('id', '=', id).returning(COLUMNS).executeTakeFirstOrThrow());
    });
  }

  async delete(db: Db, id: number): Promise<boolean> {
    const r = await db.deleteFrom('kb_entries').where('id', '=', id).where('scope', '=', this.scope).where('project_key', '=', this.key).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  async byNormTitle(db: Db, norm: string): Promise<KbEntry | undefined> {
    const r = await this.mine(db).select(COLUMNS).where('norm_title', '=', norm).orderBy('id').limit(1).executeTakeFirst();
    return r && toEntry(r);
  }

  async list(db: Db, f: ListFilter = {}): Promise<KbEntry[]> {
    let q = this.mine(db).select(COLUMNS);
    if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
    if (f.tag !== undefined) q = q.where(sql<boolean>`EXISTS (SELECT 1 FROM jsonb_array_elements_text(kb_entries.tags_json::jsonb) AS t(v) WHERE t.v = ${f.tag})`);
    return (await q.orderBy('id', 'desc').limit(f.limit ?? 50).execute()).map(toEntry);
  }

  async count(db: Db): Promise<number> {
    return Number((await this.mine(db).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  }

  async nearbyIds(db: Db, id: number, n = 5): Promise<number[]> {
    return (await this.mine(db).select('id').orderBy(sql`abs(id - ${id})`).orderBy('id', 'desc').limit(n).execute()).map((r) => r.id);
  }

  async search(db: Db, query: string, limit = 10): Promise<KbSearchHit[]> {
    const w = queryWordsOf(query);
    if (w === undefined) throw noWords(query);
    return this.match(db, w, limit);
  }

  searchTerms(db: Db, terms: readonly string[], limit = 10): Promise<KbSearchHit[]> {
    return this.match(db, queryWords(terms), limit);
  }

  // Any of the words (plainto_tsquery per word: no tsquery syntax can come from the text); the
  // snippet is ts_headline's over the content, cut to SNIPPET_TOKENS words, run for the rows returned only.
  private async match(db: Db, ws: readonly string[], limit: number): Promise<KbSearchHit[]> {
    const list = ws.map(plain).filter(Boolean);
    if (list.length === 0) return [];
    const q = sql.join(list.map((w) => sql`plainto_tsquery('overseer_kb', ${w})`), sql` || `);
    const opts = `StartSel=**, StopSel=**, MaxWords=${SNIPPET_TOKENS}, MinWords=${Math.floor(SNIPPET_TOKENS / 2)}`;
    const rows = (await sql<Row & { rank: number; snip: string }>`SELECT m.*, ts_headline('overseer_kb', m.content, m.q, ${opts}) AS snip FROM (
        SELECT ${sql.join(COLUMNS.map((c) => sql.ref(`e.${c}`)))}, ts_rank_cd(e.search_doc, x.q) AS rank, x.q
        FROM kb_entries e, (SELECT ${q} AS q) x
        WHERE e.scope = ${this.scope} AND e.project_key = ${this.key} AND e.search_doc @@ x.q
        ORDER BY rank DESC, e.id LIMIT ${limit}) m
      ORDER BY m.rank DESC, m.id`.execute(db)).rows;
    return rows.map(({ rank, snip, q: _q, ...r }: Row & { rank: number; snip: string; q?: unknown }) => ({ entry: toEntry(r), score: rank, snippet: cut(r.content, snip) }));
  }
}

/** FTS5's snippet marks a cut text with …; ts_headline does not: add them where the excerpt does not reach the content's ends. */
function cut(content: string, snip: string): string {
  const bare = snip.split('**').join('');
  const at = content.indexOf(bare);
  if (at < 0 || bare === '') return snip;
  return `${at > 0 ? '…' : ''}${snip}${at + bare.length < content.trimEnd().length ? '…' : ''}`;
}
