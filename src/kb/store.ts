// A knowledge base file's schema and the shapes of its entries (the statements are in
// sqlEntries.ts, on the layer). One file (project or global): SQLite table `entries` plus an FTS5 index over
// title, content and tags. The index is an external-content FTS5 table whose content is the
// view `entries_fts_src` (tags_json exposed as `tags`), kept in step by triggers on insert,
// update and delete, so a row and its index entry can never disagree. Search ranks by bm25
// with the title weighted most; user text only ever reaches MATCH as quoted words (text.ts ftsQueryOfTerms).
import type { Migration } from '../store/migrations.js';
import { InvalidInputError } from '../errors.js';
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

/** The error for a query with no word in it. */
export function noWords(query: string): InvalidInputError {
  const what = query.trim() ? 'has no letters or digits to search for' : 'is empty';
  return new InvalidInputError(`query ${what}: search with words, e.g. "flaky test timeout"`);
}
