// Note rows: key → value with a version that grows by one on every write (compare-and-set).
import type { Db } from './db.js';
import { prefixRange } from './prefix.js';

export interface NoteRow {
  key: string;
  value: string;
  version: number;
  author: string;
  updated_at: number;
}

export class NoteStore {
  constructor(private readonly db: Db) {}

  get(key: string): NoteRow | undefined {
    return this.db.prepare('SELECT * FROM notes WHERE key = ?').get(key) as NoteRow | undefined;
  }

  /** Insert or bump the version; returns the new version. Call inside a transaction; `cur`: the row as just read in it. */
  put(key: string, value: string, author: string, now: number, cur: NoteRow | undefined = this.get(key)): number {
    const version = (cur?.version ?? 0) + 1;
    this.db
      .prepare('INSERT INTO notes (key, value, version, author, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, version = excluded.version, author = excluded.author, updated_at = excluded.updated_at')
      .run(key, value, version, author, now);
    return version;
  }

  delete(key: string): boolean {
    return this.db.prepare('DELETE FROM notes WHERE key = ?').run(key).changes > 0;
  }

  /** Keys under a prefix (all when empty), without values, ordered by key. */
  list(prefix: string, limit: number, afterKey?: string): Omit<NoteRow, 'value'>[] {
    const r = prefixRange('key', prefix);
    return this.db
      .prepare(`SELECT key, version, author, updated_at FROM notes WHERE ${r.sql} AND key > ? ORDER BY key LIMIT ?`)
      .all(...r.params, afterKey ?? '', limit) as Omit<NoteRow, 'value'>[];
  }

  /** Full rows for the given keys and/or a prefix. */
  select(keys: readonly string[], prefix: string | undefined): NoteRow[] {
    const rows: NoteRow[] = [];
    if (keys.length) rows.push(...(this.db.prepare(`SELECT * FROM notes WHERE key IN (${keys.map(() => '?').join(',')})`).all(...keys) as NoteRow[]));
    if (prefix !== undefined) {
      const r = prefixRange('key', prefix);
      rows.push(...(this.db.prepare(`SELECT * FROM notes WHERE ${r.sql}`).all(...r.params) as NoteRow[]));
    }
    const seen = new Set<string>();
    return rows.filter((r) => !seen.has(r.key) && seen.add(r.key)).sort((a, b) => (a.key < b.key ? -1 : 1));
  }
}
