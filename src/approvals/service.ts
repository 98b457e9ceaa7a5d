// Requests: an agent asks for approval (with an optional plan) or asks a question, and blocks
// until answered, timed out or cancelled; the job shows `needs_input` meanwhile. `who` says who
// may answer: the person only, the lead only, or either (`any`). The person is asked through
// the lead's client (a form) unless the request is the lead's, and can always answer from a
// terminal (the person API). The lead answers with `respond`, except person-only requests.
// Closing a request withdraws its open form; an answer that comes after the close is kept as a
// late answer and shown, never silently dropped.
import type { Caller, HubContext } from '../services/context.js';
import { RequestStore, type FullRequestRow, type Who } from '../store/requests.js';
import { tx } from '../store/db.js';
import { waitUntil } from '../services/wait.js';
import { ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { isActive } from '../domain/job.js';
import type { ApprovalResult, AskLeadInput, AskLeadResult, ListRequestsInput, RequestApprovalInput, RespondInput } from '../contract/coord.js';
import { answerProblem, closedHow, leadRefusal, type Answer } from './rules.js';
import { buildForm, readForm, type FormResult, type FormSpec } from './form.js';
import { attentionItem, lateAttentionItem, requestView, type RequestView } from './view.js';
import { isoTime } from '../clock.js';

export type { RequestView } from './view.js';

/** tool_name marking a request the hub opened itself (it outlives the job it is attached to). */
const DETACHED = 'overseer:detached';
/** tool_name of a script run's approve(): job_id holds the run's id; it outlives hubs like its run. */
export const SCRIPT_APPROVAL = 'overseer:script';

export type RequestKind = 'approval' | 'question' | 'permission';

export interface Elicitor {
  /**
   * Show the form to the person through a lead client that can ask; undefined when none can.
   * Aborting `signal` withdraws the form (MCP notifications/cancelled); a reply that still comes
   * after that goes to `onLate`.
   */
  ask(form: FormSpec, signal: AbortSignal, onLate: (r: FormResult) => void): Promise<FormResult | undefined>;
}

/** An answer that came after its request had closed. */
export class TooLateError extends InvalidStateError {
  constructor(readonly request: RequestView) {
    super(`too late: request ${request.request_id} closed at ${request.answered_at ?? '?'} (${closedHow(request)}); your answer was recorded as a late answer and ignored.`);
  }
}

export class RequestService {
  readonly store: RequestStore;
  private seq = 0;
  /** Open forms by request id: aborted when the request closes. */
  private readonly forms = new Map<string, AbortController>();

  /** `elicitor`: asks the lead's client to show a request as a form (src/server/elicit.ts). */
  constructor(private readonly ctx: HubContext, private readonly elicitor: Elicitor) {
    this.store = new RequestStore(ctx.db);
    ctx.bus.on('job', (e) => {
      if (isActive(e.status as never)) return;
      const closed = this.store.cancelOf(e.jobId, ctx.clock.now(), DETACHED);
      for (const id of closed) this.closed(id, e.jobId);
    });
  }

  /** Open a request for the calling agent and block until it is answered, times out or is cancelled. */
  async open(caller: Caller, o: { kind: RequestKind; summary: string; plan?: unknown; options?: string[]; toolName?: string; toolInput?: unknown; timeoutS: number; who?: Who }, signal?: AbortSignal, progress?: (ms: number) => void): Promise<RequestView> {
    if (caller.role !== 'agent') throw new ForbiddenError(`${o.kind === 'question' ? 'ask_lead' : 'request_approval'} is for agents asking the lead; the lead decides itself.`);
    const jobId = caller.jobId;
    const now = this.ctx.clock.now();
    const timeoutMs = Math.min(o.timeoutS, this.ctx.config.maxWaitS) * 1000;
    const id = this.newId(now);
    tx(this.ctx.db, () => {
      this.store.insert({
        id, job_id: jobId, kind: o.kind, summary: o.summary, plan_json: o.plan === undefined ? null : JSON.stringify(o.plan),
        options_json: o.options ? JSON.stringify(o.options) : null, created_at: now, tool_name: o.toolName ?? null,
        tool_input_json: o.toolInput === undefined ? null : JSON.stringify(o.toolInput), expires_at: now + timeoutMs, who: o.who ?? 'any',
      });
      this.setNeedsInput(jobId, true);
    });
    this.ctx.bus.emit('request', { jobId, requestId: id });
    this.ctx.bus.emit('job', { jobId, status: this.ctx.store.get(jobId)!.status });
    void this.elicit(id);
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['request'], signal, timeoutMs,
      progressEveryMs: this.ctx.progressEveryMs, onProgress: progress,
      check: () => (this.store.get(id)!.status !== 'pending' ? true : undefined),
    });
    if (!r.ok) {
      if (r.reason === 'timeout') this.close(id, { status: 'timed_out', comment: `no answer within ${o.timeoutS}s` }, 'timeout');
      else this.close(id, { status: 'cancelled', comment: 'the request was cancelled' }, 'agent');
    }
    return this.view(this.store.get(id)!);
  }

  /** request_approval: open an approval for the calling agent and wait for the decision. */
  async approval(caller: Caller, i: RequestApprovalInput, signal?: AbortSignal, progress?: (ms: number) => void): Promise<ApprovalResult> {
    const r = await this.open(caller, { kind: 'approval', summary: i.summary, plan: i.plan, timeoutS: i.timeout_s, who: i.who }, signal, progress);
    return { request_id: r.request_id, decision: r.status === 'answered' ? r.decision : r.status === 'timed_out' ? 'timed_out' : 'rejected', comment: r.comment, answered_by: r.answered_by };
  }

  /** ask_lead: open a question for the calling agent and wait for the answer. */
  async ask(caller: Caller, i: AskLeadInput, signal?: AbortSignal, progress?: (ms: number) => void): Promise<AskLeadResult> {
    const r = await this.open(caller, { kind: 'question', summary: i.question, options: i.options, timeoutS: i.timeout_s, who: i.who }, signal, progress);
    return { request_id: r.request_id, answer: r.answer, comment: r.comment, timed_out: r.status === 'timed_out', answered_by: r.answered_by };
  }

  /** At hub start: requests of agents that are no longer running can never be answered to them. */
  reconcile(): string[] {
    const now = this.ctx.clock.now();
    const stale = this.store.list('pending', 100_000).filter((r) => r.tool_name !== DETACHED && r.tool_name !== SCRIPT_APPROVAL && !isActive((this.ctx.store.get(r.job_id)?.status ?? 'failed') as never));
    for (const r of stale) this.store.close(r.id, { status: 'cancelled', comment: 'the agent stopped running (hub restart)', by: 'hub' }, now);
    return stale.map((r) => r.id);
  }

  /** Open a request on behalf of the hub itself (a workflow's plan approval): it does not block. */
  openDetached(o: { jobId: string; kind: RequestKind; summary: string; plan?: unknown }): string {
    const now = this.ctx.clock.now();
    const id = this.newId(now);
    this.store.insert({
      id, job_id: o.jobId, kind: o.kind, summary: o.summary, plan_json: o.plan === undefined ? null : JSON.stringify(o.plan),
      options_json: null, created_at: now, tool_name: DETACHED, tool_input_json: null, expires_at: null, who: 'any',
    });
    this.ctx.bus.emit('request', { jobId: o.jobId, requestId: id });
    void this.elicit(id);
    return id;
  }

  /**
   * A script run's approve(summary, plan): a person-only approval the hub opens for the run (its
   * job_id is the run's id). Only the person answers it (form, watch, dashboard, `overseer
   * respond`); the lead's respond is refused. It has no deadline: the run waits, as long as it lives.
   * `within` runs in the same transaction (the journal's call row).
   */
  openForRun(runId: string, o: { summary: string; plan?: unknown }, within: (requestId: string) => void): string {
    const now = this.ctx.clock.now();
    const id = this.newId(now);
    tx(this.ctx.db, () => {
      this.store.insert({
        id, job_id: runId, kind: 'approval', summary: o.summary, plan_json: o.plan === undefined ? null : JSON.stringify(o.plan),
        options_json: null, created_at: now, tool_name: SCRIPT_APPROVAL, tool_input_json: null, expires_at: null, who: 'person',
      });
      within(id);
    });
    this.ctx.bus.emit('request', { jobId: runId, requestId: id });
    void this.elicit(id);
    return id;
  }

  /** Waits until request `id` is closed: true when it was approved. Aborting `signal` stops the wait only. */
  async approved(id: string, signal: AbortSignal): Promise<boolean | undefined> {
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['request'], signal, timeoutMs: 2 ** 31 - 1,
      check: () => (this.store.get(id)?.status !== 'pending' ? true : undefined),
    });
    if (!r.ok) return undefined;
    const row = this.store.get(id)!;
    return row.status === 'answered' && row.decision === 'approved';
  }

  /** Close a pending request without an answer (e.g. its workflow was cancelled). */
  cancel(id: string, comment: string): void {
    this.close(id, { status: 'cancelled', comment }, 'hub');
  }

  /** A request as callers see it, with its agent's title and late answers. */
  view(r: FullRequestRow): RequestView {
    return requestView(r, this.ctx.store.get(r.job_id)?.title, this.store.lateOf(r.id));
  }

  /** The request, or a NotFoundError naming recent ones. */
  get(id: string): FullRequestRow {
    const r = this.store.get(id);
    if (r) return r;
    const near = this.store.recentIds();
    throw new NotFoundError(`No request ${JSON.stringify(id)}.${near.length ? ` Recent requests: ${near.join(', ')}.` : ' There are no requests.'} See list_requests (or \`overseer requests\`).`);
  }

  list(i: ListRequestsInput, caller: Caller): { requests: RequestView[] } {
    if (caller.role !== 'lead') throw new ForbiddenError('list_requests is the lead\'s: agents cannot read requests.');
    return { requests: this.store.list(i.status, i.limit).map((r) => this.view(r)) };
  }

  /** Closed requests that got late answers, newest first. */
  withLateAnswers(limit: number): RequestView[] {
    return this.store.withLate(limit).map((id) => this.view(this.store.get(id)!));
  }

  /** The lead's `respond`. Person-only requests are refused and left untouched. */
  respond(i: RespondInput, caller: Caller): RequestView {
    if (caller.role !== 'lead') throw new ForbiddenError('respond is the lead\'s: an agent cannot answer requests.');
    const r = this.get(i.request_id);
    if (r.status !== 'pending') throw new InvalidStateError(`Request ${r.id} is already ${r.status}${r.decision ? ` (${r.decision})` : ''}; nothing to answer.`);
    const refused = leadRefusal(r);
    if (refused) throw new ForbiddenError(refused);
    const problem = answerProblem(r, i);
    if (problem) throw new InvalidInputError(problem);
    this.close(r.id, { status: 'answered', decision: i.decision ?? null, answer: i.answer ?? null, comment: i.comment ?? null }, 'lead');
    return this.view(this.store.get(r.id)!);
  }

  /**
   * The person's answer (form, terminal): validated like `respond`, open to every request. On a
   * closed request it is kept as a late answer and TooLateError says when and how it closed.
   */
  answerAsPerson(id: string, a: Answer, by: string, o: { leadSeen?: boolean } = {}): RequestView {
    const r = this.get(id);
    if (r.status === 'pending') {
      const problem = answerProblem(r, a);
      if (problem) throw new InvalidInputError(problem);
      if (this.close(id, { status: 'answered', decision: a.decision ?? null, answer: a.answer ?? null, comment: a.comment ?? null }, by)) return this.view(this.store.get(id)!);
    }
    const now = this.ctx.clock.now();
    this.store.addLate({
      request_id: id, job_id: r.job_id, answered_by: by, decision: a.decision ?? null, answer: a.answer ?? null, comment: a.comment ?? null,
      at: now, lead_seen_at: o.leadSeen ? now : null,
    });
    this.ctx.log.info({ id, by }, 'late answer to a closed request recorded');
    this.ctx.bus.emit('request', { jobId: r.job_id, requestId: id });
    throw new TooLateError(this.view(this.store.get(id)!));
  }

  /**
   * wait_for_agents' request attention: pending requests of `pending` jobs and unseen late
   * answers on `all` jobs. `wake` when one needs the lead: a request the lead may answer, a
   * person-only request it has not been shown yet, a late answer. `ack` marks them shown.
   */
  attention(pending: string[], all: string[]): { items: Record<string, unknown>[]; wake: boolean; ack: () => void } {
    const open = this.store.pendingFor(pending);
    const late = this.store.unseenLate(all);
    const title = (jobId: string): string | undefined => this.ctx.store.get(jobId)?.title;
    const items = [
      ...open.map((r) => attentionItem(r, title(r.job_id))),
      ...late.map((l) => lateAttentionItem(l, this.store.get(l.request_id)!)),
    ];
    const wake = late.length > 0 || open.some((r) => r.who !== 'person' || r.lead_seen_at === null);
    return {
      items, wake,
      ack: () => {
        const now = this.ctx.clock.now();
        this.store.markLeadSeen(open.map((r) => r.id), now);
        this.store.markLateSeen(late.map((l) => l.id), now);
      },
    };
  }

  /** get_agent's `requests`: the job's latest requests, who answered them and when. */
  ofJob(jobId: string): Record<string, unknown>[] {
    return this.store.ofJob(jobId, 10).map((r) => {
      const late = this.store.lateOf(r.id);
      return {
        request_id: r.id, kind: r.kind, summary: r.summary.slice(0, 300), who: r.who, status: r.status, decision: r.decision, answer: r.answer,
        answered_by: r.answered_by, answered_at: r.answered_at ? isoTime(r.answered_at) : null, ...(late.length ? { late_answers: late.length } : {}),
      };
    });
  }

  private newId(now: number): string {
    return `r-${now.toString(36)}-${(this.seq++).toString(36)}`;
  }

  private close(id: string, f: { status: string; decision?: string | null; answer?: string | null; comment?: string | null }, by: string): boolean {
    const r = this.store.get(id);
    if (!r) return false;
    const closed = tx(this.ctx.db, () => {
      const ok = this.store.close(id, { ...f, by }, this.ctx.clock.now());
      if (ok && this.store.pendingOf(r.job_id) === 0) this.setNeedsInput(r.job_id, false);
      return ok;
    });
    if (!closed) return false;
    this.closed(id, r.job_id);
    const st = this.ctx.store.get(r.job_id)?.status;
    if (st) this.ctx.bus.emit('job', { jobId: r.job_id, status: st });
    return true;
  }

  /** After a request closed: withdraw its form and wake whoever waits on it. */
  private closed(id: string, jobId: string): void {
    const form = this.forms.get(id);
    if (form) {
      this.forms.delete(id);
      const r = this.store.get(id);
      form.abort(`request ${id} closed: ${r ? closedHow(r) : 'closed'}`);
    }
    this.ctx.bus.emit('request', { jobId, requestId: id });
  }

  private setNeedsInput(jobId: string, on: boolean): void {
    const j = this.ctx.store.get(jobId);
    if (!j) return;
    if (on && j.status === 'running') this.ctx.store.update(jobId, { status: 'needs_input' }, this.ctx.clock.now());
    if (!on && j.status === 'needs_input') this.ctx.store.update(jobId, { status: 'running' }, this.ctx.clock.now());
  }

  /** Ask the person in a form (never for the lead's own requests); their answer closes the request. */
  private async elicit(id: string): Promise<void> {
    const r = this.store.get(id)!;
    if (r.who === 'lead') return;
    const ac = new AbortController();
    this.forms.set(id, ac);
    const take = (res: FormResult): void => {
      const a = readForm(r.kind, res);
      if (!a) return;
      try {
        this.answerAsPerson(id, a, 'person (form)');
      } catch (err) {
        this.ctx.log.info({ err, id }, 'the person\'s form answer was not taken');
      }
    };
    try {
      const res = await this.elicitor.ask(buildForm(r, this.ctx.store.get(r.job_id)?.title, this.ctx.clock.now()), ac.signal, take);
      if (this.forms.get(id) === ac) this.forms.delete(id);
      if (res) take(res);
    } catch (err) {
      if (this.forms.get(id) === ac) this.forms.delete(id);
      this.ctx.log.debug({ err, id }, r.who === 'person' ? 'form not answered; the person can answer in a terminal' : 'form not answered; the lead answers instead');
    }
  }
}
