// Lock and lock-wait rows: their types. Every read and decision on these tables is in
// src/store/sql/locks.ts on the asynchronous layer (issue 29, steps 5 and 8).

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
  /** ms since the epoch */
  acquired_at: number;
  /** ms since the epoch; renewed by any call of the holder */
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
