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

export async function acquireHubLock(stateDir: string, log: Logger, attempts = 3): Promise<LockOutcome> {
  mkdirSync(stateDir, { recursive: true });
  const lockfilePath = join(stateDir, 'hub.lock');
  for (let i = 0; i < attempts; i++) {
    try {
      const release = await lockfile.lock(stateDir, {
        lockfilePath,
        realpath: false,
        stale: 15_000,
        update: 5_000,
        retries: { retries: 5, minTimeout: 100, maxTimeout: 1000 },
        onCompromised: (err) => log.error({ err }, 'the hub lock was compromised (another process removed it)'),
      });
      return { kind: 'acquired', release };
    } catch (err) {
      if ((err as { code?: string }).code !== 'ELOCKED') throw err;
      const info = readHubInfo(stateDir);
      if (info && info.pid !== process.pid && pidAlive(info.pid)) return { kind: 'running', info };
      // The recorded hub is gone (killed with -9): its lock is dead, take it over now.
      log.warn({ pid: info?.pid }, 'taking over the lock of a hub that is no longer running');
      if (existsSync(lockfilePath)) rmSync(lockfilePath, { recursive: true, force: true });
    }
  }
  throw new Error(`could not lock ${stateDir}: another process keeps taking the hub lock`);
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
