// A script run's journal (migration 24): every call the script made, with its outcome once it
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
  label: string | null;
  phase: string | null;
  status: 'running' | 'done' | 'failed';
  limited: number;
  job_id: string | null;
  request_id: string | null;
  outcome_json: string | null;
  started_at: number;
  ended_at: number | null;
}

export interface ScriptLogRow { run_id: string; n: number; at: number; kind: 'log' | 'phase' | 'replay'; text: string }

export class ScriptJournal {
  constructor(private readonly db: Db) {}

  /** Records a call that starts now; its seq is the next in the run. */
  begin(c: Pick<ScriptCallRow, 'run_id' | 'kind' | 'args_json' | 'label' | 'phase' | 'started_at'>): number {
    return tx(this.db, () => {
      const { n } = this.db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM script_calls WHERE run_id = ?').get(c.run_id) as { n: number };
      this.db.prepare(`INSERT INTO script_calls (run_id, seq, kind, args_json, label, phase, status, limited, job_id, request_id, outcome_json, started_at, ended_at)
        VALUES (@run_id, @seq, @kind, @args_json, @label, @phase, 'running', 0, NULL, NULL, NULL, @started_at, NULL)`).run({ ...c, seq: n });
      return n;
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

  /** The run's journal as the replay reads it. */
  replayable(runId: string): JournaledCall[] {
    return this.calls(runId).map((r) => ({
      seq: r.seq, kind: r.kind, args: r.args_json, status: r.status, limited: r.limited === 1, jobId: r.job_id, outcome: r.outcome_json,
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
