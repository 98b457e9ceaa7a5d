// Requests: an agent asks for approval (with an optional plan) or asks a question, and blocks
// until answered, timed out or cancelled; the job shows `needs_input` meanwhile. `who` says who
// may answer: the person only, the lead only, or either (`any`). The person is asked through
// the lead's client (a form) unless the request is the lead's, and can always answer from a
// terminal (the person API). The lead answers with `respond`, except person-only requests.
// Closing a request withdraws its open form; an answer that comes after the close is kept as a
// late answer and shown, never silently dropped.
import { randomBytes } from 'node:crypto';
import type { Caller, HubContext } from '../services/context.js';
import {
  answerRequest, cancelPendingOf, closeRequest, getRequest, insertRequest, lateOf, lateOfMany, listRequests, markLateSeen, markLeadSeen,
  openRequest, pendingFor, pendingWithJobs, recentRequestIds, requestsOfJob, requestsWithLate, unseenLate,
  type Closing, type FullRequestRow, type NewRequest, type Who,
} from '../store/sql/requests.js';
import { transact, type Q } from '../store/sql/tx.js';
import { getJob, titlesOf } from '../store/sql/jobs.js';
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
  private seq = 0;
  /** Open forms by request id: aborted when the request closes. */
  private readonly forms = new Map<string, AbortController>();

  /** `elicitor`: asks the lead's client to show a request as a form (src/server/elicit.ts). */
  constructor(private readonly ctx: HubContext, private readonly elicitor: Elicitor) {
    // A job that ended cannot be answered any more: its pending requests are cancelled. The
    // promise is returned so that the end of a job (Bus.emitSettled) is reported after it.
    ctx.bus.on('job', async (e) => {
      if (isActive(e.status as never)) return;
      const closed = await cancelPendingOf(this.q, e.jobId, ctx.clock.now(), DETACHED);
      for (const id of closed) await this.closed(id, e.jobId);
    });
  }

  private get q() {
    return this.ctx.sql.db;
  }

  /** The request's row, or undefined. */
  row(id: string): Promise<FullRequestRow | undefined> {
    return getRequest(this.q, id);
  }

  /** The late answers to a request, oldest first. */
  lateAnswers(id: string) {
    return lateOf(this.q, id);
  }

  /** Open a request for the calling agent and block until it is answered, times out or is cancelled. */
  async open(caller: Caller, o: { kind: RequestKind; summary: string; plan?: unknown; options?: string[]; toolName?: string; toolInput?: unknown; timeoutS: number; who?: Who }, signal?: AbortSignal, progress?: (ms: number) => void): Promise<RequestView> {
    if (caller.role !== 'agent') throw new ForbiddenError(`${o.kind === 'question' ? 'ask_lead' : 'request_approval'} is for agents asking the lead; the lead decides itself.`);
    const jobId = caller.jobId;
    const now = this.ctx.clock.now();
    const timeoutMs = Math.min(o.timeoutS, this.ctx.config.maxWaitS) * 1000;
    const id = this.newId(now);
    const row: NewRequest = {
      id, job_id: jobId, kind: o.kind, summary: o.summary, plan_json: o.plan === undefined ? null : JSON.stringify(o.plan),
      options_json: o.options ? JSON.stringify(o.options) : null, created_at: now, tool_name: o.toolName ?? null,
      tool_input_json: o.toolInput === undefined ? null : JSON.stringify(o.toolInput), expires_at: now + timeoutMs, who: o.who ?? 'any',
    };
    const status = await openRequest(this.q, row, now);
    this.ctx.bus.emit('request', { jobId, requestId: id });
    if (status) this.ctx.bus.emit('job', { jobId, status });
    void this.elicit(row);
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['request'], signal, timeoutMs,
      progressEveryMs: this.ctx.progressEveryMs, onProgress: progress,
      check: async () => ((await this.row(id))?.status !== 'pending' ? true : undefined),
    });
    if (!r.ok) {
      if (r.reason === 'timeout') await this.close(id, { status: 'timed_out', comment: `no answer within ${o.timeoutS}s`, by: 'timeout' });
      else await this.close(id, { status: 'cancelled', comment: 'the request was cancelled', by: 'agent' });
    }
    return this.view((await this.row(id))!);
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
  async reconcile(): Promise<string[]> {
    const now = this.ctx.clock.now();
    const stale = (await pendingWithJobs(this.q)).filter((r) => r.tool_name !== DETACHED && r.tool_name !== SCRIPT_APPROVAL && !isActive((r.job_status ?? 'failed') as never));
    const ids: string[] = [];
    for (const r of stale) {
      if ((await closeRequest(this.q, r.id, { status: 'cancelled', comment: 'the agent stopped running (hub restart)', by: 'hub' }, now))?.closed) ids.push(r.id);
    }
    return ids;
  }

  /** Open a request on behalf of the hub itself (a workflow's plan approval): it does not block. */
  async openDetached(o: { jobId: string; kind: RequestKind; summary: string; plan?: unknown }): Promise<string> {
    const now = this.ctx.clock.now();
    const id = this.newId(now);
    const row: NewRequest = {
      id, job_id: o.jobId, kind: o.kind, summary: o.summary, plan_json: o.plan === undefined ? null : JSON.stringify(o.plan),
      options_json: null, created_at: now, tool_name: DETACHED, tool_input_json: null, expires_at: null, who: 'any',
    };
    await insertRequest(this.q, row);
    this.ctx.bus.emit('request', { jobId: o.jobId, requestId: id });
    void this.elicit(row);
    return id;
  }

  /**
   * A script run's approve(summary, plan): a person-only approval the hub opens for the run (its
   * job_id is the run's id). Only the person answers it (form, watch, dashboard, `overseer
   * respond`); the lead's respond is refused. It has no deadline: the run waits, as long as it lives.
   * `within` runs in the same layer transaction (the journal's call row, given the transaction):
   * the request and the call that waits for it land together or not at all.
   */
  async openForRun(runId: string, o: { summary: string; plan?: unknown }, within: (requestId: string, trx: Q) => Promise<void>): Promise<string> {
    const now = this.ctx.clock.now();
    const id = this.newId(now);
    const r: NewRequest = {
      id, job_id: runId, kind: 'approval', summary: o.summary, plan_json: o.plan === undefined ? null : JSON.stringify(o.plan),
      options_json: null, created_at: now, tool_name: SCRIPT_APPROVAL, tool_input_json: null, expires_at: null, who: 'person',
    };
    await transact(this.q, async (trx) => {
      await insertRequest(trx, r);
      await within(id, trx);
    });
    this.ctx.bus.emit('request', { jobId: runId, requestId: id });
    void this.elicit(r);
    return id;
  }

  /** Waits until request `id` is closed: true when it was approved. Aborting `signal` stops the wait only. */
  async approved(id: string, signal: AbortSignal): Promise<boolean | undefined> {
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['request'], signal, timeoutMs: 2 ** 31 - 1,
      check: async () => ((await this.row(id))?.status !== 'pending' ? true : undefined),
    });
    if (!r.ok) return undefined;
    const row = (await this.row(id))!;
    return row.status === 'answered' && row.decision === 'approved';
  }

  /** Close a pending request without an answer (e.g. its workflow was cancelled). */
  async cancel(id: string, comment: string): Promise<void> {
    await this.close(id, { status: 'cancelled', comment, by: 'hub' });
  }

  /** A request as callers see it, with its agent's title and late answers. */
  async view(r: FullRequestRow): Promise<RequestView> {
    return requestView(r, (await getJob(this.q, r.job_id))?.title, await lateOf(this.q, r.id));
  }

  /** The request, or a NotFoundError naming recent ones. */
  async get(id: string): Promise<FullRequestRow> {
    const r = await this.row(id);
    if (r) return r;
    const near = await recentRequestIds(this.q);
    throw new NotFoundError(`No request ${JSON.stringify(id)}.${near.length ? ` Recent requests: ${near.join(', ')}.` : ' There are no requests.'} See list_requests (or \`overseer requests\`).`);
  }

  async list(i: ListRequestsInput, caller: Caller): Promise<{ requests: RequestView[] }> {
    if (caller.role !== 'lead') throw new ForbiddenError('list_requests is the lead\'s: agents cannot read requests.');
    return { requests: await this.views(await this.listed(i.status, i.limit)) };
  }

  /** Requests of a status ('all': every one, newest first; else oldest first), at most `limit`. */
  listed(status: string, limit: number): Promise<FullRequestRow[]> {
    return listRequests(this.q, status, limit);
  }

  /** Requests as callers see them (one read of their late answers for all). */
  async views(rows: FullRequestRow[]): Promise<RequestView[]> {
    const late = await lateOfMany(this.q, rows.map((r) => r.id));
    const titles = await titlesOf(this.q, rows.map((r) => r.job_id));
    return rows.map((r) => requestView(r, titles.get(r.job_id), late.get(r.id)));
  }

  /** Closed requests that got late answers, newest first. */
  async withLateAnswers(limit: number): Promise<RequestView[]> {
    const rows: FullRequestRow[] = [];
    for (const id of await requestsWithLate(this.q, limit)) {
      const r = await this.row(id);
      if (r) rows.push(r);
    }
    return this.views(rows);
  }

  /** The lead's `respond`. Person-only requests are refused and left untouched. */
  async respond(i: RespondInput, caller: Caller): Promise<RequestView> {
    if (caller.role !== 'lead') throw new ForbiddenError('respond is the lead\'s: an agent cannot answer requests.');
    const r = await this.get(i.request_id);
    if (r.status !== 'pending') throw new InvalidStateError(`Request ${r.id} is already ${r.status}${r.decision ? ` (${r.decision})` : ''}; nothing to answer.`);
    const refused = leadRefusal(r);
    if (refused) throw new ForbiddenError(refused);
    const problem = answerProblem(r, i);
    if (problem) throw new InvalidInputError(problem);
    // Closed by someone else since it was read: the lead's answer is refused like above, not kept as late.
    if (!(await this.close(r.id, { status: 'answered', decision: i.decision ?? null, answer: i.answer ?? null, comment: i.comment ?? null, by: 'lead' }))) {
      const now = (await this.row(r.id))!;
      throw new InvalidStateError(`Request ${r.id} is already ${now.status}${now.decision ? ` (${now.decision})` : ''}; nothing to answer.`);
    }
    return this.view((await this.row(r.id))!);
  }

  /**
   * The person's answer (form, terminal): validated like `respond`, open to every request. On a
   * closed request it is kept as a late answer and TooLateError says when and how it closed.
   */
  async answerAsPerson(id: string, a: Answer, by: string, o: { leadSeen?: boolean } = {}): Promise<RequestView> {
    const r = await this.get(id);
    if (r.status === 'pending') {
      const problem = answerProblem(r, a);
      if (problem) throw new InvalidInputError(problem);
    }
    const out = await answerRequest(this.q, id, { decision: a.decision ?? null, answer: a.answer ?? null, comment: a.comment ?? null, by, leadSeen: o.leadSeen }, this.ctx.clock.now());
    if (out?.closed) {
      await this.afterClose(id, out.job_id, out.job_status);
      return this.view((await this.row(id))!);
    }
    this.ctx.log.info({ id, by }, 'late answer to a closed request recorded');
    this.ctx.bus.emit('request', { jobId: r.job_id, requestId: id });
    throw new TooLateError(await this.view((await this.row(id))!));
  }

  /**
   * wait_for_agents' request attention: pending requests of `pending` jobs and unseen late
   * answers on `all` jobs. `wake` when one needs the lead: a request the lead may answer, a
   * person-only request it has not been shown yet, a late answer. `ack` marks them shown.
   */
  async attention(pending: string[], all: string[]): Promise<{ items: Record<string, unknown>[]; wake: boolean; ack: () => Promise<void> }> {
    const open = await pendingFor(this.q, pending);
    const late = await unseenLate(this.q, all);
    const titles = await titlesOf(this.q, open.map((r) => r.job_id));
    const title = (jobId: string): string | undefined => titles.get(jobId);
    const asked = new Map<string, FullRequestRow>();
    for (const l of late) if (!asked.has(l.request_id)) asked.set(l.request_id, (await this.row(l.request_id))!);
    const items = [
      ...open.map((r) => attentionItem(r, title(r.job_id))),
      ...late.map((l) => lateAttentionItem(l, asked.get(l.request_id)!)),
    ];
    const wake = late.length > 0 || open.some((r) => r.who !== 'person' || r.lead_seen_at === null);
    return {
      items, wake,
      ack: async () => {
        const now = this.ctx.clock.now();
        await markLeadSeen(this.q, open.map((r) => r.id), now);
        await markLateSeen(this.q, late.map((l) => l.id), now);
      },
    };
  }

  /** get_agent's `requests`: the job's latest requests, who answered them and when. */
  async ofJob(jobId: string): Promise<Record<string, unknown>[]> {
    const rows = await requestsOfJob(this.q, jobId, 10);
    const lates = await lateOfMany(this.q, rows.map((r) => r.id));
    return rows.map((r) => {
      const late = lates.get(r.id) ?? [];
      return {
        request_id: r.id, kind: r.kind, summary: r.summary.slice(0, 300), who: r.who, status: r.status, decision: r.decision, answer: r.answer,
        answered_by: r.answered_by, answered_at: r.answered_at ? isoTime(r.answered_at) : null, ...(late.length ? { late_answers: late.length } : {}),
      };
    });
  }

  /**
   * A new request id, unique across hubs sharing one database: the time, this process's counter
   * and 32 random bits (two hubs' counters both start at 0). Short enough to type in `overseer respond`.
   */
  private newId(now: number): string {
    return `r-${now.toString(36)}-${(this.seq++).toString(36)}${randomBytes(4).toString('hex')}`;
  }

  /** Close a pending request; false when it had closed already (or does not exist). */
  private async close(id: string, c: Closing): Promise<boolean> {
    const out = await closeRequest(this.q, id, c, this.ctx.clock.now());
    if (!out?.closed) return false;
    await this.afterClose(id, out.job_id, out.job_status);
    return true;
  }

  /** After a close that changed the request: its form withdrawn, its waiters woken, its job's status told. */
  private async afterClose(id: string, jobId: string, jobStatus: string | undefined): Promise<void> {
    await this.closed(id, jobId);
    if (jobStatus) this.ctx.bus.emit('job', { jobId, status: jobStatus });
  }

  /** After a request closed: withdraw its form and wake whoever waits on it. */
  private async closed(id: string, jobId: string): Promise<void> {
    const form = this.forms.get(id);
    if (form) {
      this.forms.delete(id);
      const r = await this.row(id);
      form.abort(`request ${id} closed: ${r ? closedHow(r) : 'closed'}`);
    }
    this.ctx.bus.emit('request', { jobId, requestId: id });
  }

  /** Ask the person in a form (never for the lead's own requests); their answer closes the request. */
  private async elicit(n: NewRequest): Promise<void> {
    if (n.who === 'lead') return;
    const { id } = n;
    const r: FullRequestRow = { ...n, status: 'pending', decision: null, answer: null, comment: null, answered_at: null, answered_by: null, lead_seen_at: null };
    const ac = new AbortController();
    this.forms.set(id, ac);
    const take = async (res: FormResult): Promise<void> => {
      const a = readForm(r.kind, res);
      if (!a) return;
      try {
        await this.answerAsPerson(id, a, 'person (form)');
      } catch (err) {
        this.ctx.log.info({ err, id }, 'the person\'s form answer was not taken');
      }
    };
    try {
      const res = await this.elicitor.ask(buildForm(r, (await getJob(this.q, r.job_id))?.title, this.ctx.clock.now()), ac.signal, (late) => void take(late));
      if (this.forms.get(id) === ac) this.forms.delete(id);
      if (res) await take(res);
    } catch (err) {
      if (this.forms.get(id) === ac) this.forms.delete(id);
      this.ctx.log.debug({ err, id }, r.who === 'person' ? 'form not answered; the person can answer in a terminal' : 'form not answered; the lead answers instead');
    }
  }
}
