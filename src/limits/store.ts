// The limiters' state in the state database (table provider_limits, migration 23): written at
// every change, read at hub start, so a hub killed while a breaker is open reopens it and sends
// no burst of requests after a restart. The probe in flight is not kept: a new hub has none.
// The statements are on the asynchronous layer (src/store/sql/limits.ts); here, the breaker's
// state as a row and back.
import type { Q } from '../store/sql/tx.js';
import { allLimits, getLimit, saveLimit } from '../store/sql/limits.js';
import type { Account } from './account.js';
import { CLOSED, type BreakerState, type LimitKind, type Phase, type WaitBasis } from './breaker.js';

export interface LimitRow {
  account: string;
  provider: string;
  endpoint: string;
  key_hash: string;
  phase: Phase;
  kind: LimitKind | null;
  status: number | null;
  reason: string | null;
  opened_at: number | null;
  until_at: number | null;
  basis: WaitBasis | null;
  failures: number;
  hits: number;
  /** JSON array of the job ids whose child the limiter paused at the limit. */
  paused_json: string;
  updated_at: number;
}

/** The breaker a row describes (no probe in flight). */
export function stateOf(r: LimitRow): BreakerState {
  if (r.phase === 'closed') return CLOSED;
  return {
    phase: r.phase, failures: r.failures, kind: r.kind, status: r.status, reason: r.reason,
    openedAt: r.opened_at, until: r.until_at, basis: r.basis, probe: null, hits: r.hits,
  };
}

/** The row that records `b` for account `a` (`paused`: the jobs whose child the limiter paused). */
export function limitRow(a: Account, b: BreakerState, paused: readonly string[], now: number): LimitRow {
  return {
    account: a.id, provider: a.provider, endpoint: a.endpoint, key_hash: a.keyHash, phase: b.phase, kind: b.kind, status: b.status,
    reason: b.reason, opened_at: b.openedAt, until_at: b.until, basis: b.basis, failures: b.failures, hits: b.hits,
    paused_json: JSON.stringify(paused), updated_at: now,
  };
}

/** The row of `account`, if its limiter ever changed. */
export async function readLimit(q: Q, account: string): Promise<LimitRow | undefined> {
  return (await getLimit(q, account)) as LimitRow | undefined;
}

/** Every limiter's row, by provider and account. */
export async function readLimits(q: Q): Promise<LimitRow[]> {
  return (await allLimits(q)) as LimitRow[];
}

/** Record `b` for account `a`. */
export async function saveLimitState(q: Q, a: Account, b: BreakerState, paused: readonly string[], now: number): Promise<void> {
  await saveLimit(q, limitRow(a, b, paused, now));
}
