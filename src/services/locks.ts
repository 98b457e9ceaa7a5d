// File locks: all-or-nothing over the requested files, waiters served in arrival order when
// locks free up, deadlocks refused at once (the wait-for graph is derived from the database),
// TTLs renewed by any call or hook check of the holder, everything of a job released when it
// ends. Paths are absolute real paths confined to the caller's work tree, each keyed by the
// repository that contains it, its branch and the path inside it (src/domain/lockKeys.ts,
// src/services/repoScope.ts), so two clones of one repository on one branch exclude each other. Every decision is one
// transaction of the layer (src/store/sql/locks.ts `lockTx`: IMMEDIATE on SQLite, the lock tables'
// advisory lock on PostgreSQL); the hook's check is a handful of statements whatever the paths.
import type { Caller, HubContext } from './context.js';
import type { LockRow, WaitRow } from '../store/locks.js';
import type { Q } from '../store/sql/tx.js';
import { hubsOf, renameHolder } from '../store/sql/locks.js';
import { allLocks, dropAllWaits, dropWait, dropWaitsOf, expire, getWait, heldAmong, holders, holdsOrWaits, lockTx, nextExpiry, rekey, related, release, renew, under, waiting } from '../store/sql/locks.js';
import { acquireOrWait, endWait, grantWaiting, hookDecide, hookVerdict } from '../store/sql/lockDecisions.js';
import { waitItems } from '../store/sql/locks.js';
import { absPath, keyString, relPath, type LockItem, type LockScope } from '../domain/lockKeys.js';
import { RepoScopes } from './repoScope.js';
import { waitUntil } from './wait.js';
import { ConflictError, ForbiddenError, InvalidInputError } from '../errors.js';
import { isoTime } from '../clock.js';
import { isInside } from '../domain/paths.js';
import { resolveLockPaths } from './realPaths.js';
import { describeCycle } from '../domain/waitGraph.js';
import { isActive } from '../domain/job.js';
import { LEAD, isLead, leadHub } from '../domain/lead.js';
import { hostname } from 'node:os';
import { addEvent, getJob, titlesOf } from '../store/sql/jobs.js';
import { addMessage } from '../store/sql/messages.js';
import type { LockFilesInput, ListLocksInput, ReleaseFilesInput } from '../contract/locks.js';
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';


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

/** Auto locks of the hook: their reason and TTL. */
const AUTO_REASON = 'edited (auto lock)';
const AUTO_TTL_S = 600;
/** The hook's fast path counts the caller's own lock as held only when it outlives the check by this much. */
const FAST_MARGIN_MS = 5000;

export class LockService {
  private timer?: NodeJS.Timeout;
  /** When the armed expiry timer fires (ms since the epoch). */
  private timerAt?: number;
  private closed = false;
  private readonly offJob: () => void;
  /**
   * Holders that may hold a lock, read from the table once and kept while this service is the one
   * that writes it: a take adds to it, a release or expiry forgets it. Every tool call and hook
   * check renews its caller's locks, and most callers hold none: for them a renewal is a lookup
   * here, not a statement. It may only err towards a holder with no lock left (a renewal that
   * changes nothing, which forgets it). `generation` counts changes, so a read of the table that
   * raced with a take is not kept. With many hubs (docs/store-plan.md step 9) a `lock` event from
   * another hub must forget it too.
   */
  private holderSet?: Set<string>;
  private generation = 0;

  /**
   * `lead`: this hub's lead as a lock holder (src/domain/lead.ts): `lead` on SQLite, `lead@<hub id>`
   * on PostgreSQL, where each hub has a lead and two leads must exclude each other.
   */
  constructor(private readonly ctx: HubContext, private readonly gate: WriteGate, private readonly lead: string, private readonly scopes: RepoScopes = new RepoScopes()) {
    // A job that is no longer running holds nothing and waits for nothing. The promise is
    // returned: the engine's `emitSettled('job', …)` waits for the release before it reports the end.
    // It starts at once: on SQLite the whole release runs before any I/O callback, so the job's
    // end is never seen (a wait_for_agents answer, the next tool call) with its locks still held.
    this.offJob = ctx.bus.on('job', (e) => {
      if (isActive(e.status as never)) return undefined;
      return this.releaseEnded(e.jobId).catch((err: unknown) => this.failed(err, `releasing the locks of ${e.jobId}`));
    });
  }

  private get q(): Q {
    return this.ctx.sql.db;
  }

  /** Who holds locks for `c`: its job, or this hub's lead. */
  holderOf(c: Caller): string {
    return c.role === 'agent' ? c.jobId : this.lead;
  }

  /** A lead holder as the caller reads it: this hub's lead is `lead`, another hub's keeps its hub (docs/decisions.md "Steering across hubs"). */
  private shown(holder: string): string {
    return holder === this.lead ? LEAD : holder;
  }

  private failed(err: unknown, what: string): void {
    this.ctx.log.error({ err: err instanceof Error ? err.message : String(err) }, `locks: ${what} failed`);
  }

  /** The caller's work tree (real path): its job's work dir, or the project for the lead. */
  async workTree(caller: Caller): Promise<string> {
    const j = caller.role === 'agent' ? await getJob(this.q, caller.jobId) : undefined;
    const dir = j?.work_dir ?? j?.cwd ?? this.ctx.projectDir;
    try {
      return realpathSync(dir);
    } catch {
      return dir;
    }
  }

  /** The lock scope of a work tree (its repository and branch), looked up once per tree. */
  scopeOf(tree: string): Promise<LockScope> {
    return this.scopes.scope(tree);
  }

  /** The keys of absolute real paths, each in the repository that contains it (src/services/repoScope.ts). */
  items(paths: readonly string[]): Promise<LockItem[]> {
    return this.scopes.items(paths);
  }

  /**
   * Resolve and confine lock paths. Resolution is synchronous file-system work (lstat per
   * component), so a call with many long paths yields to the event loop between batches: one
   * call never stalls every other caller of the hub.
   */
  async resolve(caller: Caller, files: readonly string[], base?: string): Promise<string[]> {
    const root = await this.workTree(caller);
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

  /** Who holds what; a lock taken in another clone (the key of one of the caller's `items`) says so,
   * with the path as the caller knows it. The holders' titles are read with `q`: the transaction
   * when called inside one (on SQLite the layer has one connection: a read outside it would wait for it). */
  private async conflictText(rows: LockRow[], items: readonly LockItem[] = [], q: Q = this.q): Promise<string> {
    const known = new Map(items.map((i) => [keyString(i), i.path]));
    const titles = await titlesOf(q, rows.map((r) => r.holder).filter((h) => !isLead(h)));
    const describeHolder = (holder: string): string => {
      if (holder === this.lead) return 'the lead';
      if (isLead(holder)) return `the lead on hub ${leadHub(holder) ?? '?'}`;
      const title = titles.get(holder);
      return title === undefined ? `agent ${holder}` : `agent ${holder} ("${title}")`;
    };
    return rows.map((r) => {
      const mine = known.get(keyString({ repo: r.repo, rel: r.rel_path })) ?? r.path;
      const where = mine === r.path ? r.path : `${mine} (as ${r.path} in another clone of ${r.repo})`;
      return `${where} is held by ${describeHolder(r.holder)}${r.reason ? ` for "${r.reason}"` : ''} until ${isoTime(r.expires_at)}`;
    }).join('; ');
  }

  async acquire(i: LockFilesInput, caller: Caller, signal?: AbortSignal, progress?: (ms: number) => void): Promise<{ acquired: string[]; acquired_count: number; expires_at: string; not_writable?: NotWritable }> {
    const me = this.holderOf(caller);
    const paths = await this.resolve(caller, i.files);
    const items = await this.items(paths);
    const reason = i.reason ?? null;
    const now = this.ctx.clock.now();
    const first = await acquireOrWait(this.q, { holder: me, items, reason, ttlS: i.ttl_s, now, wait: i.timeout_s !== 0 });
    if (first.expired) this.forgetHolders();
    if (first.kind === 'granted') {
      this.addHolder(me);
      await this.changed(me); // also serves what an expiry freed, and arms the TTL timer
      return { acquired: paths, acquired_count: paths.length, expires_at: isoTime(now + i.ttl_s * 1000), ...await this.writableFor(caller, paths) };
    }
    if (first.expired) await this.grantWaiters(); // what expired may free other waiters
    if (first.kind === 'held') throw new ConflictError(`not acquired: ${await this.conflictText(first.others, items)}. Nothing was locked. Pass timeout_s to wait for them.`);
    if (first.kind === 'deadlock') throw new ConflictError(`deadlock: ${describeCycle(first.cycle)}. Nothing was locked; release what you hold (release_files) or lock all the files you need in one call.`);
    this.arm(await nextExpiry(this.q)); // the held locks may expire before anyone releases them
    const waitId = first.waitId;
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['lock'], signal,
      timeoutMs: Math.min(i.timeout_s, this.ctx.config.maxWaitS) * 1000,
      progressEveryMs: this.ctx.progressEveryMs, onProgress: progress,
      // Granted, or the wait row is gone (its job ended, or a hub restart dropped it).
      check: async () => {
        const w = await getWait(this.q, waitId);
        return !w || w.status === 'granted' ? true : undefined;
      },
    });
    const outcome = await endWait(this.q, waitId, me, r.ok);
    if (outcome !== 'granted') {
      if (outcome === 'released') this.forgetHolders();
      await this.grantWaiters();
    }
    if (outcome === 'granted') {
      const writable = await this.writableFor(caller, paths);
      return { acquired: paths, acquired_count: paths.length, expires_at: isoTime(this.ctx.clock.now() + i.ttl_s * 1000), ...writable };
    }
    const still = (await heldAmong(this.q, items)).filter((x) => x.holder !== me);
    throw new ConflictError(r.ok ? 'the lock request ended' : `timed out after ${i.timeout_s}s waiting: ${await this.conflictText(still, items) || 'the files just became free — try again'}. Nothing was locked.`);
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
    await this.reportNotWritable(caller.jobId, stuck);
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
    if (stuck.length) await this.reportNotWritable(caller.jobId, stuck);
    return stuck;
  }

  /** Of a call's write targets, those still read-only in the caller's sandbox (no I/O). */
  stillReadOnly(caller: Caller, paths: readonly string[]): string[] {
    return caller.role === 'agent' ? this.gate.stillReadOnly(caller.jobId, paths) : [];
  }

  /** The event and the lead's message land before the grant answers (the caller awaits this), as
   * they did when they were synchronous writes: whoever reads the job's events after the answer sees them. */
  private async reportNotWritable(jobId: string, stuck: NotWritable): Promise<void> {
    const now = this.ctx.clock.now();
    const list = stuck.map((s) => `${s.path} (${s.error})`).join(', ');
    this.ctx.log.warn({ jobId, files: stuck }, `locks: job ${jobId} holds ${list} but it is still read-only in its sandbox`);
    try {
      await addEvent(this.q, jobId, now, 'lock_not_writable', { files: stuck.map((s) => s.path), errors: stuck.map((s) => s.error) });
      await addMessage(this.q, { from: jobId, to: this.lead, text: `Overseer could not make ${list} writable in the sandbox of ${jobId}, which holds the lock: its writes there fail until it ends. Cancel or restart it if it needs the file.`, now, delivered: false });
    } catch (err) {
      // The grant stands: what could not be recorded is in the log above, and the caller is told in its result.
      this.failed(err, `recording that ${jobId}'s files are not writable`);
      return;
    }
    this.ctx.bus.emit('message', { to: this.lead });
  }

  async release(i: ReleaseFilesInput, caller: Caller): Promise<{ released: string[] }> {
    const me = this.holderOf(caller);
    let released: string[];
    if (i.files) {
      const paths = await this.resolve(caller, i.files);
      const keys = await this.items(paths);
      released = await lockTx(this.q, async (trx) => {
        const held = await heldAmong(trx, keys);
        const foreign = held.filter((r) => r.holder !== me);
        if (foreign.length) throw new ForbiddenError(`cannot release locks you do not hold: ${await this.conflictText(foreign, keys, trx)}. Nothing was released.`);
        return held.length ? release(trx, me, keys) : [];
      });
    } else {
      released = await lockTx(this.q, (trx) => release(trx, me));
    }
    if (released.length) {
      this.forgetHolders();
      await this.changed(me);
    }
    return { released };
  }

  /**
   * Every lock (or those under a path prefix). A lock of the caller's repository and branch shows
   * the path as the caller knows it, in its own tree (`holder_path`: where its holder has it, when
   * that differs); `repo` names the repository and branch (null: keyed by its absolute path).
   */
  async list(i: ListLocksInput, caller?: Caller): Promise<{ locks: { path: string; holder: string; reason: string | null; acquired_at: string; expires_at: string; waiters: number; repo: string | null; holder_path?: string }[] }> {
    await this.expireNow();
    const tree = caller ? await this.workTree(caller) : undefined;
    const scope = tree ? await this.scopeOf(tree) : undefined;
    // A relative prefix is relative to the caller's work tree, like lock paths.
    const prefix = i.path_prefix && tree && !isAbsolute(i.path_prefix) ? join(tree, i.path_prefix) : i.path_prefix;
    // A prefix inside the caller's shared tree lists that repository's locks from every clone.
    const keyed = prefix && scope?.repo && isInside(prefix, scope.top) ? relPath(scope, prefix) : undefined;
    const [locks, waits] = [await allLocks(this.q, keyed ?? prefix, keyed === undefined ? undefined : scope!.repo), await waiting(this.q)];
    const waiters = new Map<string, number>();
    for (const w of waits) for (const k of new Set(waitItems(w).map(keyString))) waiters.set(k, (waiters.get(k) ?? 0) + 1);
    return {
      locks: locks.map((l) => {
        const path = scope?.repo && l.repo === scope.repo ? absPath(scope, l.rel_path) : l.path;
        return {
          path, holder: this.shown(l.holder), reason: l.reason, acquired_at: isoTime(l.acquired_at), expires_at: isoTime(l.expires_at),
          waiters: waiters.get(keyString({ repo: l.repo, rel: l.rel_path })) ?? 0, repo: l.repo || null, ...(path === l.path ? {} : { holder_path: l.path }),
        };
      }),
    };
  }

  /** The locks on `paths` (absolute, each keyed in the scope of its directory; no expiry first): for views and tests. */
  async heldAmong(paths: readonly string[]): Promise<LockRow[]> {
    return heldAmong(this.q, await this.items(paths));
  }

  /** Lock requests waiting, in arrival order. */
  waiting(): Promise<WaitRow[]> {
    return waiting(this.q);
  }

  /** Any call of a holder renews its locks. Nothing at all (not even a promise) for a caller known
   * to hold none: every tool call of the hub comes here. */
  renew(caller: Caller): Promise<void> | undefined {
    const me = this.holderOf(caller);
    if (this.holderSet && !this.holderSet.has(me)) return undefined;
    return (async () => {
      if (await this.mayHold(this.q, me)) await this.renewIn(this.q, me, this.ctx.clock.now());
    })();
  }

  private async renewIn(q: Q, holder: string, now: number): Promise<void> {
    if ((await renew(q, holder, now)) === 0) this.forgetHolders();
  }

  /** Whether holder may hold a lock (see holderSet); `q` is the transaction when in one. */
  private async mayHold(q: Q, holder: string): Promise<boolean> {
    if (this.holderSet) return this.holderSet.has(holder);
    const g = this.generation;
    const set = new Set(await holders(q));
    if (g !== this.generation) return true; // a take or release meanwhile: renew to be sure
    this.holderSet = set;
    return set.has(holder);
  }

  private addHolder(holder: string): void {
    this.generation++;
    this.holderSet?.add(holder);
  }

  private forgetHolders(): void {
    this.generation++;
    this.holderSet = undefined;
  }

  /** A job's event said it is not running: release what it has, unless it runs again by now (the
   * event of a job queued a moment ago may be heard after its start and its first lock). */
  private async releaseEnded(jobId: string): Promise<void> {
    if (isActive(((await getJob(this.q, jobId))?.status ?? 'failed') as never)) return;
    await this.releaseAll(jobId);
  }

  /** Release everything a holder has and forget its waits (its job ended). */
  async releaseAll(holder: string): Promise<void> {
    if (!(await holdsOrWaits(this.q, holder))) return; // most job events: nothing to release, no transaction
    const released = await lockTx(this.q, async (trx) => {
      await dropWaitsOf(trx, holder);
      return release(trx, holder);
    });
    if (released.length) {
      this.forgetHolders();
      await this.changed(holder);
    }
  }

  /**
   * At hub start: waits died with the old hub's connections; locks of jobs that are not running are
   * released; locks still keyed by their absolute path (taken before migration 29, or while their
   * tree had no repository key) in a tree that now has one are re-keyed (docs/decisions.md "Locks
   * keyed by repository").
   */
  async reconcile(): Promise<string[]> {
    const dead = await lockTx(this.q, async (trx) => {
      // Leads of hubs that no longer serve: a predecessor of this hub (same state directory and
      // host) was this same lead, its locks become this lead's; another hub's lead's go.
      const leadHubs = await hubsOf(trx, [...new Set([...(await holders(trx)), ...(await waiting(trx)).map((w) => w.holder)].map(leadHub).filter((h): h is string => h !== undefined))]);
      const goneLead = (h: string): boolean => {
        const hub = leadHub(h);
        return hub !== undefined && h !== this.lead && !leadHubs.get(hub)?.live;
      };
      // One hub per database on SQLite: every wait was a call of the stopped hub. On PostgreSQL other
      // hubs' calls wait too: only the waits of agents that no longer run, and of leads whose hub is gone, go (docs/decisions.md "Hubs own their jobs").
      if (this.ctx.sql.dialect === 'sqlite') await dropAllWaits(trx);
      else for (const w of await waiting(trx)) if (isLead(w.holder) ? goneLead(w.holder) : !isActive(((await getJob(trx, w.holder))?.status ?? 'failed') as never)) await dropWait(trx, w.id);
      // The holders' jobs are read inside the decision, with its connection: at a hub's start no
      // job of it runs yet (reconcile settled them before), so a status read here stays true until the release.
      const gone: string[] = [];
      const me = leadHub(this.lead);
      const here = me === undefined ? undefined : { host: hostname(), stateDir: this.ctx.config.home };
      for (const h of await holders(trx)) {
        if (isLead(h)) {
          if (!goneLead(h)) continue;
          const was = leadHubs.get(leadHub(h)!);
          if (here && was && was.host === here.host && was.stateDir === here.stateDir) await renameHolder(trx, h, this.lead);
          else gone.push(h);
        } else if (!isActive(((await getJob(trx, h))?.status ?? 'failed') as never)) gone.push(h);
      }
      for (const h of gone) await release(trx, h);
      return gone;
    });
    await this.rekeyUnshared();
    this.forgetHolders();
    await this.grantWaiters(); // expires what is due and arms the TTL timer for the locks that survived
    return dead;
  }

  /**
   * The hook's question: may `caller` write `paths` (absolute, real)? A write conflicts with a
   * lock another holder has on the path itself, on a directory above it, or on anything inside
   * it (`rm -rf dir`, `git checkout .`). In auto mode the caller's free targets are locked for it
   * (files only: a directory or the tree itself is checked, never locked). `unknown` names a write
   * whose target could not be told: strict mode denies it; auto mode denies it while another
   * agent holds files in the caller's tree, and otherwise lets it through and records it.
   * Renews the caller's locks whatever the answer. With targets, whatever their number (up to
   * 500 per statement): one read of every related lock decides a deny, or that every target is
   * the caller's own already (then the renewal alone follows); only free targets to lock take the
   * decision's transaction (renew, the same read again, an expiry when a related lock is past its
   * TTL, one insert of the auto locks).
   */
  async hookCheck(caller: Caller, paths: readonly string[], unknown?: string): Promise<{ decision: 'none' | 'deny'; reason?: string; locked?: string[]; unchecked?: string }> {
    const mode = this.ctx.config.lockMode;
    const me = this.holderOf(caller);
    const now = this.ctx.clock.now();
    if (mode === 'off') {
      await this.renew(caller);
      return { decision: 'none' };
    }
    if (unknown && mode === 'strict') {
      await this.renew(caller);
      return { decision: 'deny', reason: `strict lock mode: cannot tell which files ${unknown} writes (a variable, glob, eval, or a command that writes where it cannot be seen), so it is denied. Write to literal paths you hold with lock_files.` };
    }
    const root = await this.workTree(caller);
    if (unknown) {
      // It may write anywhere: while other agents hold files in this tree (or in another clone of
      // it), that is not allowed. The tree's key covers its clones; the holders' paths under it
      // cover repositories nested in it.
      const [rk] = await this.items([root]);
      const near = [...await under(this.q, rk!.repo, rk!.rel), ...await allLocks(this.q, `${root}/`)];
      const foreign = [...new Map(near.map((r) => [keyString({ repo: r.repo, rel: r.rel_path }), r])).values()].filter((r) => r.holder !== me && r.expires_at > now);
      if (foreign.length) {
        await this.renew(caller);
        return { decision: 'deny', reason: `cannot tell which files ${unknown} writes, and other agents hold files in your work tree: ${await this.conflictText(foreign.slice(0, 5))}${foreign.length > 5 ? ` and ${foreign.length - 5} more` : ''}. Write to literal paths the hook can check, or wait for those locks (lock_files with a timeout_s).` };
      }
    }
    const inTree = paths.filter((p) => isInside(p, root));
    if (inTree.length === 0) {
      await this.renew(caller);
      return unknown ? await this.unchecked(caller, unknown) : { decision: 'none' };
    }
    // File-system work before the transaction: nothing but statements runs inside it. Each path is
    // keyed in the repository that contains it.
    const dirSet = new Set(inTree.filter((p) => p === root || isDirectory(p)));
    const exactPaths = [...new Set(inTree.flatMap((p) => [p, ...ancestorsWithin(p, root)]))];
    const exact = await this.items(exactPaths);
    const byPath = new Map(exact.map((i) => [i.path, i]));
    const targets = inTree.map((p) => byPath.get(p)!);
    const dirs = [...dirSet].map((p) => byPath.get(p)!);
    // Fast path, no transaction: one read decides a deny, or that every target is the caller's
    // own already (the usual repeated edit); only a take needs the decision's transaction.
    const fast = hookVerdict(await related(this.q, exact, dirs), { holder: me, targets, dirs, mode, now }, FAST_MARGIN_MS);
    const d = fast.kind !== 'took' || fast.took.length === 0 ? fast : await (async () => {
      const mayHold = await this.mayHold(this.q, me);
      const r = await hookDecide(this.q, { holder: me, targets, exact, dirs, mode, now, renew: mayHold, reason: AUTO_REASON, ttlS: AUTO_TTL_S });
      if (r.renewed === 0 || r.expired) this.forgetHolders();
      if (r.kind === 'took' && r.took.length) this.addHolder(me);
      if (r.expired) void this.grantWaiters().catch((err: unknown) => this.failed(err, 'serving waiters after an expiry'));
      return r;
    })();
    if (d === fast) await this.renew(caller);
    const abs = (keys: readonly LockItem[] | readonly { repo: string; rel: string }[]): string[] => keys.map((k) => ('path' in k ? k.path : byPath.get(k.rel)?.path ?? k.rel));
    const res = d.kind === 'took' ? { took: abs(d.took) }
      : d.kind === 'held' ? { deny: `${await this.conflictText(d.others, exact)}. To wait for it, call lock_files with these files and a timeout_s (e.g. 300), then retry; or work on something else meanwhile.` }
      : d.kind === 'strict-dirs' ? { deny: `strict lock mode: ${abs(d.dirs).join(', ')} ${d.dirs.length > 1 ? 'are directories' : 'is a directory'} (a command that rewrites a whole directory or the tree): file locks cannot cover it. Name the files, holding their locks.` }
      : { deny: `strict lock mode: lock ${abs(d.free).join(', ')} with lock_files before editing.` };
    if ('deny' in res) {
      // Recorded before the hook answers, as the synchronous write was: the deny is in the job's events when the agent hears it.
      if (caller.role === 'agent') await addEvent(this.q, caller.jobId, now, 'lock_denied', { files: inTree, reason: String(res.deny).slice(0, 500) });
      return { decision: 'deny', reason: res.deny };
    }
    if (res.took.length) {
      // Taking frees nothing: no waiter to serve, only the mounts and views to tell.
      this.ctx.bus.emit('lock', { holder: me });
      this.arm(now + AUTO_TTL_S * 1000);
    }
    return unknown ? { ...await this.unchecked(caller, unknown), locked: res.took } : { decision: 'none', locked: res.took };
  }

  /** Auto mode lets a write it cannot check through, and says so in the job's events. */
  private async unchecked(caller: Caller, what: string): Promise<{ decision: 'none'; unchecked: string }> {
    const note = `the lock hook could not tell which files ${what} writes; it was not checked against other agents' locks`;
    if (caller.role === 'agent') await addEvent(this.q, caller.jobId, this.ctx.clock.now(), 'lock_unchecked', { what });
    return { decision: 'none', unchecked: note };
  }

  /**
   * Locks keyed by their absolute path whose holder's tree now has a repository key get that key,
   * oldest first; one whose key another lock has already (two clones held one file before the
   * upgrade) is released, and the log says so.
   */
  private async rekeyUnshared(): Promise<void> {
    const rows = (await allLocks(this.q, undefined, '')).sort((a, b) => a.acquired_at - b.acquired_at);
    if (rows.length === 0) return;
    const keys = await this.items(rows.map((r) => r.path));
    const moves = rows.flatMap((row, k) => (keys[k]!.repo ? [{ row, to: keys[k]! }] : []));
    if (moves.length === 0) return;
    const dropped = await lockTx(this.q, async (trx) => {
      const out: string[] = [];
      for (const m of moves) if (!(await rekey(trx, m.row, m.to))) out.push(`${m.row.path} (${m.row.holder})`);
      return out;
    });
    if (dropped.length) this.ctx.log.warn({ dropped }, `locks: released ${dropped.length} lock(s) whose file another clone's lock already held under the repository's key`);
  }

  close(): void {
    this.closed = true;
    this.offJob();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Drop what is past its TTL now, and serve the waiters it frees. */
  private async expireNow(): Promise<void> {
    const gone = await lockTx(this.q, (trx) => expire(trx, this.ctx.clock.now()));
    if (gone.length) {
      this.forgetHolders();
      await this.grantWaiters();
    }
  }

  /** Serve waiters in arrival order: each whose files are all free (or its own) gets them. */
  async grantWaiters(): Promise<void> {
    const r = await grantWaiting(this.q, this.ctx.clock.now());
    if (r.expired) this.forgetHolders();
    for (const h of r.granted) this.addHolder(h);
    for (const h of r.granted) this.ctx.bus.emit('lock', { holder: h });
    this.arm(r.next);
  }

  /** Something changed for holder: wake waiters that may now proceed, re-arm the TTL timer. */
  private async changed(holder: string): Promise<void> {
    this.ctx.bus.emit('lock', { holder });
    await this.grantWaiters();
  }

  /**
   * Have the TTL timer fire by `at` (ms since the epoch). A timer already due earlier is kept: it
   * fires, finds nothing due, and arms the next expiry itself (renewals only push expiries later).
   */
  private arm(at: number | undefined): void {
    if (at === undefined || this.closed) return;
    if (this.timer && this.timerAt !== undefined && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    const ms = Math.max(0, at - this.ctx.clock.now()) + 5;
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = undefined;
      void this.grantWaiters().catch((err: unknown) => this.failed(err, 'the TTL expiry'));
    }, Math.min(ms, 2 ** 31 - 1));
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
