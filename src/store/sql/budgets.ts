// Budget reservations over the Kysely layer, on SQLite and PostgreSQL: the numbers a spawn's
// budget check reads (what a budget's scope spent and holds reserved, the costs of finished jobs
// like a new one) and the reservation rows it writes; the estimate, get_agent's reservation and a
// script run's budget are read here too (src/money/budgets.ts).
// The check and the hold are one decision about a sum over many rows, so on PostgreSQL the
// creating transaction first takes the spawn lock (`lockSpawns`: advisory class 2, one key for
// every budget: spawns are not hot), as docs/store-plan.md §2 says; on SQLite BEGIN IMMEDIATE is it.
import { sql, type RawBuilder } from 'kysely';
import { isPostgres, type Q } from './tx.js';
import { ADVISORY, advisoryXactLock } from './advisory.js';
import type { BudgetReservationsTable } from './schema.js';

/** A budget's scope (src/money/budget.ts BudgetRef): the house, a label, a subtree's root job, a script run. */
export interface Scope {
  kind: 'house' | 'label' | 'subtree' | 'run';
  key: string;
}

/** What a scope spent and holds (src/money/budget.ts BudgetUse). */
export interface ScopeUse {
  jobsUsd: number;
  hubUsd: number;
  reservedUsd: number;
  reservedJobs: number;
}

/** The statuses of a job that may still spend. */
const LIVE = sql.raw(`('queued', 'waiting', 'running', 'frozen', 'needs_input')`);

/** Serialise budget decisions on PostgreSQL (held until the transaction ends); nothing to do on SQLite. */
export async function lockSpawns(trx: Q): Promise<void> {
  await advisoryXactLock(trx, ADVISORY.budgets, 0);
}

/** A label in a job row's labels_json: by substring first (its JSON text), then exactly. */
function hasLabel(pg: boolean, col: string, label: string): RawBuilder<unknown> {
  const c = sql.raw(col);
  return pg
    ? sql`strpos(${c}, ${JSON.stringify(label)}) > 0 AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(${c}::jsonb) AS e(value) WHERE e.value = ${label})`
    : sql`instr(${c}, ${JSON.stringify(label)}) > 0 AND EXISTS (SELECT 1 FROM json_each(${c}) WHERE value = ${label})`;
}

/** A scope as SQL over a job row `j`: the CTE it needs (a subtree's job ids) and a condition. */
function scope(pg: boolean, b: Scope): { cte: RawBuilder<unknown>; cond: RawBuilder<unknown> } {
  const none = sql``;
  if (b.kind === 'house') return { cte: none, cond: sql`1 = 1` };
  if (b.kind === 'label') return { cte: none, cond: hasLabel(pg, 'j.labels_json', b.key) };
  if (b.kind === 'run') {
    // The run's agents (label run:<id>) and everything they spawn.
    return {
      cte: sql`WITH RECURSIVE s(id) AS (SELECT r.id FROM jobs r WHERE ${hasLabel(pg, 'r.labels_json', `run:${b.key}`)}
        UNION ALL SELECT c.id FROM jobs c JOIN s ON c.parent_id = s.id)`,
      cond: sql`j.id IN (SELECT id FROM s)`,
    };
  }
  return {
    // PostgreSQL: the root's id collates as the ids do (COLLATE "C"), or the recursive term refuses it.
    cte: sql`WITH RECURSIVE s(id) AS (SELECT ${pg ? sql`CAST(${b.key} AS TEXT) COLLATE "C"` : sql`${b.key}`} UNION ALL SELECT c.id FROM jobs c JOIN s ON c.parent_id = s.id)`,
    cond: sql`j.id IN (SELECT id FROM s)`,
  };
}

const greatest = (pg: boolean): RawBuilder<unknown> => sql.raw(pg ? 'GREATEST' : 'MAX');

/** What a scope's jobs and the hub's own runs for them spent, as two scalar subqueries (the house's hub runs include those that served no job). */
function spentColumns(b: Scope, cond: RawBuilder<unknown>): RawBuilder<unknown> {
  const hub = b.kind === 'house'
    ? sql`(SELECT COALESCE(SUM(cost_usd), 0) FROM usage)`
    : sql`(SELECT COALESCE(SUM(u.cost_usd), 0) FROM usage u JOIN jobs j ON j.id = u.job_id WHERE ${cond})`;
  return sql`(SELECT COALESCE(SUM(j.cost_usd), 0) FROM jobs j WHERE ${cond}) AS jobs, ${hub} AS hub`;
}

/** What was spent in a budget's scope (no reservations): the mid-run check. */
export async function spentIn(q: Q, b: Scope): Promise<Pick<ScopeUse, 'jobsUsd' | 'hubUsd'>> {
  const { cte, cond } = scope(isPostgres(q), b);
  const row = (await sql<{ jobs: number; hub: number }>`${cte} SELECT ${spentColumns(b, cond)}`.execute(q)).rows[0]!;
  return { jobsUsd: Number(row.jobs), hubUsd: Number(row.hub) };
}

/**
 * What a budget's scope holds. Reservations of the subtree's own root are left out of its
 * subtree budget: the root's reservation is its share of the house and label budgets.
 */
export async function useOf(q: Q, b: Scope): Promise<ScopeUse> {
  const pg = isPostgres(q);
  const { cte, cond } = scope(pg, b);
  const rootOut = b.kind === 'subtree' ? sql`AND r.job_id <> ${b.key}` : sql``;
  // One statement, so one snapshot on PostgreSQL (READ COMMITTED takes one per statement): read
  // apart, a job that ended between the reads (its cost booked, its status no longer live) was
  // counted neither as spent nor as reserved, and a call over the budget was let through.
  const r = await sql<{ jobs: number; hub: number; usd: number; n: number }>`${cte} SELECT
      ${spentColumns(b, cond)}, x.usd, x.n
    FROM (SELECT COALESCE(SUM(${greatest(pg)}(0, r.amount_usd - (j.cost_usd - r.base_cost_usd))), 0) AS usd, COUNT(*) AS n
      FROM budget_reservations r JOIN jobs j ON j.id = r.job_id
      WHERE r.released_at IS NULL AND j.status IN ${LIVE} AND ${cond} ${rootOut}) x`.execute(q);
  const row = r.rows[0]!;
  return { jobsUsd: Number(row.jobs), hubUsd: Number(row.hub), reservedUsd: Number(row.usd), reservedJobs: Number(row.n) };
}

/** The live jobs of a budget's scope, oldest first (what is left running when it is crossed). */
export async function liveIn(q: Q, b: Scope, limit = 50): Promise<{ id: string; title: string; status: string }[]> {
  const { cte, cond } = scope(isPostgres(q), b);
  return (await sql<{ id: string; title: string; status: string }>`${cte} SELECT j.id, j.title, j.status FROM jobs j WHERE j.status IN ${LIVE} AND ${cond} ORDER BY j.seq LIMIT ${limit}`.execute(q)).rows;
}

/** The ancestors of a job, nearest first (the job itself first when `self`). */
export async function ancestorsOf(q: Q, jobId: string | null, self = true): Promise<{ id: string; title: string; budget_usd: number | null }[]> {
  if (jobId === null) return [];
  const rows = (await sql<{ id: string; title: string; budget_usd: number | null }>`WITH RECURSIVE up(id, parent_id, title, budget_usd, n) AS (
      SELECT id, parent_id, title, budget_usd, 0 FROM jobs WHERE id = ${jobId}
      UNION ALL SELECT j.id, j.parent_id, j.title, j.budget_usd, up.n + 1 FROM jobs j JOIN up ON j.id = up.parent_id)
    SELECT id, title, budget_usd FROM up ORDER BY n`.execute(q)).rows;
  return self ? rows : rows.slice(1);
}

/** The labels of a job (`self`) and its ancestors that name script runs (`run:<id>`). */
export async function runLabelsUp(q: Q, jobId: string | null): Promise<string[]> {
  if (jobId === null) return [];
  const pg = isPostgres(q);
  const rows = (await sql<{ labels_json: string }>`WITH RECURSIVE up(id, parent_id, labels_json) AS (
      SELECT id, parent_id, labels_json FROM jobs WHERE id = ${jobId}
      UNION ALL SELECT j.id, j.parent_id, j.labels_json FROM jobs j JOIN up ON j.id = up.parent_id)
    SELECT labels_json FROM up WHERE ${sql.raw(pg ? 'strpos' : 'instr')}(labels_json, '"run:') > 0`.execute(q)).rows;
  return rows.map((r) => r.labels_json);
}

/** Costs of the `limit` most recent finished jobs of this provider and model (and template, unless undefined). */
export async function finishedCostsOf(q: Q, limit: number, provider: string, model: string | null, template?: string | null): Promise<number[]> {
  const byTemplate = template === undefined ? sql`` : sql`AND template IS NOT DISTINCT FROM ${template}`;
  const rows = (await sql<{ cost_usd: number }>`SELECT cost_usd FROM jobs
      WHERE provider = ${provider} AND model IS NOT DISTINCT FROM ${model} ${byTemplate} AND status IN ('succeeded', 'failed') AND turns > 0 AND cost_unknown = 0 AND ended_at IS NOT NULL
      ORDER BY ended_at DESC LIMIT ${limit}`.execute(q)).rows;
  return rows.map((r) => Number(r.cost_usd));
}

/** Hold a reservation for a job (a resumed job's earlier one is replaced). */
export async function holdReservation(q: Q, jobId: string, amountUsd: number, baseCostUsd: number, basis: string, now: number): Promise<void> {
  await q.insertInto('budget_reservations')
    .values({ job_id: jobId, amount_usd: amountUsd, base_cost_usd: baseCostUsd, basis, reserved_at: now, released_at: null, booked_usd: null })
    .onConflict((oc) => oc.column('job_id').doUpdateSet((eb) => ({
      amount_usd: eb.ref('excluded.amount_usd'), base_cost_usd: eb.ref('excluded.base_cost_usd'), basis: eb.ref('excluded.basis'),
      reserved_at: eb.ref('excluded.reserved_at'), released_at: null, booked_usd: null,
    })))
    .execute();
}

/** Release a held reservation and book what the job spent while it held it; false if none was held. */
export async function releaseReservation(q: Q, jobId: string, now: number): Promise<boolean> {
  const pg = isPostgres(q);
  const r = await sql`UPDATE budget_reservations SET released_at = ${now}, booked_usd = ${greatest(pg)}(0, (SELECT cost_usd FROM jobs WHERE id = ${jobId}) - base_cost_usd)
      WHERE job_id = ${jobId} AND released_at IS NULL`.execute(q);
  return Number(r.numAffectedRows ?? 0) > 0;
}

/** Held reservations whose job is no longer live (settled while no hub listened, e.g. by reconcile). */
export async function strayReservations(q: Q): Promise<string[]> {
  return (await sql<{ job_id: string }>`SELECT r.job_id FROM budget_reservations r JOIN jobs j ON j.id = r.job_id WHERE r.released_at IS NULL AND j.status NOT IN ${LIVE}`.execute(q)).rows.map((r) => r.job_id);
}

export async function reservationOf(q: Q, jobId: string): Promise<BudgetReservationsTable | undefined> {
  return q.selectFrom('budget_reservations').selectAll().where('job_id', '=', jobId).executeTakeFirst();
}

/** The reservations of these jobs by job id, in one statement (a page of list_agents). */
export async function reservationsOf(q: Q, jobIds: readonly string[]): Promise<Map<string, BudgetReservationsTable>> {
  if (!jobIds.length) return new Map();
  const rows = await q.selectFrom('budget_reservations').selectAll().where('job_id', 'in', [...new Set(jobIds)]).execute();
  return new Map(rows.map((r) => [r.job_id, r]));
}
