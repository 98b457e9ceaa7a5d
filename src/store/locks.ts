// Lock and lock-wait rows. The wait-for graph is derived from these tables, so deadlock
// detection survives a hub restart.
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import { prefixRange } from './prefix.js';

export interface LockRow {
  path: string;
  holder: string;
  reason: string | null;
  ttl_s: number;
  acquired_at: number;
  expires_at: number;
}

export interface WaitRow {
  id: number;
  holder: string;
  paths_json: string;
  reason: string | null;
  ttl_s: number;
  status: 'waiting' | 'granted';
  created_at: number;
}

export class LockStore {
  /** The statement of every tool call (renew), prepared once. */
  private readonly renews: Statement;
  /**
   * Holders that may hold a lock, read from the table once and kept while this store is the one
   * that writes it (the hub's LockService: other stores on the same database only read): take
   * adds to it, every other write forgets it. Every tool call and hook check renews its caller's
   * locks, and most callers hold none: for them a renewal is a lookup here, not a query (a
   * SQLite read cost as much as the rest of a note read). It may only err towards a holder with
   * no lock left (a renewal that changes nothing, which forgets it).
   */
  private holderSet?: Set<string>;

  constructor(private readonly db: Db) {
    this.renews = db.prepare('UPDATE locks SET expires_at = ? + ttl_s * 1000 WHERE holder = ?');
  }

  heldAmong(paths: readonly string[]): LockRow[] {
    if (paths.length === 0) return [];
    return this.db.prepare(`SELECT * FROM locks WHERE path IN (${paths.map(() => '?').join(',')})`).all(...paths) as LockRow[];
  }

  /** Locks on paths strictly inside directory `dir` (absolute, no trailing slash). */
  under(dir: string): LockRow[] {
    const r = prefixRange('path', dir === '/' ? '/' : `${dir}/`);
    return this.db.prepare(`SELECT * FROM locks WHERE ${r.sql} ORDER BY path`).all(...r.params) as LockRow[];
  }

  all(prefix?: string): LockRow[] {
    if (!prefix) return this.db.prepare('SELECT * FROM locks ORDER BY path').all() as LockRow[];
    const r = prefixRange('path', prefix);
    return this.db.prepare(`SELECT * FROM locks WHERE ${r.sql} ORDER BY path`).all(...r.params) as LockRow[];
  }

  byHolder(holder: string): LockRow[] {
    return this.db.prepare('SELECT * FROM locks WHERE holder = ? ORDER BY path').all(holder) as LockRow[];
  }

  /** Take or renew `paths` for holder. */
  take(holder: string, paths: readonly string[], reason: string | null, ttlS: number, now: number): void {
    const st = this.db.prepare(`INSERT INTO locks (path, holder, reason, ttl_s, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT(path) DO UPDATE SET reason = COALESCE(excluded.reason, locks.reason), ttl_s = excluded.ttl_s, expires_at = excluded.expires_at WHERE locks.holder = excluded.holder`);
    for (const p of paths) st.run(p, holder, reason, ttlS, now, now + ttlS * 1000);
    this.holderSet?.add(holder);
  }

  release(holder: string, paths?: readonly string[]): string[] {
    const mine = this.byHolder(holder).map((l) => l.path).filter((p) => !paths || paths.includes(p));
    const st = this.db.prepare('DELETE FROM locks WHERE path = ? AND holder = ?');
    for (const p of mine) st.run(p, holder);
    if (mine.length) this.holderSet = undefined;
    return mine;
  }

  /** Push every lock of holder to now + its own TTL. */
  renew(holder: string, now: number): number {
    this.holderSet ??= new Set(this.holders());
    if (!this.holderSet.has(holder)) return 0;
    const changes = this.renews.run(now, holder).changes;
    if (changes === 0) this.holderSet = undefined;
    return changes;
  }

  expire(now: number): LockRow[] {
    const gone = this.db.prepare('SELECT * FROM locks WHERE expires_at <= ?').all(now) as LockRow[];
    if (gone.length) {
      this.db.prepare('DELETE FROM locks WHERE expires_at <= ?').run(now);
      this.holderSet = undefined;
    }
    return gone;
  }

  nextExpiry(): number | undefined {
    return (this.db.prepare('SELECT MIN(expires_at) AS t FROM locks').get() as { t: number | null }).t ?? undefined;
  }

  addWait(holder: string, paths: readonly string[], reason: string | null, ttlS: number, now: number): number {
    return Number(this.db.prepare('INSERT INTO lock_waits (holder, paths_json, reason, ttl_s, created_at) VALUES (?, ?, ?, ?, ?)').run(holder, JSON.stringify(paths), reason, ttlS, now).lastInsertRowid);
  }

  wait(id: number): WaitRow | undefined {
    return this.db.prepare('SELECT * FROM lock_waits WHERE id = ?').get(id) as WaitRow | undefined;
  }

  waiting(): WaitRow[] {
    return this.db.prepare(`SELECT * FROM lock_waits WHERE status = 'waiting' ORDER BY id`).all() as WaitRow[];
  }

  grant(id: number): void {
    this.db.prepare(`UPDATE lock_waits SET status = 'granted' WHERE id = ?`).run(id);
  }

  dropWait(id: number): void {
    this.db.prepare('DELETE FROM lock_waits WHERE id = ?').run(id);
  }

  dropWaitsOf(holder: string): void {
    this.db.prepare('DELETE FROM lock_waits WHERE holder = ?').run(holder);
  }

  dropAllWaits(): void {
    this.db.prepare('DELETE FROM lock_waits').run();
  }

  holders(): string[] {
    return (this.db.prepare('SELECT DISTINCT holder FROM locks').all() as { holder: string }[]).map((r) => r.holder);
  }

  waitersOf(path: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS c FROM lock_waits, json_each(lock_waits.paths_json) WHERE status = 'waiting' AND json_each.value = ?`).get(path) as { c: number }).c;
  }
}
