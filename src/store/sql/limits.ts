// The provider limiters' rows (table provider_limits, migration 23) over the layer (issue 29 step
// 3): written at every change of a breaker, read at hub start and by the notifier. One row per
// account, replaced whole (INSERT … ON CONFLICT (account) DO UPDATE, on both databases).
import type { Q } from './tx.js';
import type { ProviderLimitsTable } from './schema.js';

export type LimitRecord = ProviderLimitsTable;

export async function saveLimit(q: Q, r: LimitRecord): Promise<void> {
  const { account: _account, provider: _provider, endpoint: _endpoint, key_hash: _key, ...changed } = r;
  await q.insertInto('provider_limits').values(r).onConflict((oc) => oc.column('account').doUpdateSet(changed)).execute();
}

export async function getLimit(q: Q, account: string): Promise<LimitRecord | undefined> {
  return q.selectFrom('provider_limits').selectAll().where('account', '=', account).executeTakeFirst();
}

/** Every limiter's row, by provider and account. */
export async function allLimits(q: Q): Promise<LimitRecord[]> {
  return q.selectFrom('provider_limits').selectAll().orderBy('provider').orderBy('account').execute();
}

/** Rows of breakers that are not closed (what the floor and the notifier show). */
export async function activeLimits(q: Q): Promise<LimitRecord[]> {
  return q.selectFrom('provider_limits').selectAll().where('phase', '!=', 'closed').orderBy('provider').orderBy('account').execute();
}
