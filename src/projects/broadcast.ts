// message_agent { to: "*", project?, status?, text }: one text to every live agent that matches
// (default: running ones), each as its own message row — pushed into a running conversation at
// once, kept for the next turn of one that is not running. The lead reaches every agent; an
// agent only its own sub-agents and theirs (never itself, its parent or its siblings).
import type { Caller, HubContext } from '../services/context.js';
import type { JobStatus } from '../domain/job.js';
import { senderOf } from '../services/messages.js';
import type { BroadcastStatus } from '../contract/projectNames.js';
import type { BroadcastResult } from '../contract/agents.js';
import { listJobs } from '../store/sql/jobs.js';

export type { BroadcastResult };

export interface BroadcastInput { project?: string; status?: BroadcastStatus; text: string }

export async function broadcast(ctx: HubContext, deliver: (from: string, to: string, text: string) => Promise<{ message_id: number; delivered: boolean }>, i: BroadcastInput, caller: Caller): Promise<BroadcastResult> {
  const status = i.status ?? 'running';
  const rows = await listJobs(ctx.sql.db, {
    status: status as JobStatus, limit: 100_000,
    ...(i.project !== undefined ? { project: i.project } : {}),
    ...(caller.role === 'agent' ? { subtreeOf: caller.jobId } : {}),
  });
  const from = senderOf(caller);
  const results: { id: string; message_id: number; delivered: boolean }[] = [];
  for (const j of rows) results.push({ id: j.id, ...(await deliver(from, j.id, i.text)) });
  const scope = `${status} agent${i.project !== undefined ? ` of project ${JSON.stringify(i.project)}` : ''}${caller.role === 'agent' ? ' in your subtree' : ''}`;
  return {
    recipients: results.map((r) => r.id),
    delivered: results.filter((r) => r.delivered).map((r) => r.id),
    queued: results.filter((r) => !r.delivered).map((r) => r.id),
    message_ids: results.map((r) => r.message_id),
    ...(results.length === 0 ? { note: `no ${scope} to message: nothing was sent. See list_agents${i.project !== undefined ? ` { project: ${JSON.stringify(i.project)} }` : ''}.` } : {}),
  };
}
