// The implement/review workflow as pure decisions: what to do after each phase ends — next
// phase, a repair, the lead's plan approval, blocked (with a structured reason), or done.
// Milestones and their check-offs are src/domain/milestones.ts. No I/O: the engine
// (src/workflow/) applies them.
import { parseMilestones } from './milestones.js';

export type Phase = 'assess' | 'review' | 'implement';
export type WorkflowStatus = 'running' | 'waiting_approval' | 'blocked' | 'succeeded' | 'cancelled';

export type BlockedCode =
  | 'no_milestones' | 'missing_artifact' | 'zero_progress' | 'max_cycles' | 'phase_failed'
  | 'rate_limited' | 'plan_rejected' | 'branch_missing' | 'worktree_missing' | 'hub_restart' | 'budget_exceeded';

export interface BlockedReason {
  code: BlockedCode;
  message: string;
  phase: Phase;
  cycle: number;
  job_id: string | null;
}

// ---- structured results of the phases (what --json-schema asks each phase for) ----

export const ASSESS_SCHEMA = {
  type: 'object',
  properties: {
    plan: { type: 'string', description: 'Markdown plan with one "- [ ] milestone" line per milestone, in order' },
    contract: { type: 'string', description: 'what "done" means: interfaces, behaviours, tests that must pass' },
  },
  required: ['plan', 'contract'],
} as const;

export const REVIEW_SCHEMA = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: ['approve', 'changes_requested'] },
    notes: { type: 'string', description: 'findings and what the next implement phase must do' },
    reopen: { type: 'array', items: { type: 'string' }, description: 'checked milestones that are not actually done' },
  },
  required: ['verdict', 'notes'],
} as const;

export const IMPLEMENT_SCHEMA = {
  type: 'object',
  properties: {
    milestone: { type: 'string', description: 'the milestone you worked on, exactly as written in the plan' },
    completed: { type: 'boolean', description: 'true only if the milestone is fully done and committed' },
    summary: { type: 'string', description: 'what you changed, and anything the reviewer should look at' },
  },
  required: ['milestone', 'completed', 'summary'],
} as const;

export interface AssessResult { plan?: unknown; contract?: unknown }
export interface ReviewResult { verdict?: unknown; notes?: unknown; reopen?: unknown }
export interface ImplementResult { milestone?: unknown; completed?: unknown; summary?: unknown }

export const MAX_REPAIRS = 2;
export const ZERO_PROGRESS_LIMIT = 2;
/** Retries of a phase after a transient failure: the third failure of one provider ends them
 * (the engine then falls back to the other provider when one is configured, else blocks). */
export const MAX_PHASE_RETRIES = 2;

export interface Counters {
  /** repairs so far, per `${phase}:${cycle}` */
  repairs: Record<string, number>;
  /** consecutive implement phases without a newly checked milestone */
  zeroProgress: number;
  /** transient failures of the current phase */
  phaseFailures: number;
  /** index into the role's model rotation */
  modelIndex: number;
}

export const freshCounters = (): Counters => ({ repairs: {}, zeroProgress: 0, phaseFailures: 0, modelIndex: 0 });

export type Next =
  | { kind: 'spawn'; phase: Phase; cycle: number; repair?: string }
  | { kind: 'approval' }
  | { kind: 'block'; code: BlockedCode; message: string }
  | { kind: 'done' };

/** What a valid assess result needs; the problem when it lacks it. */
export function assessProblem(r: AssessResult | undefined): { code: BlockedCode; message: string } | undefined {
  if (!r || typeof r.plan !== 'string' || !r.plan.trim()) return { code: 'missing_artifact', message: 'the assess phase returned no plan' };
  if (typeof r.contract !== 'string' || !r.contract.trim()) return { code: 'missing_artifact', message: 'the assess phase returned no contract' };
  if (parseMilestones(r.plan).length === 0) return { code: 'no_milestones', message: 'the plan has no "- [ ] …" milestone' };
  return undefined;
}

/** After an assess phase (cycle 0, or a re-assessment asked for by the cycle-1 review). */
export function afterAssess(r: AssessResult | undefined, cycle: number, c: Counters): Next {
  const problem = assessProblem(r);
  if (problem) {
    const key = `assess:${cycle}`;
    const used = c.repairs[key] ?? 0;
    if (used >= MAX_REPAIRS) return { kind: 'block', code: problem.code, message: `${problem.message}, still after ${MAX_REPAIRS} repair attempts` };
    c.repairs[key] = used + 1;
    return { kind: 'spawn', phase: 'assess', cycle, repair: problem.message };
  }
  return { kind: 'spawn', phase: 'review', cycle: Math.max(1, cycle) };
}

/** After a review phase. Cycle 1 validates the plan; a rejected plan is re-assessed (bounded). */
export function afterReview(r: ReviewResult | undefined, cycle: number, c: Counters, o: { approvePlan: boolean; planApproved: boolean }): Next {
  if (cycle === 1 && r?.verdict === 'changes_requested') {
    const key = 'assess:1';
    const used = c.repairs[key] ?? 0;
    if (used >= MAX_REPAIRS) return { kind: 'block', code: 'plan_rejected', message: `the reviewer rejected the plan ${used + 1} times: ${String(r.notes ?? '').slice(0, 500)}` };
    c.repairs[key] = used + 1;
    return { kind: 'spawn', phase: 'assess', cycle: 1, repair: `the reviewer asked for changes to the plan: ${String(r.notes ?? '')}` };
  }
  if (o.approvePlan && !o.planApproved) return { kind: 'approval' };
  return { kind: 'spawn', phase: 'implement', cycle };
}

/** After an implement phase: progress bookkeeping, then done, next cycle, or blocked. */
export function afterImplement(newlyChecked: boolean, allDone: boolean, cycle: number, maxCycles: number, c: Counters): Next {
  c.zeroProgress = newlyChecked ? 0 : c.zeroProgress + 1;
  if (allDone) return { kind: 'done' };
  if (c.zeroProgress >= ZERO_PROGRESS_LIMIT) return { kind: 'block', code: 'zero_progress', message: `${ZERO_PROGRESS_LIMIT} implement phases in a row checked off no milestone` };
  if (cycle + 1 > maxCycles) return { kind: 'block', code: 'max_cycles', message: `max_cycles (${maxCycles}) ran out with milestones left` };
  return { kind: 'spawn', phase: 'review', cycle: cycle + 1 };
}

export const TRANSIENT = new Set(['crashed', 'api_error', 'timeout', 'mcp_unavailable', 'rate_limited', 'interrupted']);

/** After a phase job failed: retry it (rotating the model on rate limits) or block. */
export function afterFailure(phase: Phase, cycle: number, failureClass: string, error: string, c: Counters, models: number): Next {
  if (!TRANSIENT.has(failureClass)) return { kind: 'block', code: 'phase_failed', message: `the ${phase} phase failed (${failureClass}): ${error.slice(0, 500)}` };
  c.phaseFailures++;
  if (failureClass === 'rate_limited') {
    c.modelIndex++;
    if (c.modelIndex >= models) return { kind: 'block', code: 'rate_limited', message: `every model in the rotation was rate limited (${models} tried)` };
  }
  if (c.phaseFailures > MAX_PHASE_RETRIES) return { kind: 'block', code: 'phase_failed', message: `the ${phase} phase failed ${c.phaseFailures} times (last: ${failureClass}: ${error.slice(0, 300)})` };
  return { kind: 'spawn', phase, cycle };
}
