// mixed period: until the script engine reads a run's spending on the layer (src/scripts/runs.ts,
// execution.ts: h/p29b2) — then this whole file goes. What a budget's scope holds, read through
// the synchronous store, for that one reader; the same queries on the layer are
// src/store/sql/budgets.ts (useOf, spentIn). A reservation counts only while its job is live
// (queued, waiting, running, frozen, needs_input) and unreleased.
import type { Db } from '../store/db.js';
import type { BudgetRef, BudgetUse } from './budget.js';
import { LIVE_STATUSES } from './budget.js';

const LIVE = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * A scope as SQL over a job row `j`: a condition, the CTE it needs (a subtree's job ids) and
 * their arguments. The house and a label are conditions on the row, so their sums read the
 * covering indexes of migration 14 instead of whole job rows (prompts and results are wide);
 * a label is found by substring first (its JSON text), then confirmed exactly.
 */
function scope(b: Pick<BudgetRef, 'kind' | 'key'>): { cte: string; cteArgs: unknown[]; cond: string; condArgs: unknown[] } {
  if (b.kind === 'house') return { cte: '', cteArgs: [], cond: '1', condArgs: [] };
  if (b.kind === 'label') {
    return { cte: '', cteArgs: [], cond: 'instr(j.labels_json, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(j.labels_json) WHERE value = ?)', condArgs: [JSON.stringify(b.key), b.key] };
  }
  if (b.kind === 'run') {
    // The run's agents (label run:<id>) and everything they spawn.
    const label = `run:${b.key}`;
    return {
      cte: `WITH RECURSIVE s(id) AS (SELECT r.id FROM jobs r WHERE instr(r.labels_json, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(r.labels_json) WHERE value = ?)
        UNION ALL SELECT c.id FROM jobs c JOIN s ON c.parent_id = s.id)`,
      cteArgs: [JSON.stringify(label), label], cond: 'j.id IN (SELECT id FROM s)', condArgs: [],
    };
  }
  return {
    cte: 'WITH RECURSIVE s(id) AS (SELECT ? UNION ALL SELECT c.id FROM jobs c JOIN s ON c.parent_id = s.id)',
    cteArgs: [b.key], cond: 'j.id IN (SELECT id FROM s)', condArgs: [],
  };
}

export class BudgetStore {
  constructor(private readonly db: Db) {}

  /**
   * What a budget's scope holds. Reservations of the subtree's own root are left out of its
   * subtree budget: the root's reservation is its share of the house and label budgets, while
   * its own budget_usd is what it may spend with everything it spawns.
   */
  use(b: Pick<BudgetRef, 'kind' | 'key'>): BudgetUse {
    const spent = this.spent(b);
    const { cte, cteArgs, cond, condArgs } = scope(b);
    const rootOut = b.kind === 'subtree' ? 'AND r.job_id <> ?' : '';
    const row = this.db.prepare(`${cte} SELECT COALESCE(SUM(MAX(0, r.amount_usd - (j.cost_usd - r.base_cost_usd))), 0) AS usd, COUNT(*) AS n
        FROM budget_reservations r JOIN jobs j ON j.id = r.job_id
        WHERE r.released_at IS NULL AND j.status IN (${LIVE}) AND ${cond} ${rootOut}`)
      .get(...cteArgs, ...condArgs, ...(b.kind === 'subtree' ? [b.key] : [])) as { usd: number; n: number };
    return { ...spent, reservedUsd: row.usd, reservedJobs: row.n };
  }

  /** What was spent in a budget's scope (no reservations): the mid-run check. */
  spent(b: Pick<BudgetRef, 'kind' | 'key'>): Pick<BudgetUse, 'jobsUsd' | 'hubUsd'> {
    const { cte, cteArgs, cond, condArgs } = scope(b);
    const jobs = this.db.prepare(`${cte} SELECT COALESCE(SUM(j.cost_usd), 0) AS usd FROM jobs j WHERE ${cond}`).get(...cteArgs, ...condArgs) as { usd: number };
    // The house's hub runs include those that served no job (job_id null).
    const hub = (b.kind === 'house'
      ? this.db.prepare('SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM usage').get()
      : this.db.prepare(`${cte} SELECT COALESCE(SUM(u.cost_usd), 0) AS usd FROM usage u JOIN jobs j ON j.id = u.job_id WHERE ${cond}`).get(...cteArgs, ...condArgs)) as { usd: number };
    return { jobsUsd: jobs.usd, hubUsd: hub.usd };
  }
}
