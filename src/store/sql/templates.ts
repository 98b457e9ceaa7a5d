// Per template and model, what its jobs add up to (src/templates/stats.ts turns the sums into
// rates and averages), over the layer (issue 29 step 3). One statement, the same text on both
// databases; PostgreSQL sums BIGINT columns into NUMERIC, which arrives as text, so every sum is
// made a number here.
import { sql } from 'kysely';
import type { Q } from './tx.js';

export interface TemplateSums {
  template: string;
  /** null: the provider's default model. */
  model: string | null;
  runs: number;
  ended: number;
  succeeded: number;
  cost: number;
  turns: number;
  dur_ms: number;
  timed: number;
}

const ENDED = sql`status IN ('succeeded', 'failed', 'cancelled')`;
const TIMED = sql`${ENDED} AND started_at IS NOT NULL AND ended_at IS NOT NULL`;

/** The sums of every (template, model) with at least one job, by template, then model (the default last). */
export async function templateSums(q: Q): Promise<TemplateSums[]> {
  const r = await sql<Record<keyof TemplateSums, string | number | null>>`SELECT template, model,
       COUNT(*) AS runs,
       COALESCE(SUM(CASE WHEN ${ENDED} THEN 1 ELSE 0 END), 0) AS ended,
       COALESCE(SUM(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END), 0) AS succeeded,
       COALESCE(SUM(CASE WHEN ${ENDED} THEN cost_usd ELSE 0 END), 0) AS cost,
       COALESCE(SUM(CASE WHEN ${ENDED} THEN turns ELSE 0 END), 0) AS turns,
       COALESCE(SUM(CASE WHEN ${TIMED} THEN ended_at - started_at ELSE 0 END), 0) AS dur_ms,
       COALESCE(SUM(CASE WHEN ${TIMED} THEN 1 ELSE 0 END), 0) AS timed
     FROM jobs WHERE template IS NOT NULL
     GROUP BY template, model
     ORDER BY template, model IS NULL, model`.execute(q);
  return r.rows.map((x) => ({
    template: String(x.template), model: x.model === null ? null : String(x.model),
    runs: Number(x.runs), ended: Number(x.ended), succeeded: Number(x.succeeded), cost: Number(x.cost),
    turns: Number(x.turns), dur_ms: Number(x.dur_ms), timed: Number(x.timed),
  }));
}
