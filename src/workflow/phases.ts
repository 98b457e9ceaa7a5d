// Spawning a workflow's phases: each is an ordinary job in the workflow's work tree with its
// phase's --json-schema, on the role's provider and the current model of its rotation, with a
// prompt that inlines the hub's plan, the contract and the most recent worklogs.
import type { HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { NoteService } from '../services/notes.js';
import type { WorkflowRow, WorkflowRows } from './rows.js';
import type { RoleSpec } from '../contract/workflows.js';
import { ASSESS_SCHEMA, IMPLEMENT_SCHEMA, REVIEW_SCHEMA, type Phase } from '../domain/workflow.js';
import type { MilestoneLedger } from './ledger.js';
import type { Q } from '../store/sql/tx.js';
import { readState, roleKey, wfKeys, type Guidelines, type WfState } from './state.js';

export const CONTEXT_CAP = 50_000;

/** The call of the workflow's script run that a phase carries: the job is labelled with the run
 * and `within` journals the call in the job's own transaction `trx` (for the run's first phase,
 * the run's row too: src/workflow/service.ts launch); `state`: more of the workflow's counters
 * set with the phase (its run). */
export interface PhaseCall { runId: string; within: (jobId: string, now: number, trx: Q) => Promise<void>; state?: Partial<WfState> }

/** Another start of the workflow's phase got there first (thrown inside the job's transaction to roll it back). */
class PhaseTaken extends Error {}

export class PhaseSpawner {
  constructor(
    private readonly ctx: HubContext, private readonly jobs: JobService, private readonly notes: NoteService,
    private readonly store: WorkflowRows, private readonly ledger: MilestoneLedger,
    /** Template defaults and guidelines (.overseer/templates, src/templates). */
    private readonly templates: Guidelines,
  ) {}

  role(w: WorkflowRow, phase: Phase): RoleSpec {
    const spec = JSON.parse(phase === 'review' ? w.reviewer_json : w.implementer_json) as RoleSpec;
    const switched = readState(w).providers?.[roleKey(phase)];
    // On the fallback provider the role's model (another provider's slug) does not apply.
    return switched && switched !== spec.provider ? { provider: switched, model: switched === 'codex' ? this.ctx.config.codexModel : undefined } : spec;
  }

  /** The other provider, when the workflow has one configured (its other role uses it) and its binary is found. */
  fallbackProvider(w: WorkflowRow, phase: Phase, current: 'claude' | 'codex'): 'claude' | 'codex' | undefined {
    const other = current === 'claude' ? 'codex' : 'claude';
    const otherRole = JSON.parse(phase === 'review' ? w.implementer_json : w.reviewer_json) as RoleSpec;
    return otherRole.provider === other && this.ctx.launchers[other]?.resolveBin() ? other : undefined;
  }

  /** The model rotation of a role: its own model, then OVERSEER_FALLBACK_MODELS. */
  models(w: WorkflowRow, phase: Phase): (string | undefined)[] {
    const own = this.role(w, phase).model;
    return [own, ...this.ctx.config.fallbackModels.filter((m) => m !== own)];
  }

  /** The phase's job, or undefined when another start of a phase of this workflow took it first
   * (current_job moved since `w` was read: compare-and-set in the job's transaction, which is
   * rolled back, so two starts at once make one job). */
  async spawn(w: WorkflowRow, phase: Phase, cycle: number, repair: string | undefined, call: PhaseCall): Promise<string | undefined> {
    const st = { ...readState(w), ...call.state };
    const role = this.role(w, phase);
    const models = this.models(w, phase);
    const model = models[Math.min(st.models?.[roleKey(phase)] ?? 0, models.length - 1)];
    const workDir = w.worktree_path ?? w.cwd;
    const prompt = await this.prompt(w, phase, cycle, workDir, repair);
    const limits = w.phase_limits_json ? (JSON.parse(w.phase_limits_json) as { max_turns?: number; budget_usd?: number; timeout_s?: number }) : {};
    if (phase === 'implement') st.doneBefore = (await this.ledger.progress(w.id)).done;
    let claimed: WorkflowRow | undefined;
    const r = await this.jobs.create({
      parent_id: null, depth: 1, title: `${w.id} cycle ${cycle} ${phase}${repair ? ' (repair)' : ''}`, prompt, provider: role.provider, model: model ?? null,
      cwd: workDir, work_dir: workDir, repo_root: w.repo_root, worktree: 0, branch: w.branch, base_commit: null, priority: 0,
      max_turns: limits.max_turns ?? null, budget_usd: limits.budget_usd ?? null, timeout_s: limits.timeout_s ?? null,
      context_json: null, template: w.template, checks_json: '[]', retry: 'none', labels_json: JSON.stringify(['workflow', `workflow:${w.id}`, `run:${call.runId}`]),
      depends_on_json: '[]', workflow_id: w.id, phase, cycle, project: w.project ?? null,
      json_schema: JSON.stringify(phase === 'assess' ? ASSESS_SCHEMA : phase === 'review' ? REVIEW_SCHEMA : IMPLEMENT_SCHEMA),
    }, `workflow ${w.id}`, {
      // The job, the call it carries and the workflow's current phase: one transaction.
      within: async (jobId, now, trx) => {
        await call.within(jobId, now, trx);
        claimed = await this.store.claimPhase(trx, w.id, w.current_job, { phase, cycle, current_job: jobId, state_json: JSON.stringify(st) }, now);
        if (!claimed) throw new PhaseTaken();
      },
    }).catch((err: unknown) => {
      if (err instanceof PhaseTaken) return undefined;
      throw err;
    });
    if (!r) {
      this.ctx.log.warn({ workflow: w.id, phase, cycle }, 'workflow phase started by another step meanwhile: this start made nothing');
      return undefined;
    }
    this.store.changed(claimed!);
    return r.job_id;
  }

  /** The hub's plan, contract and the most recent worklogs, newest last, within CONTEXT_CAP characters. */
  async context(id: string): Promise<string> {
    const k = wfKeys(id);
    const plan = await this.ledger.rendered(id);
    const contract = (await this.notes.get(k.contract))?.value;
    const logs = (await this.notes.select([], k.worklogPrefix))
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

  private async prompt(w: WorkflowRow, phase: Phase, cycle: number, workDir: string, repair?: string): Promise<string> {
    const p = this.ctx.prompts;
    const guidelines = w.template ? (() => { try { return `## Guidelines\n${this.templates.resolve(w.template!).guidelines}\n`; } catch { return ''; } })() : '';
    const base = { workflow_id: w.id, task: w.task, work_dir: workDir, branch: w.branch ?? '(none: no worktree)', cycle, guidelines };
    if (phase === 'assess') return p.render('workflow-assess', { ...base, repair: repair ? p.render('workflow-repair', { problem: repair }) : '' });
    const context = await this.context(w.id);
    if (phase === 'review') {
      const checks = readState(w).lastChecks;
      const focus = cycle === 1
        ? 'This is cycle 1: validate the plan and the contract below before any code is written. Are the milestones complete, ordered, small enough to review one at a time, and does the contract say how to verify the result?'
        : `Review the latest commits on the branch (\`git log --oneline ${w.base_commit ?? ''}..HEAD\`, \`git diff HEAD~1\`) against the contract and the plan.${checks ? `\n\nResults of the workflow's checks, run by the hub just now:\n${checks}` : ''}`;
      return p.render('workflow-review', { ...base, focus, context });
    }
    const m = await this.ledger.top(w.id);
    return p.render('workflow-implement', { ...base, plan_note: wfKeys(w.id).plan, milestone: m ? `- [ ] ${m.text}` : '(every milestone is checked: verify the work and report completed: false)', context });
  }
}

const cycleOf = (key: string): number => Number(/cycle-(\d+)-/.exec(key)?.[1] ?? 0);
