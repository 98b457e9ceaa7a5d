// Budgets on a bare state database, without a hub: job rows made by hand and a Budgets service
// over a minimal context (configuration, database, launchers' prices), for the tests of
// reservations and of check-and-reserve racing across connections.
import type { NewJob } from '../../src/store/jobs.js';
import { Budgets } from '../../src/money/budgets.js';
import { Bus } from '../../src/services/bus.js';
import { silentLogger } from '../../src/log.js';
import { loadConfigFrom, type Config } from '../../src/config.js';
import { claudeCostOf } from '../../src/launch/claude/prices.js';
import type { Db } from '../../src/store/db.js';
import { sqlOver, type SqlDb } from '../../src/store/sql/open.js';
import type { HubContext } from '../../src/services/context.js';
import type { Q } from '../../src/store/sql/tx.js';

/** A job row with everything a test does not care about filled in. */
export function newJob(id: string, over: Partial<NewJob> = {}): NewJob {
  return {
    id, parent_id: null, depth: 1, title: `title of ${id}`, prompt: `prompt of ${id}`, provider: 'claude', model: null, cwd: '/repo',
    work_dir: null, repo_root: null, worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null,
    timeout_s: null, context_json: null, template: null, checks_json: '[]', retry: 'none', labels_json: '[]', depends_on_json: '[]',
    status: 'queued', session_id: `sess-${id}`, token_hash: null, workflow_id: null, phase: null, cycle: null, json_schema: null,
    ...over,
  };
}

/** Budgets over the layer on `db` (a SQLite file) with this configuration (home is a placeholder: nothing is written there); `q` for the fixtures' rows (src/store/sql/jobs.ts). */
export function budgetsOn(db: Db, config: Partial<Config> = {}, now = () => 1_000, runBudget: (runId: string) => { limitUsd: number; title: string } | undefined = () => undefined): { budgets: Budgets; ctx: HubContext; q: Q } {
  const r = budgetsOver(sqlOver(db), config, now, runBudget);
  return { ...r, q: r.ctx.sql.db };
}

/** Budgets over the asynchronous layer (either dialect). */
export function budgetsOver(sql: SqlDb, config: Partial<Config> = {}, now = () => 1_000, runBudget: (runId: string) => { limitUsd: number; title: string } | undefined = () => undefined): { budgets: Budgets; ctx: HubContext } {
  const ctx = {
    config: loadConfigFrom({ home: '/nonexistent-overseer-test', ...config }),
    sql, bus: new Bus(), clock: { now }, log: silentLogger,
    launchers: { claude: { priceCall: (m: string | undefined, t: Parameters<typeof claudeCostOf>[1]) => claudeCostOf(m, t) } },
  } as unknown as HubContext;
  // No live children to stop, no model tiers for "auto": what the reservation tests need.
  return { budgets: new Budgets(ctx, { actions: { stop: () => false }, autoModels: () => undefined, runBudget: async (_q, id) => runBudget(id) }), ctx };
}
