// The implement/review workflow engine. A workflow owns a worktree and branch; its phases are
// ordinary jobs (cwd = the worktree, a --json-schema structured result) spawned one at a time.
// When the current phase job settles, the pure decisions of src/domain/workflow.ts say what
// comes next; this module applies them: notes, commits, repairs, the lead's plan approval,
// blocked reasons, and the final commit/push/PR. Work on one workflow is serialised.
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Caller, HubContext } from './context.js';
import type { JobService } from './jobs.js';
import type { NoteService } from './notes.js';
import type { RequestService } from '../approvals/service.js';
import { WorkflowStore, type WorkflowRow } from '../store/workflows.js';
import { tx } from '../store/db.js';
import {
  ASSESS_SCHEMA, IMPLEMENT_SCHEMA, REVIEW_SCHEMA, TRANSIENT, afterAssess, afterFailure, afterImplement, afterReview, checkOff,
  freshCounters, progress, reopen, topUnchecked,
  type BlockedReason, type Counters, type Next, type Phase, type WorkflowStatus,
} from '../domain/workflow.js';
import { isSettled, slugify } from '../domain/job.js';
import { ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError, errorMessage } from '../errors.js';
import { branchExists, createWorktree, finishWorktree, headCommit, removeWorktree, repoRootOf } from '../git/worktree.js';
import { attachWorktree } from '../git/attach.js';
import { git, gitQuick } from '../git/exec.js';
import { runChecks } from './checks.js';
import { isoTime } from '../clock.js';
import type { CancelInput } from '../tools/agentSchemas.js';
import type { ListWorkflowsInput, ResumeWorkflowInput, RoleSpec, StartWorkflowInput } from '../tools/workflowSchemas.js';
import { randomBytes } from 'node:crypto';

export const CONTEXT_CAP = 50_000;

interface WfState extends Counters {
  /** milestones checked when the current implement phase started */
  doneBefore?: number;
  /** each role's position in its model rotation (Counters.modelIndex is the current phase's) */
  models?: { implementer: number; reviewer: number };
  /** a role moved to the other provider after repeated transient failures */
  providers?: { implementer?: 'claude' | 'codex'; reviewer?: 'claude' | 'codex' };
}

const roleKey = (phase: Phase): 'implementer' | 'reviewer' => (phase === 'review' ? 'reviewer' : 'implementer');

/** Keys of a workflow's notes. */
export const wfKeys = (id: string) => ({
  plan: `workflow/${id}/plan`,
  contract: `workflow/${id}/contract`,
  worklogPrefix: `workflow/${id}/worklog/`,
  worklog: (cycle: number, phase: Phase) => `workflow/${id}/worklog/cycle-${cycle}-${phase}`,
});

export interface Guidelines {
  /** Template defaults and guidelines for a workflow (issue #4 templates); undefined = none. */
  resolve(name: string): { guidelines: string; implementer?: Partial<RoleSpec>; checks?: string[] };
}

export class WorkflowService {
  readonly store: WorkflowStore;
  private readonly chains = new Map<string, Promise<void>>();
  templates?: Guidelines;

  constructor(private readonly ctx: HubContext, private readonly jobs: JobService, private readonly notes: NoteService, private readonly requests: RequestService) {
    this.store = new WorkflowStore(ctx.db);
    ctx.bus.on('job', (e) => {
      if (!isSettled(e.status as never)) return;
      const j = ctx.store.get(e.jobId);
      if (!j?.workflow_id) return;
      const wfId = j.workflow_id;
      this.serial(wfId, () => this.onPhaseEnded(wfId, e.jobId));
    });
    ctx.bus.on('request', (e) => {
      const w = this.store.byStatus('waiting_approval').find((x) => x.approval_request === e.requestId);
      if (w) this.serial(w.id, () => this.onApproval(w.id));
    });
  }

  /** Run fn after everything already queued for this workflow. */
  private serial(id: string, fn: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(id) ?? Promise.resolve()).then(fn).catch((err: unknown) => {
      this.ctx.log.error({ err, workflow: id }, 'workflow step failed');
      return this.blockNow(id, 'phase_failed', `internal error while advancing the workflow: ${errorMessage(err)}`, null);
    });
    this.chains.set(id, next);
    return next;
  }

  /** Wait until queued work on a workflow is done (tests, shutdown). */
  idle(id: string): Promise<void> {
    return this.chains.get(id) ?? Promise.resolve();
  }

  /** Wait until no workflow has queued work (hub shutdown, before the database closes). */
  async drain(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  private lead(caller: Caller, tool: string): void {
    if (caller.role !== 'lead') throw new ForbiddenError(`${tool} is the lead's: agents do not run workflows.`);
  }

  workflow(id: string): WorkflowRow {
    const w = this.store.get(id);
    if (!w) {
      const near = this.store.recentIds();
      throw new NotFoundError(`No workflow ${JSON.stringify(id)}.${near.length ? ` Recent workflows: ${near.join(', ')}.` : ' No workflows exist yet.'} Use list_workflows.`);
    }
    return w;
  }

  // ---- tools -------------------------------------------------------------------------

  async start(i: StartWorkflowInput, caller: Caller): Promise<{ workflow_id: string; status: string; assess_job_id: string; branch: string | null }> {
    this.lead(caller, 'start_workflow');
    const tpl = i.template !== undefined ? this.resolveTemplate(i.template) : undefined;
    const cwd = i.cwd === undefined ? this.ctx.projectDir : isAbsolute(i.cwd) ? resolve(i.cwd) : resolve(this.ctx.projectDir, i.cwd);
    if (!existsSync(cwd)) throw new InvalidInputError(`cwd ${JSON.stringify(i.cwd)} does not exist (resolved to ${cwd}). Pass an existing directory.`);
    const implementer = { provider: 'claude' as const, ...tpl?.implementer, ...i.implementer };
    const reviewer = { provider: 'claude' as const, ...i.reviewer };
    for (const r of [implementer, reviewer]) {
      if (!this.ctx.launchers[r.provider]) throw new InvalidInputError(`provider ${JSON.stringify(r.provider)} is not available in this hub. Use "claude".`);
    }
    const id = `w-${randomBytes(4).toString('hex')}`;
    const title = i.title ?? (i.task.split('\n').find((l) => l.trim())?.trim().slice(0, 80) ?? 'workflow');
    let repoRoot: string | null = null;
    let worktreePath: string | null = null;
    let branch: string | null = null;
    let baseCommit: string | null = null;
    if (i.worktree) {
      repoRoot = await repoRootOf(cwd);
      branch = `overseer/wf-${slugify(title)}-${id.slice(2, 8)}`;
      if (await branchExists(repoRoot, branch)) throw new InvalidInputError(`branch ${branch} already exists; pass another title.`);
      const wt = await createWorktree({ repoRoot, jobId: id, branch });
      worktreePath = wt.path;
      baseCommit = wt.baseCommit;
    } else {
      baseCommit = (await headCommit(cwd)) ?? null;
    }
    try {
      const now = this.ctx.clock.now();
      tx(this.ctx.db, () => {
        this.store.insert({
          id, title, task: i.task, status: 'running', cycle: 0, phase: 'assess', cwd, repo_root: repoRoot, worktree_path: worktreePath, branch,
          base_commit: baseCommit, implementer_json: JSON.stringify(implementer), reviewer_json: JSON.stringify(reviewer), max_cycles: i.max_cycles,
          approve_plan: i.approve_plan ? 1 : 0, plan_approved: 0, checks_json: JSON.stringify(i.checks.length ? i.checks : tpl?.checks ?? []),
          template: i.template ?? null, phase_limits_json: i.phase_limits ? JSON.stringify(i.phase_limits) : null,
          state_json: JSON.stringify(freshCounters()), blocked_json: null, current_job: null, approval_request: null,
          pr_url: null, git_note: null, created_at: now, ended_at: null,
        });
      });
      const jobId = this.spawnPhase(this.store.get(id)!, 'assess', 0);
      return { workflow_id: id, status: 'running', assess_job_id: jobId, branch };
    } catch (err) {
      // Nothing half-created: no orphan worktree or branch.
      if (worktreePath && repoRoot) {
        await removeWorktree(repoRoot, worktreePath).catch(() => undefined);
        await git(repoRoot).raw(['branch', '-D', branch!]).catch(() => undefined);
      }
      this.ctx.db.prepare('DELETE FROM workflows WHERE id = ?').run(id);
      throw err;
    }
  }

  private resolveTemplate(name: string): ReturnType<Guidelines['resolve']> {
    if (!this.templates) throw new InvalidInputError(`Unknown template ${JSON.stringify(name)}: no templates are defined (put them in .overseer/templates/<name>.md). Omit template.`);
    return this.templates.resolve(name);
  }

  get(id: string): WorkflowView {
    return this.view(this.workflow(id));
  }

  list(i: ListWorkflowsInput): { workflows: Omit<WorkflowView, 'plan' | 'jobs'>[] } {
    return { workflows: this.store.list(i.status, i.limit).map((w) => { const { plan: _p, jobs: _j, ...rest } = this.view(w); return rest; }) };
  }

  async cancel(id: string, caller: Caller): Promise<WorkflowView> {
    this.lead(caller, 'cancel_workflow');
    const w = this.workflow(id);
    if (w.status === 'succeeded' || w.status === 'cancelled') return this.view(w);
    this.store.update(id, { status: 'cancelled', ended_at: this.ctx.clock.now() }, this.ctx.clock.now());
    if (w.approval_request) this.requests.cancel(w.approval_request, 'the workflow was cancelled');
    if (w.current_job) {
      const j = this.ctx.store.get(w.current_job);
      if (j && !isSettled(j.status)) await this.jobs.cancel({ job_id: j.id, cascade: true, reason: 'workflow cancelled' } as CancelInput, { role: 'lead' });
    }
    await this.idle(id);
    if (w.worktree_path && w.repo_root) await removeWorktree(w.repo_root, w.worktree_path).catch(() => undefined);
    return this.view(this.workflow(id));
  }

  async resume(i: ResumeWorkflowInput, caller: Caller): Promise<WorkflowView> {
    this.lead(caller, 'resume_workflow');
    const w = this.workflow(i.workflow_id);
    if (w.status === 'succeeded') throw new InvalidStateError(`Workflow ${w.id} is finished (succeeded); there is nothing to resume. Start a new workflow for more work.`);
    if ((w.status === 'running' || w.status === 'waiting_approval') && !i.force) {
      throw new InvalidStateError(`Workflow ${w.id} is still ${w.status} (phase ${w.phase}, cycle ${w.cycle}). Pass force: true to restart it from a phase anyway.`);
    }
    const phase = i.phase ?? (w.phase as Phase);
    const cycle = i.cycle ?? (phase === 'assess' ? 0 : Math.max(1, w.cycle));
    if (phase !== 'assess' && cycle < 1) throw new InvalidInputError('cycle must be 1 or more for review and implement phases (cycle 0 is assess).');
    if (phase !== 'assess' && !this.notes.store.get(wfKeys(w.id).plan)) {
      throw new InvalidInputError(`workflow ${w.id} has no plan note yet: resume from phase "assess".`);
    }
    if (cycle > w.max_cycles) throw new InvalidInputError(`cycle ${cycle} is past max_cycles (${w.max_cycles}).`);
    if (w.current_job) {
      const j = this.ctx.store.get(w.current_job);
      if (j && !isSettled(j.status)) await this.jobs.cancel({ job_id: j.id, cascade: true, reason: 'workflow resumed' } as CancelInput, { role: 'lead' });
    }
    await this.idle(w.id);
    if (w.approval_request) this.requests.cancel(w.approval_request, 'the workflow was resumed');
    await this.serial(w.id, async () => {
      const cur = this.workflow(w.id);
      if (!(await this.verifyWorktree(cur, phase, cycle))) return;
      const st = this.state(cur);
      st.phaseFailures = 0;
      st.zeroProgress = 0;
      st.repairs = {};
      st.models = { implementer: 0, reviewer: 0 };
      this.store.update(w.id, { status: 'running', blocked_json: null, ended_at: null, approval_request: null, state_json: JSON.stringify(st) }, this.ctx.clock.now());
      this.spawnPhase(this.workflow(w.id), phase, cycle);
    });
    return this.view(this.workflow(w.id));
  }

  /** At hub start: a running workflow whose phase job is no longer alive gets that phase again. */
  reconcile(): string[] {
    const touched: string[] = [];
    for (const w of this.store.byStatus('running')) {
      const j = w.current_job ? this.ctx.store.get(w.current_job) : undefined;
      if (j && !isSettled(j.status)) continue; // queued: the scheduler runs it
      touched.push(w.id);
      void this.serial(w.id, async () => {
        const cur = this.workflow(w.id);
        const phase = cur.phase as Phase;
        if (phase !== 'assess' && !this.notes.store.get(wfKeys(w.id).plan)) {
          await this.blockNow(w.id, 'missing_artifact', 'after a hub restart the plan note is missing', cur.current_job);
          return;
        }
        if (j && j.status === 'succeeded') {
          await this.onPhaseEnded(w.id, j.id); // it ended while the hub was down: take its result
          return;
        }
        if (await this.verifyWorktree(cur, phase, cur.cycle)) this.spawnPhase(cur, phase, cur.cycle);
      });
    }
    return touched;
  }

  // ---- the engine ----------------------------------------------------------------------

  private state(w: WorkflowRow): WfState {
    return { ...freshCounters(), ...(JSON.parse(w.state_json) as Partial<WfState>) };
  }

  private role(w: WorkflowRow, phase: Phase): RoleSpec {
    const spec = JSON.parse(phase === 'review' ? w.reviewer_json : w.implementer_json) as RoleSpec;
    const switched = this.state(w).providers?.[roleKey(phase)];
    // On the fallback provider the role's model (another provider's slug) does not apply.
    return switched && switched !== spec.provider ? { provider: switched, model: switched === 'codex' ? this.ctx.config.codexModel : undefined } : spec;
  }

  /** The other provider, when the workflow has one configured (its other role uses it) and its binary is found. */
  private fallbackProvider(w: WorkflowRow, phase: Phase, current: 'claude' | 'codex'): 'claude' | 'codex' | undefined {
    const other = current === 'claude' ? 'codex' : 'claude';
    const otherRole = JSON.parse(phase === 'review' ? w.implementer_json : w.reviewer_json) as RoleSpec;
    return otherRole.provider === other && this.ctx.launchers[other]?.resolveBin() ? other : undefined;
  }

  /** The model rotation of a role: its own model, then OVERSEER_FALLBACK_MODELS. */
  private models(w: WorkflowRow, phase: Phase): (string | undefined)[] {
    const own = this.role(w, phase).model;
    return [own, ...this.ctx.config.fallbackModels.filter((m) => m !== own)];
  }

  private spawnPhase(w: WorkflowRow, phase: Phase, cycle: number, repair?: string): string {
    const st = this.state(w);
    const role = this.role(w, phase);
    const models = this.models(w, phase);
    const model = models[Math.min(st.models?.[roleKey(phase)] ?? 0, models.length - 1)];
    const workDir = w.worktree_path ?? w.cwd;
    const prompt = this.phasePrompt(w, phase, cycle, workDir, repair);
    const limits = w.phase_limits_json ? (JSON.parse(w.phase_limits_json) as { max_turns?: number; budget_usd?: number; timeout_s?: number }) : {};
    if (phase === 'implement') st.doneBefore = progress(this.plan(w.id) ?? '').done;
    const r = this.jobs.create({
      parent_id: null, depth: 1, title: `${w.id} cycle ${cycle} ${phase}${repair ? ' (repair)' : ''}`, prompt, provider: role.provider, model: model ?? null,
      cwd: workDir, work_dir: workDir, repo_root: w.repo_root, worktree: 0, branch: w.branch, base_commit: null, priority: 0,
      max_turns: limits.max_turns ?? null, budget_usd: limits.budget_usd ?? null, timeout_s: limits.timeout_s ?? null,
      context_json: null, template: w.template, checks_json: '[]', retry: 'none', labels_json: JSON.stringify(['workflow', `workflow:${w.id}`]),
      depends_on_json: '[]', workflow_id: w.id, phase, cycle,
      json_schema: JSON.stringify(phase === 'assess' ? ASSESS_SCHEMA : phase === 'review' ? REVIEW_SCHEMA : IMPLEMENT_SCHEMA),
    }, `workflow ${w.id}`);
    this.store.update(w.id, { phase, cycle, current_job: r.job_id, state_json: JSON.stringify(st) }, this.ctx.clock.now());
    return r.job_id;
  }

  private plan(id: string): string | undefined {
    return this.notes.store.get(wfKeys(id).plan)?.value;
  }

  /** Plan, contract and the most recent worklogs, newest last, within CONTEXT_CAP characters. */
  context(id: string): string {
    const k = wfKeys(id);
    const plan = this.plan(id);
    const contract = this.notes.store.get(k.contract)?.value;
    const logs = this.notes.store.select([], k.worklogPrefix)
      .sort((a, b) => a.updated_at - b.updated_at || cycleOf(a.key) - cycleOf(b.key) || (a.key.endsWith('review') ? -1 : 1))
      .slice(-4)
      .map((n) => `### ${n.key.slice(k.worklogPrefix.length)}\n${n.value}`);
    const head = [plan ? `## Plan\n${plan}` : '', contract ? `## Contract\n${contract}` : ''].filter(Boolean).join('\n\n');
    let body = logs.length ? `\n\n## Recent worklogs\n${logs.join('\n\n')}` : '';
    while (head.length + body.length > CONTEXT_CAP && logs.length > 1) {
      logs.shift();
      body = `\n\n## Recent worklogs (older ones omitted)\n${logs.join('\n\n')}`;
    }
    const all = head + body;
    return all.length > CONTEXT_CAP ? `${all.slice(0, CONTEXT_CAP - 60)}\n… (context cut at ${CONTEXT_CAP} characters)` : all;
  }

  private phasePrompt(w: WorkflowRow, phase: Phase, cycle: number, workDir: string, repair?: string): string {
    const p = this.ctx.prompts;
    const guidelines = w.template && this.templates ? (() => { try { return `## Guidelines\n${this.templates!.resolve(w.template!).guidelines}\n`; } catch { return ''; } })() : '';
    const base = { workflow_id: w.id, task: w.task, work_dir: workDir, branch: w.branch ?? '(none: no worktree)', cycle, guidelines };
    if (phase === 'assess') return p.render('workflow-assess', { ...base, repair: repair ? p.render('workflow-repair', { problem: repair }) : '' });
    const context = this.context(w.id);
    if (phase === 'review') {
      const st = this.state(w);
      const checks = (st as WfState & { lastChecks?: string }).lastChecks;
      const focus = cycle === 1
        ? 'This is cycle 1: validate the plan and the contract below before any code is written. Are the milestones complete, ordered, small enough to review one at a time, and does the contract say how to verify the result?'
        : `Review the latest commits on the branch (\`git log --oneline ${w.base_commit ?? ''}..HEAD\`, \`git diff HEAD~1\`) against the contract and the plan.${checks ? `\n\nResults of the workflow's checks, run by the hub just now:\n${checks}` : ''}`;
      return p.render('workflow-review', { ...base, focus, context });
    }
    const m = topUnchecked(this.plan(w.id) ?? '');
    return p.render('workflow-implement', { ...base, milestone: m ? `- [ ] ${m.text}` : '(every milestone is checked: verify the work and report completed: false)', context });
  }

  /** The workflow's worktree must exist and be on its branch; a missing one is re-attached. */
  private async verifyWorktree(w: WorkflowRow, phase: Phase, cycle: number): Promise<boolean> {
    if (!w.worktree_path || !w.repo_root || !w.branch) return true;
    if (!(await branchExists(w.repo_root, w.branch))) {
      await this.blockNow(w.id, 'branch_missing', `the workflow's branch ${w.branch} no longer exists in ${w.repo_root}`, null, phase, cycle);
      return false;
    }
    try {
      if (!existsSync(w.worktree_path)) await attachWorktree({ repoRoot: w.repo_root, path: w.worktree_path, branch: w.branch, baseCommit: w.base_commit ?? '' });
      const head = (await git(w.worktree_path).raw(['rev-parse', '--abbrev-ref', 'HEAD'])).trim();
      if (head !== w.branch) {
        await this.blockNow(w.id, 'branch_missing', `the worktree ${w.worktree_path} is on ${head}, not on the workflow's branch ${w.branch}`, null, phase, cycle);
        return false;
      }
    } catch (err) {
      await this.blockNow(w.id, 'worktree_missing', `the worktree ${w.worktree_path} could not be restored: ${errorMessage(err)}`, null, phase, cycle);
      return false;
    }
    return true;
  }

  private async onPhaseEnded(wfId: string, jobId: string): Promise<void> {
    const w = this.store.get(wfId);
    if (!w || w.status !== 'running' || w.current_job !== jobId) return;
    const job = this.ctx.store.get(jobId)!;
    if (job.status === 'interrupted') return; // hub stopping or pause_agent stop: resume_workflow / restart picks it up
    const phase = job.phase as Phase;
    const cycle = job.cycle ?? w.cycle;
    const st = this.state(w);
    const structured = job.structured_json ? (JSON.parse(job.structured_json) as Record<string, unknown>) : undefined;
    let next: Next;
    const models = { implementer: 0, reviewer: 0, ...st.models };
    if (job.status !== 'succeeded') {
      st.modelIndex = models[roleKey(phase)];
      next = afterFailure(phase, cycle, job.failure_class ?? 'crashed', job.error ?? '', st, this.models(w, phase).length);
      models[roleKey(phase)] = st.modelIndex;
      st.models = models;
      // Repeated transient failures of one provider: the phase moves to the other provider.
      const current = this.role(w, phase).provider;
      const other = this.fallbackProvider(w, phase, current);
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
          this.notes.writeAs(wfKeys(w.id).plan, String(structured!.plan), `workflow:${w.id}`);
          this.notes.writeAs(wfKeys(w.id).contract, String(structured!.contract), `workflow:${w.id}`);
        }
      } else if (phase === 'review') {
        const notes = typeof structured?.notes === 'string' ? structured.notes : '(the reviewer returned no notes)';
        const verdict = structured?.verdict === 'changes_requested' ? 'changes_requested' : 'approve';
        this.notes.writeAs(wfKeys(w.id).worklog(cycle, 'review'), `verdict: ${verdict}\n\n${notes}`, `workflow:${w.id}`);
        if (Array.isArray(structured?.reopen) && structured.reopen.length) {
          const r = reopen(this.plan(w.id) ?? '', structured.reopen.map(String));
          if (r.reopened.length) this.notes.writeAs(wfKeys(w.id).plan, r.plan, `workflow:${w.id}`);
        }
        next = afterReview({ ...structured, verdict }, cycle, st, { approvePlan: !!w.approve_plan, planApproved: !!w.plan_approved });
      } else {
        next = await this.afterImplementPhase(w, job.id, cycle, structured, st);
      }
    }
    this.store.update(w.id, { state_json: JSON.stringify(st) }, this.ctx.clock.now());
    await this.apply(this.workflow(w.id), next, phase, cycle, jobId);
  }

  private async afterImplementPhase(w: WorkflowRow, jobId: string, cycle: number, s: Record<string, unknown> | undefined, st: WfState): Promise<Next> {
    const workDir = w.worktree_path ?? w.cwd;
    const milestone = typeof s?.milestone === 'string' ? s.milestone : '';
    // "a commit": whatever the implementer left uncommitted is committed for it.
    const committed = await commitAll(workDir, `overseer workflow ${w.id}: cycle ${cycle} ${milestone || 'implement'}`.slice(0, 200));
    let plan = this.plan(w.id) ?? '';
    let checked: string | null = null;
    if (s?.completed === true) {
      const r = checkOff(plan, milestone);
      plan = r.plan;
      checked = r.checked;
      if (checked) this.notes.writeAs(wfKeys(w.id).plan, plan, `workflow:${w.id}`);
    }
    const summary = typeof s?.summary === 'string' ? s.summary : '(no summary)';
    this.notes.writeAs(wfKeys(w.id).worklog(cycle, 'implement'),
      `milestone: ${milestone || '(none named)'}\ncompleted: ${s?.completed === true}${checked ? ` (checked off: ${checked})` : ''}\n${committed ? `hub committed leftovers: ${committed}\n` : ''}job: ${jobId}\n\n${summary}`, `workflow:${w.id}`);
    const { done, total } = progress(plan);
    return afterImplement(done > (st.doneBefore ?? 0), total > 0 && done === total, cycle, w.max_cycles, st);
  }

  private async apply(w: WorkflowRow, next: Next, phase: Phase, cycle: number, jobId: string): Promise<void> {
    switch (next.kind) {
      case 'spawn': {
        if (next.phase === 'review' && next.cycle >= 2) await this.runWorkflowChecks(w);
        if (await this.verifyWorktree(this.workflow(w.id), next.phase, next.cycle)) this.spawnPhase(this.workflow(w.id), next.phase, next.cycle, next.repair);
        return;
      }
      case 'approval': {
        const reqId = this.requests.openDetached({
          jobId, kind: 'approval', summary: `Approve the plan of workflow ${w.id} ("${w.title}") before implementation starts`,
          plan: { rationale: this.plan(w.id) ?? '', resources: this.notes.store.get(wfKeys(w.id).contract)?.value ?? '' },
        });
        this.store.update(w.id, { status: 'waiting_approval', approval_request: reqId, phase: 'review', cycle }, this.ctx.clock.now());
        return;
      }
      case 'block':
        await this.blockNow(w.id, next.code, next.message, jobId, phase, cycle);
        return;
      case 'done':
        await this.finish(w);
    }
  }

  private async onApproval(id: string): Promise<void> {
    const w = this.store.get(id);
    if (!w || w.status !== 'waiting_approval' || !w.approval_request) return;
    const r = this.requests.store.get(w.approval_request);
    if (!r || r.status === 'pending') return;
    if (r.status === 'answered' && r.decision === 'approved') {
      this.store.update(id, { status: 'running', plan_approved: 1, approval_request: null }, this.ctx.clock.now());
      const cur = this.workflow(id);
      if (await this.verifyWorktree(cur, 'implement', cur.cycle)) this.spawnPhase(cur, 'implement', Math.max(1, cur.cycle));
      return;
    }
    this.store.update(id, { status: 'running', approval_request: null }, this.ctx.clock.now());
    await this.blockNow(id, 'plan_rejected', `the lead did not approve the plan (${r.status}${r.comment ? `: ${r.comment}` : ''})`, r.job_id, 'review', w.cycle);
  }

  private async runWorkflowChecks(w: WorkflowRow): Promise<void> {
    const checks = JSON.parse(w.checks_json) as string[];
    if (!checks.length) return;
    const results = await runChecks(checks, { workDir: w.worktree_path ?? w.cwd, baseCommit: w.base_commit ?? undefined, sawErrorResult: false, env: this.ctx.childEnv, timeoutMs: 10 * 60_000 });
    const text = results.map((r) => `- ${r.check}: ${r.ok ? 'passed' : `FAILED — ${r.detail}`}`).join('\n');
    const st = { ...this.state(w), lastChecks: text };
    this.store.update(w.id, { state_json: JSON.stringify(st) }, this.ctx.clock.now());
  }

  private async blockNow(id: string, code: BlockedReason['code'], message: string, jobId: string | null, phase?: Phase, cycle?: number): Promise<void> {
    const w = this.store.get(id);
    if (!w || w.status === 'cancelled' || w.status === 'succeeded') return;
    const reason: BlockedReason = { code, message, phase: phase ?? (w.phase as Phase), cycle: cycle ?? w.cycle, job_id: jobId };
    this.store.update(id, { status: 'blocked', blocked_json: JSON.stringify(reason) }, this.ctx.clock.now());
    this.ctx.log.warn({ workflow: id, reason }, 'workflow blocked');
  }

  /** Every milestone is checked: commit, push, PR, close the worktree (the branch stays). */
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
    const now = this.ctx.clock.now();
    this.store.update(w.id, { status: 'succeeded', pr_url: pr, git_note: note, ended_at: now }, now);
  }

  // ---- views -------------------------------------------------------------------------

  private view(w: WorkflowRow): WorkflowView {
    const plan = this.plan(w.id) ?? null;
    const { done, total } = progress(plan ?? '');
    return {
      workflow_id: w.id, title: w.title, status: w.status as WorkflowStatus, cycle: w.cycle, phase: w.phase,
      milestones_done: done, milestones_total: total,
      blocked_reason: w.blocked_json ? (JSON.parse(w.blocked_json) as BlockedReason) : null,
      jobs: this.store.jobsOf(w.id).map((j) => ({ job_id: j.id, phase: j.phase, cycle: j.cycle, status: j.status, failure_class: j.failure_class, provider: j.provider, model: j.model })),
      branch: w.branch, worktree: w.worktree_path, pr_url: w.pr_url, git_note: w.git_note,
      approval_request_id: w.approval_request, max_cycles: w.max_cycles,
      created_at: isoTime(w.created_at), ended_at: w.ended_at ? isoTime(w.ended_at) : null,
      plan: plan && plan.length > 8000 ? `${plan.slice(0, 8000)}… (read the note ${wfKeys(w.id).plan} for all of it)` : plan,
    };
  }
}

export interface WorkflowView {
  workflow_id: string;
  title: string;
  status: WorkflowStatus;
  cycle: number;
  phase: string;
  milestones_done: number;
  milestones_total: number;
  blocked_reason: BlockedReason | null;
  jobs: { job_id: string; phase: string | null; cycle: number | null; status: string; failure_class: string | null; provider: string; model: string | null }[];
  branch: string | null;
  worktree: string | null;
  pr_url: string | null;
  git_note: string | null;
  approval_request_id: string | null;
  max_cycles: number;
  created_at: string;
  ended_at: string | null;
  plan: string | null;
}

const cycleOf = (key: string): number => Number(/cycle-(\d+)-/.exec(key)?.[1] ?? 0);

/** `git add -A && git commit` when there is anything to commit; returns the short sha or ''. */
async function commitAll(dir: string, message: string): Promise<string> {
  try {
    if (!(await gitQuick(dir, ['status', '--porcelain'])).trim()) return '';
    await gitQuick(dir, ['add', '-A']);
    await gitQuick(dir, ['-c', 'user.name=Overseer', '-c', 'user.email=overseer@localhost', 'commit', '--no-verify', '-q', '-m', message]);
    return (await gitQuick(dir, ['rev-parse', '--short', 'HEAD'])).trim();
  } catch {
    return '';
  }
}

