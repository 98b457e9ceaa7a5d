// Telling everyone about a write the lock guard undid: an event on the writer (`lock_violation`,
// also listed in get_agent's lock_violations), a message into the writer's conversation saying
// exactly what was undone and why, and a message to the lead (attention in wait_for_agents).
import type { HubContext } from '../services/context.js';
import type { Violation } from './lockGuard.js';
import { addEvent, getJob, updateJob } from '../store/sql/jobs.js';

export interface Deliver {
  deliver(from: string, to: string, text: string): unknown;
  /** A message to the lead about `about` (shown by wait_for_agents on that agent). */
  toLead(about: string, text: string): void;
}

export function violationText(v: Violation, holderTitle: string): string {
  const what = v.action === 'restored' ? `its content was put back to what ${holderTitle} left there`
    : v.action === 'removed' ? 'the file you created there was removed'
    : v.error ? `it could not be put back (${v.error}), and the lead has been told`
    : 'it is too large to put back: it stays as written, and the lead has been told';
  const kept = v.keptAt ? ` What was written is kept at ${v.keptAt}.` : '';
  const who = v.alsoActive.length ? ` (Agents ${v.alsoActive.join(', ')} were working at the same moment: if the write was not yours, say so to the lead.)` : '';
  return `Overseer undid a write to ${v.path}: ${holderTitle} holds that file (lock), and it changed while your tool call${v.tool ? ` (${v.tool})` : ''} ran; ${what}.${kept}${who} Wait for the lock with lock_files (with a timeout_s) or work on other files.`;
}

export async function reportViolation(ctx: HubContext, msgs: Deliver, v: Violation): Promise<void> {
  const now = ctx.clock.now();
  const q = ctx.sql.db;
  const holder = await getJob(q, v.holder);
  const holderTitle = holder ? `${v.holder} ("${holder.title}")` : v.holder;
  await addEvent(q, v.writer, now, 'lock_violation', { files: [v.path], holder: v.holder, tool: v.tool ?? null, tool_use_id: v.toolUseId ?? null, action: v.action, kept_at: v.keptAt ?? null, also_active: v.alsoActive, ...(v.error ? { error: v.error } : {}) });
  // Read, then written with no other await between them on this side: the runner's check at the
  // attempt's end (recordLockViolations) is the one other writer of the list, and both only add.
  const row = await getJob(q, v.writer);
  if (row) {
    const prev = row.lock_violations_json ? (JSON.parse(row.lock_violations_json) as string[]) : [];
    if (!prev.includes(v.path)) await updateJob(q, v.writer, { lock_violations_json: JSON.stringify([...prev, v.path]) }, now);
  }
  ctx.log.warn({ ...v }, 'lock guard: undid a write to a held file');
  msgs.deliver('overseer', v.writer, violationText(v, holderTitle));
  msgs.toLead(v.writer, `Overseer undid a write by ${v.writer} to ${v.path}, which ${holderTitle} holds (${v.action}${v.keptAt ? `; the write is kept at ${v.keptAt}` : ''}).`);
}
