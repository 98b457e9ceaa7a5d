// A script run as get_run, `overseer run` and the floor show it: read from the state database
// alone (the run row, its journal and the jobs that carried its calls), so the CLI can show it
// whether or not a hub runs.
import type { Db } from '../store/db.js';
import type { JobRow } from '../store/jobs.js';
import type { Json } from './sandbox.js';
import { ScriptJournal } from './journal.js';

export interface ScriptRules {
  name: string | null; args: Json | undefined; budget_usd: number | null; max_concurrent: number;
  /** A bundled script of the hub's (src/scripts/bundled.ts): the name its privileged calls answer to. */
  bundled?: string;
}

export interface ScriptRunRow { id: string; title: string; status: string; note: string | null; rules_json: string; created_at: number; ended_at: number | null }

/** The script run with this id, or the one run whose id starts with it. */
export function findScriptRun(db: Db, idOrPrefix: string): ScriptRunRow | undefined {
  const rows = db.prepare("SELECT * FROM runs WHERE kind = 'script' AND id LIKE ? ESCAPE '\\' LIMIT 2").all(`${idOrPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`) as ScriptRunRow[];
  return rows.find((x) => x.id === idOrPrefix) ?? (rows.length === 1 ? rows[0] : undefined);
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
    return { seq: c.seq, kind: c.kind, label: c.label, phase: c.phase, status: c.status, job_id: c.job_id, request_id: c.request_id, job_status: j?.status ?? null, cost_usd: j?.cost_usd ?? 0 };
  });
  return {
    run_id: r.id, kind: 'script', title: r.title, status: r.status, name: rules.name,
    ...(ok ? { result } : { error: r.note }),
    budget_usd: rules.budget_usd, cost_usd: Math.round(scriptRunSpent(db, r.id) * 1e6) / 1e6,
    created_at: new Date(r.created_at).toISOString(), ended_at: r.ended_at ? new Date(r.ended_at).toISOString() : null,
    calls, log: journal.logOf(r.id, 50).map((l) => ({ kind: l.kind, text: l.text, at: new Date(l.at).toISOString() })),
  };
}
