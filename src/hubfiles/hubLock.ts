// One hub per state directory. The claim (src/hubfiles/claim.ts: a kernel lock on
// <state>/hub.claim held for the hub's lifetime) decides who serves; hub.json only says where
// to connect and is written by the claim holder alone. A process that cannot take the claim
// never serves: it reads hub.json and checks that the pid recorded there answers at the url
// (GET /health names its pid); a missing, forged or dead hub.json means "wait and retry".
import { chmodSync, linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { tryClaim, type Claim } from '../hubfiles/claim.js';

export interface HubInfo {
  pid: number;
  port: number;
  url: string;
  started_at: string;
  version: string;
}

/** The claim holder's handle: publish hub.json once listening, release at stop. */
export interface HubClaim {
  publish(info: HubInfo): void;
  /** Remove hub.json (ours: only the holder writes it), then give up the claim. */
  release(): Promise<void>;
}

export type LockOutcome = { kind: 'acquired'; release: () => Promise<void>; claim: HubClaim } | { kind: 'running'; info: HubInfo };

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

function holderOf(stateDir: string, claim: Claim): HubClaim {
  // A dead hub's hub.json is stale from this moment: drop it so nobody connects there.
  rmSync(hubInfoPath(stateDir), { force: true });
  return {
    publish: (info) => writeFileAtomic(hubInfoPath(stateDir), `${JSON.stringify(info, null, 2)}\n`),
    release: async () => {
      rmSync(hubInfoPath(stateDir), { force: true });
      claim.release();
    },
  };
}

/** Take the claim if it is free (or its holder died), else undefined. Never waits. */
export function tryAcquireHub(stateDir: string): HubClaim | undefined {
  const claim = tryClaim(stateDir);
  return claim ? holderOf(stateDir, claim) : undefined;
}

/** Does a hub with this pid answer at info.url? (A forged or stale hub.json does not.) */
export async function hubAnswers(info: HubInfo | undefined, timeoutMs = 1000): Promise<boolean> {
  if (!info || typeof info.pid !== 'number' || typeof info.url !== 'string' || !info.url) return false;
  try {
    const res = await fetch(new URL('/health', info.url), { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return false;
    return ((await res.json()) as { pid?: unknown }).pid === info.pid;
  } catch {
    return false;
  }
}

/** The hub serving stateDir, if one answers now. */
export async function liveHub(stateDir: string): Promise<HubInfo | undefined> {
  const info = readHubInfo(stateDir);
  return (await hubAnswers(info)) ? info : undefined;
}

/**
 * Become the hub of stateDir, or find the one that is. Loops: take the claim (atomic, kernel
 * lock) → acquired; else a live hub answering at hub.json's url → running; else someone holds
 * the claim but has not published yet (or hub.json is forged/stale): wait and retry, bounded.
 */
export async function acquireHubLock(stateDir: string, log: Logger, deadlineMs = 20_000): Promise<LockOutcome> {
  const until = Date.now() + deadlineMs;
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    const claim = tryAcquireHub(stateDir);
    if (claim) return { kind: 'acquired', claim, release: () => claim.release() };
    const info = await liveHub(stateDir);
    if (info) return { kind: 'running', info };
    if (Date.now() > until) {
      throw new Error(`${join(stateDir, 'hub.claim')} is held by a process that has not published a reachable hub in ${join(stateDir, 'hub.json')} within ${deadlineMs} ms; is an overseer hub stuck starting? (overseer doctor shows it)`);
    }
    log.debug({ stateDir }, 'the state directory is claimed and its hub is not answering yet: waiting');
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** The lead token (0600); reused across restarts so `overseer serve` clients keep working. */
export function ensureLeadToken(stateDir: string, make: () => string): string {
  const file = join(stateDir, 'lead.token');
  const read = (): string | undefined => {
    try {
      const t = readFileSync(file, 'utf8').trim();
      return t.length >= 32 ? t : undefined;
    } catch {
      return undefined;
    }
  };
  const existing = read();
  if (existing) {
    chmodSync(file, 0o600);
    return existing;
  }
  const t = make();
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${t}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  try {
    // link() fails if another process created the token first: then everyone uses theirs.
    linkSync(tmp, file);
    rmSync(tmp, { force: true });
    return t;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const theirs = read();
    if (theirs) {
      rmSync(tmp, { force: true });
      return theirs;
    }
    renameSync(tmp, file); // a truncated token file: replace it
    return t;
  }
}
