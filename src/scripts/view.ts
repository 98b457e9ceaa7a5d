// A script run as get_run, `overseer run` and the floor show it: read from the state database
// alone (the run row, its journal and the jobs that carried its calls), so the CLI can show it
// whether or not a hub runs.
import type { Db } from '../store/db.js';
import type { JobRow } from '../store/jobs.js';
import type { Json } from './sandbox.js';
import { ScriptJournal } from './journal.js';

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

export interface ScriptRunRow { id: string; title: string; status: string; note: string | null; rules_json: string; created_at: number; ended_at: number | null; paused: number }

/** The script run with this id, or the one run whose id starts with it. */
export function findScriptRun(db: Db, idOrPrefix: string): ScriptRunRow | undefined {
  const rows = db.prepare("SELECT * FROM runs WHERE kind = 'script' AND id LIKE ? ESCAPE '\\' LIMIT 2").all(`${idOrPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`) as ScriptRunRow[];
  return rows.find((x) => x.id === idOrPrefix) ?? (rows.length === 1 ? rows[0] : undefined);
}

/** The run's own budget (run_script's budget_usd), for the budgets its agents reserve under (src/money/budgets.ts). */
export function scriptRunBudget(db: Db, runId: string): { limitUsd: number; title: string } | undefined {
  const r = db.prepare("SELECT title, rules_json FROM runs WHERE id = ? AND kind = 'script'").get(runId) as { title: string; rules_json: string } | undefined;
  const limit = r ? (JSON.parse(r.rules_json) as ScriptRules).budget_usd : null;
  return r && limit !== null ? { limitUsd: limit, title: r.title } : undefined;
}

/** Dollars the run's agents have spent so far. */
export function scriptRunSpent(db: Db, runId: string): number {
  const r = db.prepare('SELECT COALESCE(SUM(j.cost_usd), 0) AS c FROM script_calls s JOIN jobs j ON j.id = s.job_id WHERE s.run_id = ?').get(runId) as { c: number };
  return r.c;
}

/** A script run as get_run shows it (undefined: no script run has that id or unique prefix). */
export function scriptRunView(db: Db, job: (id: string) => JobRow | undefined, idOrPrefix: string): Record<string, unknown> | undefined {
  const r = findScriptRun(db, idOrPrefix);
  if (!r) return undefined;
  const journal = new ScriptJournal(db);
  const rules = JSON.parse(r.rules_json) as ScriptRules;
  const ok = r.status === 'succeeded';
  const result = ok && r.note ? ((JSON.parse(r.note) as { result?: Json }).result ?? null) : null;
  const calls = journal.calls(r.id).map((c) => {
    const j = c.job_id ? job(c.job_id) : undefined;
    return {
      seq: c.seq, kind: c.kind, label: c.label, phase: c.phase, status: c.status, job_id: c.job_id, request_id: c.request_id, provider: j?.provider ?? null, job_status: j?.status ?? null, cost_usd: j?.cost_usd ?? 0,
      ...(c.scope ? { scope: c.scope } : {}), ...(c.replaced ? { replaced: true } : {}),
    };
  });
  return {
    run_id: r.id, kind: 'script', title: r.title, status: r.status, paused: r.paused === 1, name: rules.name,
    ...(ok ? { result } : { error: r.note }),
    budget_usd: rules.budget_usd, cost_usd: Math.round(scriptRunSpent(db, r.id) * 1e6) / 1e6,
    created_at: new Date(r.created_at).toISOString(), ended_at: r.ended_at ? new Date(r.ended_at).toISOString() : null,
    calls, log: journal.logOf(r.id, 50).map((l) => ({ kind: l.kind, text: l.text, at: new Date(l.at).toISOString() })),
  };
}

/** The script runs to show: every one still running, then those that ended since `since` (epoch ms), newest first, at most `limit`.
 * Not the hub's bundled scripts (rules.bundled: the implement/review workflow), which show as what they run. */
export function listScriptRuns(db: Db, o: { limit: number; since?: number }): ScriptRunRow[] {
  return db.prepare(`SELECT * FROM runs WHERE kind = 'script' AND json_extract(rules_json, '$.bundled') IS NULL AND (status = 'running' OR COALESCE(ended_at, updated_at) >= ?)
    ORDER BY status = 'running' DESC, created_at DESC, rowid DESC LIMIT ?`).all(o.since ?? 0, o.limit) as ScriptRunRow[];
}

/** Calls of a script run by state: done, running (agents live or approvals waiting), failed; calls a resume replaced are history, not counted. */
export function scriptCallCounts(calls: readonly { status: string; replaced?: boolean }[]): { done: number; running: number; failed: number } {
  const n = (s: string): number => calls.filter((c) => c.status === s && c.replaced !== true).length;
  return { done: n('done'), running: n('running'), failed: n('failed') };
}
