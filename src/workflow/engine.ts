// The workflow engine: when a phase job has ended, the pure decisions of src/domain/workflow.ts
// say what comes next and this applies them — the plan, check-offs and re-opened milestones
// (through the ledger), worklogs, repairs, the lead's plan approval, blocked reasons, and the
// final commit/push/PR. It does not sequence the phases: the bundled script does
// (src/scripts/bundled/implement-review.js, through the calls of ./steps.ts), and gets the next
// step from here. Work on one workflow is serialised.
import { SerialChains } from '../serial.js';
import type { HubContext } from '../services/context.js';
import type { NoteService } from '../services/notes.js';
import type { RequestService } from '../approvals/service.js';
import type { WorkflowRow, WorkflowRows } from './rows.js';
import { TRANSIENT, afterAssess, afterFailure, afterImplement, afterReview, type BlockedReason, type Next, type Phase } from '../domain/workflow.js';
import { finishWorktree } from '../git/worktree.js';
import { runChecks } from '../services/checks.js';
import { BudgetExceededError, errorMessage } from '../errors.js';
import type { MilestoneLedger } from './ledger.js';
import type { PhaseCall, PhaseSpawner } from './phases.js';
import { MAY_MOVE, readState, roleKey, wfKeys, type WfState } from './state.js';
import { commitAll, worktreeProblem } from './worktree.js';
import { getJob } from '../store/sql/jobs.js';

/** What the workflow does next, as its script sees it: a phase to run, the lead's plan approval
 * to wait for, or the end (done and blocked are applied already; stop: it was cancelled or resumed
 * under the script, which just ends). */
export type Step =
  | { kind: 'spawn'; phase: Phase; cycle: number; repair?: string }
  | { kind: 'approval'; cycle: number }
  | { kind: 'block'; code: BlockedReason['code']; message: string }
  | { kind: 'done' }
  | { kind: 'stop'; status: string };

export class WorkflowEngine {
  private readonly chains = new SerialChains(async (id, err) => {
    this.ctx.log.error({ err, workflow: id }, 'workflow step failed');
    // Blocking can fail too (the database closing under a late step): the chain never rejects.
    try {
      await this.block(id, 'phase_failed', `internal error while advancing the workflow: ${errorMessage(err)}`, null);
    } catch (e) {
      this.ctx.log.error({ err: e, workflow: id }, 'could not block the workflow');
    }
  });

  constructor(
    private readonly ctx: HubContext, private readonly notes: NoteService, private readonly requests: RequestService,
    private readonly store: WorkflowRows, private readonly ledger: MilestoneLedger, private readonly phases: PhaseSpawner,
  ) {}

  /** Run fn after everything already queued for this workflow. */
  serial(id: string, fn: () => Promise<void>): Promise<void> {
    return this.chains.run(id, fn);
  }

  idle(id: string): Promise<void> {
    return this.chains.idle(id);
  }

  drain(): Promise<void> {
    return this.chains.drain();
  }

  private async workflow(id: string): Promise<WorkflowRow> {
    return (await this.store.get(id))!;
  }

  /** Reconcile the plan note with the hub's record; what was found goes to the next worklog. */
  async reconcilePlan(id: string): Promise<void> {
    const found = await this.ledger.reconcileNote(id);
    if (!found.length) return;
    this.ctx.log.warn({ workflow: id, found }, 'workflow plan note reconciled');
    const w = await this.workflow(id);
    const st = readState(w);
    st.planEdits = [...(st.planEdits ?? []), ...found];
    await this.store.update(id, { state_json: JSON.stringify(st) });
  }

  /** The worktree is verified before a phase; a workflow whose worktree cannot be used is blocked (false). */
  async verified(w: WorkflowRow, phase: Phase, cycle: number): Promise<boolean> {
    const problem = await worktreeProblem(w);
    if (problem) await this.block(w.id, problem.code, problem.message, null, phase, cycle);
    return !problem;
  }

  /** Spawns a phase, carried by a call of the workflow's script run; a budget the phase would
   * exceed (src/money/budgets.ts) blocks the workflow instead, saying which and what to do. */
  async spawnOrBlock(w: WorkflowRow, step: { phase: Phase; cycle: number; repair?: string }, call: PhaseCall): Promise<string | undefined> {
    try {
      return await this.spawn(w, step, call);
    } catch (err) {
      if (!(err instanceof BudgetExceededError)) throw err;
      await this.block(w.id, 'budget_exceeded', err.message, null, step.phase, step.cycle);
      return undefined;
    }
  }

  /** Spawns a phase, carried by a call of the workflow's script run (a budget it would exceed: BudgetExceededError; undefined: another start took the phase). */
  async spawn(w: WorkflowRow, step: { phase: Phase; cycle: number; repair?: string }, call: PhaseCall): Promise<string | undefined> {
    return this.phases.spawn(await this.workflow(w.id), step.phase, step.cycle, step.repair, call);
  }

  /** Before a review of cycle 2 or later: the workflow's checks, for its prompt. */
  async beforePhase(w: WorkflowRow, phase: Phase, cycle: number): Promise<void> {
    if (phase === 'review' && cycle >= 2) await this.runWorkflowChecks(w);
  }

  /** After phase job `jobId` ended: its result applied, and the next step. */
  async afterPhase(wfId: string, jobId: string): Promise<Step> {
    const w0 = await this.store.get(wfId);
    if (!w0 || w0.status !== 'running' || w0.current_job !== jobId) return { kind: 'stop', status: w0?.status ?? 'gone' };
    const job = (await getJob(this.ctx.sql.db, jobId))!;
    if (job.phase !== 'assess' && !(await this.ledger.get(wfId))) {
      const message = 'the workflow has no plan: neither the hub\'s record nor the plan note';
      await this.block(wfId, 'missing_artifact', message, jobId);
      return { kind: 'block', code: 'missing_artifact', message };
    }
    await this.reconcilePlan(wfId);
    const w = await this.workflow(wfId);
    const phase = job.phase as Phase;
    const cycle = job.cycle ?? w.cycle;
    const st = readState(w);
    const structured = job.structured_json ? (JSON.parse(job.structured_json) as Record<string, unknown>) : undefined;
    let next: Next;
    const models = { implementer: 0, reviewer: 0, ...st.models };
    if (job.status !== 'succeeded') {
      st.modelIndex = models[roleKey(phase)];
      next = afterFailure(phase, cycle, job.failure_class ?? 'crashed', job.error ?? '', st, this.phases.models(w, phase).length);
      models[roleKey(phase)] = st.modelIndex;
      st.models = models;
      // Repeated transient failures of one provider: the phase moves to the other provider.
      const current = this.phases.role(w, phase).provider;
      const other = this.phases.fallbackProvider(w, phase, current);
      if (next.kind === 'block' && TRANSIENT.has(job.failure_class ?? '') && other && !st.providers?.[roleKey(phase)]) {
        st.providers = { ...st.providers, [roleKey(phase)]: other };
        st.phaseFailures = 0;
        st.models = { ...models, [roleKey(phase)]: 0 };
        this.ctx.log.warn({ workflow: w.id, phase, from: current, to: other }, 'workflow phase falls back to the other provider');
        next = { kind: 'spawn', phase, cycle };
      }
    } else {
      st.phaseFailures = 0;
      // A phase that got through: the role's own model is tried first again next time.
      st.models = { ...models, [roleKey(phase)]: 0 };
      if (phase === 'assess') {
        next = afterAssess(structured, cycle, st);
        if (next.kind === 'spawn' && !next.repair) {
          await this.ledger.fix(w.id, String(structured!.plan));
          await this.notes.put(wfKeys(w.id).contract, String(structured!.contract), `workflow:${w.id}`);
        }
      } else if (phase === 'review') {
        const notes = typeof structured?.notes === 'string' ? structured.notes : '(the reviewer returned no notes)';
        const verdict = structured?.verdict === 'changes_requested' ? 'changes_requested' : 'approve';
        const reopened = Array.isArray(structured?.reopen) ? await this.ledger.reopen(w.id, structured.reopen.map(String)) : [];
        const extra = [reopened.length ? `re-opened: ${reopened.join('; ')}` : '', ...planEditLines(st)].filter(Boolean);
        await this.notes.put(wfKeys(w.id).worklog(cycle, 'review'), `verdict: ${verdict}${extra.length ? `\n${extra.join('\n')}` : ''}\n\n${notes}`, `workflow:${w.id}`);
        next = afterReview({ ...structured, verdict }, cycle, st, { approvePlan: !!w.approve_plan, planApproved: !!w.plan_approved });
      } else {
        next = await this.afterImplementPhase(w, job.id, cycle, structured, st);
      }
    }
    await this.store.update(w.id, { state_json: JSON.stringify(st) });
    return this.apply(await this.workflow(w.id), next, phase, cycle, jobId);
  }

  /** The hub commits leftovers, then checks off exactly the milestone the phase reported
   * completed — or nothing, which counts toward zero progress — and writes the worklog. */
  private async afterImplementPhase(w: WorkflowRow, jobId: string, cycle: number, s: Record<string, unknown> | undefined, st: WfState): Promise<Next> {
    const workDir = w.worktree_path ?? w.cwd;
    const milestone = typeof s?.milestone === 'string' ? s.milestone : '';
    // "a commit": whatever the implementer left uncommitted is committed for it.
    const committed = await commitAll(workDir, `overseer workflow ${w.id}: cycle ${cycle} ${milestone || 'implement'}`.slice(0, 200));
    const completed = s?.completed === true;
    const r = completed ? await this.ledger.checkOff(w.id, milestone, jobId, cycle) : undefined;
    const outcome = !r ? ' (nothing checked off)' : 'checked' in r ? ` (checked off: ${r.checked})` : `; NOT checked off: ${r.problem}`;
    if (r && 'problem' in r) this.ctx.log.warn({ workflow: w.id, job: jobId, milestone, problem: r.problem }, 'implement phase reported a milestone the hub could not check off');
    const summary = typeof s?.summary === 'string' ? s.summary : '(no summary)';
    const lines = [
      `milestone: ${milestone || '(none named)'}`, `completed: ${completed}${outcome}`,
      committed ? `hub committed leftovers: ${committed}` : '', `job: ${jobId}`, ...planEditLines(st),
    ].filter(Boolean);
    await this.notes.put(wfKeys(w.id).worklog(cycle, 'implement'), `${lines.join('\n')}\n\n${summary}`, `workflow:${w.id}`);
    const { done, total } = await this.ledger.progress(w.id);
    return afterImplement(!!r && 'checked' in r, total > 0 && done === total, cycle, w.max_cycles, st);
  }

  /** Done and blocked are applied here; a spawn or an approval is the script's next call. */
  private async apply(w: WorkflowRow, next: Next, phase: Phase, cycle: number, jobId: string): Promise<Step> {
    switch (next.kind) {
      case 'spawn':
        return next.repair ? { kind: 'spawn', phase: next.phase, cycle: next.cycle, repair: next.repair } : { kind: 'spawn', phase: next.phase, cycle: next.cycle };
      case 'approval':
        return { kind: 'approval', cycle };
      case 'block':
        await this.block(w.id, next.code, next.message, jobId, phase, cycle);
        return next;
      case 'done':
        await this.finish(w);
        return next;
    }
  }

  /** The lead's approval of the plan (list_requests / respond): the request the workflow waits
   * for — the one it has (after a hub restart), or a new one. Undefined: it does not wait (any more). */
  async openApproval(id: string, cycle: number): Promise<string | undefined> {
    const w = await this.store.get(id);
    if (w?.status === 'waiting_approval' && w.approval_request) return w.approval_request;
    // Approved already (the answer came in while a restarted hub's script was still replaying), or no longer running.
    if (w?.status !== 'running' || w.plan_approved) return undefined;
    const reqId = await this.requests.openDetached({
      jobId: w.current_job ?? '', kind: 'approval', summary: `Approve the plan of workflow ${w.id} ("${w.title}") before implementation starts`,
      plan: { rationale: (await this.ledger.rendered(w.id)) ?? '', resources: (await this.notes.get(wfKeys(w.id).contract))?.value ?? '' },
    });
    if (!(await this.store.move(w.id, MAY_MOVE.ask, { status: 'waiting_approval', approval_request: reqId, phase: 'review', cycle }))) {
      // Cancelled or blocked while the request was opened: nobody waits for it.
      await this.requests.cancel(reqId, 'the workflow no longer waits for the plan approval');
      return undefined;
    }
    return reqId;
  }

  async approvalPending(reqId: string): Promise<boolean> {
    return (await this.requests.row(reqId))?.status === 'pending';
  }

  /** The lead answered the plan approval: implement next, or blocked plan_rejected. */
  async approvalAnswered(id: string): Promise<Step> {
    const w = await this.store.get(id);
    if (!w || w.status !== 'waiting_approval' || !w.approval_request) return { kind: 'stop', status: w?.status ?? 'gone' };
    const r = await this.requests.row(w.approval_request);
    const approved = r?.status === 'answered' && r.decision === 'approved';
    const moved = await this.store.move(id, MAY_MOVE.answered, approved ? { status: 'running', plan_approved: 1, approval_request: null } : { status: 'running', approval_request: null });
    if (!moved) return { kind: 'stop', status: (await this.store.get(id))?.status ?? 'gone' };
    if (approved) return { kind: 'spawn', phase: 'implement', cycle: Math.max(1, w.cycle) };
    const message = `the lead did not approve the plan (${r?.status ?? 'gone'}${r?.comment ? `: ${r.comment}` : ''})`;
    await this.block(id, 'plan_rejected', message, r?.job_id ?? null, 'review', w.cycle);
    return { kind: 'block', code: 'plan_rejected', message };
  }

  private async runWorkflowChecks(w: WorkflowRow): Promise<void> {
    const checks = JSON.parse(w.checks_json) as string[];
    if (!checks.length) return;
    const results = await runChecks(checks, { workDir: w.worktree_path ?? w.cwd, baseCommit: w.base_commit ?? undefined, sawErrorResult: false, env: this.ctx.childEnv, timeoutMs: 10 * 60_000 });
    const text = results.map((r) => `- ${r.check}: ${r.ok ? 'passed' : `FAILED — ${r.detail}`}`).join('\n');
    const st = { ...readState(await this.workflow(w.id)), lastChecks: text };
    await this.store.update(w.id, { state_json: JSON.stringify(st) });
  }

  /** Blocked with a reason, only from a state it may be blocked from (a cancelled or finished workflow stays so). */
  async block(id: string, code: BlockedReason['code'], message: string, jobId: string | null, phase?: Phase, cycle?: number): Promise<void> {
    const w = await this.store.get(id);
    if (!w) return;
    const reason: BlockedReason = { code, message, phase: phase ?? (w.phase as Phase), cycle: cycle ?? w.cycle, job_id: jobId };
    if (await this.store.move(id, MAY_MOVE.block, { status: 'blocked', blocked_json: JSON.stringify(reason) })) this.ctx.log.warn({ workflow: id, reason }, 'workflow blocked');
  }

  /** Every milestone is in the hub's record as completed: commit, push, PR, close the worktree (the branch stays). */
  private async finish(w: WorkflowRow): Promise<void> {
    let pr: string | null = null;
    let note: string | null = null;
    if (w.worktree_path && w.repo_root && w.branch) {
      const r = await finishWorktree({ repoRoot: w.repo_root, path: w.worktree_path, branch: w.branch, baseCommit: w.base_commit ?? '' }, { message: `overseer workflow ${w.id}: ${w.title}` });
      pr = r.prUrl ?? null;
      note = r.note ?? null;
    } else {
      await commitAll(w.cwd, `overseer workflow ${w.id}: ${w.title}`);
    }
    await this.store.move(w.id, MAY_MOVE.finish, { status: 'succeeded', pr_url: pr, git_note: note, ended_at: this.ctx.clock.now() });
  }
}

/** The plan-note edits found since the last worklog, as worklog lines; clears them from st. */
function planEditLines(st: WfState): string[] {
  const lines = (st.planEdits ?? []).map((e) => `plan note: ${e}`);
  delete st.planEdits;
  return lines;
}
