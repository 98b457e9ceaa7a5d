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
import { resolveLockPaths, isInside } from '../domain/paths.js';
import { findCycle, describeCycle } from '../domain/waitGraph.js';
import { isActive } from '../domain/job.js';
import type { LockFilesInput, ListLocksInput, ReleaseFilesInput } from '../tools/lockSchemas.js';
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

export const holderOf = (c: Caller): string => (c.role === 'agent' ? c.jobId : 'lead');

/** Paths resolved between two yields to the event loop. */
const RESOLVE_BATCH = 16;

export class LockService {
  readonly store: LockStore;
  private timer?: NodeJS.Timeout;
  private readonly offJob: () => void;

  constructor(private readonly ctx: HubContext) {
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

  async acquire(i: LockFilesInput, caller: Caller, signal?: AbortSignal, progress?: (ms: number) => void): Promise<{ acquired: string[]; acquired_count: number; expires_at: string }> {
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
      return { acquired: paths, acquired_count: paths.length, expires_at: isoTime(now + i.ttl_s * 1000) };
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
      return { acquired: paths, acquired_count: paths.length, expires_at: isoTime(this.ctx.clock.now() + i.ttl_s * 1000) };
    }
    const still = this.store.heldAmong(paths).filter((x) => x.holder !== me);
    throw new ConflictError(r.ok ? 'the lock request ended' : `timed out after ${i.timeout_s}s waiting: ${this.conflictText(still) || 'the files just became free — try again'}. Nothing was locked.`);
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
   * whose target could not be told: strict mode denies it, auto mode records it.
   */
  hookCheck(caller: Caller, paths: readonly string[], unknown?: string): { decision: 'none' | 'deny'; reason?: string; locked?: string[]; unchecked?: string } {
    const mode = this.ctx.config.lockMode;
    const me = holderOf(caller);
    const now = this.ctx.clock.now();
    if (mode === 'off') return { decision: 'none' };
    if (unknown && mode === 'strict') {
      return { decision: 'deny', reason: `strict lock mode: cannot tell which files ${unknown} writes (a variable, glob, eval, or a command that writes where it cannot be seen), so it is denied. Write to literal paths you hold with lock_files.` };
    }
    if (paths.length === 0) return unknown ? this.unchecked(caller, unknown) : { decision: 'none' };
    const root = this.workTree(caller);
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
      const free = inTree.filter((p) => !related.has(p) && p !== root && !isDirectory(p));
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
