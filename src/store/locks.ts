// Lock and lock-wait rows: their types, and the one synchronous read left (the lock mounts and
// the lock guard, which ask on paths that cannot await yet). Everything else on these tables —
// every decision — is in src/store/sql/locks.ts on the asynchronous layer (issue 29, step 5).
import type { Db } from './db.js';

export interface LockRow {
  /** `<repository key>@<branch>` of the holder's tree, or '' (src/domain/lockKeys.ts). */
  repo: string;
  /** The path inside that tree ('/'-rooted), or the absolute path when repo is ''. */
  rel_path: string;
  /** The holder's absolute real path. */
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
  /** The paths' keys, [repo, rel_path] each, as JSON; null: keyed by the paths (migration 29). */
  keys_json: string | null;
  reason: string | null;
  ttl_s: number;
  status: 'waiting' | 'granted';
  created_at: number;
}

/**
 * Every lock, by path, read synchronously on the hub's connection (a read: allowed while a layer
 * transaction is open). mixed period: until step 9, when the lock mounts and the guard follow
 * lock changes of every hub and read through the layer (docs/store-plan.md §3.1).
 */
export function heldLocks(db: Db): LockRow[] {
  return db.prepare('SELECT * FROM locks ORDER BY path').all() as LockRow[];
}
