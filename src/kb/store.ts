// One knowledge base file (project or global): SQLite table `entries` plus an FTS5 index over
// title, content and tags. The index is an external-content FTS5 table whose content is the
// view `entries_fts_src` (tags_json exposed as `tags`), kept in step by triggers on insert,
// update and delete, so a row and its index entry can never disagree. Search ranks by bm25
// with the title weighted most; user text only ever reaches MATCH through ftsQuery (quoted).
import { openDb, tx, type Db } from '../store/db.js';
import type { Migration } from '../store/migrations.js';
import { InvalidInputError } from '../errors.js';
import { ftsQuery, ftsQueryOfTerms, normTitle } from './text.js';
import type { KbScope } from './triage.js';

/**
 * Tags as FTS5 sees them: the JSON array text itself. The unicode61 tokenizer splits on the
 * brackets, quotes and commas, so `["time-zones","ci"]` indexes the words time, zones, ci.
 * (A json_each() subquery in the content view would break FTS5's integrity-check.)
 */
const TAGS_TEXT = (row: 'new' | 'old' | 'entries'): string => `${row}.tags_json`;

export const KB_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'kb entries with an FTS5 index',
    up: `
      CREATE TABLE entries (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        title         TEXT NOT NULL,
        content       TEXT NOT NULL,
        tags_json     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags_json)),
        scope         TEXT NOT NULL CHECK (scope IN ('project', 'global')),
        source_job    TEXT,
        project       TEXT,
        norm_title    TEXT NOT NULL,
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL,
        merged_count  INTEGER NOT NULL DEFAULT 0,
        sources_json  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(sources_json))
      );
      CREATE INDEX entries_norm_title ON entries(norm_title);
      CREATE VIEW entries_fts_src AS SELECT id, title, content, ${TAGS_TEXT('entries')} AS tags FROM entries;
      CREATE VIRTUAL TABLE entries_fts USING fts5(
        title, content, tags,
        content = 'entries_fts_src', content_rowid = 'id',
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts(rowid, title, content, tags) VALUES (new.id, new.title, new.content, ${TAGS_TEXT('new')});
      END;
      CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts(entries_fts, rowid, title, content, tags) VALUES ('delete', old.id, old.title, old.content, ${TAGS_TEXT('old')});
      END;
      CREATE TRIGGER entries_au AFTER UPDATE OF title, content, tags_json ON entries BEGIN
        INSERT INTO entries_fts(entries_fts, rowid, title, content, tags) VALUES ('delete', old.id, old.title, old.content, ${TAGS_TEXT('old')});
        INSERT INTO entries_fts(rowid, title, content, tags) VALUES (new.id, new.title, new.content, ${TAGS_TEXT('new')});
      END;
    `,
  },
];

/** bm25 column weights: title, content, tags. A title hit outweighs several body hits. */
export const BM25_WEIGHTS = [10, 1, 4] as const;
/** Tokens of context in a snippet. */
export const SNIPPET_TOKENS = 24;

export interface KbEntry {
  id: number;
  title: string;
  content: string;
  tags: string[];
  scope: KbScope;
  source_job: string | null;
  project: string | null;
  norm_title: string;
  created_at: number;
  updated_at: number;
  merged_count: number;
  /** Every job that contributed (the source job first, then jobs whose reports merged in). */
  sources: string[];
}

export interface KbSearchHit {
  entry: KbEntry;
  /** -bm25: higher is better. */
  score: number;
  /** Content excerpt around the matches, matched terms in **bold**. */
  snippet: string;
}

/** An entries row: a KbEntry with its tags and sources still JSON text. */
type Row = Omit<KbEntry, 'tags' | 'sources'> & { tags_json: string; sources_json: string };

function toEntry(r: Row): KbEntry {
  const { tags_json, sources_json, ...rest } = r;
  return { ...rest, tags: JSON.parse(tags_json) as string[], sources: JSON.parse(sources_json) as string[] };
}

export interface NewEntry {
  title: string;
  content: string;
  tags?: readonly string[];
  source_job?: string | null;
  project?: string | null;
}

export interface EntryPatch {
  title?: string;
  content?: string;
  tags?: readonly string[];
  merged_count?: number;
  sources?: readonly string[];
}

export interface ListFilter {
  tag?: string;
  limit?: number;
  /** Return entries with an id below this (ids descend: newest first). */
  beforeId?: number;
}

export class KbStore {
  private readonly st;

  constructor(readonly db: Db, readonly scope: KbScope, private readonly now: () => number = Date.now) {
    const [wt, wc, wg] = BM25_WEIGHTS;
    this.st = {
      insert: db.prepare(`INSERT INTO entries (title, content, tags_json, scope, source_job, project, norm_title, created_at, updated_at, sources_json)
        VALUES (@title, @content, @tags_json, @scope, @source_job, @project, @norm_title, @now, @now, @sources_json)`),
      get: db.prepare('SELECT * FROM entries WHERE id = ?'),
      del: db.prepare('DELETE FROM entries WHERE id = ?'),
      byNorm: db.prepare('SELECT * FROM entries WHERE norm_title = ? ORDER BY id LIMIT 1'),
      // `rank MATCH 'bm25(…)'` + `ORDER BY rank` lets FTS5 sort by itself, so SQLite needs no
      // sorter and snippet() runs only for the rows returned, not for every match.
      search: db.prepare(`SELECT e.*, entries_fts.rank AS rank,
          snippet(entries_fts, 1, '**', '**', '…', ${SNIPPET_TOKENS}) AS snip
        FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
        WHERE entries_fts MATCH ? AND entries_fts.rank MATCH 'bm25(${wt}, ${wc}, ${wg})'
        ORDER BY entries_fts.rank LIMIT ?`),
      list: db.prepare(`SELECT * FROM entries
        WHERE (@before IS NULL OR id < @before)
          AND (@tag IS NULL OR EXISTS (SELECT 1 FROM json_each(entries.tags_json) WHERE value = @tag))
        ORDER BY id DESC LIMIT @limit`),
      count: db.prepare('SELECT COUNT(*) AS n FROM entries'),
      nearby: db.prepare('SELECT id FROM entries ORDER BY abs(id - ?), id DESC LIMIT ?'),
    };
  }

  /** Open (creating and migrating) a KB file. */
  static open(file: string, scope: KbScope, now?: () => number): KbStore {
    return new KbStore(openDb(file, KB_MIGRATIONS), scope, now);
  }

  insert(e: NewEntry): KbEntry {
    const info = this.st.insert.run({
      title: e.title,
      content: e.content,
      tags_json: JSON.stringify(e.tags ?? []),
      scope: this.scope,
      source_job: e.source_job ?? null,
      project: e.project ?? null,
      norm_title: normTitle(e.title),
      now: this.now(),
      sources_json: JSON.stringify(e.source_job ? [e.source_job] : []),
    });
    return this.get(Number(info.lastInsertRowid))!;
  }

  get(id: number): KbEntry | undefined {
    const r = this.st.get.get(id) as Row | undefined;
    return r ? toEntry(r) : undefined;
  }

  /** Change an entry (the FTS index follows through the update trigger); undefined if there is none. */
  update(id: number, p: EntryPatch): KbEntry | undefined {
    const sets: string[] = ['updated_at = @now'];
    const vals: Record<string, unknown> = { id, now: this.now() };
    if (p.title !== undefined) {
      sets.push('title = @title', 'norm_title = @norm_title');
      vals.title = p.title;
      vals.norm_title = normTitle(p.title);
    }
    if (p.content !== undefined) { sets.push('content = @content'); vals.content = p.content; }
    if (p.tags !== undefined) { sets.push('tags_json = @tags_json'); vals.tags_json = JSON.stringify(p.tags); }
    if (p.merged_count !== undefined) { sets.push('merged_count = @merged_count'); vals.merged_count = p.merged_count; }
    if (p.sources !== undefined) { sets.push('sources_json = @sources_json'); vals.sources_json = JSON.stringify(p.sources); }
    const info = this.db.prepare(`UPDATE entries SET ${sets.join(', ')} WHERE id = @id`).run(vals);
    return info.changes ? this.get(id) : undefined;
  }

  /** Read-modify-write in one IMMEDIATE transaction (safe against a CLI writing the same file). */
  modify(id: number, fn: (e: KbEntry) => EntryPatch): KbEntry | undefined {
    return tx(this.db, () => {
      const cur = this.get(id);
      return cur ? this.update(id, fn(cur)) : undefined;
    });
  }

  delete(id: number): boolean {
    return this.st.del.run(id).changes > 0;
  }

  /** The oldest entry with this normalised title. */
  byNormTitle(norm: string): KbEntry | undefined {
    const r = this.st.byNorm.get(norm) as Row | undefined;
    return r ? toEntry(r) : undefined;
  }

  /** Entries newest first, optionally with a tag, paged by id. */
  list(f: ListFilter = {}): KbEntry[] {
    const rows = this.st.list.all({ before: f.beforeId ?? null, tag: f.tag ?? null, limit: f.limit ?? 50 }) as Row[];
    return rows.map(toEntry);
  }

  count(): number {
    return (this.st.count.get() as { n: number }).n;
  }

  /** Ids closest to `id` (for "not found" messages). */
  nearbyIds(id: number, n = 5): number[] {
    return (this.st.nearby.all(id, n) as { id: number }[]).map((r) => r.id);
  }

  /**
   * Best matches for user text, best first. Any text is safe: it is reduced to quoted words.
   * Text without a single letter or digit is an InvalidInputError that says what to send.
   */
  search(query: string, limit = 10): KbSearchHit[] {
    const q = ftsQuery(query);
    if (q === undefined) throw noWords(query);
    return this.match(q, limit);
  }

  /** Best matches for already extracted terms (any of them); [] when there are none. */
  searchTerms(terms: readonly string[], limit = 10): KbSearchHit[] {
    const q = ftsQueryOfTerms(terms);
    return q === undefined ? [] : this.match(q, limit);
  }

  private match(q: string, limit: number): KbSearchHit[] {
    const rows = this.st.search.all(q, limit) as (Row & { rank: number; snip: string })[];
    return rows.map(({ rank, snip, ...r }) => ({ entry: toEntry(r), score: -rank, snippet: snip }));
  }

  /** FTS5's own consistency check of the index against the entries (throws SQLITE_CORRUPT_VTAB if they differ). */
  checkIndex(): void {
    this.db.prepare("INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)").run();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The error for a query with no word in it. */
export function noWords(query: string): InvalidInputError {
  const what = query.trim() ? 'has no letters or digits to search for' : 'is empty';
  return new InvalidInputError(`query ${what}: search with words, e.g. "flaky test timeout"`);
}
