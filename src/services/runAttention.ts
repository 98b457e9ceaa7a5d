// Script runs in the lead's wait_for_agents `attention` (issue 28 point 6): one item when a run
// ends (succeeded, failed, cancelled: with its id, title and error) and one when a call of it
// needs the person (an approve() waiting for an answer). Not the hub's bundled scripts (the
// implement/review workflow): a workflow has its own signals. Each is returned once, whatever the job
// ids the lead waits on: a run is the lead's own, not one of its agents'. Told is recorded in the
// database (runs.lead_seen_at, the request's lead_seen_at), so a hub restart does not repeat it.
import type { Db } from '../store/db.js';
import { isoTime } from '../clock.js';
import { scriptRunSpent } from '../scripts/view.js';

interface EndedRow { id: string; title: string; status: string; note: string | null; ended_at: number | null }
interface WaitingRow { run_id: string; title: string; seq: number; request_id: string; label: string | null; summary: string; who: string; created_at: number }

export class RunAttention {
  private readonly st;

  constructor(private readonly db: Db) {
    this.st = {
      ended: db.prepare("SELECT id, title, status, note, ended_at FROM runs WHERE kind = 'script' AND json_extract(rules_json, '$.bundled') IS NULL AND status != 'running' AND lead_seen_at IS NULL ORDER BY ended_at, id"),
      waiting: db.prepare(`SELECT c.run_id, r.title, c.seq, c.request_id, c.label, q.summary, q.who, q.created_at FROM script_calls c
        JOIN runs r ON r.id = c.run_id JOIN requests q ON q.id = c.request_id
        WHERE c.kind = 'approve' AND c.status = 'running' AND r.status = 'running' AND json_extract(r.rules_json, '$.bundled') IS NULL AND q.status = 'pending' AND q.lead_seen_at IS NULL ORDER BY q.created_at, q.id`),
      markRun: db.prepare('UPDATE runs SET lead_seen_at = ? WHERE id = ? AND lead_seen_at IS NULL'),
      markRequest: db.prepare('UPDATE requests SET lead_seen_at = ? WHERE id = ? AND lead_seen_at IS NULL'),
    };
  }

  /** The items not yet told; `ack` records them told (call it once they are returned). */
  untold(): { items: Record<string, unknown>[]; ack: (now: number) => void } {
    const ended = this.st.ended.all() as EndedRow[];
    const waiting = this.st.waiting.all() as WaitingRow[];
    if (!ended.length && !waiting.length) return { items: [], ack: () => undefined };
    const items = [
      ...waiting.map((w) => ({
        kind: 'run_needs_person', run_id: w.run_id, title: w.title, call: w.seq, request_id: w.request_id, summary: w.summary.slice(0, 500), since: isoTime(w.created_at),
        what_to_do: `the script waits in approve() for the person's answer; you cannot give it. Tell the person: overseer respond ${w.request_id} --approve|--reject (or overseer watch, the dashboard). The rest of the run goes on meanwhile.`,
      })),
      ...ended.map((r) => ({
        kind: 'run_ended', run_id: r.id, title: r.title, status: r.status,
        ...(r.status === 'succeeded' ? {} : { error: r.note ?? 'no reason recorded' }),
        cost_usd: Math.round(scriptRunSpent(this.db, r.id) * 1e6) / 1e6,
        ...(r.ended_at ? { ended_at: isoTime(r.ended_at) } : {}),
        what_to_do: r.status === 'succeeded'
          ? `get_run { run_id: "${r.id}" } gives its result and every call`
          : `get_run { run_id: "${r.id}" } shows what finished and the error's line; resume_run runs it again, answering what finished from its journal`,
      })),
    ];
    return {
      items,
      ack: (now) => {
        for (const r of ended) this.st.markRun.run(now, r.id);
        for (const w of waiting) this.st.markRequest.run(now, w.request_id);
      },
    };
  }
}
