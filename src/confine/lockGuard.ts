// Whatever gets past a lock is caught and undone (issue 18 point 3). The hub keeps, for every
// held file, the content its holder last left there: taken when the lock is granted and again
// after each of the holder's own tool calls. After each tool call of any other child, the held
// files are compared with it; a file that changed while its holder had no tool call in flight
// was written by someone else: its holder's content is put back, what was written is kept
// beside the writer's transcript, and the violation is reported (event, the writer told, the
// lead told). A file created under a held path that did not exist is removed the same way.
//
// Locks are keyed by repository: a lock also protects the same file in the checkout of every
// running child that works in another clone of the holder's repository on its branch (a "copy",
// src/confine/lockMap.ts). A change to a copy is never the holder's own: it does not work there.
//
// With confinement and lock mounts most such writes cannot happen at all; this is the net under
// them: an unconfined child, a path that did not exist yet, a route nobody knows.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Protected } from './lockMap.js';

/** A held file to guard; `own` unset: the holder's own. */
export type Guarded = Omit<Protected, 'own'> & { own?: boolean };

/** Files larger than this are watched by hash only: a change is reported, not undone. */
export const RESTORE_MAX_BYTES = 4 * 1024 * 1024;

interface Snapshot {
  holder: string;
  /** The holder's own file (else the same file in another child's clone, which the holder never writes). */
  own: boolean;
  exists: boolean;
  hash: string;
  /** inode, size and mtime when taken: an unchanged stat skips the hash. */
  stamp: string;
  /** The holder's content, when small enough to put back. */
  data?: Buffer;
}

export interface Violation {
  path: string;
  holder: string;
  /** The child whose tool call ended when the change was seen (the likely writer). */
  writer: string;
  tool?: string;
  toolUseId?: string;
  /** Other children with a tool call in flight at that moment (could not be told apart). */
  alsoActive: string[];
  /** What was done: the holder's content put back, the new file removed, or only reported. */
  action: 'restored' | 'removed' | 'reported';
  /** Where what the writer left is kept. */
  keptAt?: string;
  /** Why the write could not be undone (the file system refused), when it could not. */
  error?: string;
}

export interface LockGuardDeps {
  /** Every file held now, but the lead's (read through the layer): the holders' own and their
   * copies in other clones (lockMap.ts `protectedFiles`); undefined when it could not be read (said in the log). */
  held(): Promise<Guarded[] | undefined>;
  /** Where an undone write of `writer` is kept (a folder beside its transcript). */
  keepDir(writer: string): string;
  report(v: Violation): void;
  /** What a child's ended tool calls printed (errors above all): a refusal by a lock mount is explained to it. */
  refused(writer: string, texts: string[]): void;
  now(): number;
  /** Is this path read-only for every running child but its holder (lock mounts)? Then a change
   * can only be the holder's own (a background process of it) or the host's: not undone. */
  sealed?(path: string, holder: string): boolean;
}

type Seen = { exists: false } | { exists: true; hash: string; stamp: string; data?: Buffer } | { dir: true };

function stampOf(path: string): string | undefined {
  try {
    const st = lstatSync(path, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}

function look(path: string): Seen {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return { exists: false };
  }
  if (!st.isFile()) return { dir: true };
  const stamp = stampOf(path) ?? '';
  if (st.size > RESTORE_MAX_BYTES) {
    const data = readFileSync(path);
    return { exists: true, stamp, hash: createHash('sha256').update(data).digest('hex') };
  }
  const data = readFileSync(path);
  return { exists: true, stamp, hash: createHash('sha256').update(data).digest('hex'), data };
}

export class LockGuard {
  private readonly snaps = new Map<string, Snapshot>();
  /** Tool calls in flight per job, by tool_use_id, oldest first: seen in the stream or at the hook, not yet answered. */
  private readonly inFlight = new Map<string, string[]>();
  /** Jobs whose process exited and whose locks are not yet released: the hub is finishing their
   * work (a commit, the worktree's removal), which is not a write to guard against. */
  private readonly ended = new Set<string>();

  constructor(private readonly d: LockGuardDeps) {}

  /** One lock change at a time, in the order they came. */
  private changing: Promise<void> = Promise.resolve();

  /**
   * Locks changed: newly held files are taken as their holder has them now; released ones are
   * dropped. The locks are read (one statement) before the files are: a file granted a moment ago
   * is taken once that read is back — the holder hears of its grant after the lock service's own
   * awaited steps, and the others cannot write it (the hook and the mounts refuse them).
   */
  locksChanged(): Promise<void> {
    const next = this.changing.then(async () => {
      const held = await this.d.held();
      if (held) this.apply(held);
    });
    this.changing = next.catch(() => undefined);
    return next;
  }

  private apply(held: Guarded[]): void {
    const now = new Set(held.map((h) => h.path));
    for (const p of [...this.snaps.keys()]) if (!now.has(p)) this.snaps.delete(p);
    const holders = new Set(held.map((h) => h.holder));
    for (const j of this.ended) if (!holders.has(j)) this.ended.delete(j);
    for (const h of held) {
      if (this.ended.has(h.holder)) continue;
      const s = this.snaps.get(h.path);
      const own = h.own ?? true;
      if (s && s.holder === h.holder && s.own === own) continue;
      this.take(h.path, h.holder, own);
    }
  }

  /** A child's tool calls are under way (from its stream, or from the hook, whichever the hub hears first). */
  toolsStarted(jobId: string, ids: readonly string[]): void {
    let s = this.inFlight.get(jobId);
    if (!s) this.inFlight.set(jobId, (s = []));
    for (const id of ids) if (!s.includes(id)) s.push(id);
  }

  /**
   * A child's tool calls ended: its own files are what it left; everyone else's are checked.
   * `byCount`: the ended calls carry other ids than their starts (Codex: the hook sees `call_…`,
   * the stream reports `item_…`), so each one ends the oldest call in flight. A call that never
   * reports an end (a command the hook refused) keeps its agent "mid-call": its files are then
   * not checked, which can miss a write but never undoes the agent's own.
   */
  toolsEnded(jobId: string, calls: { tool?: string; toolUseId?: string; text?: string }[], byCount = false): Violation[] {
    const s = this.inFlight.get(jobId);
    for (const c of calls) {
      if (!s) break;
      const i = c.toolUseId ? s.indexOf(c.toolUseId) : -1;
      if (i >= 0) s.splice(i, 1);
      else if (byCount) s.shift();
    }
    if (s && s.length === 0) this.inFlight.delete(jobId);
    for (const [p, snap] of this.snaps) if (snap.holder === jobId && snap.own && (stampOf(p) ?? '') !== snap.stamp) this.take(p, jobId, true);
    const texts = calls.map((c) => c.text ?? '').filter(Boolean);
    if (texts.length) this.d.refused(jobId, texts);
    return this.check(jobId, calls[0]);
  }

  private busy(jobId: string): boolean {
    return (this.inFlight.get(jobId)?.length ?? 0) > 0;
  }

  /** A job's process started (again): its held files are guarded from now on (once the locks are read). */
  jobStarted(jobId: string): Promise<void> {
    this.ended.delete(jobId);
    return this.locksChanged();
  }

  /**
   * A job's process ended: nothing of it is in flight any more, and its held files are no longer
   * guarded: until its locks are released the hub finishes its work (commits it, removes its
   * worktree), and putting a file back into a folder being removed would fight that.
   */
  jobEnded(jobId: string): void {
    this.inFlight.delete(jobId);
    this.ended.add(jobId);
    for (const [p, s] of this.snaps) if (s.holder === jobId) this.snaps.delete(p);
  }

  private take(path: string, holder: string, own: boolean): void {
    const seen = look(path);
    if ('dir' in seen) {
      this.snaps.delete(path); // directories: the lock mounts and the hook hold them
      return;
    }
    this.snaps.set(path, seen.exists ? { holder, own, exists: true, hash: seen.hash, stamp: seen.stamp, data: seen.data } : { holder, own, exists: false, hash: '', stamp: '' });
  }

  private check(writer: string, call?: { tool?: string; toolUseId?: string }): Violation[] {
    const out: Violation[] = [];
    for (const [path, s] of this.snaps) {
      // The holder's own file changed while the holder wrote or was mid-call: its own change. A
      // copy in another clone is no file the holder works in: whoever changed it, not the holder.
      if (s.own && (s.holder === writer || this.busy(s.holder))) continue;
      if ((stampOf(path) ?? '') === s.stamp) continue; // untouched: no read, no hash
      if (s.exists && this.d.sealed?.(path, s.own ? s.holder : '')) {
        this.take(path, s.holder, s.own); // no other child could have written it (a copy: no child at all)
        continue;
      }
      const seen = look(path);
      if ('dir' in seen) continue;
      const same = seen.exists ? s.exists && seen.hash === s.hash : !s.exists;
      if (same) continue;
      const alsoActive = [...this.inFlight.keys()].filter((j) => j !== writer && j !== s.holder);
      const undone = this.undo(path, s, seen, writer);
      const v: Violation = { path, holder: s.holder, writer, tool: call?.tool, toolUseId: call?.toolUseId, alsoActive, ...undone };
      out.push(v);
      this.d.report(v);
    }
    return out;
  }

  /** Keeps what the writer left and puts the holder's content back. A file system error (the
   * folder went away meanwhile) leaves the violation reported, never thrown into the stream. */
  private undo(path: string, s: Snapshot, seen: Exclude<Seen, { dir: true }>, writer: string): Pick<Violation, 'action' | 'keptAt' | 'error'> {
    let keptAt: string | undefined;
    try {
      if (seen.exists && seen.data) {
        const dir = this.d.keepDir(writer);
        mkdirSync(dir, { recursive: true });
        keptAt = join(dir, `${this.d.now()}-${basename(path)}`);
        writeFileSync(keptAt, seen.data);
      }
      if (s.exists && s.data) {
        mkdirSync(dirname(path), { recursive: true });
        rmSync(path, { force: true, recursive: true });
        writeFileSync(path, s.data);
        return { action: 'restored', ...(keptAt ? { keptAt } : {}) };
      }
      if (!s.exists && seen.exists && seen.data) {
        rmSync(path, { force: true });
        return { action: 'removed', ...(keptAt ? { keptAt } : {}) };
      }
    } catch (err) {
      return { action: 'reported', ...(keptAt ? { keptAt } : {}), error: err instanceof Error ? err.message : String(err) };
    }
    return { action: 'reported', ...(keptAt ? { keptAt } : {}) };
  }
}
