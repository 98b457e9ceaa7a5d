// File locks: all-or-nothing over the requested files, waiters served in arrival order when
// locks free up, deadlocks refused at once (the wait-for graph is derived from the database),
// TTLs renewed by any call or hook check of the holder, everything of a job released when it
// ends. Paths are absolute real paths confined to the caller's work tree.
import type { Caller, HubContext } from './context.js';
import { LockStore, type LockRow } from '../store/locks.js';
import { tx } from '../store/db.js';
import { waitUntil } from './wait.js';
import { ConflictError, ForbiddenError, InvalidInputError } from '../errors.js';
import { isoTime } from '../clock.js';
import { isInside } from '../domain/paths.js';
import { resolveLockPaths } from './realPaths.js';
import { findCycle, describeCycle } from '../domain/waitGraph.js';
import { isActive } from '../domain/job.js';
import type { LockFilesInput, ListLocksInput, ReleaseFilesInput } from '../contract/locks.js';
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

export const holderOf = (c: Caller): string => (c.role === 'agent' ? c.jobId : 'lead');

/**
 * Whether a file a job now holds can be written in its sandbox. With confinement, a file another
 * agent held is bound read-only in every other child (src/confine/lockMounts.ts); a lock handed
 * over is unbound a moment later. A grant (lock_files, the hook's auto-lock) waits for that.
 */
export interface WriteGate {
  /** Of `paths`, those still read-only in the job's sandbox. No I/O: called on every hook check. */
  stillReadOnly(jobId: string, paths: readonly string[]): string[];
  /** Make them writable now; resolves with those that could not be, each with the reason. */
  makeWritable(jobId: string, paths: readonly string[]): Promise<{ path: string; error: string }[]>;
}

/** No confinement (or no lock mounts): nothing is ever bound read-only. */
export const OPEN_GATE: WriteGate = { stillReadOnly: () => [], makeWritable: async () => [] };

/** Files a grant could not make writable in the grantee's sandbox. */
export type NotWritable = { path: string; error: string }[];

/** How long a hook check waits for a file handed over to become writable in the caller's sandbox. */
const HOOK_WAIT_MS = 5000;

/** Paths resolved between two yields to the event loop. */
const RESOLVE_BATCH = 16;

export class LockService {
  readonly store: LockStore;
  private timer?: NodeJS.Timeout;
  private readonly offJob: () => void;

  constructor(private readonly ctx: HubContext, private readonly gate: WriteGate) {
    this.store = new LockStore(ctx.db);
    // A job that is no longer running holds nothing and waits for nothing.
    this.offJob = ctx.bus.on('job', (e) => {
      if (!isActive(e.status as never)) this.releaseAll(e.jobId);
    });
  }

  /** The caller's work tree (real path): its job's work dir, or the project for the lead. */
  workTree(caller: Caller): string {
    const dir = caller.role === 'agent' ? (() => {
      const j = this.ctx.store.get(caller.jobId);
      return j?.work_dir ?? j?.cwd ?? this.ctx.projectDir;
    })() : this.ctx.projectDir;
    try {
      return realpathSync(dir);
    } catch {
      return dir;
    }
  }

  /**
   * Resolve and confine lock paths. Resolution is synchronous file-system work (lstat per
   * component), so a call with many long paths yields to the event loop between batches: one
   * call never stalls every other caller of the hub.
   */
  async resolve(caller: Caller, files: readonly string[], base?: string): Promise<string[]> {
    const root = this.workTree(caller);
    const ok = new Set<string>();
    const rejected: string[] = [];
    for (let i = 0; i < files.length; i += RESOLVE_BATCH) {
      if (i > 0) await new Promise<void>((r) => setImmediate(r));
      const r = resolveLockPaths(files.slice(i, i + RESOLVE_BATCH), base ?? root, root);
      if (r.ok) r.paths.forEach((p) => ok.add(p));
      else rejected.push(...r.rejected.map((x) => `${JSON.stringify(x.input.slice(0, 300))}: ${x.reason}`));
    }
    if (rejected.length) throw new InvalidInputError(rejected.join('; '));
    return [...ok].sort();
  }

  private describeHolder(holder: string): string {
    if (holder === 'lead') return 'the lead';
    const j = this.ctx.store.get(holder);
    return j ? `agent ${holder} ("${j.title}")` : `agent ${holder}`;
  }

  private conflictText(rows: LockRow[]): string {
    return rows.map((r) => `${r.path} is held by ${this.describeHolder(r.holder)}${r.reason ? ` for "${r.reason}"` : ''} until ${isoTime(r.expires_at)}`).join('; ');
  }

  async acquire(i: LockFilesInput, caller: Caller, signal?: AbortSignal, progress?: (ms: number) => void): Promise<{ acquired: string[]; acquired_count: number; expires_at: string; not_writable?: NotWritable }> {
    const me = holderOf(caller);
    const paths = await this.resolve(caller, i.files);
    const reason = i.reason ?? null;
    const now = this.ctx.clock.now();
    const first = tx(this.ctx.db, () => {
      this.expire(now);
      const others = this.store.heldAmong(paths).filter((r) => r.holder !== me);
      if (others.length === 0) {
        this.store.take(me, paths, reason, i.ttl_s, now);
        this.store.renew(me, now);
        return { granted: true as const };
      }
      if (i.timeout_s === 0) throw new ConflictError(`not acquired: ${this.conflictText(others)}. Nothing was locked. Pass timeout_s to wait for them.`);
      const cycle = findCycle(this.facts(), me, paths);
      if (cycle) throw new ConflictError(`deadlock: ${describeCycle(cycle)}. Nothing was locked; release what you hold (release_files) or lock all the files you need in one call.`);
      return { granted: false as const, waitId: this.store.addWait(me, paths, reason, i.ttl_s, now) };
    });
    this.armExpiry(); // the held locks may expire before anyone releases them
    if (first.granted) {
      this.changed(me);
      return { acquired: paths, acquired_count: paths.length, expires_at: isoTime(now + i.ttl_s * 1000), ...await this.writableFor(caller, paths) };
    }
    const waitId = first.waitId;
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['lock'], signal,
      timeoutMs: Math.min(i.timeout_s, this.ctx.config.maxWaitS) * 1000,
      progressEveryMs: this.ctx.progressEveryMs, onProgress: progress,
      // Granted, or the wait row is gone (its job ended, or a hub restart dropped it).
      check: () => {
        const w = this.store.wait(waitId);
        return !w || w.status === 'granted' ? true : undefined;
      },
    });
    const outcome = tx(this.ctx.db, () => {
      const w = this.store.wait(waitId);
      this.store.dropWait(waitId);
      if (w?.status === 'granted') {
        if (r.ok) return 'granted';
        this.store.release(me, paths); // granted to a caller that is gone
        return 'released';
      }
      return 'gone';
    });
    if (outcome !== 'granted') this.grantWaiters();
    if (outcome === 'granted') {
      const writable = await this.writableFor(caller, paths);
      return { acquired: paths, acquired_count: paths.length, expires_at: isoTime(this.ctx.clock.now() + i.ttl_s * 1000), ...writable };
    }
    const still = this.store.heldAmong(paths).filter((x) => x.holder !== me);
    throw new ConflictError(r.ok ? 'the lock request ended' : `timed out after ${i.timeout_s}s waiting: ${this.conflictText(still) || 'the files just became free — try again'}. Nothing was locked.`);
  }

  /**
   * A grant returns once the files are writable in the grantee's sandbox (a lock handed over
   * from another agent is still bound read-only there for a moment). What cannot be made writable
   * is treated like a lock violation: an event on the job, one warning, the lead told, and the
   * grantee told in its result — never a write silently blocked.
   */
  private async writableFor(caller: Caller, paths: readonly string[]): Promise<{ not_writable?: NotWritable }> {
    if (caller.role !== 'agent' || this.gate.stillReadOnly(caller.jobId, paths).length === 0) return {};
    const stuck = await this.gate.makeWritable(caller.jobId, paths);
    if (stuck.length === 0) return {};
    this.reportNotWritable(caller.jobId, stuck);
    return { not_writable: stuck };
  }

  /** The hook's wait: the call's write targets the caller may write, made writable in its sandbox. */
  async hookWritable(caller: Caller, paths: readonly string[]): Promise<NotWritable> {
    if (caller.role !== 'agent') return [];
    // Inside the hook's own deadline (Claude Code waits 15 s for it, the command hook 8 s).
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<NotWritable>((resolve) => {
      timer = setTimeout(() => resolve(this.gate.stillReadOnly(caller.jobId, paths).map((path) => ({ path, error: `not unbound within ${HOOK_WAIT_MS / 1000} s` }))), HOOK_WAIT_MS);
    });
    const stuck = await Promise.race([this.gate.makeWritable(caller.jobId, paths), late]).finally(() => clearTimeout(timer));
    if (stuck.length) this.reportNotWritable(caller.jobId, stuck);
    return stuck;
  }

  /** Of a call's write targets, those still read-only in the caller's sandbox (no I/O). */
  stillReadOnly(caller: Caller, paths: readonly string[]): string[] {
    return caller.role === 'agent' ? this.gate.stillReadOnly(caller.jobId, paths) : [];
  }

  private reportNotWritable(jobId: string, stuck: NotWritable): void {
    const now = this.ctx.clock.now();
    const list = stuck.map((s) => `${s.path} (${s.error})`).join(', ');
    this.ctx.store.addEvent(jobId, now, 'lock_not_writable', { files: stuck.map((s) => s.path), errors: stuck.map((s) => s.error) });
    this.ctx.log.warn({ jobId, files: stuck }, `locks: job ${jobId} holds ${list} but it is still read-only in its sandbox`);
    this.ctx.store.addMessage(jobId, 'lead', `Overseer could not make ${list} writable in the sandbox of ${jobId}, which holds the lock: its writes there fail until it ends. Cancel or restart it if it needs the file.`, now, false);
    this.ctx.bus.emit('message', { to: 'lead' });
  }

  async release(i: ReleaseFilesInput, caller: Caller): Promise<{ released: string[] }> {
    const me = holderOf(caller);
    let released: string[];
    if (i.files) {
      const paths = await this.resolve(caller, i.files);
      const held = this.store.heldAmong(paths);
      const foreign = held.filter((r) => r.holder !== me);
      if (foreign.length) throw new ForbiddenError(`cannot release locks you do not hold: ${this.conflictText(foreign)}. Nothing was released.`);
      const notHeld = paths.filter((p) => !held.some((r) => r.path === p));
      if (notHeld.length === paths.length) return { released: [] };
      released = tx(this.ctx.db, () => this.store.release(me, paths));
    } else {
      released = tx(this.ctx.db, () => this.store.release(me));
    }
    if (released.length) this.changed(me);
    return { released };
  }

  list(i: ListLocksInput, caller?: Caller): { locks: { path: string; holder: string; reason: string | null; acquired_at: string; expires_at: string; waiters: number }[] } {
    this.expire(this.ctx.clock.now());
    // A relative prefix is relative to the caller's work tree, like lock paths.
    const prefix = i.path_prefix && caller && !isAbsolute(i.path_prefix) ? join(this.workTree(caller), i.path_prefix) : i.path_prefix;
    return {
      locks: this.store.all(prefix).map((l) => ({
        path: l.path, holder: l.holder, reason: l.reason, acquired_at: isoTime(l.acquired_at), expires_at: isoTime(l.expires_at), waiters: this.store.waitersOf(l.path),
      })),
    };
  }

  /** Any call of a holder renews its locks. */
  renew(caller: Caller): void {
    this.store.renew(holderOf(caller), this.ctx.clock.now());
  }

  /** Release everything a holder has and forget its waits (its job ended). */
  releaseAll(holder: string): void {
    const released = tx(this.ctx.db, () => {
      this.store.dropWaitsOf(holder);
      return this.store.release(holder);
    });
    if (released.length) this.changed(holder);
  }

  /** At hub start: waits died with the old hub's connections; locks of jobs that are not running are released. */
  reconcile(): string[] {
    const dead = tx(this.ctx.db, () => {
      this.store.dropAllWaits();
      const gone = this.store.holders().filter((h) => h !== 'lead' && !isActive((this.ctx.store.get(h)?.status ?? 'failed') as never));
      for (const h of gone) this.store.release(h);
      return gone;
    });
    this.grantWaiters(); // expires what is due and arms the TTL timer for the locks that survived
    return dead;
  }

  /** Lock check for the PreToolUse hook: deny paths held by others; in auto mode take free ones. */
  /**
   * The hook's question: may `caller` write `paths` (absolute, real)? A write conflicts with a
   * lock another holder has on the path itself, on a directory above it, or on anything inside
   * it (`rm -rf dir`, `git checkout .`). In auto mode the caller's free targets are locked for it
   * (files only: a directory or the tree itself is checked, never locked). `unknown` names a write
   * whose target could not be told: strict mode denies it; auto mode denies it while another
   * agent holds files in the caller's tree, and otherwise lets it through and records it.
   */
  hookCheck(caller: Caller, paths: readonly string[], unknown?: string): { decision: 'none' | 'deny'; reason?: string; locked?: string[]; unchecked?: string } {
    const mode = this.ctx.config.lockMode;
    const me = holderOf(caller);
    const now = this.ctx.clock.now();
    if (mode === 'off') return { decision: 'none' };
    if (unknown && mode === 'strict') {
      return { decision: 'deny', reason: `strict lock mode: cannot tell which files ${unknown} writes (a variable, glob, eval, or a command that writes where it cannot be seen), so it is denied. Write to literal paths you hold with lock_files.` };
    }
    const root = this.workTree(caller);
    if (unknown) {
      // It may write anywhere: while other agents hold files in this tree, that is not allowed.
      const foreign = this.store.under(root).filter((r) => r.holder !== me);
      if (foreign.length) {
        return { decision: 'deny', reason: `cannot tell which files ${unknown} writes, and other agents hold files in your work tree: ${this.conflictText(foreign.slice(0, 5))}${foreign.length > 5 ? ` and ${foreign.length - 5} more` : ''}. Write to literal paths the hook can check, or wait for those locks (lock_files with a timeout_s).` };
      }
    }
    if (paths.length === 0) return unknown ? this.unchecked(caller, unknown) : { decision: 'none' };
    const inTree = paths.filter((p) => isInside(p, root));
    const res = tx(this.ctx.db, () => {
      this.expire(now);
      this.store.renew(me, now);
      const related = new Map<string, LockRow>();
      const add = (rows: LockRow[]): void => rows.forEach((r) => related.set(r.path, r));
      add(this.store.heldAmong([...new Set(inTree.flatMap((p) => [p, ...ancestorsWithin(p, root)]))]));
      for (const p of inTree) add(this.store.under(p));
      const others = [...related.values()].filter((r) => r.holder !== me);
      if (others.length) return { deny: `${this.conflictText(others)}. To wait for it, call lock_files with these files and a timeout_s (e.g. 300), then retry; or work on something else meanwhile.` };
      const dirs = inTree.filter((p) => p === root || isDirectory(p));
      if (mode === 'strict' && dirs.length) return { deny: `strict lock mode: ${dirs.join(', ')} ${dirs.length > 1 ? 'are directories' : 'is a directory'} (a command that rewrites a whole directory or the tree): file locks cannot cover it. Name the files, holding their locks.` };
      const free = inTree.filter((p) => !related.has(p) && !dirs.includes(p));
      if (mode === 'strict' && free.length) return { deny: `strict lock mode: lock ${free.join(', ')} with lock_files before editing.` };
      if (free.length) this.store.take(me, free, 'edited (auto lock)', 600, now);
      return { took: free };
    });
    if ('deny' in res) {
      if (caller.role === 'agent') this.ctx.store.addEvent(caller.jobId, now, 'lock_denied', { files: inTree, reason: String(res.deny).slice(0, 500) });
      return { decision: 'deny', reason: res.deny };
    }
    if (res.took.length) this.changed(me);
    return unknown ? { ...this.unchecked(caller, unknown), locked: res.took } : { decision: 'none', locked: res.took };
  }

  /** Auto mode lets a write it cannot check through, and says so in the job's events. */
  private unchecked(caller: Caller, what: string): { decision: 'none'; unchecked: string } {
    const note = `the lock hook could not tell which files ${what} writes; it was not checked against other agents' locks`;
    if (caller.role === 'agent') this.ctx.store.addEvent(caller.jobId, this.ctx.clock.now(), 'lock_unchecked', { what });
    return { decision: 'none', unchecked: note };
  }

  close(): void {
    this.offJob();
    if (this.timer) clearTimeout(this.timer);
  }

  /** path → holder and waiter → paths, for the wait-for graph. */
  private facts(): { holders: Map<string, string>; waiting: Map<string, string[]> } {
    const holders = new Map(this.store.all().map((l) => [l.path, l.holder]));
    const waiting = new Map<string, string[]>();
    for (const w of this.store.waiting()) waiting.set(w.holder, [...(waiting.get(w.holder) ?? []), ...(JSON.parse(w.paths_json) as string[])]);
    return { holders, waiting };
  }

  private expire(now: number): void {
    const gone = this.store.expire(now);
    if (gone.length) queueMicrotask(() => this.grantWaiters());
  }

  /** Serve waiters in arrival order: each whose files are all free (or its own) gets them. */
  grantWaiters(): void {
    const now = this.ctx.clock.now();
    const granted = tx(this.ctx.db, () => {
      this.store.expire(now);
      const out: string[] = [];
      for (const w of this.store.waiting()) {
        const paths = JSON.parse(w.paths_json) as string[];
        if (this.store.heldAmong(paths).some((r) => r.holder !== w.holder)) continue;
        this.store.take(w.holder, paths, w.reason, w.ttl_s, now);
        this.store.grant(w.id);
        out.push(w.holder);
      }
      return out;
    });
    for (const h of granted) this.ctx.bus.emit('lock', { holder: h });
    this.armExpiry();
  }

  /** Something changed for holder: wake waiters that may now proceed, re-arm the TTL timer. */
  private changed(holder: string): void {
    this.ctx.bus.emit('lock', { holder });
    this.grantWaiters();
  }

  private armExpiry(): void {
    if (this.timer) clearTimeout(this.timer);
    const next = this.store.nextExpiry();
    if (next === undefined) return;
    const ms = Math.max(0, next - this.ctx.clock.now()) + 5;
    this.timer = setTimeout(() => this.grantWaiters(), Math.min(ms, 2 ** 31 - 1));
    this.timer.unref();
  }
}

/** Directories above `p` up to and including `root` (both absolute). */
function ancestorsWithin(p: string, root: string): string[] {
  const out: string[] = [];
  for (let d = dirname(p); isInside(d, root) && d !== p; p = d, d = dirname(d)) out.push(d);
  return out;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
