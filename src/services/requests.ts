// Requests: an agent asks for approval (with an optional plan) or asks the lead a question, and
// blocks until answered or timed out. The job shows `needs_input` meanwhile, the lead's
// wait_for_agents returns early with the request under `attention`, and the lead answers with
// `respond`. When the lead's client can elicit (an interactive Claude Code), the person is
// asked directly first; a cancelled or unsupported elicitation falls back to the lead.
import type { Caller, HubContext } from './context.js';
import { RequestStore, type FullRequestRow } from '../store/requests.js';
import { tx } from '../store/db.js';
import { waitUntil } from './wait.js';
import { ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { isoTime } from '../clock.js';
import { isActive } from '../domain/job.js';
import type { ListRequestsInput, RespondInput } from '../tools/coordSchemas.js';

/** tool_name marking a request the hub opened itself (it outlives the job it is attached to). */
const DETACHED = 'overseer:detached';

export type RequestKind = 'approval' | 'question' | 'permission';

export interface Elicitor {
  /** Ask the person; undefined when no interactive lead can (then the lead answers). */
  ask(r: FullRequestRow, signal: AbortSignal): Promise<{ decision?: 'approved' | 'rejected'; answer?: string; comment?: string } | undefined>;
}

export interface RequestView {
  request_id: string;
  job_id: string;
  kind: string;
  status: string;
  summary: string;
  plan: unknown;
  options: string[] | null;
  tool_name: string | null;
  tool_input: unknown;
  decision: string | null;
  answer: string | null;
  comment: string | null;
  answered_by: string | null;
  created_at: string;
  answered_at: string | null;
  expires_at: string | null;
}

export function requestView(r: FullRequestRow): RequestView {
  return {
    request_id: r.id, job_id: r.job_id, kind: r.kind, status: r.status, summary: r.summary,
    plan: r.plan_json ? JSON.parse(r.plan_json) : null, options: r.options_json ? JSON.parse(r.options_json) as string[] : null,
    tool_name: r.tool_name, tool_input: r.tool_input_json ? JSON.parse(r.tool_input_json) : null,
    decision: r.decision, answer: r.answer, comment: r.comment, answered_by: r.answered_by,
    created_at: isoTime(r.created_at), answered_at: r.answered_at ? isoTime(r.answered_at) : null, expires_at: r.expires_at ? isoTime(r.expires_at) : null,
  };
}

export class RequestService {
  readonly store: RequestStore;
  elicitor?: Elicitor;
  private seq = 0;

  constructor(private readonly ctx: HubContext) {
    this.store = new RequestStore(ctx.db);
    ctx.bus.on('job', (e) => {
      if (isActive(e.status as never)) return;
      const closed = this.store.cancelOf(e.jobId, ctx.clock.now(), DETACHED);
      for (const id of closed) ctx.bus.emit('request', { jobId: e.jobId, requestId: id });
    });
  }

  /** Open a request for the calling agent and block until it is answered, times out or is cancelled. */
  async open(caller: Caller, o: { kind: RequestKind; summary: string; plan?: unknown; options?: string[]; toolName?: string; toolInput?: unknown; timeoutS: number }, signal?: AbortSignal, progress?: (ms: number) => void): Promise<RequestView> {
    if (caller.role !== 'agent') throw new ForbiddenError(`${o.kind === 'question' ? 'ask_lead' : 'request_approval'} is for agents asking the lead; the lead decides itself.`);
    const jobId = caller.jobId;
    const now = this.ctx.clock.now();
    const timeoutMs = Math.min(o.timeoutS, this.ctx.config.maxWaitS) * 1000;
    const id = `r-${now.toString(36)}-${(this.seq++).toString(36)}`;
    tx(this.ctx.db, () => {
      this.store.insert({
        id, job_id: jobId, kind: o.kind, summary: o.summary, plan_json: o.plan === undefined ? null : JSON.stringify(o.plan),
        options_json: o.options ? JSON.stringify(o.options) : null, created_at: now, tool_name: o.toolName ?? null,
        tool_input_json: o.toolInput === undefined ? null : JSON.stringify(o.toolInput), expires_at: now + timeoutMs,
      });
      this.setNeedsInput(jobId, true);
    });
    this.ctx.bus.emit('request', { jobId, requestId: id });
    this.ctx.bus.emit('job', { jobId, status: this.ctx.store.get(jobId)!.status });
    const ac = new AbortController();
    void this.tryElicit(id, ac.signal);
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['request'], signal, timeoutMs,
      progressEveryMs: this.ctx.progressEveryMs, onProgress: progress,
      check: () => (this.store.get(id)!.status !== 'pending' ? true : undefined),
    });
    ac.abort();
    if (!r.ok) this.close(id, { status: r.reason === 'timeout' ? 'timed_out' : 'cancelled', comment: r.reason === 'timeout' ? `no answer within ${o.timeoutS}s` : 'the request was cancelled' }, null);
    return requestView(this.store.get(id)!);
  }

  /** At hub start: requests of agents that are no longer running can never be answered to them. */
  reconcile(): string[] {
    const now = this.ctx.clock.now();
    const stale = this.store.list('pending', 100_000).filter((r) => r.tool_name !== DETACHED && !isActive((this.ctx.store.get(r.job_id)?.status ?? 'failed') as never));
    for (const r of stale) this.store.close(r.id, { status: 'cancelled', comment: 'the agent stopped running (hub restart)' }, now);
    return stale.map((r) => r.id);
  }

  /** Open a request on behalf of the hub itself (a workflow's plan approval): it does not block. */
  openDetached(o: { jobId: string; kind: RequestKind; summary: string; plan?: unknown }): string {
    const now = this.ctx.clock.now();
    const id = `r-${now.toString(36)}-${(this.seq++).toString(36)}`;
    this.store.insert({
      id, job_id: o.jobId, kind: o.kind, summary: o.summary, plan_json: o.plan === undefined ? null : JSON.stringify(o.plan),
      options_json: null, created_at: now, tool_name: DETACHED, tool_input_json: null, expires_at: null,
    });
    this.ctx.bus.emit('request', { jobId: o.jobId, requestId: id });
    void this.tryElicit(id, new AbortController().signal);
    return id;
  }

  /** Close a pending request without an answer (e.g. its workflow was cancelled). */
  cancel(id: string, comment: string): void {
    this.close(id, { status: 'cancelled', comment }, null);
  }

  list(i: ListRequestsInput, caller: Caller): { requests: RequestView[] } {
    if (caller.role !== 'lead') throw new ForbiddenError('list_requests is the lead\'s: agents cannot read requests.');
    return { requests: this.store.list(i.status, i.limit).map(requestView) };
  }

  respond(i: RespondInput, caller: Caller): RequestView {
    if (caller.role !== 'lead') throw new ForbiddenError('respond is the lead\'s: an agent cannot answer requests.');
    const r = this.store.get(i.request_id);
    if (!r) {
      const near = this.store.recentIds();
      throw new NotFoundError(`No request ${JSON.stringify(i.request_id)}.${near.length ? ` Recent requests: ${near.join(', ')}.` : ' There are no requests.'} See list_requests.`);
    }
    if (r.status !== 'pending') throw new InvalidStateError(`Request ${r.id} is already ${r.status}${r.decision ? ` (${r.decision})` : ''}; nothing to answer.`);
    if (r.kind === 'question') {
      if (i.answer === undefined) throw new InvalidInputError(`request ${r.id} is a question: give answer${r.options_json ? ` (one of ${(JSON.parse(r.options_json) as string[]).map((o) => JSON.stringify(o)).join(', ')})` : ''}.`);
      const options = r.options_json ? (JSON.parse(r.options_json) as string[]) : undefined;
      if (options && !options.includes(i.answer)) throw new InvalidInputError(`answer ${JSON.stringify(i.answer)} is not one of the options ${options.map((o) => JSON.stringify(o)).join(', ')}.`);
    } else if (i.decision === undefined) {
      throw new InvalidInputError(`request ${r.id} is ${r.kind === 'permission' ? 'a permission prompt' : 'an approval'}: give decision "approved" or "rejected" (and an optional comment).`);
    }
    this.close(r.id, { status: 'answered', decision: i.decision ?? null, answer: i.answer ?? null, comment: i.comment ?? null }, 'lead');
    return requestView(this.store.get(r.id)!);
  }

  private close(id: string, f: { status: string; decision?: string | null; answer?: string | null; comment?: string | null }, by: string | null): void {
    const r = this.store.get(id);
    if (!r) return;
    const closed = tx(this.ctx.db, () => {
      const ok = this.store.close(id, { ...f, by }, this.ctx.clock.now());
      if (ok && this.store.pendingOf(r.job_id) === 0) this.setNeedsInput(r.job_id, false);
      return ok;
    });
    if (!closed) return;
    this.ctx.bus.emit('request', { jobId: r.job_id, requestId: id });
    const st = this.ctx.store.get(r.job_id)?.status;
    if (st) this.ctx.bus.emit('job', { jobId: r.job_id, status: st });
  }

  private setNeedsInput(jobId: string, on: boolean): void {
    const j = this.ctx.store.get(jobId);
    if (!j) return;
    if (on && j.status === 'running') this.ctx.store.update(jobId, { status: 'needs_input' }, this.ctx.clock.now());
    if (!on && j.status === 'needs_input') this.ctx.store.update(jobId, { status: 'running' }, this.ctx.clock.now());
  }

  private async tryElicit(id: string, signal: AbortSignal): Promise<void> {
    if (!this.elicitor) return;
    try {
      const r = await this.elicitor.ask(this.store.get(id)!, signal);
      if (!r || signal.aborted) return;
      this.close(id, { status: 'answered', decision: r.decision ?? null, answer: r.answer ?? null, comment: r.comment ?? null }, 'person');
    } catch (err) {
      this.ctx.log.debug({ err, id }, 'elicitation failed; the lead answers instead');
    }
  }
}
