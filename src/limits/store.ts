// The limiters' state in the state database (table provider_limits, migration 23): written at
// every change, read at hub start, so a hub killed while a breaker is open reopens it and sends
// no burst of requests after a restart. The probe in flight is not kept: a new hub has none.
import type { Db } from '../store/db.js';
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

export class LimitStore {
  constructor(private readonly db: Db) {}

  all(): LimitRow[] {
    return this.db.prepare('SELECT * FROM provider_limits ORDER BY provider, account').all() as LimitRow[];
  }

  get(account: string): LimitRow | undefined {
    return this.db.prepare('SELECT * FROM provider_limits WHERE account = ?').get(account) as LimitRow | undefined;
  }

  /** Rows of breakers that are not closed (what the floor shows). */
  active(): LimitRow[] {
    return this.db.prepare("SELECT * FROM provider_limits WHERE phase != 'closed' ORDER BY provider, account").all() as LimitRow[];
  }

  save(a: Account, b: BreakerState, paused: readonly string[], now: number): void {
    this.db.prepare(`INSERT INTO provider_limits (account, provider, endpoint, key_hash, phase, kind, status, reason, opened_at, until_at, basis, failures, hits, paused_json, updated_at)
      VALUES (@account, @provider, @endpoint, @key_hash, @phase, @kind, @status, @reason, @opened_at, @until_at, @basis, @failures, @hits, @paused_json, @updated_at)
      ON CONFLICT(account) DO UPDATE SET phase = excluded.phase, kind = excluded.kind, status = excluded.status, reason = excluded.reason,
        opened_at = excluded.opened_at, until_at = excluded.until_at, basis = excluded.basis, failures = excluded.failures, hits = excluded.hits,
        paused_json = excluded.paused_json, updated_at = excluded.updated_at`).run({
      account: a.id, provider: a.provider, endpoint: a.endpoint, key_hash: a.keyHash, phase: b.phase, kind: b.kind, status: b.status,
      reason: b.reason, opened_at: b.openedAt, until_at: b.until, basis: b.basis, failures: b.failures, hits: b.hits,
      paused_json: JSON.stringify(paused), updated_at: now,
    });
  }
}
