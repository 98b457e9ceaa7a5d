// The lock decisions, each one transaction of `lockTx` (src/store/sql/locks.ts): all-or-nothing
// grants, waits and deadlock refusal, waiters served in arrival order, and the hook's check with
// its auto locks. They return what was decided; the lock service (src/services/locks.ts) words it,
// emits the events and arms the TTL timer. Tested with real concurrent connections on both
// databases (test/integration/sql-locks.test.ts).
import { findCycle, type CycleEdge, type LockFacts } from '../../domain/waitGraph.js';
import { keyString, type LockItem, type LockKey } from '../../domain/lockKeys.js';
import type { Q } from './tx.js';
import {
  addWait, allLocks, dropWait, expire, getWait, grantWait, heldAmong, lockTx, nextExpiry, related, release, renew, take, waiting,
  waitItems, type LockRow,
} from './locks.js';

export interface LockRequest {
  holder: string;
  /** The files, each once: its key and its absolute real path in the holder's tree. */
  items: readonly LockItem[];
  reason: string | null;
  ttlS: number;
  now: number;
  /** Wait for paths others hold (false: refuse at once). */
  wait: boolean;
}

export type Acquired =
  | { kind: 'granted' }
  | { kind: 'held'; others: LockRow[] }
  | { kind: 'deadlock'; cycle: CycleEdge[] }
  | { kind: 'waiting'; waitId: number };

/**
 * All of the paths for holder, or none: granted (taken, and holder's other locks renewed), held
 * by others (`wait` false), a deadlock (waiting would close a cycle in the wait-for graph, read in
 * this transaction), or a wait row in arrival order. `expired`: locks past their TTL were dropped.
 */
export async function acquireOrWait(q: Q, r: LockRequest): Promise<Acquired & { expired: boolean }> {
  return lockTx(q, async (trx) => {
    const expired = (await expire(trx, r.now)).length > 0;
    const items = r.items;
    const others = (await heldAmong(trx, items)).filter((l) => l.holder !== r.holder);
    if (others.length === 0) {
      await take(trx, r.holder, items, r.reason, r.ttlS, r.now);
      await renew(trx, r.holder, r.now);
      return { kind: 'granted', expired };
    }
    if (!r.wait) return { kind: 'held', others, expired };
    const cycle = findCycle(await facts(trx), r.holder, items.map(keyString));
    if (cycle) return { kind: 'deadlock', cycle, expired };
    return { kind: 'waiting', waitId: await addWait(trx, r.holder, items, r.reason, r.ttlS, r.now), expired };
  });
}

/** key → holder and waiter → keys, for the wait-for graph (keys as keyString names them). */
async function facts(trx: Q): Promise<LockFacts> {
  const holders = new Map((await allLocks(trx)).map((l) => [keyString({ repo: l.repo, rel: l.rel_path }), l.holder]));
  const waits = new Map<string, string[]>();
  for (const w of await waiting(trx)) waits.set(w.holder, [...(waits.get(w.holder) ?? []), ...waitItems(w).map(keyString)]);
  return { holders, waiting: waits };
}

/**
 * A wait ended (granted and heard, or timed out/cancelled): its row goes. A grant nobody is there
 * to receive any more (`keep` false) is released again. Returns what the wait had come to.
 */
export async function endWait(q: Q, waitId: number, holder: string, keep: boolean): Promise<'granted' | 'released' | 'gone'> {
  return lockTx(q, async (trx) => {
    const w = await getWait(trx, waitId);
    await dropWait(trx, waitId);
    if (w?.status !== 'granted') return 'gone';
    if (keep) return 'granted';
    await release(trx, holder, waitItems(w));
    return 'released';
  });
}

/**
 * Serve waiters in arrival order: each whose files are all free (or its own) gets them, after
 * what is past its TTL is dropped. Returns the holders granted (in order), whether anything
 * expired, and the next expiry.
 */
export async function grantWaiting(q: Q, now: number): Promise<{ granted: string[]; expired: boolean; next: number | undefined }> {
  return lockTx(q, async (trx) => {
    const expired = (await expire(trx, now)).length > 0;
    const granted: string[] = [];
    const ws = await waiting(trx);
    if (ws.length) {
      const want = ws.map(waitItems);
      const unique = new Map(want.flat().map((i) => [keyString(i), i]));
      const holder = new Map((await heldAmong(trx, [...unique.values()])).map((l) => [keyString({ repo: l.repo, rel: l.rel_path }), l.holder]));
      for (const [k, w] of ws.entries()) {
        const items = want[k]!;
        if (items.some((i) => (holder.get(keyString(i)) ?? w.holder) !== w.holder)) continue;
        await take(trx, w.holder, items, w.reason, w.ttl_s, now);
        await grantWait(trx, w.id);
        for (const i of items) holder.set(keyString(i), w.holder);
        granted.push(w.holder);
      }
    }
    return { granted, expired, next: await nextExpiry(trx) };
  });
}

export interface HookRequest {
  holder: string;
  /** The call's write targets inside the caller's work tree. */
  targets: readonly LockItem[];
  /** The targets and every directory above them up to the work tree. */
  exact: readonly LockKey[];
  /** Targets that are directories (the tree itself included): checked, never locked. */
  dirs: readonly LockKey[];
  mode: 'auto' | 'strict';
  now: number;
  /** Renew holder's locks in the same transaction (it may hold some). */
  renew: boolean;
  reason: string;
  ttlS: number;
}

export type HookDecided =
  | { kind: 'held'; others: LockRow[] }
  | { kind: 'strict-dirs'; dirs: LockKey[] }
  | { kind: 'strict-free'; free: LockItem[] }
  | { kind: 'took'; took: LockItem[] };

/**
 * The hook's check with its auto locks, few statements whatever the number of targets: renew (when asked), one read
 * of every lock on a target, above one or inside one, an expiry only when one of those is past
 * its TTL, and one insert of the free targets (auto mode). `renewed`: how many locks the renewal
 * pushed on (undefined: not asked).
 */
export async function hookDecide(q: Q, r: HookRequest): Promise<HookDecided & { expired: boolean; renewed?: number }> {
  return lockTx(q, async (trx) => {
    const renewed = r.renew ? await renew(trx, r.holder, r.now) : undefined;
    const rows = await related(trx, r.exact, r.dirs);
    const expired = rows.some((l) => l.expires_at <= r.now);
    if (expired) await expire(trx, r.now); // a lock past its TTL on a target: gone, as if its timer had fired
    const d = hookVerdict(rows, r);
    if (d.kind === 'took' && d.took.length) await take(trx, r.holder, d.took, r.reason, r.ttlS, r.now);
    return { ...d, expired, renewed };
  });
}

/**
 * The hook's verdict on the locks related to its targets (`rows`, read by `related`): held by
 * another → held; strict mode refuses directories and targets the caller does not hold; else the
 * free targets are the ones to take (none: every target is the caller's already, or a directory).
 * A verdict from rows read outside a transaction is final when it takes nothing (the hook's fast
 * path, src/services/locks.ts); `marginMs` then counts the caller's own locks as held only when
 * they outlive the read by that much, so one cannot expire and be taken before the renewal.
 */
export function hookVerdict(rows: readonly LockRow[], r: Pick<HookRequest, 'holder' | 'targets' | 'dirs' | 'mode' | 'now'>, marginMs = 0): HookDecided {
  const live = rows.filter((l) => l.expires_at > r.now);
  const others = live.filter((l) => l.holder !== r.holder);
  if (others.length) return { kind: 'held', others };
  if (r.mode === 'strict' && r.dirs.length) return { kind: 'strict-dirs', dirs: [...r.dirs] };
  const held = new Set(live.filter((l) => l.expires_at > r.now + marginMs).map((l) => keyString({ repo: l.repo, rel: l.rel_path })));
  const dirs = new Set(r.dirs.map(keyString));
  const free = r.targets.filter((t) => !held.has(keyString(t)) && !dirs.has(keyString(t)));
  if (r.mode === 'strict' && free.length) return { kind: 'strict-free', free };
  return { kind: 'took', took: free };
}
