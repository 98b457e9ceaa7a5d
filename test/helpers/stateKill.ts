// Clean-up after a test that ran a hub as its own process on a state directory: SIGKILL the hub
// (its pid from hub.json) and the process group of every job that has a pid, then remove the
// test's directory.
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { alive } from './wait.js';

export async function killStateAndRemove(state: string, dir: string): Promise<void> {
  try {
    const hub = (JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number }).pid;
    if (alive(hub)) process.kill(hub, 'SIGKILL');
  } catch { /* no hub */ }
  if (existsSync(join(state, 'state.db'))) {
    const db = new Database(join(state, 'state.db'), { readonly: true });
    for (const { pid } of db.prepare('SELECT pid FROM jobs WHERE pid IS NOT NULL').all() as { pid: number }[]) {
      try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
    }
    db.close();
  }
  await rm(dir, { recursive: true, force: true });
}
