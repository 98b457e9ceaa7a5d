// Script runs and their journal over the Kysely layer, on SQLite and PostgreSQL (src/scripts,
// docs/decisions.md "Script runs on the layer"). What the store decides:
// - a journal call's seq is the run's next, allocated once: on SQLite one statement
//   (INSERT … SELECT MAX(seq) + 1), atomic on the one connection; on PostgreSQL after the run's row
//   lock (SELECT … FOR UPDATE), so two writers never read the same MAX (the primary key would refuse
//   the second: the call would be lost). The log's `n` the same way.
// - a call is answered once: its end is `UPDATE … WHERE status = 'running' RETURNING` (the second
//   answer changes nothing and is told so).
// - a run's status moves only from the states it may: pause/unpause only while running, an end only
//   from running, a resume only from failed or cancelled.
import { sql } from 'kysely';
import { isPostgres, transact, type Q } from './tx.js';

export interface ScriptCallRow {
  run_id: string;
  seq: number;
  kind: string;
  args_json: string;
  /** '' at the top; inside workflow() calls, their path. */
  scope: string;
  label: string | null;
  phase: string | null;
  status: 'running' | 'done' | 'failed';
  limited: number;
  job_id: string | null;
  request_id: string | null;
  outcome_json: string | null;
  started_at: number;
  ended_at: number | null;
  /** 1: a resume no longer answers from this call (it ran again, or is not asked any more). */
  replaced: number;
  /** workflow calls: the nested script as it ran. */
  source: string | null;
}

export interface ScriptLogRow { run_id: string; n: number; at: number; kind: 'log' | 'phase' | 'replay' | 'pause'; text: string }

export interface ScriptRunRow { id: string; title: string; status: string; note: string | null; rules_json: string; created_at: number; ended_at: number | null; paused: number; content: string }

export type NewCall = Pick<ScriptCallRow, 'run_id' | 'kind' | 'args_json' | 'label' | 'phase' | 'started_at'> & { scope?: string; source?: string | null; job_id?: string | null; request_id?: string | null };

const RUN_COLUMNS = ['id', 'title', 'status', 'note', 'rules_json', 'created_at', 'ended_at', 'paused', 'content'] as const;

/** A parameter in a SELECT list, typed (PostgreSQL would take an untyped one for text). */
const text = (v: string | null) => sql`CAST(${v} AS TEXT)`;
const int = (v: number) => sql`CAST(${v} AS BIGINT)`;

/** On PostgreSQL, the run's row lock for the rest of the transaction `trx` (the journal's and the log's next number). */
async function lockRun(trx: Q, runId: string): Promise<void> {
  await trx.selectFrom('runs').select('id').where('id', '=', runId).forUpdate().execute();
}

/** A new script run, `running`, with the script it runs. */
export async function insertScriptRun(q: Q, r: { id: string; title: string; file: string | null; content: string; rules_json: string; now: number; hub_id?: string | null }): Promise<void> {
  await q.insertInto('runs').values({
    id: r.id, title: r.title, file: r.file, content: r.content, format: 'js', rules_json: r.rules_json, status: 'running', note: null, hub_id: r.hub_id ?? null,
    deadline_at: null, created_at: r.now, updated_at: r.now, ended_at: null, kind: 'script',
  }).execute();
}

export async function scriptRun(q: Q, id: string): Promise<ScriptRunRow | undefined> {
  return (await q.selectFrom('runs').select(RUN_COLUMNS).where('id', '=', id).where('kind', '=', 'script').executeTakeFirst()) as ScriptRunRow | undefined;
}

/** The script run with this id, or the one run whose id starts with it. */
export async function findScriptRun(q: Q, idOrPrefix: string): Promise<ScriptRunRow | undefined> {
  const like = `${idOrPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = (await q.selectFrom('runs').select(RUN_COLUMNS).where('kind', '=', 'script')
    .where(sql<boolean>`id LIKE ${like} ESCAPE '\\'`).limit(2).execute()) as ScriptRunRow[];
  return rows.find((x) => x.id === idOrPrefix) ?? (rows.length === 1 ? rows[0] : undefined);
}

/** Script runs a previous hub left running. */
export async function runningScriptRuns(q: Q): Promise<{ id: string; rules_json: string; hub_id: string | null }[]> {
  return q.selectFrom('runs').select(['id', 'rules_json', 'hub_id']).where('kind', '=', 'script').where('status', '=', 'running').orderBy('created_at').execute();
}

/** The script runs to show: every one still running, then those that ended since `since`, newest first; not the hub's bundled ones. */
export async function listScriptRuns(q: Q, o: { limit: number; since?: number }): Promise<ScriptRunRow[]> {
  const notBundled = isPostgres(q) ? sql<boolean>`(rules_json::jsonb ->> 'bundled') IS NULL` : sql<boolean>`json_extract(rules_json, '$.bundled') IS NULL`;
  return (await q.selectFrom('runs').select(RUN_COLUMNS).where('kind', '=', 'script').where(notBundled)
    .where((e) => e.or([e('status', '=', 'running'), e(sql`COALESCE(ended_at, updated_at)`, '>=', o.since ?? 0)]))
    .orderBy(sql`CASE WHEN status = 'running' THEN 0 ELSE 1 END`).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(o.limit).execute()) as ScriptRunRow[];
}

/** A running run paused or unpaused: true when it changed (only a running run, only a change). */
export async function setPaused(q: Q, id: string, paused: boolean, now: number): Promise<boolean> {
  const r = await q.updateTable('runs').set({ paused: paused ? 1 : 0, updated_at: now })
    .where('id', '=', id).where('status', '=', 'running').where('paused', '<>', paused ? 1 : 0).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function isPaused(q: Q, id: string): Promise<boolean> {
  return (await q.selectFrom('runs').select('paused').where('id', '=', id).executeTakeFirst())?.paused === 1;
}

/** The run ends (succeeded, failed, cancelled): only a running run, once; true when this call ended it. */
export async function endScriptRun(q: Q, id: string, status: 'succeeded' | 'failed' | 'cancelled', note: string | null, now: number): Promise<boolean> {
  const r = await q.updateTable('runs').set({ status, note, updated_at: now, ended_at: now }).where('id', '=', id).where('status', '=', 'running').executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** resume_run: a failed or cancelled run runs again with `content` and `rules_json`; true when this call moved it (a second resume at once is refused). */
export async function reopenScriptRun(q: Q, id: string, content: string, rulesJson: string, now: number): Promise<boolean> {
  const r = await q.updateTable('runs').set({ content, rules_json: rulesJson, status: 'running', paused: 0, note: null, updated_at: now, ended_at: null })
    .where('id', '=', id).where('status', 'in', ['failed', 'cancelled']).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function setRules(q: Q, id: string, rulesJson: string): Promise<void> {
  await q.updateTable('runs').set({ rules_json: rulesJson }).where('id', '=', id).execute();
}

/** The run's rules (run_script's options), or undefined when there is no script run `id`. */
export async function rulesOf(q: Q, id: string): Promise<{ title: string; rules_json: string } | undefined> {
  return q.selectFrom('runs').select(['title', 'rules_json']).where('id', '=', id).where('kind', '=', 'script').executeTakeFirst();
}

/** Dollars the run's agents have spent so far. */
export async function scriptRunSpent(q: Q, runId: string): Promise<number> {
  const r = await q.selectFrom('script_calls as s').innerJoin('jobs as j', 'j.id', 's.job_id')
    .select(sql<number>`COALESCE(SUM(j.cost_usd), 0)`.as('c')).where('s.run_id', '=', runId).executeTakeFirst();
  return Number(r?.c ?? 0);
}

/** Records a call that starts now; its seq, the next of the run's journal (see the head of this file). */
export async function beginCall(q: Q, c: NewCall): Promise<number> {
  const insert = async (w: Q): Promise<number> => {
    const r = await sql<{ seq: number }>`INSERT INTO script_calls (run_id, seq, kind, args_json, scope, label, phase, status, limited, job_id, request_id, outcome_json, started_at, ended_at, source)
      SELECT ${text(c.run_id)}, COALESCE(MAX(seq), 0) + 1, ${text(c.kind)}, ${text(c.args_json)}, ${text(c.scope ?? '')}, ${text(c.label)}, ${text(c.phase)}, 'running', 0,
        ${text(c.job_id ?? null)}, ${text(c.request_id ?? null)}, NULL, ${int(c.started_at)}, NULL, ${text(c.source ?? null)}
      FROM script_calls WHERE run_id = ${c.run_id} RETURNING seq`.execute(w);
    return Number(r.rows[0]!.seq);
  };
  if (!isPostgres(q)) return insert(q);
  return transact(q, async (trx) => { await lockRun(trx, c.run_id); return insert(trx); });
}

/** A finished workflow() call that a resume runs again. */
export async function reopenCall(q: Q, runId: string, seq: number, source: string): Promise<void> {
  await q.updateTable('script_calls').set({ status: 'running', outcome_json: null, ended_at: null, source }).where('run_id', '=', runId).where('seq', '=', seq).execute();
}

/** Calls a resume no longer answers from: they stay listed, as history; one that never ended is ended as replaced. One batch of statements. */
export async function replaceCalls(q: Q, runId: string, seqs: readonly number[], at: number): Promise<void> {
  if (!seqs.length) return;
  const outcome = JSON.stringify({ name: 'Replaced', message: 'a resume of the run no longer waits for this call' });
  await q.updateTable('script_calls').set({
    replaced: 1,
    status: sql`CASE status WHEN 'running' THEN 'failed' ELSE status END`,
    outcome_json: sql`CASE status WHEN 'running' THEN ${outcome} ELSE outcome_json END`,
    ended_at: sql`COALESCE(ended_at, ${at})`,
  }).where('run_id', '=', runId).where('seq', 'in', [...seqs]).execute();
}

/** The job (agent) or request (approve) that carries a running call. */
export async function carryCall(q: Q, runId: string, seq: number, f: { job_id?: string; request_id?: string }): Promise<void> {
  await q.updateTable('script_calls').set({ job_id: sql`COALESCE(${f.job_id ?? null}, job_id)`, request_id: sql`COALESCE(${f.request_id ?? null}, request_id)` })
    .where('run_id', '=', runId).where('seq', '=', seq).execute();
}

/** The call's outcome: what it returned (done) or threw (failed). Only a running call ends, once: true when this one ended it. */
export async function endCall(q: Q, runId: string, seq: number, f: { status: 'done' | 'failed'; outcome: unknown; limited?: boolean; at: number }): Promise<boolean> {
  const r = await q.updateTable('script_calls').set({ status: f.status, outcome_json: JSON.stringify(f.outcome ?? null), limited: f.limited ? 1 : 0, ended_at: f.at })
    .where('run_id', '=', runId).where('seq', '=', seq).where('status', '=', 'running').returning('seq').execute();
  return r.length > 0;
}

export async function callsOf(q: Q, runId: string): Promise<ScriptCallRow[]> {
  return (await q.selectFrom('script_calls').selectAll().where('run_id', '=', runId).orderBy('seq').execute()) as ScriptCallRow[];
}

/** The script run a job carries a call of, if any. */
export async function callOfJob(q: Q, jobId: string): Promise<{ run_id: string; seq: number } | undefined> {
  return q.selectFrom('script_calls').select(['run_id', 'seq']).where('job_id', '=', jobId).executeTakeFirst();
}

/** A line of the run's log, numbered next (see the head of this file). */
export async function addLog(q: Q, runId: string, kind: ScriptLogRow['kind'], line: string, at: number): Promise<void> {
  const insert = async (w: Q): Promise<void> => {
    await sql`INSERT INTO script_log (run_id, n, at, kind, text)
      SELECT ${text(runId)}, COALESCE(MAX(n), 0) + 1, ${int(at)}, ${text(kind)}, ${text(line)} FROM script_log WHERE run_id = ${runId}`.execute(w);
  };
  if (!isPostgres(q)) return insert(q);
  return transact(q, async (trx) => { await lockRun(trx, runId); await insert(trx); });
}

/** The run's last `limit` log lines, oldest first. */
export async function logOf(q: Q, runId: string, limit = 200): Promise<ScriptLogRow[]> {
  const rows = (await q.selectFrom('script_log').selectAll().where('run_id', '=', runId).orderBy('n', 'desc').limit(limit).execute()) as ScriptLogRow[];
  return rows.reverse();
}


/** A call of the run with what its job shows (get_run, the floor): one read for the whole journal. */
export interface CallWithJob extends ScriptCallRow { job_provider: string | null; job_status: string | null; job_cost_usd: number | null; job_title: string | null }

export async function callsWithJobs(q: Q, runId: string): Promise<CallWithJob[]> {
  return (await q.selectFrom('script_calls as s').leftJoin('jobs as j', 'j.id', 's.job_id').selectAll('s')
    .select(['j.provider as job_provider', 'j.status as job_status', 'j.cost_usd as job_cost_usd', 'j.title as job_title'])
    .where('s.run_id', '=', runId).orderBy('s.seq').execute()) as CallWithJob[];
}
