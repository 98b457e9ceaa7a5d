// A script run as get_run, `overseer run` and the floor show it: read from the state database
// alone (the run row, its journal and the jobs that carried its calls), through the layer
// (src/store/sql/scripts.ts), so the CLI can show it whether or not a hub runs.
import type { Json } from './sandbox.js';
import { callsWithJobs, findScriptRun, logOf, scriptRunSpent, type ScriptRunRow } from '../store/sql/scripts.js';
import type { Q } from '../store/sql/tx.js';

export { listScriptRuns, findScriptRun, scriptRunSpent } from '../store/sql/scripts.js';
export type { ScriptRunRow } from '../store/sql/scripts.js';

export interface ScriptRules {
  name: string | null;
  args: Json | undefined;
  budget_usd: number | null;
  max_concurrent: number;
  /** A resume_run that has not yet diverged: a new hub continues it as a resume, not a recover. */
  replaying?: boolean;
  /** A bundled script of the hub's (src/scripts/bundled.ts): the name its privileged calls answer to. */
  bundled?: string;
}

/** The run's own budget (run_script's budget_usd), for the budgets its agents reserve under (src/money/budgets.ts); read in the spawn's transaction. */
export async function scriptRunBudget(q: Q, runId: string): Promise<{ limitUsd: number; title: string } | undefined> {
  const r = await q.selectFrom('runs').select(['title', 'rules_json']).where('id', '=', runId).where('kind', '=', 'script').executeTakeFirst();
  const limit = r ? (JSON.parse(r.rules_json) as ScriptRules).budget_usd : null;
  return r && limit !== null ? { limitUsd: limit, title: r.title } : undefined;
}

/** A script run as get_run shows it (undefined: no script run has that id or unique prefix). */
export async function scriptRunView(q: Q, idOrPrefix: string): Promise<Record<string, unknown> | undefined> {
  const r = await findScriptRun(q, idOrPrefix);
  return r ? (await runView(q, r)).view : undefined;
}

/** The view of run `r`, and its calls' job titles (the floor shows them; get_run does not). */
export async function runView(q: Q, r: ScriptRunRow, logLines = 50): Promise<{ view: Record<string, unknown> & { calls: ViewCall[]; log: { kind: string; text: string; at: string }[] }; titles: Map<string, string | null> }> {
  const rules = JSON.parse(r.rules_json) as ScriptRules;
  const ok = r.status === 'succeeded';
  const result = ok && r.note ? ((JSON.parse(r.note) as { result?: Json }).result ?? null) : null;
  const [rows, spent, log] = [await callsWithJobs(q, r.id), await scriptRunSpent(q, r.id), await logOf(q, r.id, logLines)];
  const calls = rows.map((c) => ({
    seq: c.seq, kind: c.kind, label: c.label, phase: c.phase, status: c.status, job_id: c.job_id, request_id: c.request_id, provider: c.job_provider ?? null, job_status: c.job_status ?? null, cost_usd: c.job_cost_usd ?? 0,
    ...(c.scope ? { scope: c.scope } : {}), ...(c.replaced ? { replaced: true } : {}),
  }));
  const titles = new Map(rows.flatMap((c) => (c.job_id ? [[c.job_id, c.job_title] as const] : [])));
  const view = {
    run_id: r.id, kind: 'script', title: r.title, status: r.status, paused: r.paused === 1, name: rules.name,
    ...(ok ? { result } : { error: r.note }),
    budget_usd: rules.budget_usd, cost_usd: Math.round(spent * 1e6) / 1e6,
    created_at: new Date(r.created_at).toISOString(), ended_at: r.ended_at ? new Date(r.ended_at).toISOString() : null,
    calls, log: log.map((l) => ({ kind: l.kind, text: l.text, at: new Date(l.at).toISOString() })),
  };
  return { view, titles };
}

export interface ViewCall { seq: number; kind: string; label: string | null; phase: string | null; status: string; job_id: string | null; request_id: string | null; provider: string | null; job_status: string | null; cost_usd: number; scope?: string; replaced?: boolean }

/** Calls of a script run by state: done, running (agents live or approvals waiting), failed; calls a resume replaced are history, not counted. */
export function scriptCallCounts(calls: readonly { status: string; replaced?: boolean }[]): { done: number; running: number; failed: number } {
  const n = (s: string): number => calls.filter((c) => c.status === s && c.replaced !== true).length;
  return { done: n('done'), running: n('running'), failed: n('failed') };
}
