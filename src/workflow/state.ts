// What the parts of the workflow engine share: note keys, the counters kept in state_json,
// and the template hook.
import type { Counters, Phase } from '../domain/workflow.js';
import { freshCounters } from '../domain/workflow.js';
import type { WorkflowRow } from '../store/workflows.js';
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
