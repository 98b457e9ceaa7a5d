// The agent operations behind the agent tools: spawn, wait, inspect, cancel, pause, resume,
// message, status reports. Validates what zod cannot (file system, ids, subtree rights),
// writes each change in one transaction before returning, and leaves launching to Runner.
import { settingsDirOf } from '../config.js';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Caller, HubContext } from './context.js';
import type { JobRow, NewJob } from '../store/jobs.js';
import { transact, type Q } from '../store/sql/tx.js';
import { addEvent, attemptsOf, attemptsOfJobs, descendants, getJob, inSubtree, insertJob, jobsByStatus, jobsOf, lastMergeOf, listJobs, nearbyIds, statusOf, titlesOf, updateJob, updateJobIf, updateWithEvent } from '../store/sql/jobs.js';
import type { BudgetSpec, Reservation } from '../money/budgets.js';
import type { DepState } from '../domain/scheduler.js';
import type { Runner } from './runner.js';
import type { LiveChildren } from './children.js';
import { messageView, senderOf, type MessageService, type MessageView } from './messages.js';
import { FIELD_CAP, hubUsage, summarize, type AgentSummary } from './summary.js';
import { hubHosts } from '../store/sql/workers.js';
import type { UsageRow } from '../money/usageStore.js';
import { usageOfJob } from '../store/sql/usage.js';
import { latestEvents } from '../store/sql/events.js';
import type { Budgets } from '../money/budgets.js';
import type { ModelChooser } from '../models/choice.js';
import type { ConfineStatus } from '../confine/launcher.js';
import type { WarningRow } from '../store/warnings.js';
import { markWarningsSeen, openWarnings, openWarningsOfJobs, unseenWarnings } from '../store/sql/warnings.js';
import { RunAttention } from './runAttention.js';
import { byPair } from '../store/overlaps.js';
import { markOverlapsSeen, openOverlaps, unseenOverlaps } from '../store/sql/overlaps.js';
import { setSetupBase, setSetupSkip, setupReport } from '../store/sql/setup.js';
import { markMessagesRead, unreadFrom } from '../store/sql/messages.js';
import { setupView } from '../git/bootstrap.js';
import { isoTime } from '../clock.js';
import { limitLine } from '../limits/view.js';
import type { Provider } from '../limits/account.js';
import { waitUntil } from './wait.js';
import { COMMAND_DONE, COMMAND_REFUSED, type CommandPoster } from './commands.js';
import { finishCommand, getCommand, hubOf } from '../store/sql/commands.js';
import type { JobCommandKind } from '../store/sql/schema.js';
import { isSettled, isTerminal, slugify, titleFromPrompt, type JobStatus } from '../domain/job.js';
import { ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { awaitingPublish } from '../domain/placement.js';
import { branchExists, repoRootOf } from '../git/worktree.js';
import { branchNameProblem } from '../git/refname.js';
import { isInside } from '../domain/paths.js';
import { realTarget } from './realPaths.js';
import { applyTemplate, getTemplate, withGuidelines } from '../templates/templates.js';
import { roleColumns, roleForSpawn } from '../roles/index.js';
import { readTailLines } from '../launch/readTail.js';
import { renderTranscript, tailJson } from '../launch/claude/transcript.js';
import { toEventView, type EventView } from '../events/view.js';
import { assertProjectOpen, projectForSpawn } from '../projects/service.js';
import { ensureProject } from '../store/sql/projects.js';
import { broadcast, type BroadcastInput, type BroadcastResult } from '../projects/broadcast.js';
import type { CancelInput, ListAgentsInput, PauseInput, ReadOutputInput, ResumeInput, SpawnInput, WaitInput } from '../contract/agents.js';
import { getSendBack, sendBackView } from '../store/sql/sendBacks.js';
import type { AgentLauncher } from '../launch/types.js';
import type { AttemptQueueService } from './attemptQueue.js';

/** Characters of summaries one list_agents page may carry (the result cap is 20,000). */
const LIST_BUDGET = 17_000;

export interface WaitProgress {
  signal?: AbortSignal;
  onProgress?: (elapsedMs: number, done: number, total: number) => void;
}

export interface WaitResultShape {
  done: AgentSummary[];
  pending: string[];
  attention: (Record<string, unknown> | ({ kind: 'message' } & MessageView))[];
  timed_out: boolean;
}

/** Requests' part of `attention` and of get_agent (src/approvals/service.ts provides it). */
export interface RequestAttention {
  /** Items for pending requests of `pending` jobs (and news on `all`); `wake` if one needs the caller now; `ack` once returned. */
  attention(pending: string[], all: string[]): Promise<{ items: Record<string, unknown>[]; wake: boolean; ack: () => Promise<void> }>;
  ofJob(jobId: string): Promise<Record<string, unknown>[]>;
}

/** What JobService.create takes: a validated job (spawn_agent, a workflow phase, a schedule's next run). */
export type JobSpec = Omit<NewJob, 'status' | 'session_id' | 'token_hash' | 'id'> & { id?: string; skipBootstrap?: boolean; base?: string };

/** A spawn's schedule, checked (src/runs/scheduleBook.ts): its first run waits until `firstAt`. */
export interface PlannedSchedule {
  /** When the first run starts (epoch ms). */
  firstAt: number;
  /** Record the schedule and tag its first run, inside the transaction that creates the job. */
  record(trx: Q, jobId: string, spec: JobSpec, by: string, now: number): Promise<{ schedule_id: string }>;
}

/** The schedule side of spawn_agent (src/runs/scheduleBook.ts, or its "switched off" null object). */
export interface SpawnSchedules {
  /** Check spawn_agent's at / every_s / cron fields (nothing is written); undefined when it has none. */
  plan(input: SpawnInput, caller: Caller): PlannedSchedule | undefined;
  /** get_agent / list_agents extras: when the job runs, and its series. */
  view(j: JobRow): Promise<{ run_at?: string; schedule?: Record<string, unknown> } | undefined>;
}

/** Whether a person has taken a job over (overseer attach, src/takeover): no headless resume meanwhile. */
export interface TakenOver {
  isAttached(jobId: string): boolean;
}

/** Nobody takes jobs over: the takeover capability is switched off (or the engine runs alone, in its unit tests). */
export const NO_TAKEOVER: TakenOver = { isAttached: () => false };

/**
 * How the permission policy answers a Bash call of `jobId` (src/services/permissions.ts): an
 * agent's `command:` checks run as shell commands in its tree when its child ends, so they are
 * decided like its own Bash calls, never run on the hub's authority alone.
 */
export type BashPolicy = (jobId: string, command: string) => Promise<{ action: 'allow' | 'ask' | 'deny'; reason: string }>;

/** What spawn needs to know of the children's OS confinement (src/confine/setup.ts). */
export interface SpawnConfinement {
  /** Why no agent may start (confinement is required and unavailable); undefined when they may. */
  refusal(): string | undefined;
  /** What a spawn's result warns of (its agent runs unconfined); undefined for nothing. */
  warning(): string | undefined;
}

/** Spawn's view of the confinement status found at hub start. */
export function spawnConfinement(c: ConfineStatus): SpawnConfinement {
  return {
    refusal: () => (!c.active && c.mode === 'require'
      ? `Agents must run confined (OVERSEER_CONFINE=require) and they cannot here: ${c.reason}. Fix that, or set OVERSEER_CONFINE=auto to run them held by the lock hook alone.`
      : undefined),
    warning: () => (!c.active
      ? `This agent runs without OS confinement: ${c.reason}. Only the lock hook and Claude Code's permission rules hold it; a program it runs can read the hub's state and write files others hold (docs/security.md).`
      : undefined),
  };
}

/** An injected process launcher (tests, the demo) starts no OS process: nothing to confine, nothing to warn of. */
export const NOT_CONFINABLE: SpawnConfinement = { refusal: () => undefined, warning: () => undefined };

/** What JobService is built with besides the context (src/compose.ts builds it). */
export interface JobDeps {
  runner: Runner;
  children: LiveChildren;
  messages: MessageService;
  /** The house, label and subtree budgets (src/money/budgets.ts): spawns and resumes reserve under them. */
  budgets: Budgets;
  /** Model auto-choice (src/models): the configured default model and checks of "auto". */
  models: Pick<ModelChooser, 'requested' | 'candidates'>;
  schedules: SpawnSchedules;
  requests: RequestAttention;
  bashPolicy: BashPolicy;
  takeover: TakenOver;
  confinement: SpawnConfinement;
  /** Leaves commands for the hub that runs a job (src/services/commands.ts): steering another hub's job. */
  commands: CommandPoster;
  /** Placement and the worker queue (src/services/attemptQueue.ts): where a job runs, its queue job sent and withdrawn. */
  queue: AttemptQueueService;
}

export class JobService {
  readonly runner: Runner;
  private readonly children: LiveChildren;
  private readonly messages: MessageService;
  private readonly budgets: Budgets;
  private readonly models: JobDeps['models'];
  private readonly schedules: SpawnSchedules;
  private readonly requests: RequestAttention;
  private readonly bashPolicy: BashPolicy;
  private readonly takeover: TakenOver;
  private readonly confinement: SpawnConfinement;
  private readonly commands: CommandPoster;
  private readonly queue: AttemptQueueService;
  private readonly runNews: RunAttention;

  constructor(private readonly ctx: HubContext, d: JobDeps) {
    this.runner = d.runner;
    this.children = d.children;
    this.messages = d.messages;
    this.budgets = d.budgets;
    this.models = d.models;
    this.schedules = d.schedules;
    this.requests = d.requests;
    this.bashPolicy = d.bashPolicy;
    this.takeover = d.takeover;
    this.confinement = d.confinement;
    this.commands = d.commands;
    this.queue = d.queue;
    this.runNews = new RunAttention(ctx.sql.db);
  }

  /** A summary with its job's open health warnings and last activity (live jobs). */
  /** `pre`: the job's open warnings and reservation view when they were read already (a page of list_agents reads each in one statement). */
  private async withHealth(sum: AgentSummary, j: JobRow, pre?: { warnings: readonly WarningRow[]; reservation: Record<string, unknown> | undefined }): Promise<AgentSummary> {
    const q = this.ctx.sql.db;
    const open = pre ? pre.warnings : await openWarnings(q, j.id);
    const live = !isTerminal(j.status as JobStatus);
    const reservation = pre ? pre.reservation : await this.budgets.view(q, j);
    const setup = j.worktree === 1 ? setupView(await setupReport(q, j.id)) : undefined;
    const pairs = j.worktree === 1 ? byPair(await openOverlaps(q, j.id)) : [];
    const others = pairs.map((o) => (o.jobs[0] === j.id ? o.jobs[1] : o.jobs[0]));
    const titles = await titlesOf(q, others);
    const overlaps = pairs.map((o, i) => ({ with: others[i]!, title: titles.get(others[i]!) ?? others[i]!, files: o.files, locks_conflict: o.locks_conflict }));
    const schedule = await this.schedules.view(j);
    const merged = j.worktree === 1 ? await lastMergeOf(q, j.id) : undefined;
    const sendBack = j.worktree === 1 ? sendBackView(await getSendBack(q, j.id)) : undefined;
    return {
      ...sum,
      ...schedule,
      ...(merged ? { merged: { into: merged.target, mode: merged.mode, commit: merged.commit_sha, at: isoTime(merged.merged_at) } } : {}),
      ...(sendBack ? { send_back: sendBack } : {}),
      ...(setup ? { setup } : {}),
      ...(overlaps.length ? { overlaps } : {}),
      ...(reservation ? { reservation } : {}),
      ...(open.length ? { warnings: open.map((w) => ({ kind: w.kind, detail: w.detail, raised_at: isoTime(w.raised_at) })) } : {}),
      ...(live && j.last_event_at ? { last_event_at: isoTime(j.last_event_at), last_activity: j.last_activity } : {}),
    };
  }

  // ---- lookups and rights ------------------------------------------------------------

  /** The job, or a NotFoundError naming ids that do exist. */
  async job(id: string): Promise<JobRow> {
    const j = await getJob(this.ctx.sql.db, id);
    if (!j) {
      const near = await nearbyIds(this.ctx.sql.db, id);
      throw new NotFoundError(`No agent job ${JSON.stringify(id)}.${near.length ? ` Known job ids: ${near.join(', ')}.` : ' No jobs exist yet.'} Use list_agents to see them.`);
    }
    return j;
  }

  /** The job, if the caller may act on it: the lead on anything, an agent on its own subtree. */
  async visibleJob(id: string, caller: Caller, opts: { self?: boolean } = {}): Promise<JobRow> {
    const j = await this.job(id);
    if (caller.role === 'agent') {
      const own = j.id === caller.jobId;
      if ((own && !opts.self) || (!own && !(await inSubtree(this.ctx.sql.db, caller.jobId, j.id)))) {
        throw new ForbiddenError(`Job ${id} is outside your subtree: an agent can only act on the agents it spawned (and their descendants).`);
      }
    }
    return j;
  }

  /** get_agent's summary of a job, read through the layer (an unknown id: NotFoundError naming known ones). */
  async summary(id: string): Promise<AgentSummary> {
    const q = this.ctx.sql.db;
    const j = (await getJob(q, id)) ?? await this.job(id);
    return this.withHealth({ ...summarize(j, await attemptsOf(q, id), FIELD_CAP, await hubHosts(q, [j.hub_id])), ...hubUsage(j, await usageOfJob(q, id) as UsageRow[]) }, j);
  }

  // ---- spawn ---------------------------------------------------------------------------

  /** `extra`: what only the hub's own engines set — a JSON Schema the answer must match, and more
   * writes in the job's creating transaction (a script's journal: src/scripts/runs.ts). */
  async spawn(raw: SpawnInput, caller: Caller, extra: { jsonSchema?: string; within?: (jobId: string, now: number, trx: Q) => Promise<void> | void } = {}): Promise<{ job_id: string; status: JobStatus; title: string; reserved_usd?: number; warning?: string }> {
    const { ctx } = this;
    const refusal = this.confinement.refusal();
    if (refusal) throw new InvalidStateError(refusal);
    // at / every_s / cron: checked first, nothing is written until the job is created with its schedule.
    const plan = this.schedules.plan(raw, caller);
    // A template fills in what the call left out; its body becomes the prompt's ## Guidelines.
    let guidelines = '';
    let merged: SpawnInput = raw;
    if (raw.template !== undefined) {
      const t = applyTemplate(getTemplate(join(settingsDirOf(ctx.config), 'templates'), raw.template), raw);
      guidelines = t.guidelines;
      merged = t as SpawnInput;
    }
    const parent = caller.role === 'agent' ? await this.job(caller.jobId) : undefined;
    // The role (src/roles): known, valid, no wider than the parent's; its model and provider fill in what is left.
    const role = roleForSpawn({ settingsDir: settingsDirOf(ctx.config), prompts: ctx.prompts }, raw.role, parent);
    const input = { ...merged, provider: merged.provider ?? role.provider ?? 'claude', model: merged.model ?? role.model, worktree: merged.worktree ?? false, checks: merged.checks ?? [], retry: merged.retry ?? 'none' };
    const depth = parent ? parent.depth + 1 : 1;
    if (depth > ctx.config.maxDepth) {
      throw new ForbiddenError(`Agents may nest ${ctx.config.maxDepth} level(s) deep (OVERSEER_MAX_DEPTH); ${caller.role === 'agent' ? caller.jobId : 'this job'} is at depth ${depth - 1}. Do the work yourself or report back to your parent.`);
    }
    const project = projectForSpawn(parent, input.project);
    if (project !== null) await assertProjectOpen(ctx.sql.db, project);
    const launcher = ctx.launchers[input.provider];
    if (!launcher) {
      throw new InvalidInputError(`provider ${JSON.stringify(input.provider)} is not available in this hub. Use provider "claude".`);
    }
    // The spawn's model, or the configured default; "auto" is chosen before the first attempt (src/models).
    const model = this.models.requested(input.provider, input.model);
    this.checkPricing(input, launcher, model);
    const { base, cwd } = this.spawnCwd(parent, input.cwd);
    if (parent) await this.confineSubAgent(parent, base, cwd, input.cwd, input.checks);
    const id = await this.freshJobId();
    const title = input.title ?? titleFromPrompt(raw.prompt);
    const { repoRoot, branch } = await this.spawnBranch(input, cwd, id, title);
    const deps = [...new Set(input.depends_on)];
    const stackOn = input.base === undefined ? undefined : await this.stackOn(input.base, caller, repoRoot, deps);
    for (const d of deps) await this.job(d);
    const spec: JobSpec = {
      id, parent_id: parent?.id ?? null, depth, title, prompt: withGuidelines(input.prompt, guidelines), provider: input.provider, model: model ?? null,
      cwd, work_dir: input.worktree ? null : cwd, repo_root: repoRoot, worktree: input.worktree ? 1 : 0, branch, base_commit: null,
      priority: input.priority, max_turns: input.max_turns ?? null, budget_usd: input.budget_usd ?? null, timeout_s: input.timeout_s ?? null,
      context_json: input.context ? JSON.stringify(input.context) : null, template: input.template ?? null,
      checks_json: JSON.stringify(input.checks), retry: input.retry, labels_json: JSON.stringify(input.labels),
      depends_on_json: JSON.stringify(deps), workflow_id: null, phase: null, cycle: null, json_schema: extra.jsonSchema ?? null, project,
      place_host: input.host ?? null,
      ...roleColumns(role),
      ...(input.bootstrap === false ? { skipBootstrap: true } : {}),
      ...(stackOn ? { base: stackOn } : {}),
    };
    const by = caller.role === 'agent' ? caller.jobId : 'lead';
    const created = plan ? await this.createScheduled(plan, spec, by, extra.within) : await this.create(spec, by, { within: extra.within });
    const warning = this.confinement.warning();
    return warning ? { ...created, warning } : created;
  }

  /** A spawn with budget_usd needs a price for every model it may run on ("auto": each candidate). */
  private checkPricing(input: { provider: 'claude' | 'codex'; budget_usd?: number }, launcher: AgentLauncher, model: string | null | undefined): void {
    if (input.budget_usd === undefined || !launcher.canPrice) return;
    for (const m of (model === 'auto' ? this.models.candidates(input.provider) : undefined) ?? [model ?? null]) {
      if (!launcher.canPrice(m ?? undefined)) {
        throw new InvalidInputError(`budget_usd cannot be enforced for ${input.provider} model ${JSON.stringify(m ?? 'default')}${model === 'auto' ? ' (one model "auto" may choose)' : ''}: it has no known price, so its spending cannot be counted. Name a priced model, add a price for it (OVERSEER_CODEX_PRICES, e.g. {"${m ?? 'my-model'}":{"input":1.25,"output":10}}), or omit budget_usd and limit it with max_turns / timeout_s.`);
      }
    }
  }

  /** The spawn's working directory: `given` resolved against the parent's (or the project), existing. */
  private spawnCwd(parent: JobRow | undefined, given: string | undefined): { base: string; cwd: string } {
    const base = parent ? (parent.work_dir ?? parent.cwd) : this.ctx.projectDir;
    const cwd = given === undefined ? base : isAbsolute(given) ? resolve(given) : resolve(base, given);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
      throw new InvalidInputError(`cwd ${JSON.stringify(given ?? cwd)} does not exist or is not a directory (resolved to ${cwd}). Pass an existing directory.`);
    }
    return { base, cwd };
  }

  /** worktree: true gets a valid, new branch of cwd's repository; the worktree-only options need it. */
  private async spawnBranch(input: { worktree: boolean; branch?: string; bootstrap?: boolean; base?: string }, cwd: string, id: string, title: string): Promise<{ repoRoot: string | null; branch: string | null }> {
    if (!input.worktree) {
      if (input.branch !== undefined) throw new InvalidInputError('branch is only used with worktree: true. Set worktree: true or omit branch.');
      if (input.bootstrap !== undefined) throw new InvalidInputError('bootstrap is only used with worktree: true (it prepares a new worktree). Set worktree: true or omit bootstrap.');
      if (input.base !== undefined) throw new InvalidInputError('base is only used with worktree: true (it says what the new branch starts from). Set worktree: true or omit base.');
      return { repoRoot: null, branch: null };
    }
    const problem = input.branch === undefined ? undefined : await branchNameProblem(input.branch);
    if (problem) throw new InvalidInputError(`branch ${JSON.stringify(input.branch)} is not a valid git branch name (${problem}). Use letters, digits, "/", "-", "_" and ".", e.g. "feature/parser-tests", or omit branch.`);
    const repoRoot = await repoRootOf(cwd);
    const branch = input.branch ?? `overseer/${slugify(title)}-${id.slice(2, 8)}`;
    if (await branchExists(repoRoot, branch)) {
      throw new InvalidInputError(`branch ${JSON.stringify(branch)} already exists in ${repoRoot}. Pass another branch name, or omit branch to get a fresh one.`);
    }
    return { repoRoot, branch };
  }

  /** base: a worktree job of this repository (it becomes one of `deps`) or an existing branch. */
  private async stackOn(given: string, caller: Caller, repoRoot: string | null, deps: string[]): Promise<string> {
    const onJob = await getJob(this.ctx.sql.db, given);
    if (onJob) {
      await this.visibleJob(onJob.id, caller, { self: true });
      if (onJob.worktree !== 1 || !onJob.branch) throw new InvalidInputError(`base ${onJob.id} is not a worktree job: it has no branch to start from. Pass a worktree job's id or a branch name, or omit base.`);
      if (onJob.repo_root !== repoRoot) throw new InvalidInputError(`base ${onJob.id} works in another repository (${onJob.repo_root}), not ${repoRoot}. Pass a job or branch of this repository.`);
      // Its branch has its work once it ended; an agent stacking on itself does not wait for itself.
      if (!(caller.role === 'agent' && caller.jobId === onJob.id) && !deps.includes(onJob.id)) deps.push(onJob.id);
      return `job:${onJob.id}`;
    }
    if (await branchExists(repoRoot!, given)) return `branch:${given}`;
    throw new InvalidInputError(`base ${JSON.stringify(given)} is neither a job id nor a branch of ${repoRoot}. Pass a worktree job's id (list_agents) or an existing branch, or omit base.`);
  }

  /** A spawn with a schedule: its first run, waiting for its time, and the schedule in one transaction. */
  private async createScheduled(plan: PlannedSchedule, spec: JobSpec, by: string, more?: (jobId: string, now: number, trx: Q) => Promise<void> | void): Promise<Awaited<ReturnType<JobService['create']>> & { schedule_id: string; run_at: string }> {
    let scheduleId = '';
    const created = await this.create(spec, by, {
      notBefore: plan.firstAt,
      within: async (jobId, now, trx) => {
        scheduleId = (await plan.record(trx, jobId, spec, by, now)).schedule_id;
        await more?.(jobId, now, trx);
      },
    });
    return { ...created, schedule_id: scheduleId, run_at: isoTime(plan.firstAt) };
  }

  /** An agent's sub-agent stays inside the agent's own work tree (real paths), and its command checks pass the agent's policy. */
  private async confineSubAgent(parent: JobRow, base: string, cwd: string, asked: string | undefined, checks: readonly string[]): Promise<void> {
    const tree = realTarget(base, '/') ?? base;
    const real = realTarget(cwd, '/') ?? cwd;
    if (!isInside(real, tree)) {
      throw new ForbiddenError(`cwd ${JSON.stringify(asked)} resolves to ${real}, outside your work tree ${tree}: a sub-agent works inside its parent's tree. Pass a directory inside ${tree}, or ask the lead to start the agent.`);
    }
    for (const c of checks) {
      if (!c.startsWith('command:')) continue;
      const d = await this.bashPolicy(parent.id, c.slice('command:'.length));
      if (d.action !== 'allow') {
        throw new ForbiddenError(`check ${JSON.stringify(c.slice(0, 200))} would run a shell command that your permission policy does not allow (${d.action}: ${d.reason}). Nothing was started. Use checks your policy allows as Bash commands, or ask the lead to add it.`);
      }
    }
  }

  /**
   * Insert a validated job (spawn_agent, a script's agent) and dispatch the queue. The budgets
   * it counts against are checked and its reservation held in the same transaction as its row
   * (on PostgreSQL under the spawn lock, src/store/sql/budgets.ts): over a budget,
   * BudgetExceededError and nothing is written.
   */
  async create(
    spec: JobSpec, by: string,
    /** `notBefore`: the job stays waiting until then (src/runs/schedules.ts queues it); `within`: more writes in the same transaction, through `trx`. */
    at: { notBefore?: number; within?: (jobId: string, now: number, trx: Q) => Promise<void> | void } = {},
  ): Promise<{ job_id: string; status: JobStatus; title: string; reserved_usd?: number }> {
    const { ctx } = this;
    const id = spec.id ?? await this.freshJobId();
    const deps = JSON.parse(spec.depends_on_json) as string[];
    const depState = this.runner.depState(await statusOf(ctx.sql.db, deps));
    const now = ctx.clock.now();
    const status = this.initialStatus(depState, at.notBefore, now);
    // The project (src/projects): a valid name, not archived; its row is made with the first job.
    if (spec.project != null) await assertProjectOpen(ctx.sql.db, spec.project);
    // Placement (src/services/attemptQueue.ts): refused here with the workers listed, nothing written;
    // decided again from the workers read in the transaction, and a queue job sent in it.
    const planned = await this.queue.plan({ cli: spec.provider, host: spec.place_host ?? null, labels: JSON.parse(spec.labels_json) as string[], worktree: spec.worktree === 1, repoRoot: spec.repo_root });
    const reserved = await transact(ctx.sql.db, async (trx) => {
      const r = await this.budgets.check(trx, this.budgetSpec(spec), spec.parent_id === null ? 'lead' : 'agent');
      const { skipBootstrap, base, place_host: _host, ...row } = spec;
      if (spec.project != null) await ensureProject(trx, spec.project, now);
      const placed = await this.queue.place(trx, planned);
      // A job of the worker queue is nobody's until a worker claims it.
      await insertJob(trx, { ...row, ...placed, id, status, session_id: ctx.ids.uuid(), token_hash: null, hub_id: placed.placement === 'queue' ? null : this.runner.hubId }, now);
      if (at.notBefore !== undefined) await updateJob(trx, id, { not_before: at.notBefore }, now);
      if (skipBootstrap) await setSetupSkip(trx, id, now);
      if (base) await setSetupBase(trx, id, base, now);
      await at.within?.(id, now, trx);
      if (r) await this.budgets.hold(trx, id, r, now);
      if (status === 'queued') await this.queue.queued(trx, id);
      await addEvent(trx, id, now, 'spawned', { ...this.spawnedEvent(by, status, at.notBefore, r), ...(placed.placement === 'queue' ? { queue: placed.queue_name } : {}) });
      return r;
    });
    return this.created(id, spec, status, depState, reserved);
  }

  private initialStatus(depState: DepState, notBefore: number | undefined, now: number): JobStatus {
    const due = notBefore === undefined || notBefore <= now;
    return depState === 'ready' && due ? 'queued' : 'waiting';
  }

  private budgetSpec(spec: JobSpec): BudgetSpec {
    return {
      parentId: spec.parent_id, provider: spec.provider, model: spec.model, template: spec.template,
      labels: JSON.parse(spec.labels_json) as string[], budgetUsd: spec.budget_usd,
    };
  }

  private spawnedEvent(by: string, status: JobStatus, notBefore: number | undefined, r: Reservation | undefined): Record<string, unknown> {
    return { by, status, ...(notBefore !== undefined ? { run_at: isoTime(notBefore) } : {}), ...(r ? { reserved_usd: r.usd, estimate_basis: r.basis } : {}) };
  }

  /** After the job's row committed: tell, fail it when a dependency already failed, dispatch. */
  private async created(id: string, spec: JobSpec, status: JobStatus, depState: DepState, reserved: Reservation | undefined): Promise<{ job_id: string; status: JobStatus; title: string; reserved_usd?: number }> {
    this.ctx.bus.emit('job', { jobId: id, status });
    if (depState !== 'ready' && depState !== 'blocked') {
      await this.runner.failWaiting(id, `dependency ${depState.failed} ${depState.status}`);
    }
    await this.runner.dispatch();
    return { job_id: id, status: (await getJob(this.ctx.sql.db, id))!.status, title: spec.title, ...(reserved ? { reserved_usd: Math.round(reserved.usd * 1e6) / 1e6 } : {}) };
  }

  /** A job id no job has (spawn_agent's). */
  private async freshJobId(): Promise<string> {
    for (let i = 0; i < 10; i++) {
      const id = this.ctx.ids.jobId();
      if (!(await getJob(this.ctx.sql.db, id))) return id;
    }
    throw new Error('could not generate a unique job id');
  }

  // ---- wait ----------------------------------------------------------------------------

  async wait(input: WaitInput, caller: Caller, p: WaitProgress = {}): Promise<WaitResultShape> {
    const ids = [...new Set(input.job_ids)];
    for (const id of ids) await this.visibleJob(id, caller);
    const q = this.ctx.sql.db;
    const maxMs = Math.min(input.timeout_s, this.ctx.config.maxWaitS) * 1000;
    // Messages to the caller from the awaited agents (or their sub-agents) also need attention.
    const tree: string[] = [];
    for (const id of ids) tree.push(id, ...(await descendants(q, id)).map((d) => d.id));
    const senders = [...new Set(tree)];
    const me = this.messages.inboxOf(caller);
    // Each read below is awaited, so a change may land between two of them (a job ends after its
    // row was read, a message after the messages were): waitUntil runs one more check after any
    // event that came during a check, so what one check missed the next one sees, before the
    // wait's deadline; and what a check returns was true when it was read.
    const snapshot = async (): Promise<{ settled: JobRow[]; pending: string[]; attention: WaitResultShape['attention']; wake: boolean; ack: () => Promise<void>; messageIds: number[] }> => {
      const rows = await jobsOf(q, ids);
      // A worktree job is settled once its worktree is committed and closed (its branch and diff are final).
      const done = (r: JobRow): boolean => isSettled(r.status) && !this.runner.isClosing(r.id) && !awaitingPublish(r);
      const settled = rows.filter(done);
      const pending = rows.filter((r) => !done(r)).map((r) => r.id);
      const requests = await this.requests.attention(pending, ids);
      const msgs = await unreadFrom(q, me, senders);
      // Health warnings of the awaited agents and their sub-agents, each returned once (the lead's
      // wait only: an agent's warnings go to its lead and the person).
      const warns = caller.role === 'lead' ? await unseenWarnings(q, senders) : [];
      const overlaps = caller.role === 'lead' ? await unseenOverlaps(q, senders) : [];
      // A provider limit holding awaited agents: one item for the lead per limit, not one per agent.
      const limits = caller.role === 'lead' ? await this.limitItems(senders) : { items: [], providers: [] };
      const pairs = byPair(overlaps);
      const titles = await titlesOf(q, [...warns.map((w) => w.job_id), ...pairs.flatMap((o) => o.jobs)]);
      // Script runs are the lead's own: their end, or an approve() waiting for the person, once each.
      const runs = caller.role === 'lead' ? await this.runNews.untold() : { items: [], ack: async () => undefined };
      return {
        settled, pending,
        attention: [...requests.items, ...runs.items, ...limits.items, ...warns.map((w) => warningItem(w, titles.get(w.job_id))), ...settled.filter((j) => j.failure_class === 'dependency_conflict').map((j) => conflictItem(j)), ...pairs.map((o) => overlapItem(o, titles)), ...msgs.map((m) => ({ kind: 'message' as const, ...this.messages.view(m) }))],
        wake: requests.wake || msgs.length > 0 || warns.length > 0 || overlaps.length > 0 || limits.items.length > 0 || runs.items.length > 0,
        ack: async () => {
          const now = this.ctx.clock.now();
          await requests.ack();
          await runs.ack(now);
          await markWarningsSeen(q, warns.map((w) => w.id), now);
          await markOverlapsSeen(q, overlaps.map((o) => o.id), now);
          this.runner.limits.toldToLead(limits.providers);
        },
        messageIds: msgs.map((m) => m.id),
      };
    };
    const r = await waitUntil({
      bus: this.ctx.bus,
      events: ['job', 'request', 'message', 'warning', 'overlap', 'limit', 'run'],
      timeoutMs: maxMs,
      signal: p.signal,
      progressEveryMs: this.ctx.progressEveryMs,
      onProgress: (ms) => {
        void snapshot().then((s) => p.onProgress?.(ms, s.settled.length, ids.length), () => undefined);
      },
      check: async () => {
        const s = await snapshot();
        const satisfied = input.mode === 'all' ? s.pending.length === 0 : s.settled.length > 0;
        return satisfied || s.wake ? s : undefined;
      },
    });
    const s = r.ok ? r.value : await snapshot();
    await markMessagesRead(q, s.messageIds, this.ctx.clock.now());
    await s.ack();
    const fieldCap = Math.max(300, Math.floor(12_000 / Math.max(1, s.settled.length)));
    const attempts = await attemptsOfJobs(q, s.settled.map((j) => j.id));
    const done: AgentSummary[] = [];
    // A warning still open on an ended job judges its work (commands_failed): the done entry says it.
    const hosts = await hubHosts(q, s.settled.map((j) => j.hub_id));
    for (const j of s.settled) done.push(await this.withOpenWarnings(summarize(j, attempts.get(j.id) ?? [], fieldCap, hosts), j.id));
    return {
      done,
      pending: s.pending,
      attention: s.attention,
      timed_out: !r.ok && r.reason === 'timeout',
    };
  }

  private async withOpenWarnings(sum: AgentSummary, jobId: string): Promise<AgentSummary> {
    const open = await openWarnings(this.ctx.sql.db, jobId);
    return open.length ? { ...sum, warnings: open.map((w) => ({ kind: w.kind, detail: w.detail, raised_at: isoTime(w.raised_at) })) } : sum;
  }

  /**
   * The provider limits that hold some of `jobIds` (not yet ended) and that the lead has not been
   * told of: one attention item each, whatever the number of agents it holds (src/limits).
   */
  private async limitItems(jobIds: readonly string[]): Promise<{ items: Record<string, unknown>[]; providers: Provider[] }> {
    const limits = this.runner.limits;
    if (!limits.anyHolding()) return { items: [], providers: [] };
    const q = this.ctx.sql.db;
    const live = (await jobsOf(q, jobIds)).filter((j) => !isSettled(j.status));
    const providers = limits.untoldToLead(live.map((j) => j.provider));
    if (!providers.length) return { items: [], providers: [] };
    const queued = await jobsByStatus(q, 'queued');
    // The limiter's state is read after the awaits, as it is now (it is in memory and synchronous).
    const now = this.ctx.clock.now();
    const items = providers.map((p) => {
      const b = limits.view(p);
      const paused = limits.pausedJobs(p);
      const waiting = queued.filter((j) => j.provider === p).length + paused.length;
      const held = live.filter((j) => j.provider === p && (j.status === 'queued' || paused.includes(j.id))).map((j) => j.id);
      return {
        kind: 'provider_limit', provider: p, limit: b.kind, phase: b.phase, until: b.phase === 'open' && b.until !== null ? isoTime(b.until) : null,
        waiting, job_ids: held, detail: limitLine(p, b.kind, b.phase, b.until, waiting, now), ...(b.reason ? { reason: b.reason } : {}),
        what_to_do: `nothing is needed: Overseer starts no new ${p} agents until the limit passes (one probes first), pauses running ones where they meet it and resumes them in their sessions, their retry budgets untouched. If the work cannot wait, spawn it on another provider; cancel_agent what can wait longer. You hear of this limit once.`,
      };
    });
    return { items, providers };
  }

  // ---- inspect -------------------------------------------------------------------------

  /** The summary (with the job's requests when it has any); with `events` > 0 also that many of its most recent events. */
  async get(id: string, caller: Caller, o: { events?: number } = {}): Promise<AgentSummary & { events?: EventView[]; requests?: Record<string, unknown>[] }> {
    await this.visibleJob(id, caller, { self: true });
    const s = await this.summary(id);
    const requests = await this.requests.ofJob(id);
    return {
      ...s,
      ...(requests.length ? { requests } : {}),
      ...(o.events ? { events: (await latestEvents(this.ctx.sql.db, { jobId: id, limit: o.events })).reverse().map((r) => toEventView(r, id)) } : {}),
    };
  }

  async list(input: ListAgentsInput, caller: Caller): Promise<{ agents: AgentSummary[]; next_cursor: string | null }> {
    const afterSeq = input.cursor ? this.decodeCursor(input.cursor) : undefined;
    const parentId = input.parent_id === undefined ? undefined : input.parent_id === 'lead' ? null : input.parent_id;
    const q = this.ctx.sql.db;
    const rows = await listJobs(q, {
      status: input.status, label: input.label, parentId, afterSeq, limit: input.limit + 1,
      subtreeOf: caller.role === 'agent' ? caller.jobId : undefined,
      project: input.project, hideArchived: input.project === undefined,
    });
    // Fill the page up to `limit` or a size budget under the 20,000-character result cap;
    // next_cursor continues right after the last summary that fit.
    const fieldCap = Math.max(200, Math.floor(12_000 / Math.max(1, Math.min(rows.length, input.limit))));
    const agents: AgentSummary[] = [];
    let size = 100;
    let lastSeq: number | undefined;
    const page = rows.slice(0, input.limit);
    const attempts = await attemptsOfJobs(q, page.map((j) => j.id));
    const warnings = await openWarningsOfJobs(q, page.map((j) => j.id));
    const reservations = await this.budgets.views(q, page);
    const hosts = await hubHosts(q, page.map((j) => j.hub_id));
    for (const j of page) {
      const sum = await this.withHealth(summarize(j, attempts.get(j.id) ?? [], fieldCap, hosts), j, { warnings: warnings.get(j.id) ?? [], reservation: reservations.get(j.id) });
      const len = JSON.stringify(sum, null, 1).length;
      if (agents.length > 0 && size + len > LIST_BUDGET) break;
      agents.push(sum);
      size += len;
      lastSeq = j.seq;
    }
    const more = rows.length > agents.length;
    return { agents, next_cursor: more && lastSeq !== undefined ? `s${lastSeq}` : null };
  }

  private decodeCursor(c: string): number {
    const m = /^s(\d+)$/.exec(c);
    if (!m) throw new InvalidInputError(`cursor ${JSON.stringify(c)} is not one this server gave out: pass next_cursor from the previous list_agents result, or omit it.`);
    return Number(m[1]);
  }

  async output(input: ReadOutputInput, caller: Caller): Promise<{ job_id: string; attempt: number | null; format: string; output: string | unknown[] }> {
    const j = await this.visibleJob(input.job_id, caller, { self: true });
    const attempts = await attemptsOf(this.ctx.sql.db, j.id);
    const a = input.attempt === undefined ? attempts.at(-1) : attempts.find((x) => x.n === input.attempt);
    if (input.attempt !== undefined && !a) {
      throw new NotFoundError(`Job ${j.id} has no attempt ${input.attempt}; it has ${attempts.length} (1..${attempts.length}).`);
    }
    if (!a) return { job_id: j.id, attempt: null, format: input.format, output: input.format === 'json' ? [] : `(job ${j.id} has not started yet: ${j.status})` };
    const lines = await readTailLines(a.transcript, input.tail);
    const output = input.format === 'json' ? tailJson(lines, input.tail, { maxChars: 18_000 }) : renderTranscript(lines, input.tail, { maxChars: 18_000 });
    return { job_id: j.id, attempt: a.n, format: input.format, output };
  }

  // ---- control -------------------------------------------------------------------------

  async cancel(input: CancelInput, caller: Caller): Promise<AgentSummary> {
    const j = await this.visibleJob(input.job_id, caller);
    const q = this.ctx.sql.db;
    const targets = input.cascade ? [...(await descendants(q, j.id)).reverse(), j] : [j];
    const reason = input.reason ?? 'cancelled';
    const waits: Promise<unknown>[] = [];
    /** The targets this call cancels: one that had already ended keeps its own error. */
    const live: string[] = [];
    for (const t of targets) {
      const cur = (await getJob(q, t.id))!;
      if (isTerminal(cur.status)) continue;
      live.push(t.id);
      const sup = this.children.get(t.id);
      if (!sup && this.ownedElsewhere(cur)) {
        // Its child runs on another hub: that hub cancels it (one target, the cascade is walked here).
        waits.push(this.steerRemote(cur, 'cancel', reason, caller).then(async (r) => {
          if (r === 'owner died' && !isTerminal((await getJob(q, t.id))!.status)) await this.markCancelled(t.id, reason);
        }));
      } else if (sup) {
        this.runner.cancelReasons.set(t.id, reason);
        sup.stop('cancelled');
        waits.push(sup.done.then(() => this.settledOnce(t.id)));
      } else if (this.runner.isActiveJob(t.id)) {
        // Still preparing (worktree, model choice): the runner ends it as cancelled instead of launching.
        this.runner.cancelReasons.set(t.id, reason);
        this.runner.abortPreparation(t.id);
        waits.push(this.settledOnce(t.id).then(() => this.cancel({ ...input, job_id: t.id, cascade: false }, { role: 'lead' })));
      } else {
        await this.markCancelled(t.id, reason);
      }
    }
    await Promise.all(waits);
    const now = this.ctx.clock.now();
    for (const id of live) await updateJobIf(q, id, ['cancelled'], { error: `cancelled: ${reason}` }, now);
    return this.summary(j.id);
  }

  /**
   * Run a command another hub left for a job this hub owns (src/services/commands.ts), through the
   * same code path as a local call; the poster checked the caller's rights.
   */
  async steerLocal(kind: JobCommandKind, jobId: string, reason: string | null): Promise<void> {
    const lead: Caller = { role: 'lead' };
    if (kind === 'cancel') await this.cancel({ job_id: jobId, cascade: false, ...(reason === null ? {} : { reason }) }, lead);
    else if (kind === 'stop' || kind === 'freeze') await this.pause({ job_id: jobId, mode: kind }, lead);
    else await this.thaw((await this.visibleJob(jobId, lead)));
  }

  /** Whether the job's child runs on another hub (only its owner has it: docs/store-plan.md §3.5). */
  private ownedElsewhere(j: JobRow): boolean {
    return !!j.hub_id && j.hub_id !== this.runner.hubId && ['running', 'frozen', 'needs_input'].includes(j.status);
  }

  /**
   * Leave a command for the hub that runs `j` and wait until it ran it (its `progress` after marking
   * it crosses; the job's own events do too), with settledOnce's deadline. 'owner died': its hub was
   * found dead meanwhile and its reconcile closed the command (the job is interrupted now).
   */
  private async steerRemote(j: JobRow, kind: JobCommandKind, reason: string | null, caller: Caller): Promise<'done' | 'owner died'> {
    const q = this.ctx.sql.db;
    const id = await this.commands.post({ jobId: j.id, kind, reason, by: senderOf(caller) });
    const timeoutMs = this.ctx.config.killGraceMs + 30_000;
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['job', 'progress'], timeoutMs,
      check: async () => {
        const c = await getCommand(q, id);
        return c?.done_at !== null && c?.done_at !== undefined ? c : undefined;
      },
    });
    let c = r.ok ? r.value : undefined;
    if (!c) {
      // Nobody ran it in time: take it back (unless the owner marks it at this very moment).
      if (await finishCommand(q, id, `expired: the caller stopped waiting after ${timeoutMs / 1000} s`, this.ctx.clock.now())) {
        const hub = await hubOf(q, j.hub_id!);
        const seen = hub ? `on ${hub.host} (pid ${hub.pid}), last heartbeat ${isoTime(hub.heartbeat_at)}${hub.dead_at !== null ? ', found dead' : hub.stopped_at !== null ? ', stopped' : ''}` : '(no longer registered)';
        throw new InvalidStateError(`Job ${j.id} runs on hub ${j.hub_id} ${seen}, which did not ${kind} it within ${timeoutMs / 1000} s; the command was withdrawn, nothing changed. If that hub is alive, ask again or use its own lead; if it is gone, it is found dead within its heartbeat timeout and the job becomes interrupted, after which ${kind === 'cancel' ? 'cancel_agent ends it here' : 'there is nothing left to ' + kind}.`);
      }
      c = (await getCommand(q, id))!;
    }
    if (c.outcome === COMMAND_DONE) return 'done';
    if (c.outcome?.startsWith(COMMAND_REFUSED)) throw new InvalidStateError(`Hub ${j.hub_id}, which runs job ${j.id}: ${c.outcome.slice(COMMAND_REFUSED.length)}`);
    return 'owner died';
  }

  /** Resolves once the job's attempt has been fully processed by the runner. */
  private settledOnce(jobId: string): Promise<void> {
    return waitUntil({
      bus: this.ctx.bus, events: ['job'], timeoutMs: this.ctx.config.killGraceMs + 30_000,
      check: async () => (!this.runner.isActiveJob(jobId) && !['running', 'frozen', 'needs_input'].includes((await getJob(this.ctx.sql.db, jobId))!.status) ? true : undefined),
    }).then(() => undefined);
  }

  /** A job with no process (queued, waiting, interrupted …) ends cancelled; what must follow a job's end is done before this returns. */
  private async markCancelled(jobId: string, reason: string): Promise<void> {
    const now = this.ctx.clock.now();
    await transact(this.ctx.sql.db, async (trx) => {
      await updateWithEvent(trx, jobId, { status: 'cancelled', failure_class: 'cancelled', error: `cancelled: ${reason}`, ended_at: now }, now, 'ended', { status: 'cancelled', reason });
      await this.queue.withdraw(trx, jobId); // its queue job, if it waited in the worker queue
    });
    await this.runner.ended(jobId, 'cancelled');
  }

  async pause(input: PauseInput, caller: Caller): Promise<AgentSummary> {
    const j = await this.visibleJob(input.job_id, caller);
    const sup = this.children.get(j.id);
    if (!sup && this.ownedElsewhere(j)) {
      if (input.mode === 'freeze' && j.status === 'frozen') return this.summary(j.id);
      if (await this.steerRemote(j, input.mode, null, caller) === 'owner died') throw this.ownerDied(j.id, input.mode);
      if (input.mode === 'stop') await this.settledOnce(j.id);
      return this.summary(j.id);
    }
    if (!sup || !['running', 'needs_input', 'frozen'].includes(j.status)) {
      throw new InvalidStateError(`Job ${j.id} is ${j.status}, not running: only a running agent can be paused.${isTerminal(j.status) ? ' Use resume_agent to continue its session.' : ''}`);
    }
    if (input.mode === 'freeze') {
      if (j.status === 'frozen') return this.summary(j.id);
      if (!sup.freeze()) throw new InvalidStateError(`Job ${j.id}'s process could not be stopped (it may have just exited).`);
      await this.setStatus(j.id, 'frozen', 'frozen');
    } else {
      sup.stop('stopped');
      await sup.done;
      await this.settledOnce(j.id);
    }
    return this.summary(j.id);
  }

  private ownerDied(jobId: string, kind: string): InvalidStateError {
    return new InvalidStateError(`Job ${jobId}'s hub was found dead before it could ${kind} it: the job is interrupted now (get_agent shows it); resume_agent continues its session on a hub where its directory is.`);
  }

  /** A frozen job runs on (SIGCONT): here, or through its owner. */
  private async thaw(j: JobRow, caller: Caller = { role: 'lead' }): Promise<void> {
    const sup = this.children.get(j.id);
    if (!sup && this.ownedElsewhere(j)) {
      if (await this.steerRemote(j, 'thaw', null, caller) === 'owner died') throw this.ownerDied(j.id, 'thaw');
      return;
    }
    if (j.status !== 'frozen') throw new InvalidStateError(`Job ${j.id} is ${j.status}, not frozen: there is nothing to thaw.`);
    if (!sup?.thaw()) throw new InvalidStateError(`Job ${j.id} is frozen but its process is gone.`);
    await this.setStatus(j.id, 'running', 'thawed');
    await this.children.flushQueued(j.id);
  }

  async resume(input: ResumeInput, caller: Caller): Promise<AgentSummary> {
    const j = await this.visibleJob(input.job_id, caller);
    if (j.status === 'frozen') {
      await this.thaw(j, caller);
      if (input.message) await this.message(j.id, input.message, caller);
      return this.summary(j.id);
    }
    if (j.status === 'running' || j.status === 'needs_input') {
      throw new InvalidStateError(`Job ${j.id} is already running. Use message_agent to tell it something.`);
    }
    if (j.status === 'queued' || j.status === 'waiting') {
      throw new InvalidStateError(`Job ${j.id} has not started yet (${j.status}); it will start by itself.`);
    }
    if (this.takeover.isAttached(j.id)) {
      throw new InvalidStateError(`Job ${j.id} is taken over by a person (overseer attach): it is handed back when they exit their session. Message it instead (it reads messages when it resumes).`);
    }
    const now = this.ctx.clock.now();
    await this.queue.prepare(j);
    await transact(this.ctx.sql.db, async (trx) => {
      // A resumed job spends again: it reserves again, under the same budgets as a spawn.
      const r = await this.budgets.check(trx, {
        parentId: j.parent_id, provider: j.provider, model: j.model, template: j.template,
        labels: JSON.parse(j.labels_json) as string[], budgetUsd: j.budget_usd, baseCostUsd: j.cost_usd,
      }, caller.role, 'resuming this job');
      // Only from the ended state it was seen in: a concurrent resume (or another hub's) wins once.
      const won = await updateJobIf(trx, j.id, [j.status], { status: 'queued', resume_message: input.message ?? 'Continue where you left off.', ended_at: null, error: null, failure_class: null, outcome: null }, now);
      if (!won) throw new InvalidStateError(`Job ${j.id} changed while it was being resumed (someone else resumed or cancelled it): look at it with get_agent.`);
      await this.queue.queued(trx, j.id);
      if (r) await this.budgets.hold(trx, j.id, r, now);
      await addEvent(trx, j.id, now, 'resumed', { message: input.message ?? null, ...(r ? { reserved_usd: r.usd } : {}) });
    });
    this.ctx.bus.emit('job', { jobId: j.id, status: 'queued' });
    await this.runner.dispatch();
    return this.summary(j.id);
  }

  /** Deliver into a running conversation, or queue for the agent's next turn. */
  async message(id: string, text: string, caller: Caller): Promise<{ job_id: string; delivered: boolean; queued: boolean; message_id: number }> {
    const j = await this.visibleJob(id, caller);
    const r = await this.messages.deliver(senderOf(caller), j.id, text);
    return { job_id: j.id, delivered: r.delivered, queued: !r.delivered, message_id: r.message_id };
  }

  /** message_agent { to: "*" }: every matching live agent (src/projects/broadcast.ts). */
  broadcast(i: BroadcastInput, caller: Caller): Promise<BroadcastResult> {
    return broadcast(this.ctx, (from, to, text) => this.messages.deliver(from, to, text), i, caller);
  }

  async reportStatus(caller: Caller, message: string, progress?: number): Promise<{ ok: true }> {
    const jobId = this.agentOnly(caller, 'report_status');
    const now = this.ctx.clock.now();
    await updateWithEvent(this.ctx.sql.db, jobId, { status_message: message, ...(progress === undefined ? {} : { progress }) }, now, 'status', { message, progress: progress ?? null });
    this.ctx.bus.emit('progress', { jobId });
    return { ok: true };
  }

  async finish(caller: Caller, result: string, outcome: 'success' | 'failure'): Promise<{ ok: true }> {
    const jobId = this.agentOnly(caller, 'finish');
    const now = this.ctx.clock.now();
    await updateWithEvent(this.ctx.sql.db, jobId, { result, outcome, progress: 1 }, now, 'finish', { outcome });
    return { ok: true };
  }

  private agentOnly(caller: Caller, tool: string): string {
    if (caller.role !== 'agent') throw new ForbiddenError(`${tool} is for agents reporting on their own job; the lead has nothing to report it for.`);
    return caller.jobId;
  }

  private async setStatus(jobId: string, status: JobStatus, event: string): Promise<void> {
    const now = this.ctx.clock.now();
    await updateWithEvent(this.ctx.sql.db, jobId, { status }, now, event);
    this.ctx.bus.emit('job', { jobId, status });
  }
}

/** A job whose dependencies' branches did not merge needs the lead: what conflicted and what to do. */
function conflictItem(j: JobRow): Record<string, unknown> {
  return {
    kind: 'dependency_conflict', job_id: j.id, title: j.title, detail: j.error,
    todo: 'merge the dependencies\' branches yourself (or have an agent do it), then spawn the task again with base: "<the merged branch>"',
  };
}

/** Two live branches change the same files: the lead hears it once. `titles`: the jobs' titles, read with the overlaps. */
function overlapItem(o: ReturnType<typeof byPair>[number], titles: ReadonlyMap<string, string>): Record<string, unknown> {
  const t = (id: string): string => titles.get(id) ?? id;
  return {
    kind: 'overlap', job_ids: o.jobs, titles: o.jobs.map(t), files: o.files, locks_conflict: o.locks_conflict,
    detail: `${o.jobs[0]} ("${t(o.jobs[0])}") and ${o.jobs[1]} ("${t(o.jobs[1])}") both change ${o.files.join(', ')} on their branches`,
    todo: 'both agents were told; if they should not both change these files, message_agent one of them (or cancel_agent); otherwise expect to resolve a conflict when merging',
  };
}

/** A health warning as an item of wait_for_agents' `attention`, with what the lead can do. */
function warningItem(w: WarningRow, title: string | undefined): Record<string, unknown> {
  const todo: Record<string, string> = {
    stalled: 'look at it with read_agent_output; message_agent to nudge it, or cancel_agent',
    turns_high: 'it may run out of turns: message_agent to wrap up, or let it finish',
    budget_high: 'it may run out of budget: message_agent to wrap up, or cancel_agent',
    time_high: 'it may hit its timeout: message_agent to wrap up, or let it finish',
    long_running: 'check it is still on track with get_agent / read_agent_output',
    commands_failed: 'its shell commands never ran, so what it says about them is not real: run overseer doctor (check "codex shell"), fix what it names, then resume_agent',
  };
  return { kind: 'warning', warning: w.kind, job_id: w.job_id, ...(title ? { title } : {}), detail: w.detail, raised_at: isoTime(w.raised_at), ...(w.reaction && w.reaction !== 'notify' ? { reaction: w.reaction } : {}), what_to_do: todo[w.kind] ?? '' };
}
