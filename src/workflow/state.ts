// What the parts of the workflow engine share: note keys, the counters kept in state_json,
// and the template hook.
import type { Counters, Phase } from '../domain/workflow.js';
import { freshCounters } from '../domain/workflow.js';
import type { WorkflowRow } from '../store/sql/workflows.js';
import type { RoleSpec } from '../contract/workflows.js';

export interface WfState extends Counters {
  /** milestones done (in the hub's record) when the current implement phase started */
  doneBefore?: number;
  /** each role's position in its model rotation (Counters.modelIndex is the current phase's) */
  models?: { implementer: number; reviewer: number };
  /** a role moved to the other provider after repeated transient failures */
  providers?: { implementer?: 'claude' | 'codex'; reviewer?: 'claude' | 'codex' };
  /** results of the workflow's checks, for the next review prompt */
  lastChecks?: string;
  /** edits of the plan note made outside the hub since the last worklog, for the next worklog */
  planEdits?: string[];
  /** the run of the bundled script implement-review that drives the workflow (src/workflow/steps.ts) */
  runId?: string | null;
}

export const readState = (w: WorkflowRow): WfState => ({ ...freshCounters(), ...(JSON.parse(w.state_json) as Partial<WfState>) });

export const roleKey = (phase: Phase): 'implementer' | 'reviewer' => (phase === 'review' ? 'reviewer' : 'implementer');

/** Keys of a workflow's notes. */
export const wfKeys = (id: string) => ({
  plan: `workflow/${id}/plan`,
  contract: `workflow/${id}/contract`,
  worklogPrefix: `workflow/${id}/worklog/`,
  worklog: (cycle: number, phase: Phase) => `workflow/${id}/worklog/cycle-${cycle}-${phase}`,
});

/** The workflow whose plan note a key is, if it is one. */
export const planKeyOwner = (key: string): string | undefined => /^workflow\/([^/]+)\/plan$/.exec(key)?.[1];

export interface Guidelines {
  /** Template defaults and guidelines for a workflow (issue #4 templates); undefined = none. */
  resolve(name: string): { guidelines: string; implementer?: Partial<RoleSpec>; checks?: string[] };
}

/** The states a workflow's status may move from, by the move (a conditional UPDATE: src/store/sql/workflows.ts moveWorkflow).
 * Whichever change comes second finds the status moved and changes nothing: a cancelled workflow is not blocked
 * or finished by a phase that ended meanwhile, a finished one is not cancelled. */
export const MAY_MOVE = {
  /** block(): a workflow that runs or waits (or is blocked already: the newer reason) */
  block: ['running', 'waiting_approval', 'blocked'],
  /** cancel_workflow, or its run cancelled */
  cancel: ['running', 'waiting_approval', 'blocked'],
  /** every milestone done */
  finish: ['running'],
  /** the plan goes to the lead for approval */
  ask: ['running'],
  /** the lead answered the approval */
  answered: ['waiting_approval'],
  /** resume_workflow (running and waiting only with force, checked before) */
  resume: ['running', 'waiting_approval', 'blocked', 'cancelled'],
} as const;
