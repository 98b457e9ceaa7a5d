// mixed period: until step 7 — this whole file goes then (docs/store-plan.md). The synchronous
// numbers behind the house budget, for the callers not yet on the layer: Budgets.checkSync /
// holdSync (JobService.createSync: workflow phases, debate turns, schedule occurrences), the
// dispatch runs' estimate, the reservation in JobService.withHealth, a script run's budget
// (src/scripts/execution.ts) and `overseer status`'s budgets line. The same queries on the layer
// are src/store/sql/budgets.ts (the job engine's check, hold, release and the mid-run check).
// A reservation counts only while its job is live (queued, waiting, running, frozen,
// needs_input) and unreleased.
import type { Db } from '../store/db.js';
import type { Ancestor, BudgetRef, BudgetUse } from './budget.js';
import { ESTIMATE_SAMPLE } from './budget.js';

/** The statuses of a job that may still spend. */
export const LIVE_STATUSES = ['queued', 'waiting', 'running', 'frozen', 'needs_input'] as const;
const LIVE = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

export interface ReservationRow {
  job_id: string;
  amount_usd: number;
  base_cost_usd: number;
  basis: string;
  reserved_at: number;
  released_at: number | null;
  booked_usd: number | null;
}

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

  /** The ancestors of a job, nearest first (the job itself first when `self`). */
  ancestors(jobId: string | null, self = true): Ancestor[] {
    if (jobId === null) return [];
    const rows = this.db.prepare(`WITH RECURSIVE up(id, parent_id, title, budget_usd, n) AS (
        SELECT id, parent_id, title, budget_usd, 0 FROM jobs WHERE id = ?
        UNION ALL SELECT j.id, j.parent_id, j.title, j.budget_usd, up.n + 1 FROM jobs j JOIN up ON j.id = up.parent_id)
      SELECT id, title, budget_usd FROM up ORDER BY n`).all(jobId) as Ancestor[];
    return self ? rows : rows.slice(1);
  }

  /** The script runs a job (`self`) or a new job's parent and its ancestors work for: their `run:<id>` labels. */
  runsOf(jobId: string | null): string[] {
    if (jobId === null) return [];
    const rows = this.db.prepare(`WITH RECURSIVE up(id, parent_id, labels_json) AS (
        SELECT id, parent_id, labels_json FROM jobs WHERE id = ?
        UNION ALL SELECT j.id, j.parent_id, j.labels_json FROM jobs j JOIN up ON j.id = up.parent_id)
      SELECT labels_json FROM up WHERE instr(labels_json, '"run:') > 0`).all(jobId) as { labels_json: string }[];
    return rows.flatMap((r) => runIdsOf(JSON.parse(r.labels_json) as string[]));
  }

  /** Costs of the most recent finished jobs of this provider and model (and template, unless undefined). */
  finishedCosts(provider: string, model: string | null, template?: string | null): number[] {
    const byTemplate = template === undefined ? '' : 'AND template IS ?';
    const rows = this.db.prepare(`SELECT cost_usd FROM jobs
        WHERE provider = ? AND model IS ? ${byTemplate} AND status IN ('succeeded', 'failed') AND turns > 0 AND cost_unknown = 0 AND ended_at IS NOT NULL
        ORDER BY ended_at DESC LIMIT ?`)
      .all(provider, model, ...(template === undefined ? [] : [template]), ESTIMATE_SAMPLE) as { cost_usd: number }[];
    return rows.map((r) => r.cost_usd);
  }

  /** Hold a reservation for a job (a resumed job's earlier one is replaced). */
  hold(jobId: string, amountUsd: number, baseCostUsd: number, basis: string, now: number): void {
    this.db.prepare(`INSERT INTO budget_reservations (job_id, amount_usd, base_cost_usd, basis, reserved_at, released_at, booked_usd) VALUES (?, ?, ?, ?, ?, NULL, NULL)
      ON CONFLICT(job_id) DO UPDATE SET amount_usd = excluded.amount_usd, base_cost_usd = excluded.base_cost_usd, basis = excluded.basis,
        reserved_at = excluded.reserved_at, released_at = NULL, booked_usd = NULL`).run(jobId, amountUsd, baseCostUsd, basis, now);
  }

  get(jobId: string): ReservationRow | undefined {
    return this.db.prepare('SELECT * FROM budget_reservations WHERE job_id = ?').get(jobId) as ReservationRow | undefined;
  }
}

/** The script runs named by `run:<id>` labels. */
export function runIdsOf(labels: readonly string[]): string[] {
  return labels.filter((l) => l.startsWith('run:')).map((l) => l.slice(4));
}
