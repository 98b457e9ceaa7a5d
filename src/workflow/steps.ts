// The implement/review workflow's calls on the script engine (issue 28, "one engine"): the
// bundled script src/scripts/bundled/implement-review.js sequences the phases, and these answer its
// privileged calls — `wf.phase` spawns a phase (worktree verified, checks run before a later
// review) and waits for its job, `wf.next` applies the job's result through the engine and says
// what comes next, `wf.approval` waits for the lead's approval of the plan. Each is journaled in the
// run like an agent() call (a phase's job is its call's job), so a new hub continues the run by
// itself: finished calls are answered from the journal, a running phase is waited for again.
import type { HubContext } from '../services/context.js';
import type { WorkflowStore } from '../store/workflows.js';
import type { BlockedReason, Phase } from '../domain/workflow.js';
import { isTerminal } from '../domain/job.js';
import { canonicalJson } from '../domain/scriptReplay.js';
import { bundledSource, type BundledCall, type BundledScript } from '../scripts/bundled.js';
import { ScriptCallError, type Json } from '../scripts/sandbox.js';
import type { ScriptJournal } from '../scripts/journal.js';
import type { Step, WorkflowEngine } from './engine.js';
import type { PhaseCall } from './phases.js';
import { readState } from './state.js';

export const IMPLEMENT_REVIEW = 'implement-review';

/** A phase the script asks for: `hub.call('wf.phase', workflowId, step)`. */
export interface PhaseStep { phase: Phase; cycle: number; repair?: string }

export const phaseTitle = (s: PhaseStep): string => `cycle ${s.cycle} ${s.phase}`;

export class WorkflowSteps {
  constructor(private readonly ctx: HubContext, private readonly store: WorkflowStore, private readonly engine: WorkflowEngine) {}

  /** The bundled script and its calls, for the script engine (src/scripts/bundled.ts). */
  script(): BundledScript {
    return {
      name: IMPLEMENT_REVIEW,
      source: bundledSource(`${IMPLEMENT_REVIEW}.js`),
      calls: { 'wf.phase': (c) => this.phase(c), 'wf.next': (c) => this.next(c), 'wf.approval': (c) => this.approval(c) },
    };
  }

  /** The `wf.phase` call of run `runId` that a phase job carries, journaled in the job's transaction
   * (the script's first phase is spawned by start_workflow / resume_workflow this way, with its run). */
  carry(journal: ScriptJournal, runId: string, workflowId: string, step: PhaseStep, runPhase: string | null): PhaseCall & { seq: () => number } {
    let seq = 0;
    return {
      runId,
      within: (jobId, now) => {
        seq = journal.begin({ run_id: runId, kind: 'wf.phase', args_json: canonicalJson([workflowId, step as unknown as Json]), label: phaseTitle(step), phase: runPhase, started_at: now });
        journal.carriedBy(runId, seq, { job_id: jobId });
      },
      seq: () => seq,
    };
  }

  private async phase(c: BundledCall): Promise<Json> {
    const [id, step] = c.args as unknown as [string, PhaseStep];
    let seq: number;
    let jobId: string;
    if (c.answer.from === 'job' && c.answer.entry.jobId) {
      seq = c.answer.entry.seq;
      jobId = c.answer.entry.jobId;
    } else {
      let started: { seq: number; jobId: string } | undefined;
      await this.engine.serial(id, async () => {
        const w = this.store.get(id);
        if (w?.status !== 'running' || !this.drives(c)) return;
        await this.engine.beforePhase(w, step.phase, step.cycle);
        if (!(await this.engine.verified(this.store.get(id)!, step.phase, step.cycle))) return;
        const call = this.carry(c.journal, c.runId, id, step, c.phase);
        const job = this.engine.spawnOrBlock(this.store.get(id)!, step, call);
        if (job) started = { seq: call.seq(), jobId: job };
      });
      if (!started) return this.answered(c, phaseTitle(step), this.now(id));
      ({ seq, jobId } = started);
    }
    await this.jobEnded(jobId, c.signal);
    const out = { job_id: jobId };
    c.journal.end(c.runId, seq, { status: 'done', outcome: out, at: this.ctx.clock.now() });
    return out;
  }

  private async next(c: BundledCall): Promise<Json> {
    const [id, jobId] = c.args as [string, string];
    const seq = this.begin(c, 'next step');
    let step: Step | undefined;
    await this.engine.serial(id, async () => { if (this.drives(c)) step = await this.engine.afterPhase(id, jobId); });
    return this.end(c, seq, step ?? this.now(id));
  }

  /** The lead's answer is applied by the workflow service as it arrives (WorkflowService, bus
   * 'request'), so it takes effect even while a restarted hub's script is still replaying; this
   * waits until it was, and gives the script the step it led to. */
  private async approval(c: BundledCall): Promise<Json> {
    const [id, cycle] = c.args as [string, number];
    let reqId: string | undefined;
    await this.engine.serial(id, async () => { if (this.drives(c)) reqId = await this.engine.openApproval(id, cycle); });
    const req = reqId;
    if (!req) return this.answered(c, 'the lead approves the plan', this.afterApproval(id));
    const seq = this.begin(c, 'the lead approves the plan');
    c.journal.carriedBy(c.runId, seq, { request_id: req });
    const waiting = (): boolean => { const w = this.store.get(id); return w?.status === 'waiting_approval' && w.approval_request === req; };
    // Answered while no hub ran: nobody applied it yet.
    if (!(await this.engine.approvalPending(req)) && waiting()) await this.engine.serial(id, async () => { await this.engine.approvalAnswered(id); });
    await this.until(c.signal, 'workflow', (e) => (e as { workflowId?: string }).workflowId === id, () => !waiting());
    await this.engine.idle(id);
    return this.end(c, seq, this.afterApproval(id));
  }

  /** The step after the lead's answer was applied: implement (approved), or where it stands. */
  private afterApproval(id: string): Step {
    const w = this.store.get(id);
    if (w?.status === 'running' && w.plan_approved && !w.approval_request) return { kind: 'spawn', phase: 'implement', cycle: Math.max(1, w.cycle) };
    return this.now(id);
  }

  /** The call's run is the one that drives its workflow now (not an older run of it, replayed by resume_run). */
  private drives(c: BundledCall): boolean {
    const w = this.store.get(String(c.args[0]));
    return !!w && readState(w).runId === c.runId;
  }

  /** Where the workflow is when a call could not go on: blocked (its reason) or stopped. */
  private now(id: string): Step {
    const w = this.store.get(id);
    if (w?.status === 'blocked' && w.blocked_json) {
      const r = JSON.parse(w.blocked_json) as BlockedReason;
      return { kind: 'block', code: r.code, message: r.message };
    }
    return { kind: 'stop', status: w?.status ?? 'gone' };
  }

  /** Journals a call; one a stopped hub left running (same kind and arguments) is taken up again. */
  private begin(c: BundledCall, label: string): number {
    const open = c.journal.calls(c.runId).find((x) => x.status === 'running' && x.kind === c.kind && x.args_json === c.key);
    return open?.seq ?? c.journal.begin({ run_id: c.runId, kind: c.kind as never, args_json: c.key, label, phase: c.phase, started_at: this.ctx.clock.now() });
  }

  private end(c: BundledCall, seq: number, step: Step): Json {
    c.journal.end(c.runId, seq, { status: 'done', outcome: step, at: this.ctx.clock.now() });
    return step as unknown as Json;
  }

  /** A call answered at once (journaled as done). */
  private answered(c: BundledCall, label: string, step: Step): Json {
    return this.end(c, this.begin(c, label), step);
  }

  /** Until the job has ended for good (an interrupted phase is continued in its session by the
   * script engine, src/scripts/runs.ts resumeAll, and waited for again). */
  private jobEnded(jobId: string, signal: AbortSignal): Promise<void> {
    return this.until(signal, 'job', (e) => (e as { jobId?: string }).jobId === jobId, () => {
      const j = this.ctx.store.get(jobId);
      return !j || isTerminal(j.status);
    });
  }

  /** Resolves once `done()` holds (checked now and at each `event` that is `mine`). */
  private until(signal: AbortSignal, event: 'job' | 'workflow', mine: (e: unknown) => boolean, done: () => boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) { reject(new ScriptCallError('Cancelled', 'the run was cancelled')); return; }
      const finish = (): void => { off(); signal.removeEventListener('abort', onAbort); resolve(); };
      const onAbort = (): void => { off(); reject(new ScriptCallError('Cancelled', 'the run was cancelled')); };
      const off = this.ctx.bus.on(event, (e) => { if (mine(e) && done()) finish(); });
      signal.addEventListener('abort', onAbort, { once: true });
      if (done()) finish();
    });
  }
}
