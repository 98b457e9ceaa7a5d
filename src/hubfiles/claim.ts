// The claim on a state directory: an OS-level exclusive lock, held for the hub's whole
// lifetime, on <state>/hub.claim (a tiny SQLite file, not state.db). SQLite takes it with
// fcntl() record locks, which the kernel drops when the holding process dies (kill -9
// included), so taking over a dead hub's claim is the same single atomic step as taking a
// free one, and a live claim can never be removed by anyone else. The file itself is never
// deleted: deleting a locked file would let a second process lock a fresh inode.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export interface Claim {
  /** Give the claim up (the kernel does this too if the process dies). */
  release(): void;
}

export function claimPath(stateDir: string): string {
  return join(stateDir, 'hub.claim');
}

const BUSY = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED']);

/** Take the claim now, or return undefined when another live process holds it. Never waits. */
export function tryClaim(stateDir: string): Claim | undefined {
  mkdirSync(stateDir, { recursive: true });
  const db = new Database(claimPath(stateDir), { timeout: 0 });
  try {
    // EXCLUSIVE locking mode: once written, the lock is kept until the connection closes.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS claim (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, at TEXT NOT NULL)');
    db.prepare('INSERT OR REPLACE INTO claim (id, pid, at) VALUES (1, ?, ?)').run(process.pid, new Date().toISOString());
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    if (BUSY.has((err as { code?: string }).code ?? '')) return undefined;
    throw err;
  }
  let held = true;
  return {
    release: () => {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
