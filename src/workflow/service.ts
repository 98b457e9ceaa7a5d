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
import { WorkflowRows, type WorkflowRow } from './rows.js';
import { getJob } from '../store/sql/jobs.js';
import { updateWorkflow } from '../store/sql/workflows.js';
import { transact } from '../store/sql/tx.js';
import { adopt, drives, takeOver } from '../store/sql/claims.js';
import { freshCounters, type Phase } from '../domain/workflow.js';
import { isSettled } from '../domain/job.js';
import { BudgetExceededError, ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { placeRun, removeWorktree } from '../git/worktree.js';
import { gitOut } from '../git/exec.js';
import type { CancelInput } from '../contract/agents.js';
import { assertProjectOpen } from '../projects/service.js';
import type { ListWorkflowsInput, ResumeWorkflowInput, StartWorkflowInput } from '../contract/workflows.js';
import type { ScriptRuns } from '../scripts/runs.js';
import type { BundledScript } from '../scripts/bundled.js';
import { WorkflowEngine } from './engine.js';
import { MilestoneLedger } from './ledger.js';
import { PhaseSpawner } from './phases.js';
import { IMPLEMENT_REVIEW, phaseTitle, WorkflowSteps, type PhaseStep } from './steps.js';
import { MAY_MOVE, planKeyOwner, readState, type Guidelines } from './state.js';
import { workflowView, type WorkflowView } from './view.js';

/** The workflow's parts the script engine needs before the service exists (its bundled script). */
export class WorkflowCore {
  readonly store: WorkflowRows;
  readonly ledger: MilestoneLedger;
  readonly engine: WorkflowEngine;
  readonly steps: WorkflowSteps;
  readonly script: BundledScript;

  /** `templates`: template defaults and guidelines (.overseer/templates, src/templates). */
  constructor(readonly ctx: HubContext, jobs: JobService, readonly notes: NoteService, readonly requests: RequestService, readonly templates: Guidelines) {
    this.store = new WorkflowRows(ctx);
    this.ledger = new MilestoneLedger(notes, this.store);
    const phases = new PhaseSpawner(ctx, jobs, notes, this.store, this.ledger, templates);
    this.engine = new WorkflowEngine(ctx, notes, requests, this.store, this.ledger, phases);
    this.steps = new WorkflowSteps(ctx, this.store, this.engine);
    this.script = this.steps.script();
  }
}

export class WorkflowService {
  readonly store: WorkflowRows;
  private readonly ledger: MilestoneLedger;
  private readonly engine: WorkflowEngine;
  private readonly steps: WorkflowSteps;
  private readonly requests: RequestService;
  private readonly templates: Guidelines;

  /** `hubId`: this hub; it drives the workflows whose script run it drives (docs/store-plan.md §3.4). */
  constructor(private readonly ctx: HubContext, private readonly jobs: JobService, core: WorkflowCore, private readonly scripts: ScriptRuns, private readonly hubId: string) {
    ({ store: this.store, ledger: this.ledger, engine: this.engine, steps: this.steps, requests: this.requests, templates: this.templates } = core);
    // Each listener hears every hub (remote) and acts only on a workflow this hub drives
    // (`mine`): the plan note may be written by an agent of another hub, the plan approval
    // answered by a lead on another hub, the run cancelled from another hub; the workflow's
    // serial chain and its script run live in its driver only.
    // Whoever writes a plan note, the hub's record wins: the note is reconciled at once.
    ctx.bus.on('note', (e) => {
      const id = planKeyOwner(e.key);
      if (id) {
        void this.mine(id).then((yes) => {
          if (yes) void this.engine.serial(id, async () => { if (await this.store.get(id)) await this.engine.reconcilePlan(id); });
        }, (err: unknown) => ctx.log.warn({ err, workflow: id }, 'workflow: could not read who drives it'));
      }
    }, { remote: true, resync: null });
    // The lead's answer to a plan approval takes effect as it arrives; the script's wf.approval call waits for it (steps.ts).
    ctx.bus.on('request', (e) => {
      void (async () => {
        const w = (await this.store.byStatus('waiting_approval')).find((x) => x.approval_request === e.requestId);
        if (w && (await this.mine(w.id)) && !(await this.engine.approvalPending(e.requestId))) void this.engine.serial(w.id, async () => { await this.engine.approvalAnswered(w.id); });
      })().catch((err: unknown) => ctx.log.warn({ err, request: e.requestId }, 'workflow: could not read its plan approval'));
    }, { remote: true, resync: null });
    // The workflow's run ended under it (the script failed, or cancel_run): the workflow does not stay running without a driver.
    ctx.bus.on('run', (e) => {
      void (async () => {
        const id = await this.workflowOfRun(e.runId);
        if (id && (await this.mine(id))) void this.engine.serial(id, async () => this.runEnded(id, e.runId, e.status));
      })().catch((err: unknown) => ctx.log.warn({ err, run: e.runId }, 'workflow: could not read the run that ended'));
    }, { remote: true, resync: null });
  }

  /** This hub drives the workflow. */
  private mine(id: string): Promise<boolean> {
    return drives(this.ctx.sql.db, 'workflows', id, this.hubId);
  }

  /**
   * A workflow follows its script run: one whose run this hub drives now (ScriptRuns adopted it,
   * at a start or when its hub died) is adopted, once, so the listeners above act on it here. Call
   * it after the script runs were taken up.
   */
  async adopt(): Promise<string[]> {
    const q = this.ctx.sql.db;
    const taken: string[] = [];
    for (const w of await this.store.byStatus('running', 'waiting_approval')) {
      const runId = readState(w).runId;
      if (!runId || (await this.mine(w.id)) || !(await drives(q, 'runs', runId, this.hubId))) continue;
      if (await adopt(q, 'workflows', w.id, this.hubId)) {
        this.ctx.log.info({ workflow: w.id, run: runId }, 'workflow adopted with its run');
        taken.push(w.id);
        // A plan approval answered after its script took up the wait and before this adoption was heard by nobody: applied now (once: a CAS move).
        const req = w.approval_request;
        if (w.status === 'waiting_approval' && req && !(await this.engine.approvalPending(req))) void this.engine.serial(w.id, async () => { await this.engine.approvalAnswered(w.id); });
      }
    }
    return taken;
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

  async workflow(id: string): Promise<WorkflowRow> {
    const w = await this.store.get(id);
    if (!w) {
      const near = await this.store.recentIds();
      throw new NotFoundError(`No workflow ${JSON.stringify(id)}.${near.length ? ` Recent workflows: ${near.join(', ')}.` : ' No workflows exist yet.'} Use list_workflows.`);
    }
    return w;
  }

  async start(i: StartWorkflowInput, caller: Caller): Promise<{ workflow_id: string; status: string; assess_job_id: string; branch: string | null }> {
    this.lead(caller, 'start_workflow');
    const tpl = i.template !== undefined ? this.resolveTemplate(i.template) : undefined;
    const cwd = i.cwd === undefined ? this.ctx.projectDir : isAbsolute(i.cwd) ? resolve(i.cwd) : resolve(this.ctx.projectDir, i.cwd);
    if (!existsSync(cwd)) throw new InvalidInputError(`cwd ${JSON.stringify(i.cwd)} does not exist (resolved to ${cwd}). Pass an existing directory.`);
    if (i.project !== undefined) await assertProjectOpen(this.ctx.sql.db, i.project);
    const implementer = { provider: 'claude' as const, ...tpl?.implementer, ...i.implementer };
    const reviewer = { provider: 'claude' as const, ...i.reviewer };
    for (const r of [implementer, reviewer]) {
      if (!this.ctx.launchers[r.provider]) throw new InvalidInputError(`provider ${JSON.stringify(r.provider)} is not available in this hub. Use "claude".`);
    }
    const id = `w-${randomBytes(4).toString('hex')}`;
    const title = i.title ?? (i.task.split('\n').find((l) => l.trim())?.trim().slice(0, 80) ?? 'workflow');
    const { repoRoot, worktreePath, branch, baseCommit } = await placeRun({ cwd, worktree: i.worktree, id, prefix: 'wf', title, worktreesDir: this.ctx.config.worktreesDir });
    let inserted = false;
    try {
      await this.store.insert({
        id, title, task: i.task, status: 'running', cycle: 0, phase: 'assess', cwd, repo_root: repoRoot, worktree_path: worktreePath, branch,
        base_commit: baseCommit, implementer_json: JSON.stringify(implementer), reviewer_json: JSON.stringify(reviewer), max_cycles: i.max_cycles,
        approve_plan: i.approve_plan ? 1 : 0, plan_approved: 0, checks_json: JSON.stringify(i.checks.length ? i.checks : tpl?.checks ?? []),
        template: i.template ?? null, phase_limits_json: i.phase_limits ? JSON.stringify(i.phase_limits) : null,
        state_json: JSON.stringify(freshCounters()), blocked_json: null, current_job: null, approval_request: null,
        pr_url: null, git_note: null, created_at: this.ctx.clock.now(), ended_at: null, plan_text: null, project: i.project ?? null, hub_id: this.hubId,
      });
      inserted = true;
      // On the workflow's chain, so the run's first calls that decide wait for the launch; its failure is this call's.
      let jobId: string | undefined;
      let failed: { err: unknown } | undefined;
      await this.engine.serial(id, async () => {
        try { jobId = await this.launch(await this.workflow(id), { phase: 'assess', cycle: 0 }); } catch (err) { failed = { err }; }
      });
      if (failed) throw failed.err;
      if (!jobId) throw new InvalidStateError(`workflow ${id}: its first phase was started by another step meanwhile`);
      return { workflow_id: id, status: 'running', assess_job_id: jobId, branch };
    } catch (err) {
      // Nothing half-created: no orphan worktree or branch.
      if (worktreePath && repoRoot) {
        await removeWorktree(repoRoot, worktreePath).catch(() => undefined);
        await gitOut(['branch', '-D', branch!], { cwd: repoRoot }).catch(() => undefined);
      }
      if (inserted) await this.store.delete(id);
      throw err;
    }
  }

  private resolveTemplate(name: string): ReturnType<Guidelines['resolve']> {
    return this.templates.resolve(name);
  }

  async get(id: string): Promise<WorkflowView> {
    return this.view(await this.workflow(id));
  }

  async list(i: ListWorkflowsInput): Promise<{ workflows: Omit<WorkflowView, 'plan' | 'jobs'>[] }> {
    const rows = await this.store.list(i.status, i.limit);
    const views = await Promise.all(rows.map((w) => this.view(w)));
    return { workflows: views.map(({ plan: _p, jobs: _j, ...rest }) => rest) };
  }

  /** The hub's milestone record of a workflow (the dashboard's detail). */
  milestones(id: string): ReturnType<WorkflowRows['milestones']> {
    return this.store.milestones(id);
  }

  private async view(w: WorkflowRow): Promise<WorkflowView> {
    return { ...(await workflowView(w, this.ledger, this.store)), run_id: readState(w).runId ?? null };
  }

  /**
   * Starts the workflow's script run with its first phase (call it on the workflow's serial chain):
   * the phase job's own transaction writes the run's row, its first call (carried by the job) and
   * moves the workflow to the job and the run (src/workflow/phases.ts), so either all of it lands
   * or nothing; the run starts once that has committed. A job that cannot be made (a budget the
   * phase would exceed: BudgetExceededError) leaves no run behind.
   */
  private async launch(w: WorkflowRow, first: PhaseStep): Promise<string | undefined> {
    const run = this.scripts.bundledRun(IMPLEMENT_REVIEW, { title: `workflow ${w.id}: ${w.title}`, args: { workflow_id: w.id, first: { ...first } } });
    const call = this.steps.carry(run.runId, w.id, first, phaseTitle(first));
    const jobId = await this.engine.spawn(w, first, {
      runId: run.runId,
      within: async (id, now, trx) => { await run.write(trx); await call.within(id, now, trx); },
      state: { runId: run.runId },
    });
    if (jobId) run.start();
    return jobId;
  }

  /** launch(), but a budget the phase would exceed blocks the workflow. */
  private async launchOrBlock(w: WorkflowRow, first: PhaseStep): Promise<void> {
    try {
      await this.launch(w, first);
    } catch (err) {
      if (!(err instanceof BudgetExceededError)) throw err;
      await this.engine.block(w.id, 'budget_exceeded', err.message, null, first.phase, first.cycle);
    }
  }

  /** The workflow a run of the bundled script drives, if it is one. */
  private async workflowOfRun(runId: string): Promise<string | undefined> {
    const r = await this.store.runOf(runId);
    const rules = r ? (JSON.parse(r.rules_json) as { bundled?: string; args?: { workflow_id?: string } }) : undefined;
    return rules?.bundled === IMPLEMENT_REVIEW ? rules.args?.workflow_id : undefined;
  }

  private async runEnded(id: string, runId: string, status: string): Promise<void> {
    const w = await this.store.get(id);
    if (!w || readState(w).runId !== runId || (w.status !== 'running' && w.status !== 'waiting_approval')) return;
    if (status === 'cancelled') {
      await this.close(w, 'the workflow\'s run was cancelled');
      return;
    }
    const note = (await this.store.runOf(runId))?.note;
    await this.engine.block(id, 'phase_failed', `the workflow's script run ${runId} ended (${status}) while the workflow was ${w.status}: ${note ?? 'no reason given'}`, w.current_job);
  }

  /** Cancelled: its approval request closed, its worktree removed (the branch stays). A workflow
   * that finished meanwhile is left as it is. */
  private async close(w: WorkflowRow, reason: string): Promise<void> {
    const now = (await this.store.move(w.id, MAY_MOVE.cancel, { status: 'cancelled', ended_at: this.ctx.clock.now() })) ?? (await this.store.get(w.id));
    if (now?.status !== 'cancelled') return;
    if (w.approval_request) await this.requests.cancel(w.approval_request, reason);
    if (w.worktree_path && w.repo_root) await removeWorktree(w.repo_root, w.worktree_path).catch(() => undefined);
  }

  /** Stops the workflow's run (its running phase is cancelled with it); the run's end is not news to the workflow. */
  private async stopRun(w: WorkflowRow, reason: string): Promise<void> {
    const runId = readState(w).runId;
    if (runId) await this.scripts.cancel(runId, reason).catch(() => undefined);
    const j = w.current_job ? await getJob(this.ctx.sql.db, w.current_job) : undefined;
    if (j && !isSettled(j.status)) await this.jobs.cancel({ job_id: j.id, cascade: true, reason } as CancelInput, { role: 'lead' });
  }

  async cancel(id: string, caller: Caller): Promise<WorkflowView> {
    this.lead(caller, 'cancel_workflow');
    const w = await this.workflow(id);
    if (w.status === 'succeeded' || w.status === 'cancelled') return this.view(w);
    // Only from a state it may be cancelled from: a workflow that finished meanwhile stays finished.
    if (!(await this.store.move(id, MAY_MOVE.cancel, { status: 'cancelled', ended_at: this.ctx.clock.now() }))) return this.view(await this.workflow(id));
    await this.stopRun(w, 'workflow cancelled');
    await this.idle(id);
    await this.close(w, 'the workflow was cancelled');
    return this.view(await this.workflow(id));
  }

  async resume(i: ResumeWorkflowInput, caller: Caller): Promise<WorkflowView> {
    this.lead(caller, 'resume_workflow');
    const w = await this.workflow(i.workflow_id);
    if (w.status === 'succeeded') throw new InvalidStateError(`Workflow ${w.id} is finished (succeeded); there is nothing to resume. Start a new workflow for more work.`);
    if ((w.status === 'running' || w.status === 'waiting_approval') && !i.force) {
      throw new InvalidStateError(`Workflow ${w.id} is still ${w.status} (phase ${w.phase}, cycle ${w.cycle}). Pass force: true to restart it from a phase anyway.`);
    }
    const phase = i.phase ?? (w.phase as Phase);
    const cycle = i.cycle ?? (phase === 'assess' ? 0 : Math.max(1, w.cycle));
    if (phase !== 'assess' && cycle < 1) throw new InvalidInputError('cycle must be 1 or more for review and implement phases (cycle 0 is assess).');
    if (phase !== 'assess' && !(await this.ledger.get(w.id))) {
      throw new InvalidInputError(`workflow ${w.id} has no plan yet: resume from phase "assess".`);
    }
    if (cycle > w.max_cycles) throw new InvalidInputError(`cycle ${cycle} is past max_cycles (${w.max_cycles}).`);
    // The old run is no longer the workflow's before it is cancelled: its end is not the workflow's.
    await this.store.update(w.id, { state_json: JSON.stringify({ ...readState(w), runId: null }) });
    // Its new run is this hub's, so this hub drives it from now on (a forced resume takes it from a live hub too).
    await takeOver(this.ctx.sql.db, 'workflows', w.id, this.hubId);
    await this.stopRun(w, 'workflow resumed');
    await this.idle(w.id);
    if (w.approval_request) await this.requests.cancel(w.approval_request, 'the workflow was resumed');
    await this.engine.serial(w.id, async () => {
      await this.engine.reconcilePlan(w.id);
      const st = readState(await this.workflow(w.id));
      st.phaseFailures = 0;
      st.zeroProgress = 0;
      st.repairs = {};
      st.models = { implementer: 0, reviewer: 0 };
      const moved = await this.store.move(w.id, MAY_MOVE.resume, { status: 'running', blocked_json: null, ended_at: null, approval_request: null, state_json: JSON.stringify(st) });
      if (moved && (await this.engine.verified(moved, phase, cycle))) await this.launchOrBlock(await this.workflow(w.id), { phase, cycle });
    });
    return this.view(await this.workflow(w.id));
  }

  /** At hub start, after the script runs continued (ScriptRuns.resumeAll): a running workflow
   * from before workflows had a run gets one, from its current phase — waiting for the phase job
   * when it is still alive or ended while no hub ran, else spawning the phase again. */
  async reconcile(): Promise<string[]> {
    const touched: string[] = [];
    for (const w of await this.store.byStatus('running')) {
      if (readState(w).runId) continue; // its run continues on its own
      if (!(await adopt(this.ctx.sql.db, 'workflows', w.id, this.hubId))) continue; // another live hub's
      touched.push(w.id);
      void this.engine.serial(w.id, async () => {
        const cur = await this.workflow(w.id);
        const phase = cur.phase as Phase;
        if (phase !== 'assess' && !(await this.ledger.get(w.id))) {
          await this.engine.block(w.id, 'missing_artifact', 'after a hub restart the workflow has no plan: neither the hub\'s record nor the plan note', cur.current_job);
          return;
        }
        await this.engine.reconcilePlan(w.id);
        const step: PhaseStep = { phase, cycle: cur.cycle };
        const j = cur.current_job ? await getJob(this.ctx.sql.db, cur.current_job) : undefined;
        if (j && j.status !== 'interrupted') {
          // The run waits for the job there is: its row, its first call carried by that job and the workflow naming it land together.
          const run = this.scripts.bundledRun(IMPLEMENT_REVIEW, { title: `workflow ${w.id}: ${cur.title}`, args: { workflow_id: w.id, first: { ...step } } });
          const call = this.steps.carry(run.runId, w.id, step, phaseTitle(step));
          await transact(this.ctx.sql.db, async (trx) => {
            await run.write(trx);
            await call.within(j.id, this.ctx.clock.now(), trx);
            await updateWorkflow(trx, w.id, { state_json: JSON.stringify({ ...readState(cur), runId: run.runId }) }, this.ctx.clock.now());
          });
          run.start();
          return;
        }
        if (await this.engine.verified(await this.workflow(w.id), phase, cur.cycle)) await this.launchOrBlock(await this.workflow(w.id), step);
      });
    }
    return touched;
  }
}
