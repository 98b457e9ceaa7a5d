// The workflow tools (docs/workflows.md): start, get, list, cancel and resume a workflow. A
// workflow owns a worktree and branch; it is driven by a run of the bundled script
// implement-review on the script engine (src/scripts, ./steps.ts), whose calls spawn the phases as
// ordinary jobs one at a time (phases.ts) and advance it through the engine (engine.ts); the ledger
// (ledger.ts) keeps the hub's record of check-offs. A hub restart continues the run like any other
// script run (ScriptRuns.resumeAll); the workflow has no restart logic of its own, except for a
// workflow from before it had a run (reconcile()).
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Caller, HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { NoteService } from '../services/notes.js';
import type { RequestService } from '../approvals/service.js';
import { WorkflowStore, type WorkflowRow } from '../store/workflows.js';
import { tx } from '../store/db.js';
import { freshCounters, type Phase } from '../domain/workflow.js';
import { isSettled } from '../domain/job.js';
import { BudgetExceededError, ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { placeRun, removeWorktree } from '../git/worktree.js';
import { gitOut } from '../git/exec.js';
import type { CancelInput } from '../contract/agents.js';
import { checkProject } from '../projects/service.js';
import type { ListWorkflowsInput, ResumeWorkflowInput, StartWorkflowInput } from '../contract/workflows.js';
import type { ScriptRuns } from '../scripts/runs.js';
import type { BundledScript } from '../scripts/bundled.js';
import { WorkflowEngine } from './engine.js';
import { MilestoneLedger } from './ledger.js';
import { PhaseSpawner } from './phases.js';
import { IMPLEMENT_REVIEW, phaseTitle, WorkflowSteps, type PhaseStep } from './steps.js';
import { planKeyOwner, readState, type Guidelines } from './state.js';
import { workflowView, type WorkflowView } from './view.js';

/** The workflow's parts the script engine needs before the service exists (its bundled script). */
export class WorkflowCore {
  readonly store: WorkflowStore;
  readonly ledger: MilestoneLedger;
  readonly engine: WorkflowEngine;
  readonly steps: WorkflowSteps;
  readonly script: BundledScript;

  /** `templates`: template defaults and guidelines (.overseer/templates, src/templates). */
  constructor(readonly ctx: HubContext, jobs: JobService, readonly notes: NoteService, readonly requests: RequestService, readonly templates: Guidelines) {
    this.store = new WorkflowStore(ctx.db, (w) => ctx.bus.emit('workflow', { workflowId: w.id, status: w.status, phase: w.phase, cycle: w.cycle }));
    this.ledger = new MilestoneLedger(ctx, notes, this.store);
    const phases = new PhaseSpawner(ctx, jobs, notes, this.store, this.ledger, templates);
    this.engine = new WorkflowEngine(ctx, notes, requests, this.store, this.ledger, phases);
    this.steps = new WorkflowSteps(ctx, this.store, this.engine);
    this.script = this.steps.script();
  }
}

export class WorkflowService {
  readonly store: WorkflowStore;
  private readonly ledger: MilestoneLedger;
  private readonly engine: WorkflowEngine;
  private readonly steps: WorkflowSteps;
  private readonly requests: RequestService;
  private readonly templates: Guidelines;

  constructor(private readonly ctx: HubContext, private readonly jobs: JobService, core: WorkflowCore, private readonly scripts: ScriptRuns) {
    ({ store: this.store, ledger: this.ledger, engine: this.engine, steps: this.steps, requests: this.requests, templates: this.templates } = core);
    // Whoever writes a plan note, the hub's record wins: the note is reconciled at once.
    ctx.bus.on('note', (e) => {
      const id = planKeyOwner(e.key);
      if (id && this.store.get(id)) void this.engine.serial(id, async () => this.engine.reconcilePlan(id));
    });
    // The lead's answer to a plan approval takes effect as it arrives; the script's wf.approval call waits for it (steps.ts).
    ctx.bus.on('request', (e) => {
      const w = this.store.byStatus('waiting_approval').find((x) => x.approval_request === e.requestId);
      if (!w) return;
      void this.engine.approvalPending(e.requestId).then((pending) => {
        if (!pending) void this.engine.serial(w.id, async () => { await this.engine.approvalAnswered(w.id); });
      }, (err: unknown) => ctx.log.warn({ err, workflow: w.id }, 'workflow: could not read its plan approval'));
    });
    // The workflow's run ended under it (the script failed, or cancel_run): the workflow does not stay running without a driver.
    ctx.bus.on('run', (e) => {
      const id = this.workflowOfRun(e.runId);
      if (id) void this.engine.serial(id, async () => this.runEnded(id, e.runId, e.status));
    });
  }

  /** Wait until queued work on a workflow is done (tests, shutdown). */
  idle(id: string): Promise<void> {
    return this.engine.idle(id);
  }

  /** Wait until no workflow has queued work (hub shutdown, before the database closes). */
  drain(): Promise<void> {
    return this.engine.drain();
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

  async start(i: StartWorkflowInput, caller: Caller): Promise<{ workflow_id: string; status: string; assess_job_id: string; branch: string | null }> {
    this.lead(caller, 'start_workflow');
    const tpl = i.template !== undefined ? this.resolveTemplate(i.template) : undefined;
    const cwd = i.cwd === undefined ? this.ctx.projectDir : isAbsolute(i.cwd) ? resolve(i.cwd) : resolve(this.ctx.projectDir, i.cwd);
    if (!existsSync(cwd)) throw new InvalidInputError(`cwd ${JSON.stringify(i.cwd)} does not exist (resolved to ${cwd}). Pass an existing directory.`);
    if (i.project !== undefined) checkProject(this.ctx.db, i.project);
    const implementer = { provider: 'claude' as const, ...tpl?.implementer, ...i.implementer };
    const reviewer = { provider: 'claude' as const, ...i.reviewer };
    for (const r of [implementer, reviewer]) {
      if (!this.ctx.launchers[r.provider]) throw new InvalidInputError(`provider ${JSON.stringify(r.provider)} is not available in this hub. Use "claude".`);
    }
    const id = `w-${randomBytes(4).toString('hex')}`;
    const title = i.title ?? (i.task.split('\n').find((l) => l.trim())?.trim().slice(0, 80) ?? 'workflow');
    const { repoRoot, worktreePath, branch, baseCommit } = await placeRun({ cwd, worktree: i.worktree, id, prefix: 'wf', title, worktreesDir: this.ctx.config.worktreesDir });
    try {
      const now = this.ctx.clock.now();
      tx(this.ctx.db, () => {
        this.store.insert({
          id, title, task: i.task, status: 'running', cycle: 0, phase: 'assess', cwd, repo_root: repoRoot, worktree_path: worktreePath, branch,
          base_commit: baseCommit, implementer_json: JSON.stringify(implementer), reviewer_json: JSON.stringify(reviewer), max_cycles: i.max_cycles,
          approve_plan: i.approve_plan ? 1 : 0, plan_approved: 0, checks_json: JSON.stringify(i.checks.length ? i.checks : tpl?.checks ?? []),
          template: i.template ?? null, phase_limits_json: i.phase_limits ? JSON.stringify(i.phase_limits) : null,
          state_json: JSON.stringify(freshCounters()), blocked_json: null, current_job: null, approval_request: null,
          pr_url: null, git_note: null, created_at: now, ended_at: null, plan_text: null, project: i.project ?? null,
        });
      });
      const jobId = this.launch(this.store.get(id)!, { phase: 'assess', cycle: 0 });
      return { workflow_id: id, status: 'running', assess_job_id: jobId!, branch };
    } catch (err) {
      // Nothing half-created: no orphan worktree or branch.
      if (worktreePath && repoRoot) {
        await removeWorktree(repoRoot, worktreePath).catch(() => undefined);
        await gitOut(['branch', '-D', branch!], { cwd: repoRoot }).catch(() => undefined);
      }
      this.ctx.db.prepare('DELETE FROM workflows WHERE id = ?').run(id);
      throw err;
    }
  }

  private resolveTemplate(name: string): ReturnType<Guidelines['resolve']> {
    return this.templates.resolve(name);
  }

  get(id: string): WorkflowView {
    return this.view(this.workflow(id));
  }

  list(i: ListWorkflowsInput): { workflows: Omit<WorkflowView, 'plan' | 'jobs'>[] } {
    return { workflows: this.store.list(i.status, i.limit).map((w) => { const { plan: _p, jobs: _j, ...rest } = this.view(w); return rest; }) };
  }

  private view(w: WorkflowRow): WorkflowView {
    return { ...workflowView(w, this.ledger, this.store), run_id: readState(w).runId ?? null };
  }

  /** Starts the workflow's script run with its first phase: the phase job, the run and the call the
   * job carries in one transaction (a budget the phase would exceed: BudgetExceededError, nothing written). */
  private launch(w: WorkflowRow, first: PhaseStep): string {
    let jobId = '';
    this.startRun(w, first, (runId) => {
      jobId = this.engine.spawn(this.store.get(w.id)!, first, this.steps.carry(this.scripts.journal, runId, w.id, first, phaseTitle(first)));
    });
    return jobId;
  }

  /** launch(), but a budget the phase would exceed blocks the workflow. */
  private launchOrBlock(w: WorkflowRow, first: PhaseStep): void {
    try {
      this.launch(w, first);
    } catch (err) {
      if (!(err instanceof BudgetExceededError)) throw err;
      this.engine.block(w.id, 'budget_exceeded', err.message, null, first.phase, first.cycle);
    }
  }

  private startRun(w: WorkflowRow, first: PhaseStep, carry: (runId: string) => void): void {
    this.scripts.startBundled(IMPLEMENT_REVIEW, { title: `workflow ${w.id}: ${w.title}`, args: { workflow_id: w.id, first: { ...first } } }, (runId) => {
      this.store.update(w.id, { state_json: JSON.stringify({ ...readState(this.workflow(w.id)), runId }) }, this.ctx.clock.now());
      carry(runId);
    });
  }

  /** The workflow a run of the bundled script drives, if it is one. */
  private workflowOfRun(runId: string): string | undefined {
    const r = this.ctx.db.prepare("SELECT rules_json FROM runs WHERE id = ? AND kind = 'script'").get(runId) as { rules_json: string } | undefined;
    const rules = r ? (JSON.parse(r.rules_json) as { bundled?: string; args?: { workflow_id?: string } }) : undefined;
    return rules?.bundled === IMPLEMENT_REVIEW ? rules.args?.workflow_id : undefined;
  }

  private async runEnded(id: string, runId: string, status: string): Promise<void> {
    const w = this.store.get(id);
    if (!w || readState(w).runId !== runId || (w.status !== 'running' && w.status !== 'waiting_approval')) return;
    if (status === 'cancelled') {
      await this.close(w, 'the workflow\'s run was cancelled');
      return;
    }
    const note = (this.ctx.db.prepare('SELECT note FROM runs WHERE id = ?').get(runId) as { note: string | null } | undefined)?.note;
    this.engine.block(id, 'phase_failed', `the workflow's script run ${runId} ended (${status}) while the workflow was ${w.status}: ${note ?? 'no reason given'}`, w.current_job);
  }

  /** Cancelled: its approval request closed, its worktree removed (the branch stays). */
  private async close(w: WorkflowRow, reason: string): Promise<void> {
    this.store.update(w.id, { status: 'cancelled', ended_at: this.ctx.clock.now() }, this.ctx.clock.now());
    if (w.approval_request) await this.requests.cancel(w.approval_request, reason);
    if (w.worktree_path && w.repo_root) await removeWorktree(w.repo_root, w.worktree_path).catch(() => undefined);
  }

  /** Stops the workflow's run (its running phase is cancelled with it); the run's end is not news to the workflow. */
  private async stopRun(w: WorkflowRow, reason: string): Promise<void> {
    const runId = readState(w).runId;
    if (runId) await this.scripts.cancel(runId, reason).catch(() => undefined);
    const j = w.current_job ? this.ctx.store.get(w.current_job) : undefined;
    if (j && !isSettled(j.status)) await this.jobs.cancel({ job_id: j.id, cascade: true, reason } as CancelInput, { role: 'lead' });
  }

  async cancel(id: string, caller: Caller): Promise<WorkflowView> {
    this.lead(caller, 'cancel_workflow');
    const w = this.workflow(id);
    if (w.status === 'succeeded' || w.status === 'cancelled') return this.view(w);
    this.store.update(id, { status: 'cancelled', ended_at: this.ctx.clock.now() }, this.ctx.clock.now());
    await this.stopRun(w, 'workflow cancelled');
    await this.idle(id);
    await this.close(w, 'the workflow was cancelled');
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
    if (phase !== 'assess' && !this.ledger.get(w.id)) {
      throw new InvalidInputError(`workflow ${w.id} has no plan yet: resume from phase "assess".`);
    }
    if (cycle > w.max_cycles) throw new InvalidInputError(`cycle ${cycle} is past max_cycles (${w.max_cycles}).`);
    // The old run is no longer the workflow's before it is cancelled: its end is not the workflow's.
    this.store.update(w.id, { state_json: JSON.stringify({ ...readState(w), runId: null }) }, this.ctx.clock.now());
    await this.stopRun(w, 'workflow resumed');
    await this.idle(w.id);
    if (w.approval_request) await this.requests.cancel(w.approval_request, 'the workflow was resumed');
    await this.engine.serial(w.id, async () => {
      this.engine.reconcilePlan(w.id);
      const st = readState(this.workflow(w.id));
      st.phaseFailures = 0;
      st.zeroProgress = 0;
      st.repairs = {};
      st.models = { implementer: 0, reviewer: 0 };
      this.store.update(w.id, { status: 'running', blocked_json: null, ended_at: null, approval_request: null, state_json: JSON.stringify(st) }, this.ctx.clock.now());
      if (await this.engine.verified(this.workflow(w.id), phase, cycle)) this.launchOrBlock(this.workflow(w.id), { phase, cycle });
    });
    return this.view(this.workflow(w.id));
  }

  /** At hub start, after the script runs continued (ScriptRuns.resumeAll): a running workflow
   * from before workflows had a run gets one, from its current phase — waiting for the phase job
   * when it is still alive or ended while no hub ran, else spawning the phase again. */
  reconcile(): string[] {
    const touched: string[] = [];
    for (const w of this.store.byStatus('running')) {
      if (readState(w).runId) continue; // its run continues on its own
      touched.push(w.id);
      void this.engine.serial(w.id, async () => {
        const cur = this.workflow(w.id);
        const phase = cur.phase as Phase;
        if (phase !== 'assess' && !this.ledger.get(w.id)) {
          this.engine.block(w.id, 'missing_artifact', 'after a hub restart the workflow has no plan: neither the hub\'s record nor the plan note', cur.current_job);
          return;
        }
        this.engine.reconcilePlan(w.id);
        const step: PhaseStep = { phase, cycle: cur.cycle };
        const j = cur.current_job ? this.ctx.store.get(cur.current_job) : undefined;
        if (j && j.status !== 'interrupted') {
          this.startRun(cur, step, (runId) => this.steps.carry(this.scripts.journal, runId, w.id, step, phaseTitle(step)).within(j.id, this.ctx.clock.now()));
          return;
        }
        if (await this.engine.verified(this.workflow(w.id), phase, cur.cycle)) this.launchOrBlock(this.workflow(w.id), step);
      });
    }
    return touched;
  }
}
