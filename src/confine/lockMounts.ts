// Locks below the hook: inside every confined child's mount namespace, each file another agent
// (or the lead) holds is bound read-only onto itself, so no program the child runs can write it
// (EROFS; rm/mv of it: EBUSY). Files held when a child starts are in its bubblewrap plan; after
// that, every lock change is applied to every running child by hooks/overseer-lockmount.py
// (setns + mount(2) into that child's namespaces; the host and the holder never see a mount).
//
// Locks are keyed by repository (src/domain/lockKeys.ts): a child working in another clone or
// worktree of the holder's repository, on the same branch, gets the same file of ITS checkout
// bound too (src/confine/lockMap.ts), from its scope looked up once when it is first seen running
// (src/confine/childScopes.ts; no git process per pass).
//
// What it cannot do: a locked path that does not exist yet cannot be bound (the hook and the
// change check cover creation); a holder that replaces its file by rename leaves the others
// seeing the old inode until the lock ends (they cannot write it either way).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import { UNSHARED, type LockScope } from '../domain/lockKeys.js';
import type { ChildScopes } from './childScopes.js';
import { copyIn, protectedFor, type HeldLock } from './lockMap.js';

/** How soon a pass looks again at a child whose namespace is not there yet. */
const RETRY_MS = 50;
/** ... and at a child still being prepared (no pid yet) with copies of others' locks in its checkout. */
const PREPARING_RETRY_MS = 250;

export interface LockMountDeps {
  /** Every lock now: the holder's real absolute path, its holder ('lead' or a job id) and its key; read through the layer. */
  held(): Promise<HeldLock[]>;
  /** Running jobs with the pid the hub recorded (bubblewrap's, leading the child's group; null
   * until it is recorded) and the tree each works in (its work dir, else its cwd). */
  running(): Promise<{ jobId: string; pid: number | null; tree: string }[]>;
  /** Each child's lock scope, looked up once per child. */
  scopes: ChildScopes;
  /** Runs the helper: python3 <script> <nsPid> ro|rw <paths…>; resolves with its stderr on
   * failure, and `gone` when the process (so its namespace) no longer exists. */
  helper(args: string[]): Promise<{ ok: boolean; stderr: string; gone?: boolean }>;
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

/** The helper's exit code when the process named is gone (hooks/overseer-lockmount.py). */
export const HELPER_GONE = 3;

/**
 * The real helper: python3 running hooks/overseer-lockmount.py, isolated (`-I -S`: no PYTHON*
 * variables, no user site, no site module: nothing of the environment runs with the hub's
 * rights, and it starts in ~20 ms). A `python3` on PATH that is a shim (pyenv's is a bash script:
 * ~150 ms a run) is replaced by the interpreter it leads to, found once in the background.
 */
export function pythonHelper(python: string, script: string): LockMountDeps['helper'] {
  let bin = python;
  execFile(python, ['-I', '-S', '-c', 'import sys; print(sys.executable)'], { timeout: 10_000 }, (err, out) => {
    const real = String(out ?? '').trim();
    if (!err && real.startsWith('/')) bin = real;
  });
  return (args) => new Promise((resolve) => {
    execFile(bin, ['-I', '-S', script, ...args], { timeout: 10_000 }, (err, _out, stderr) => resolve({
      ok: !err, stderr: String(stderr ?? ''), gone: (err as { code?: unknown } | null)?.code === HELPER_GONE,
    }));
  });
}

export class LockMounts {
  /** Per job: the paths bound read-only in its namespace now. */
  private readonly applied = new Map<string, Set<string>>();
  private syncing?: Promise<void>;
  /** The pass to run after the current one, and who waits for it. */
  private next?: { promise: Promise<void>; resolve: () => void };
  /** Per job: its part of the pass under way — what it binds and unbinds (not in `applied`
   * until done), and when it is done. */
  private readonly inFlight = new Map<string, { ro: Set<string>; rw: Set<string>; done: Promise<void> }>();
  /** Why a path could not be done in a job's namespace (`job\0path`), until it is done. */
  private readonly errors = new Map<string, string>();
  private retry?: NodeJS.Timeout;
  private closed = false;
  /** Milliseconds from a lock change to its mounts being in place, for `npm run bench` and the docs. */
  readonly latencies: number[] = [];
  /**
   * The locks and running jobs as the last pass read them: what the synchronous questions (a
   * child's plan at its start, `sealed`) answer from. Every lock change and job change starts a
   * pass (setup.ts `attach`), so on one hub this view is behind only while a pass reads; what a
   * start misses in that moment, the pass that its own `job` event starts binds (want − have).
   * With many hubs (docs/store-plan.md step 9) the other hubs' `lock` events must start a pass too.
   */
  private view: { held: HeldLock[]; running: Set<string> } = { held: [], running: new Set() };

  constructor(private readonly d: LockMountDeps) {}

  /** Each running child's lock scope (shared with the lock guard, src/confine/guard.ts). */
  get scopes(): ChildScopes {
    return this.d.scopes;
  }

  /**
   * What a child starting now must not write: existing paths others hold (bound by its plan), and
   * their copies in its own checkout when its scope is known already; else the first pass that
   * sees it running binds those (want − have).
   */
  heldByOthers(jobId: string): string[] {
    return wanted(jobId, this.d.scopes.known(jobId), this.view.held, new Map()).sort();
  }

  /** The child's plan bound these at start. */
  seed(jobId: string, paths: readonly string[]): void {
    this.applied.set(jobId, new Set(paths));
  }

  /**
   * Bring every running child's mounts in line with the locks. One pass at a time; the promise
   * resolves when a pass that started after this call has finished (calls made during a pass
   * share the one pass that follows it).
   */
  sync(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (!this.next) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => { resolve = r; });
      this.next = { promise, resolve };
    }
    const p = this.next.promise;
    if (!this.syncing) this.runNext();
    return p;
  }

  private runNext(): void {
    const mine = this.next!;
    this.next = undefined;
    const started = this.d.now();
    this.syncing = this.pass().catch((err: unknown) => {
      this.d.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'lock mounts: a pass failed');
    }).finally(() => {
      this.latencies.push(this.d.now() - started);
      if (this.latencies.length > 1000) this.latencies.shift();
      this.syncing = undefined;
      mine.resolve();
      if (this.next) {
        if (this.closed) this.next.resolve();
        else this.runNext();
      }
    });
  }

  /** Of `paths`, those bound read-only in the job's namespace, or being bound by the pass under
   * way (a lock taken and handed to this job while its bind was in flight). Cheap: no I/O. */
  stillReadOnly(jobId: string, paths: readonly string[]): string[] {
    const have = this.applied.get(jobId);
    const binding = this.inFlight.get(jobId)?.ro;
    return have || binding ? paths.filter((p) => have?.has(p) || binding?.has(p)) : [];
  }

  /**
   * Make `paths` writable in the job's namespace now (the job holds them: a pass unbinds them),
   * and resolve with those that could not be, each with the reason. When the job's part of the
   * pass under way is already unbinding them (the pass saw them released), that part is enough;
   * else a pass that starts after this call does it, and one more is tried for a path it could
   * not do (a helper that timed out, a namespace being built).
   */
  async makeWritable(jobId: string, paths: readonly string[]): Promise<{ path: string; error: string }[]> {
    let waitedPart = false;
    for (let passes = 0; passes < 2;) {
      const pending = this.stillReadOnly(jobId, paths);
      if (pending.length === 0) break;
      const part = this.inFlight.get(jobId);
      if (!waitedPart && part && pending.every((p) => part.rw.has(p))) {
        waitedPart = true;
        await part.done;
      } else {
        passes++;
        await this.sync();
      }
    }
    return this.stillReadOnly(jobId, paths).map((path) => ({ path, error: this.errors.get(`${jobId}\0${path}`) ?? 'could not be unbound' }));
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.next?.resolve();
    this.next = undefined;
  }

  private async pass(): Promise<void> {
    // A child seeded while the reads are out (its launch follows its 'running' event at once, and
    // its pid is recorded later) is not one this pass can call ended: only those known before it are.
    const known = [...this.applied.keys()];
    const [held, running] = [await this.d.held(), await this.d.running()];
    const live = new Set(running.map((r) => r.jobId));
    this.d.scopes.keep(live);
    // Each child's scope: a lookup at its first sight (started here, often before its launch),
    // then the same promise, already settled, at every pass: no git process per pass.
    const scopes = new Map(running.map((r) => [r.jobId, this.d.scopes.of(r.jobId, r.tree)] as const));
    this.view = { held, running: live };
    for (const id of known) if (!live.has(id)) this.applied.delete(id);
    for (const key of [...this.errors.keys()]) if (!live.has(key.slice(0, key.indexOf('\0')))) this.errors.delete(key);
    let retryMs: number | undefined;
    const again = (ms: number): void => { retryMs = Math.min(retryMs ?? ms, ms); };
    const exists = new Map<string, boolean>();
    await Promise.all(running.map(async ({ jobId, pid }) => {
      const scope = (await scopes.get(jobId)) ?? UNSHARED;
      if (pid === null && !this.applied.has(jobId)) {
        // Not launched yet (preparing): its plan binds what the view holds at its launch, but the
        // copies in its checkout only if its scope was known by then; when there are copies to
        // bind, look again until its pid is recorded (the pid's write starts no pass of its own).
        if (scope.repo && held.some((h) => h.holder !== jobId && copyIn(scope, h))) again(PREPARING_RETRY_MS);
        return;
      }
      const ns = pid === null ? undefined : (this.d.nsPid ?? innerPid)(pid);
      if (ns === undefined) {
        again(RETRY_MS); // its pid is not recorded yet, or bubblewrap has not made the namespace: try again shortly
        return;
      }
      const want = new Set(wanted(jobId, scope, held, exists));
      const have = this.applied.get(jobId) ?? new Set<string>();
      const ro = [...want].filter((p) => !have.has(p)).sort();
      const rw = [...have].filter((p) => !want.has(p)).sort((a, b) => b.length - a.length);
      if (!ro.length && !rw.length) return;
      let finish!: () => void;
      this.inFlight.set(jobId, { ro: new Set(ro), rw: new Set(rw), done: new Promise<void>((r) => { finish = r; }) });
      try {
        await this.apply(jobId, ns, rw, ro, new Set(have));
      } finally {
        this.inFlight.delete(jobId);
        finish();
      }
    }));
    if (retryMs !== undefined && !this.closed) {
      this.retry ??= setTimeout(() => { this.retry = undefined; void this.sync(); }, retryMs);
      this.retry.unref();
    }
  }

  /** Unbind `rw` and bind `ro` in one job's namespace, recording in `next` what was done. */
  private async apply(jobId: string, ns: number, rw: string[], ro: string[], next: Set<string>): Promise<void> {
    for (const [mode, paths] of [['rw', rw], ['ro', ro]] as const) {
      if (!paths.length) continue;
      const r = await this.d.helper([String(ns), mode, ...paths]);
      if (r.gone) {
        // The child ended between the job's record and this pass: its namespace went with it.
        this.d.log.warn({ jobId, files: paths }, `lock mounts: job ${jobId} ended before ${paths.join(', ')} could be made ${mode === 'rw' ? 'writable' : 'read-only'} in its sandbox; nothing left to do`);
        this.applied.delete(jobId);
        return;
      }
      const bad = failures(r, paths);
      for (const p of paths) {
        const key = `${jobId}\0${p}`;
        const why = bad.get(p);
        if (why === undefined) {
          this.errors.delete(key);
          if (mode === 'rw') next.delete(p);
          else next.add(p);
        } else {
          this.errors.set(key, why);
          this.d.log.warn({ jobId, file: p, error: why }, `lock mounts: could not make ${p} ${mode === 'rw' ? 'writable again' : 'read-only'} in job ${jobId}'s sandbox: ${why}`);
        }
      }
    }
    this.applied.set(jobId, next);
  }

  /**
   * Is `path` bound read-only for every running child but its holder? Then a change to it can only
   * be the holder's (or the host's). Running: as the last pass saw them, and every child started
   * since (its plan seeded it); a child not bound yet makes it false, the side that checks.
   */
  sealed(path: string, holder: string): boolean {
    const jobs = new Set([...this.view.running, ...this.applied.keys()]);
    jobs.delete(holder);
    for (const j of jobs) if (!this.applied.get(j)?.has(path)) return false;
    return true;
  }

  /** The paths bound read-only in a job's namespace now (for tests and get_agent). */
  mountedFor(jobId: string): string[] {
    return [...(this.applied.get(jobId) ?? [])].sort();
  }
}

/** The existing paths `jobId` must not write (its scope unknown: the holders' own paths only);
 * `exists` remembers the stats of one pass. */
function wanted(jobId: string, scope: LockScope | undefined, held: readonly HeldLock[], exists: Map<string, boolean>): string[] {
  const out = new Set<string>();
  for (const p of protectedFor({ jobId, scope: scope ?? UNSHARED }, held)) {
    let e = exists.get(p.path);
    if (e === undefined) exists.set(p.path, (e = existsSync(p.path)));
    if (e) out.add(p.path);
  }
  return [...out];
}

/** The paths the helper could not do: those its failure lines name ("bind <path>: <error>"), or
 * all of them when it failed without naming any (could not start, could not enter). */
function failures(r: { ok: boolean; stderr: string }, paths: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (r.ok) return out;
  const lines = r.stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  for (const p of paths) {
    const line = lines.find((l) => l.includes(` ${p}: `));
    if (line) out.set(p, line.slice(line.indexOf(` ${p}: `) + p.length + 3));
  }
  if (out.size === 0) for (const p of paths) out.set(p, lines.at(-1) ?? 'the helper failed without a reason');
  return out;
}
