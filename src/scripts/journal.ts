// A script run's journal (migrations 24, 26): every call the script made, with its outcome once it
// has one, and the run's log and phases. Written as things happen, each in its own statement or
// transaction, so a hub that dies between two statements leaves a journal a new hub can continue
// from (src/domain/scriptReplay.ts decides what is answered from it). The statements are the
// layer's (src/store/sql/scripts.ts); this file reads the journal as the replay wants it.
import type { Db } from '../store/db.js';
import type { JournaledCall, ScriptCallKind } from '../domain/scriptReplay.js';
import { callsOf, type ScriptCallRow as CallRow } from '../store/sql/scripts.js';
import type { Q } from '../store/sql/tx.js';

export type ScriptCallRow = CallRow & { kind: ScriptCallKind };
export type { ScriptLogRow } from '../store/sql/scripts.js';

/** The run's journal as the replay reads it (replaced calls are history, not answers). */
export async function replayable(q: Q, runId: string): Promise<JournaledCall[]> {
  return (await callsOf(q, runId)).filter((r) => !r.replaced).map((r) => ({
    seq: r.seq, kind: r.kind as ScriptCallKind, args: r.args_json, scope: r.scope, status: r.status, limited: r.limited === 1, jobId: r.job_id, requestId: r.request_id, outcome: r.outcome_json,
  }));
}

/**
 * mixed period: until the workflow engine moves onto the layer (step 7, src/workflow: h/p29wf).
 * The bundled implement/review script's calls are journaled by the workflow engine inside its own
 * synchronous transactions (a phase job made with `JobService.createSync`), so these four
 * statements stay synchronous for it alone; a moved engine calls beginCall / carryCall / endCall /
 * callsOf of src/store/sql/scripts.ts (beginCall with the job's transaction) and this class goes.
 */
export class ScriptJournal {
  constructor(private readonly db: Db) {}

  /** Records a call that starts now; its seq is the next in the run (one statement: atomic on the one SQLite connection). */
  begin(c: Pick<ScriptCallRow, 'run_id' | 'kind' | 'args_json' | 'label' | 'phase' | 'started_at'> & { scope?: string; source?: string }): number {
    const r = this.db.prepare(`INSERT INTO script_calls (run_id, seq, kind, args_json, scope, label, phase, status, limited, job_id, request_id, outcome_json, started_at, ended_at, source)
      SELECT @run_id, COALESCE(MAX(seq), 0) + 1, @kind, @args_json, @scope, @label, @phase, 'running', 0, NULL, NULL, NULL, @started_at, NULL, @source FROM script_calls WHERE run_id = @run_id
      RETURNING seq`).get({ ...c, scope: c.scope ?? '', source: c.source ?? null }) as { seq: number };
    return r.seq;
  }

  /** The job or request that carries a running call. */
  carriedBy(runId: string, seq: number, f: { job_id?: string; request_id?: string }): void {
    this.db.prepare('UPDATE script_calls SET job_id = COALESCE(@job, job_id), request_id = COALESCE(@req, request_id) WHERE run_id = @runId AND seq = @seq')
      .run({ runId, seq, job: f.job_id ?? null, req: f.request_id ?? null });
  }

  /** The call's outcome; only a running call ends. */
  end(runId: string, seq: number, f: { status: 'done' | 'failed'; outcome: unknown; limited?: boolean; at: number }): void {
    this.db.prepare(`UPDATE script_calls SET status = @status, outcome_json = @outcome, limited = @limited, ended_at = @at
      WHERE run_id = @runId AND seq = @seq AND status = 'running'`).run({ runId, seq, status: f.status, outcome: JSON.stringify(f.outcome ?? null), limited: f.limited ? 1 : 0, at: f.at });
  }

  calls(runId: string): ScriptCallRow[] {
    return this.db.prepare('SELECT * FROM script_calls WHERE run_id = ? ORDER BY seq').all(runId) as ScriptCallRow[];
  }
}
