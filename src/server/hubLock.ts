// One hub per state directory. proper-lockfile holds <state>/hub.lock while a hub runs; the
// hub records pid and port in <state>/hub.json. A process that finds the lock taken checks
// the recorded pid: alive → report the running hub (the caller bridges to it or says so);
// dead (kill -9) → take the lock over at once instead of waiting for it to go stale.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { pidAlive } from '../launch/process.js';
import type { Logger } from '../log.js';

export interface HubInfo {
  pid: number;
  port: number;
  url: string;
  started_at: string;
  version: string;
}

export type LockOutcome = { kind: 'acquired'; release: () => Promise<void> } | { kind: 'running'; info: HubInfo };

export function hubInfoPath(stateDir: string): string {
  return join(stateDir, 'hub.json');
}

export function readHubInfo(stateDir: string): HubInfo | undefined {
  try {
    return JSON.parse(readFileSync(hubInfoPath(stateDir), 'utf8')) as HubInfo;
  } catch {
    return undefined;
  }
}

/** Atomic write: temp file + rename, so readers never see half a file. */
export function writeFileAtomic(file: string, data: string, mode = 0o644): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}

export async function acquireHubLock(stateDir: string, log: Logger, deadlineMs = 20_000): Promise<LockOutcome> {
  mkdirSync(stateDir, { recursive: true });
  const lockfilePath = join(stateDir, 'hub.lock');
  const until = Date.now() + deadlineMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    try {
      const release = await lockfile.lock(stateDir, {
        lockfilePath,
        realpath: false,
        stale: 15_000,
        update: 5_000,
        retries: 0,
        onCompromised: (err) => log.error({ err }, 'the hub lock was compromised (another process removed it)'),
      });
      // Claim the directory at once, before the endpoint exists: others see a live pid and wait
      // for the url instead of mistaking a stale hub.json for a dead hub.
      writeFileAtomic(hubInfoPath(stateDir), `${JSON.stringify({ pid: process.pid, port: 0, url: '', started_at: new Date().toISOString(), version: '' })}\n`);
      return {
        kind: 'acquired',
        release: async () => {
          rmSync(hubInfoPath(stateDir), { force: true });
          await release();
        },
      };
    } catch (err) {
      if ((err as { code?: string }).code !== 'ELOCKED') throw err;
      const info = readHubInfo(stateDir);
      if (info && info.pid !== process.pid && pidAlive(info.pid)) {
        if (info.url) return { kind: 'running', info };
        // A hub is starting: its url follows in a moment.
      } else if (info) {
        // The recorded hub is gone (killed with -9): its lock is dead, take it over now.
        log.warn({ pid: info.pid }, 'taking over the lock of a hub that is no longer running');
        rmSync(lockfilePath, { recursive: true, force: true });
        continue;
      }
      // No hub.json: a process is between taking the lock and claiming it; proper-lockfile
      // declares the lock stale after 15 s if that process died there.
      if (Date.now() > until) throw new Error(`could not lock ${stateDir}: ${lockfilePath} is held and no live hub is recorded in hub.json; if no overseer runs, delete ${lockfilePath}`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** The lead token (0600); reused across restarts so `overseer serve` clients keep working. */
export function ensureLeadToken(stateDir: string, make: () => string): string {
  const file = join(stateDir, 'lead.token');
  try {
    const t = readFileSync(file, 'utf8').trim();
    if (t.length >= 32) {
      chmodSync(file, 0o600);
      return t;
    }
  } catch {
    /* none yet */
  }
  const t = make();
  writeFileAtomic(file, `${t}\n`, 0o600);
  return t;
}
