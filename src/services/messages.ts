// Messages between the lead and agents. A message to a running Claude child is also pushed
// into its conversation (stream-json stdin); otherwise it waits for the recipient's next
// launch or read_messages. Messages to the lead wake the lead's wait_for_agents (attention).
import type { Caller, HubContext } from './context.js';
import type { MessageRow } from '../store/jobs.js';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.js';
import { isoTime } from '../clock.js';
import { isTerminal } from '../domain/job.js';
import type { MessageView } from '../contract/coord.js';
import { addMessage, inbox, markMessagesRead, takeUndelivered, untake } from '../store/sql/messages.js';
import { appendEvent } from '../store/sql/events.js';
import { LEAD, leadOf } from '../domain/lead.js';
import { getJob, inSubtree, jobsByStatus, listJobs } from '../store/sql/jobs.js';

export type { MessageView };

export const senderOf = (c: Caller): string => (c.role === 'agent' ? c.jobId : 'lead');

/** How a message reads inside the recipient's conversation. */
export function frameMessage(from: string, text: string): string {
  return `Message from ${from === 'lead' ? 'the lead' : from === 'overseer' ? 'Overseer (the hub)' : `agent ${from}`}: ${text}`;
}

export const messageView = (m: MessageRow): MessageView => ({ message_id: m.id, from: m.from_id, to: m.to_id, text: m.text, created_at: isoTime(m.created_at), read: m.read_at !== null });

/** What messages need of the running children (src/services/children.ts provides it). */
export interface Conversations {
  /** Push `text` into the running conversation of `jobId`; false when it has none that takes input now. */
  push(jobId: string, text: string): boolean;
}

export class MessageService {
  /**
   * `hubId`: this hub. A message to a job whose child runs on another hub is stored undelivered
   * (the caller hears `queued`), and that hub pushes it into the conversation when it hears the
   * `message` event (remote) — or, after its listener came back, for every job it runs.
   */
  /** This hub's lead as a recipient (src/domain/lead.ts): agents' messages `to: "lead"` land here, and this hub's lead reads only these. */
  readonly lead: string;

  constructor(private readonly ctx: HubContext, private readonly conversations: Conversations, private readonly hubId: string) {
    this.lead = leadOf(hubId, ctx.sql.dialect === 'postgres');
    const all = (): Promise<void> => this.pushAllMine().catch((err: unknown) => ctx.log.warn({ err }, 'could not push the messages left for this hub\'s agents'));
    ctx.bus.on('message', (e) => {
      void this.pushIfMine(e.to).catch((err: unknown) => ctx.log.warn({ err, to: e.to }, 'could not push a message another hub left for this hub\'s agent'));
    }, { remote: 'only', resync: all });
  }

  /** Whether `job` runs here (or nowhere yet): only this hub can push into its conversation. */
  private mine(job: { hub_id?: string | null }): boolean {
    return !job.hub_id || job.hub_id === this.hubId;
  }

  private async pushIfMine(to: string): Promise<void> {
    const job = await getJob(this.ctx.sql.db, to);
    if (job && job.hub_id === this.hubId) await this.pushPending(to);
  }

  private async pushAllMine(): Promise<void> {
    for (const j of await jobsByStatus(this.ctx.sql.db, 'running', 'needs_input')) if (j.hub_id === this.hubId) await this.pushPending(j.id);
  }

  /** Store a message for a job and push it into its conversation when it is running. */
  async deliver(from: string, to: string, text: string): Promise<{ message_id: number; delivered: boolean }> {
    // The status is read, then the push decided at once (no await between): a job that ends after
    // the read has no conversation left to push into (push says false), and the message waits.
    const job = await getJob(this.ctx.sql.db, to);
    // Another hub's child: stored undelivered, that hub pushes it when it hears the `message` event.
    const here = job !== undefined && this.mine(job);
    // needs_input: the child is blocked in request_approval/ask_lead, its stdin is still open.
    const delivered = here && (job.status === 'running' || job.status === 'needs_input') && this.conversations.push(to, frameMessage(from, text));
    const now = this.ctx.clock.now();
    const id = await addMessage(this.ctx.sql.db, { from, to, text, now, delivered });
    // Not pushed, and the recipient may have started between the read above and the insert (its
    // start took the undelivered messages before this one was there): look again.
    const pushed = delivered || (here && !isTerminal(job.status) && (await this.pushPending(to)).includes(id));
    await appendEvent(this.ctx.sql.db, to, now, 'message', { from, delivered: pushed });
    this.ctx.bus.emit('message', { to });
    return { message_id: id, delivered: pushed };
  }

  /**
   * Push the messages stored for `jobId` and not delivered yet into its conversation, when it
   * runs here and takes input now; each message is taken by one pusher only (src/store/sql/messages.ts
   * `takeUndelivered`). The ids pushed.
   */
  async pushPending(jobId: string): Promise<number[]> {
    const job = await getJob(this.ctx.sql.db, jobId);
    if (job?.status !== 'running' && job?.status !== 'needs_input') return [];
    const taken = await takeUndelivered(this.ctx.sql.db, jobId, this.ctx.clock.now());
    const failed = taken.filter((m) => !this.conversations.push(jobId, frameMessage(m.from_id, m.text)));
    await untake(this.ctx.sql.db, failed.map((m) => m.id));
    return taken.filter((m) => !failed.includes(m)).map((m) => m.id);
  }

  /** `deliver` for callers that go on without its answer (the hub's own notices): a failure is logged. */
  notify(from: string, to: string, text: string): void {
    this.deliver(from, to, text).catch((err: unknown) => this.ctx.log.warn({ err, to }, 'message not stored'));
  }

  async send(caller: Caller, to: string, text: string): Promise<{ message_id: number; message_ids: number[]; recipients: string[]; delivered: string[] }> {
    const from = senderOf(caller);
    if (to === 'lead') {
      if (caller.role === 'lead') throw new InvalidInputError('to: "lead" is you. Send to a job id, or use message_agent.');
      // The agent calls the hub that runs it: its lead is this hub's.
      const id = await addMessage(this.ctx.sql.db, { from, to: this.lead, text, now: this.ctx.clock.now(), delivered: false });
      this.ctx.bus.emit('message', { to: this.lead });
      return { message_id: id, message_ids: [id], recipients: ['lead'], delivered: [] };
    }
    let recipients: string[];
    if (to === '*') {
      if (caller.role === 'lead') throw new InvalidInputError('to: "*" means the sender\'s siblings, and the lead has none. Send to a job id.');
      const me = (await getJob(this.ctx.sql.db, caller.jobId))!;
      recipients = (await listJobs(this.ctx.sql.db, { parentId: me.parent_id, limit: 10_000 })).filter((j) => j.id !== me.id && !isTerminal(j.status)).map((j) => j.id);
      if (recipients.length === 0) throw new InvalidInputError('you have no running or pending siblings to message. Send to "lead" instead.');
    } else {
      const target = await getJob(this.ctx.sql.db, to);
      if (!target) throw new NotFoundError(`No job ${JSON.stringify(to)} to message. Use "lead", "*" (your siblings) or a job id from list_agents.`);
      if (caller.role === 'agent' && !(await this.mayMessage(caller.jobId, target.id, target.parent_id))) {
        throw new ForbiddenError(`Job ${to} is outside your reach: an agent can message the lead, its parent, its siblings and its own sub-agents.`);
      }
      recipients = [target.id];
    }
    const results: { r: string; message_id: number; delivered: boolean }[] = [];
    for (const r of recipients) results.push({ r, ...(await this.deliver(from, r, text)) });
    return { message_id: results[0]!.message_id, message_ids: results.map((x) => x.message_id), recipients, delivered: results.filter((x) => x.delivered).map((x) => x.r) };
  }

  private async mayMessage(me: string, target: string, targetParent: string | null): Promise<boolean> {
    const mine = (await getJob(this.ctx.sql.db, me))!;
    return target === mine.parent_id || targetParent === mine.parent_id || inSubtree(this.ctx.sql.db, me, target);
  }

  /** A message as its reader sees it: this hub's lead is `lead` (another hub's keeps its hub: src/domain/lead.ts). */
  view(m: MessageRow): MessageView {
    const v = messageView(m);
    return v.to === this.lead ? { ...v, to: LEAD } : v;
  }

  /** Whose messages `caller` reads: its job's, or this hub's lead's. */
  inboxOf(caller: Caller): string {
    return caller.role === 'agent' ? caller.jobId : this.lead;
  }

  /** The caller's inbox, newest last; marks what it returns as read. */
  async read(caller: Caller, unreadOnly: boolean, limit = 100): Promise<{ messages: MessageView[] }> {
    const rows = await inbox(this.ctx.sql.db, this.inboxOf(caller), { unreadOnly, limit });
    await markMessagesRead(this.ctx.sql.db, rows.map((r) => r.id), this.ctx.clock.now());
    return { messages: rows.reverse().map((m) => this.view(m)) };
  }
}
