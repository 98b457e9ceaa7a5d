// Script runs in the lead's wait_for_agents `attention` (issue 28 point 6): one item when a run
// ends (succeeded, failed, cancelled: with its id, title and error) and one when a call of it
// needs the person (an approve() waiting for an answer). Not the hub's bundled scripts (the
// implement/review workflow): a workflow has its own signals. Each is returned once, whatever the job
// ids the lead waits on: a run is the lead's own, not one of its agents'. Told is recorded in the
// database (runs.lead_seen_at, the request's lead_seen_at), so a hub restart does not repeat it.
import type { Q } from '../store/sql/tx.js';
import { markLeadSeen } from '../store/sql/requests.js';
import { markRunsTold, untoldEndedRuns, untoldWaitingApproves } from '../store/sql/runAttention.js';
import { isoTime } from '../clock.js';
import { scriptRunSpent } from '../scripts/view.js';

export class RunAttention {
  constructor(private readonly q: Q) {}

  /** The items not yet told; `ack` records them told (call it once they are returned). */
  async untold(): Promise<{ items: Record<string, unknown>[]; ack: (now: number) => Promise<void> }> {
    const ended = await untoldEndedRuns(this.q);
    const waiting = await untoldWaitingApproves(this.q);
    if (!ended.length && !waiting.length) return { items: [], ack: async () => undefined };
    const spent = await Promise.all(ended.map((r) => scriptRunSpent(this.q, r.id)));
    const items = [
      ...waiting.map((w) => ({
        kind: 'run_needs_person', run_id: w.run_id, title: w.title, call: w.seq, request_id: w.request_id, summary: w.summary.slice(0, 500), since: isoTime(w.created_at),
        what_to_do: `the script waits in approve() for the person's answer; you cannot give it. Tell the person: overseer respond ${w.request_id} --approve|--reject (or overseer watch, the dashboard). The rest of the run goes on meanwhile.`,
      })),
      ...ended.map((r, i) => ({
        kind: 'run_ended', run_id: r.id, title: r.title, status: r.status,
        ...(r.status === 'succeeded' ? {} : { error: r.note ?? 'no reason recorded' }),
        cost_usd: Math.round(spent[i]! * 1e6) / 1e6,
        ...(r.ended_at ? { ended_at: isoTime(r.ended_at) } : {}),
        what_to_do: r.status === 'succeeded'
          ? `get_run { run_id: "${r.id}" } gives its result and every call`
          : `get_run { run_id: "${r.id}" } shows what finished and the error's line; resume_run runs it again, answering what finished from its journal`,
      })),
    ];
    return {
      items,
      ack: async (now) => {
        await markRunsTold(this.q, ended.map((r) => r.id), now);
        await markLeadSeen(this.q, waiting.map((w) => w.request_id), now);
      },
    };
  }
}
