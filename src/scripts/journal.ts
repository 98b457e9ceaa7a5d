// A script run's journal (migrations 24, 26): every call the script made, with its outcome once it
// has one, and the run's log and phases. Written as things happen, each in its own statement or
// transaction, so a hub that dies between two statements leaves a journal a new hub can continue
// from (src/domain/scriptReplay.ts decides what is answered from it). The statements are the
// layer's (src/store/sql/scripts.ts); this file reads the journal as the replay wants it.
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
