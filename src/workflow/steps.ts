// The implement/review workflow's calls on the script engine (issue 28, "one engine"): the
// bundled script src/scripts/bundled/implement-review.js sequences the phases, and these answer its
// privileged calls — `wf.phase` spawns a phase (worktree verified, checks run before a later
// review) and waits for its job, `wf.next` applies the job's result through the engine and says
// what comes next, `wf.approval` waits for the lead's approval of the plan. Each is journaled in the
// run like an agent() call (a phase's job is its call's job), so a new hub continues the run by
// itself: finished calls are answered from the journal, a running phase is waited for again.
import type { HubContext } from '../services/context.js';
import type { WorkflowRows } from './rows.js';
import { getJob } from '../store/sql/jobs.js';
import { beginCall, callsOf, carryCall, endCall } from '../store/sql/scripts.js';
import type { Q } from '../store/sql/tx.js';
import type { BlockedReason, Phase } from '../domain/workflow.js';
import { isTerminal } from '../domain/job.js';
import { canonicalJson } from '../domain/scriptReplay.js';
import { bundledSource, type BundledCall, type BundledScript } from '../scripts/bundled.js';
import { ScriptCallError, type Json } from '../scripts/sandbox.js';
import type { Step, WorkflowEngine } from './engine.js';
import type { PhaseCall } from './phases.js';
import { readState } from './state.js';

export const IMPLEMENT_REVIEW = 'implement-review';

/** A phase the script asks for: `hub.call('wf.phase', workflowId, step)`. */
export interface PhaseStep { phase: Phase; cycle: number; repair?: string }

export const phaseTitle = (s: PhaseStep): string => `cycle ${s.cycle} ${s.phase}`;

export class WorkflowSteps {
  constructor(private readonly ctx: HubContext, private readonly store: WorkflowRows, private readonly engine: WorkflowEngine) {}

  /** The bundled script and its calls, for the script engine (src/scripts/bundled.ts). */
  script(): BundledScript {
    return {
      name: IMPLEMENT_REVIEW,
      source: bundledSource(`${IMPLEMENT_REVIEW}.js`),
      calls: { 'wf.phase': (c) => this.phase(c), 'wf.next': (c) => this.next(c), 'wf.approval': (c) => this.approval(c) },
    };
  }

  /** The `wf.phase` call of run `runId` that a phase job carries, journaled in the job's own
   * transaction (`within`: the call, carried by the job, lands with it or not at all). */
  carry(runId: string, workflowId: string, step: PhaseStep, runPhase: string | null): PhaseCall & { seq: () => number } {
    let seq = 0;
    const within = async (jobId: string, now: number, trx: Q): Promise<void> => {
      seq = await beginCall(trx, { run_id: runId, kind: 'wf.phase', args_json: canonicalJson([workflowId, step as unknown as Json]), label: phaseTitle(step), phase: runPhase, started_at: now, job_id: jobId });
    };
    return { runId, within, seq: () => seq };
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
        const w = await this.store.get(id);
        if (w?.status !== 'running' || !(await this.drives(c))) return;
        await this.engine.beforePhase(w, step.phase, step.cycle);
        if (!(await this.engine.verified((await this.store.get(id))!, step.phase, step.cycle))) return;
        const call = this.carry(c.runId, id, step, c.phase);
        const job = await this.engine.spawnOrBlock((await this.store.get(id))!, step, call);
        if (job) started = { seq: call.seq(), jobId: job };
      });
      if (!started) return this.answered(c, phaseTitle(step), await this.now(id));
      ({ seq, jobId } = started);
    }
    await this.jobEnded(jobId, c.signal);
    const out = { job_id: jobId };
    await endCall(this.q, c.runId, seq, { status: 'done', outcome: out, at: this.ctx.clock.now() });
    return out;
  }

  private async next(c: BundledCall): Promise<Json> {
    const [id, jobId] = c.args as [string, string];
    const seq = await this.begin(c, 'next step');
    let step: Step | undefined;
    await this.engine.serial(id, async () => { if (await this.drives(c)) step = await this.engine.afterPhase(id, jobId); });
    const next = step ?? await this.now(id);
    return this.end(c, seq, next);
  }

  /** The lead's answer is applied by the workflow service as it arrives (WorkflowService, bus
   * 'request'), so it takes effect even while a restarted hub's script is still replaying; this
   * waits until it was, and gives the script the step it led to. */
  private async approval(c: BundledCall): Promise<Json> {
    const [id, cycle] = c.args as [string, number];
    let reqId: string | undefined;
    await this.engine.serial(id, async () => { if (await this.drives(c)) reqId = await this.engine.openApproval(id, cycle); });
    const req = reqId;
    if (!req) return this.answered(c, 'the lead approves the plan', await this.afterApproval(id));
    const seq = await this.begin(c, 'the lead approves the plan');
    await carryCall(this.q, c.runId, seq, { request_id: req });
    const waiting = async (): Promise<boolean> => { const w = await this.store.get(id); return w?.status === 'waiting_approval' && w.approval_request === req; };
    // Answered while no hub ran: nobody applied it yet.
    if (!(await this.engine.approvalPending(req)) && (await waiting())) await this.engine.serial(id, async () => { await this.engine.approvalAnswered(id); });
    await this.until(c.signal, 'workflow', (e) => (e as { workflowId?: string }).workflowId === id, async () => !(await waiting()));
    await this.engine.idle(id);
    const after = await this.afterApproval(id);
    return this.end(c, seq, after);
  }

  /** The step after the lead's answer was applied: implement (approved), or where it stands. */
  private async afterApproval(id: string): Promise<Step> {
    const w = await this.store.get(id);
    if (w?.status === 'running' && w.plan_approved && !w.approval_request) return { kind: 'spawn', phase: 'implement', cycle: Math.max(1, w.cycle) };
    return this.now(id);
  }

  /** The call's run is the one that drives its workflow now (not an older run of it, replayed by resume_run). */
  private async drives(c: BundledCall): Promise<boolean> {
    const w = await this.store.get(String(c.args[0]));
    return !!w && readState(w).runId === c.runId;
  }

  /** Where the workflow is when a call could not go on: blocked (its reason) or stopped. */
  private async now(id: string): Promise<Step> {
    const w = await this.store.get(id);
    if (w?.status === 'blocked' && w.blocked_json) {
      const r = JSON.parse(w.blocked_json) as BlockedReason;
      return { kind: 'block', code: r.code, message: r.message };
    }
    return { kind: 'stop', status: w?.status ?? 'gone' };
  }

  /** Journals a call; one a stopped hub left running (same kind and arguments) is taken up again. */
  private async begin(c: BundledCall, label: string): Promise<number> {
    const open = (await callsOf(this.q, c.runId)).find((x) => x.status === 'running' && x.kind === c.kind && x.args_json === c.key);
    return open?.seq ?? beginCall(this.q, { run_id: c.runId, kind: c.kind, args_json: c.key, label, phase: c.phase, started_at: this.ctx.clock.now() });
  }

  private async end(c: BundledCall, seq: number, step: Step): Promise<Json> {
    await endCall(this.q, c.runId, seq, { status: 'done', outcome: step, at: this.ctx.clock.now() });
    return step as unknown as Json;
  }

  /** A call answered at once (journaled as done). */
  private async answered(c: BundledCall, label: string, step: Step): Promise<Json> {
    return this.end(c, await this.begin(c, label), step);
  }

  private get q(): Q {
    return this.ctx.sql.db;
  }

  /** Until the job has ended for good (an interrupted phase is continued in its session by the
   * script engine, src/scripts/runs.ts resumeAll, and waited for again). One that does not exist counts as ended. */
  private jobEnded(jobId: string, signal: AbortSignal): Promise<void> {
    return this.until(signal, 'job', (e) => (e as { jobId?: string }).jobId === jobId, async () => {
      const j = await getJob(this.q, jobId);
      return !j || isTerminal(j.status);
    });
  }

  /** Resolves once `done()` holds (checked now and at each `event` that is `mine`; one check at a
   * time, and an event during a check causes one more). */
  private until(signal: AbortSignal, event: 'job' | 'workflow', mine: (e: unknown) => boolean, done: () => Promise<boolean>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) { reject(new ScriptCallError('Cancelled', 'the run was cancelled')); return; }
      let over = false;
      let checking = false;
      let again = false;
      const stop = (): void => { over = true; off(); signal.removeEventListener('abort', onAbort); };
      const onAbort = (): void => { if (over) return; stop(); reject(new ScriptCallError('Cancelled', 'the run was cancelled')); };
      const check = (): void => {
        if (over) return;
        if (checking) { again = true; return; }
        checking = true;
        done().then((yes) => {
          checking = false;
          if (over) return;
          if (yes) { stop(); resolve(); return; }
          if (again) { again = false; check(); }
        }, (err: unknown) => { checking = false; if (!over) { stop(); reject(err as Error); } });
      };
      const off = this.ctx.bus.on(event, (e) => { if (mine(e)) check(); }, { remote: true, resync: check });
      signal.addEventListener('abort', onAbort, { once: true });
      check();
    });
  }
}
