// Locks below the hook: inside every confined child's mount namespace, each file another agent
// (or the lead) holds is bound read-only onto itself, so no program the child runs can write it
// (EROFS; rm/mv of it: EBUSY). Files held when a child starts are in its bubblewrap plan; after
// that, every lock change is applied to every running child by hooks/overseer-lockmount.py
// (setns + mount(2) into that child's namespaces; the host and the holder never see a mount).
//
// What it cannot do: a locked path that does not exist yet cannot be bound (the hook and the
// change check cover creation); a holder that replaces its file by rename leaves the others
// seeing the old inode until the lock ends (they cannot write it either way).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Logger } from '../log.js';

export interface LockMountDeps {
  /** Every lock now: real absolute path and holder ('lead' or a job id). */
  held(): { path: string; holder: string }[];
  /** Running jobs with the pid the hub recorded (bubblewrap's, leading the child's group). */
  running(): { jobId: string; pid: number }[];
  /** Runs the helper: python3 <script> <nsPid> ro|rw <paths…>; resolves with its stderr on failure. */
  helper(args: string[]): Promise<{ ok: boolean; stderr: string }>;
  /** A pid inside the child's namespaces, from the recorded one (default: bubblewrap's only child). */
  nsPid?(pid: number): number | undefined;
  log: Logger;
  now(): number;
}

/** The process inside a confined child's namespaces: the child of the outer bubblewrap. */
export function innerPid(pid: number): number | undefined {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return kids.length ? Number(kids[0]) : undefined;
  } catch {
    return undefined;
  }
}

/** The real helper: python3 from PATH running hooks/overseer-lockmount.py. */
export function pythonHelper(python: string, script: string): LockMountDeps['helper'] {
  return (args) => new Promise((resolve) => {
    execFile(python, [script, ...args], { timeout: 10_000 }, (err, _out, stderr) => resolve({ ok: !err, stderr: String(stderr ?? '') }));
  });
}

export class LockMounts {
  /** Per job: the paths bound read-only in its namespace now. */
  private readonly applied = new Map<string, Set<string>>();
  private syncing?: Promise<void>;
  private again = false;
  private retry?: NodeJS.Timeout;
  private closed = false;
  /** Milliseconds from a lock change to its mounts being in place, for `npm run bench` and the docs. */
  readonly latencies: number[] = [];

  constructor(private readonly d: LockMountDeps) {}

  /** What a child starting now must not write: existing paths others hold (bound by its plan). */
  heldByOthers(jobId: string): string[] {
    return this.d.held().filter((h) => h.holder !== jobId && existsSync(h.path)).map((h) => h.path).sort();
  }

  /** The child's plan bound these at start. */
  seed(jobId: string, paths: readonly string[]): void {
    this.applied.set(jobId, new Set(paths));
  }

  /** Bring every running child's mounts in line with the locks (coalesced: one pass at a time). */
  sync(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    const started = this.d.now();
    this.syncing = this.pass().finally(() => {
      this.latencies.push(this.d.now() - started);
      if (this.latencies.length > 1000) this.latencies.shift();
      this.syncing = undefined;
      if (this.again) {
        this.again = false;
        void this.sync();
      }
    });
    return this.syncing;
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
  }

  private async pass(): Promise<void> {
    const held = this.d.held();
    const running = this.d.running();
    const live = new Set(running.map((r) => r.jobId));
    for (const id of [...this.applied.keys()]) if (!live.has(id)) this.applied.delete(id);
    let missing = false;
    await Promise.all(running.map(async ({ jobId, pid }) => {
      const ns = (this.d.nsPid ?? innerPid)(pid);
      if (ns === undefined) {
        missing = true; // bubblewrap has not made the namespace yet: try again shortly
        return;
      }
      const want = new Set(held.filter((h) => h.holder !== jobId && existsSync(h.path)).map((h) => h.path));
      const have = this.applied.get(jobId) ?? new Set<string>();
      const ro = [...want].filter((p) => !have.has(p)).sort();
      const rw = [...have].filter((p) => !want.has(p)).sort((a, b) => b.length - a.length);
      const next = new Set(have);
      if (rw.length) {
        const r = await this.d.helper([String(ns), 'rw', ...rw]);
        const bad = failures(r, rw);
        for (const p of rw) if (!bad.has(p)) next.delete(p);
        if (!r.ok) this.d.log.warn({ jobId, stderr: r.stderr.trim() }, 'lock mounts: could not make files writable again');
      }
      if (ro.length) {
        const r = await this.d.helper([String(ns), 'ro', ...ro]);
        const bad = failures(r, ro);
        for (const p of ro) if (!bad.has(p)) next.add(p);
        if (!r.ok) this.d.log.warn({ jobId, stderr: r.stderr.trim() }, 'lock mounts: could not make held files read-only');
      }
      this.applied.set(jobId, next);
    }));
    if (missing && !this.closed) {
      this.retry ??= setTimeout(() => { this.retry = undefined; void this.sync(); }, 50);
      this.retry.unref();
    }
  }

  /** The paths bound read-only in a job's namespace now (for tests and get_agent). */
  mountedFor(jobId: string): string[] {
    return [...(this.applied.get(jobId) ?? [])].sort();
  }
}

/** The paths the helper could not do: those its failure lines name ("bind <path>: <error>"), or
 * all of them when it failed without naming any (could not start, could not enter). */
function failures(r: { ok: boolean; stderr: string }, paths: readonly string[]): Set<string> {
  if (r.ok) return new Set();
  const named = paths.filter((p) => r.stderr.split('\n').some((l) => l.includes(` ${p}: `)));
  return new Set(named.length ? named : paths);
}
