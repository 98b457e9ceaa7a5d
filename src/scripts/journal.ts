// A script run's journal (migrations 24, 26): every call the script made, with its outcome once it
// has one, and the run's log and phases. Written as things happen, each in its own statement or
// transaction, so a hub that dies between two statements leaves a journal a new hub can continue
// from (src/domain/scriptReplay.ts decides what is answered from it).
import type { Db } from '../store/db.js';
import { tx } from '../store/db.js';
import type { JournaledCall, ScriptCallKind } from '../domain/scriptReplay.js';

export interface ScriptCallRow {
  run_id: string;
  seq: number;
  kind: ScriptCallKind;
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

export class ScriptJournal {
  constructor(private readonly db: Db) {}

  /** Records a call that starts now; its seq is the next in the run. */
  begin(c: Pick<ScriptCallRow, 'run_id' | 'kind' | 'args_json' | 'label' | 'phase' | 'started_at'> & { scope?: string; source?: string }): number {
    return tx(this.db, () => {
      const { n } = this.db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM script_calls WHERE run_id = ?').get(c.run_id) as { n: number };
      this.db.prepare(`INSERT INTO script_calls (run_id, seq, kind, args_json, scope, label, phase, status, limited, job_id, request_id, outcome_json, started_at, ended_at, source)
        VALUES (@run_id, @seq, @kind, @args_json, @scope, @label, @phase, 'running', 0, NULL, NULL, NULL, @started_at, NULL, @source)`).run({ ...c, scope: c.scope ?? '', source: c.source ?? null, seq: n });
      return n;
    });
  }

  /** A finished workflow() call that a resume runs again (its nested calls answer from the journal where unchanged). */
  reopen(runId: string, seq: number, source: string): void {
    this.db.prepare("UPDATE script_calls SET status = 'running', outcome_json = NULL, ended_at = NULL, source = ? WHERE run_id = ? AND seq = ?").run(source, runId, seq);
  }

  /** Calls a resume no longer answers from: they stay listed, as history; one that never ended is ended as replaced. */
  replace(runId: string, seqs: readonly number[], at: number): void {
    if (!seqs.length) return;
    tx(this.db, () => {
      const st = this.db.prepare(`UPDATE script_calls SET replaced = 1, status = CASE status WHEN 'running' THEN 'failed' ELSE status END,
        outcome_json = CASE status WHEN 'running' THEN @outcome ELSE outcome_json END, ended_at = COALESCE(ended_at, @at) WHERE run_id = @runId AND seq = @seq`);
      const outcome = JSON.stringify({ name: 'Replaced', message: 'a resume of the run no longer waits for this call' });
      for (const seq of seqs) st.run({ runId, seq, at, outcome });
    });
  }

  /** The job (agent) or request (approve) that carries a running call. */
  carriedBy(runId: string, seq: number, f: { job_id?: string; request_id?: string }): void {
    this.db.prepare('UPDATE script_calls SET job_id = COALESCE(@job, job_id), request_id = COALESCE(@req, request_id) WHERE run_id = @runId AND seq = @seq')
      .run({ runId, seq, job: f.job_id ?? null, req: f.request_id ?? null });
  }

  /** The call's outcome: what it returned (done) or threw (failed). Only a running call ends. */
  end(runId: string, seq: number, f: { status: 'done' | 'failed'; outcome: unknown; limited?: boolean; at: number }): void {
    this.db.prepare(`UPDATE script_calls SET status = @status, outcome_json = @outcome, limited = @limited, ended_at = @at
      WHERE run_id = @runId AND seq = @seq AND status = 'running'`).run({ runId, seq, status: f.status, outcome: JSON.stringify(f.outcome ?? null), limited: f.limited ? 1 : 0, at: f.at });
  }

  calls(runId: string): ScriptCallRow[] {
    return this.db.prepare('SELECT * FROM script_calls WHERE run_id = ? ORDER BY seq').all(runId) as ScriptCallRow[];
  }

  /** The run's journal as the replay reads it (replaced calls are history, not answers). */
  replayable(runId: string): JournaledCall[] {
    return this.calls(runId).filter((r) => !r.replaced).map((r) => ({
      seq: r.seq, kind: r.kind, args: r.args_json, scope: r.scope, status: r.status, limited: r.limited === 1, jobId: r.job_id, requestId: r.request_id, outcome: r.outcome_json,
    }));
  }

  /** The script run a job carries a call of, if any. */
  callOfJob(jobId: string): { run_id: string; seq: number } | undefined {
    return this.db.prepare('SELECT run_id, seq FROM script_calls WHERE job_id = ?').get(jobId) as { run_id: string; seq: number } | undefined;
  }

  log(runId: string, kind: ScriptLogRow['kind'], text: string, at: number): void {
    tx(this.db, () => {
      const { n } = this.db.prepare('SELECT COALESCE(MAX(n), 0) + 1 AS n FROM script_log WHERE run_id = ?').get(runId) as { n: number };
      this.db.prepare('INSERT INTO script_log (run_id, n, at, kind, text) VALUES (?, ?, ?, ?, ?)').run(runId, n, at, kind, text);
    });
  }

  logOf(runId: string, limit = 200): ScriptLogRow[] {
    return (this.db.prepare('SELECT * FROM script_log WHERE run_id = ? ORDER BY n DESC LIMIT ?').all(runId, limit) as ScriptLogRow[]).reverse();
  }
}
