// Runs attempts: moves a queued job to running, prepares its work tree, builds the prompt,
// starts a Supervisor, and when the process is gone decides the job's fate (checks, retry,
// interrupted, final), closes its worktree (src/branches/jobWorktrees.ts), wakes dependents and
// dispatches the queue.
// Dispatch is event-driven: it runs on spawn, on every job end and on resume, never on a timer.
// Its writes go through the asynchronous layer (src/store/sql/jobs.ts): a queued job starts by the
// claim (`UPDATE … WHERE status = 'queued'`), so a job starts once however many dispatchers race;
// one dispatch runs at a time here, and a call during it makes it run once more.
import { awaitingPublish } from '../domain/placement.js';
import type { DepRow } from '../store/sql/jobs.js';
import { launchRole, parseStoredRole, roleSection } from '../roles/index.js';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { HubContext } from './context.js';
import type { AttemptRow, JobRow } from '../store/jobs.js';
import { batch, transact } from '../store/sql/tx.js';
import { addEvent, attemptUpdate, attemptsOf, activeOf, claimAttempt, dependents, queuedFor, depsOf, eventInsert, getJob, jobUpdate, jobsByStatus, updateJob, updateJobIf, updateWithEvent } from '../store/sql/jobs.js';
import { addUsage } from '../store/sql/usage.js';
import { signalGroup } from '../launch/process.js';
import { Supervisor, type AttemptOutcome } from './supervisor.js';
import { AttemptHooks, type ActivitySink, type TranscriptSink } from './attemptHooks.js';

export type { ActivitySink, TranscriptSink };
import type { LiveChildren } from './children.js';
import type { ClaimInput, Claimed, WorkRunner, WorkSource } from './workSource.js';
import { pickRunnable, dependencyState, type DepState } from '../domain/scheduler.js';
import type { FailureClass, JobStatus } from '../domain/job.js';
import { isRetryable } from '../domain/failure.js';
import { runChecks } from './checks.js';
import { headCommit } from '../git/worktree.js';
import { DependencyConflict, JobWorktrees, SetupFailed } from '../branches/jobWorktrees.js';
import { dependencySection } from '../prompts/dependencies.js';
import { readBrief, type BriefRow } from '../brief/store.js';
import { briefSection } from '../brief/service.js';
import { setupReport, setupStack } from '../store/sql/setup.js';
import { undelivered } from '../store/sql/messages.js';
import { allLocks } from '../store/sql/locks.js';
import type { StackRecord } from '../store/setup.js';
import type { MessageRow } from '../store/jobs.js';
import { errorMessage } from '../errors.js';
import { frameMessage } from './messages.js';
import { changedFiles } from '../git/changes.js';
import { hookSettings } from '../launch/claude/launcher.js';
import { realTarget } from './realPaths.js';
import type { TokenUsage } from '../launch/types.js';
import type { LockGuard } from '../confine/lockGuard.js';
import type { HookLedger } from '../confine/hookLedger.js';
import { diagnose } from '../retry/diagnose.js';
import { workerLostSeed } from './workerLost.js';
import { makeStartGate, type StartGate } from '../launch/startGate.js';
import type { Limits } from '../limits/service.js';
import { limitOfText } from '../limits/signals.js';
import { countsAgainstRetries } from '../domain/failure.js';
import type { AttemptQueueService } from './attemptQueue.js';

export const hashToken = (t: string): string => createHash('sha256').update(t).digest('hex');

const LIMIT_WORDS = { rate_limit: 'a rate limit', overloaded: 'an overload', usage_limit: 'a usage limit' } as const;


/** No transcript index (search switched off): lines are only written to the transcript files. */
export const NO_TRANSCRIPT_SINK: TranscriptSink = { line: () => undefined, attemptEnded: () => undefined };


/** Chooses the model of a job spawned with model "auto" before its first attempt (src/models). Never throws. */
export interface ModelPicker {
  choose(job: JobRow, attempt: number, signal?: AbortSignal): Promise<void>;
}

/** What a launch reads before its child starts (Runner.launchFacts). */
interface LaunchFacts {
  attempts: AttemptRow[];
  deps: (JobRow | undefined)[];
  /** The attempt continues the job's session. */
  resume: boolean;
  stack: StackRecord | undefined;
  pending: MessageRow[];
  memory: string | undefined;
  /** The crew brief at launch (src/brief), for a new session's first prompt. */
  brief: BriefRow | undefined;
  /** After an attempt lost with its worker: what it did, for the new session's first prompt (src/services/workerLost.ts). */
  seed: string | undefined;
}

/** What the Runner is built with besides the context (src/compose.ts builds it). */
export interface RunnerDeps {
  /** The registry of running children; the Runner adds and removes them. */
  children: LiveChildren;
  /** One limiter per provider account: no start while a provider's limit holds (src/limits, docs/limits.md). */
  limits: Limits;
  models: ModelPicker;
  /** What the knowledge base remembers for a task, as a prompt section (src/kb/memory.ts); undefined for nothing. */
  memory: (prompt: string) => Promise<string | undefined> | string | undefined;
  transcripts: TranscriptSink;
  activity: ActivitySink;
  /** Undoes writes to held files made by anyone but their holder (src/confine/lockGuard.ts). */
  lockGuard: Pick<LockGuard, 'jobStarted' | 'jobEnded' | 'toolsStarted' | 'toolsEnded'>;
  /** Which tool calls the lock hook decided on, per job (the hook_bypassed backstop). */
  hookLedger: Pick<HookLedger, 'unguarded' | 'forget'>;
  /** This hub (docs/store-plan.md §3.4): it starts only its own queued jobs and unowned ones, which its claim makes its own. */
  hubId: string;
  /** The worker queue (src/services/attemptQueue.ts): a job of the queue queued again (a retry, a
   * dependent whose dependencies ended) gets its queue job in that transaction. */
  queue: AttemptQueueService;
  /** Where its work comes from (src/services/workSource.ts): a hub's own queued jobs, or a worker's queues. */
  work: WorkSource;
}

/** What the schedules need of the Runner (src/runs/schedules.ts): waiting jobs whose time came. */
export type WaitingJobs = Pick<Runner, 'depState' | 'failWaiting' | 'dispatch'>;

export class Runner implements WorkRunner {
  /** Why a running job is being cancelled: its error says so from the first write. */
  readonly cancelReasons = new Map<string, string>();
  /** Jobs between "marked running" and "supervisor started" (async worktree prep). */
  private readonly preparing = new Set<string>();
  /** Aborts the model choice of a job being prepared (a cancel stops its classifier at once). */
  private readonly preparingAborts = new Map<string, AbortController>();
  /** The dispatch running now, if any; `again`: a dispatch was asked for during it. */
  private dispatchRun: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  /** Each worktree job's worktree: made or attached before an attempt, closed after its end. */
  private readonly worktrees: JobWorktrees;
  /** Paces the starts of children launched close together (config startConcurrency; none for 0). */
  readonly startGate: StartGate | undefined;
  readonly limits: Limits;
  private readonly children: LiveChildren;
  /** This hub's id (docs/store-plan.md §3.4): the owner of the jobs it creates and claims. */
  readonly hubId: string;

  constructor(private readonly ctx: HubContext, private readonly d: RunnerDeps) {
    this.hubId = d.hubId;
    this.worktrees = new JobWorktrees(ctx);
    this.startGate = makeStartGate(ctx.config.startConcurrency, undefined, ctx.config.startHoldMs);
    this.limits = d.limits;
    this.children = d.children;
  }

  get stopping(): boolean {
    return this.stopped;
  }

  transcriptPath(jobId: string, n: number): string {
    return join(this.ctx.config.home, 'agents', jobId, `attempt-${n}.jsonl`);
  }

  /** The child's stderr of attempt n (last 1 MiB), beside its transcript. */
  stderrPath(jobId: string, n: number): string {
    return join(this.ctx.config.home, 'agents', jobId, `attempt-${n}.stderr`);
  }

  /**
   * Start as many queued jobs as the cap and the provider limiters allow, best first. One
   * dispatch runs at a time; a call while one runs makes it go round once more (what changed
   * meanwhile is seen), and resolves when that round is done. Never rejects.
   */
  dispatch(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.dispatchRun) {
      this.again = true;
      return this.dispatchRun;
    }
    const run = (async () => {
      try {
        do {
          this.again = false;
          await this.d.work.round(this);
        } while (this.again && !this.stopped);
      } catch (err) {
        this.ctx.log.error({ err }, 'dispatch failed');
      } finally {
        this.dispatchRun = undefined;
      }
    })();
    this.dispatchRun = run;
    return run;
  }

  /** The hub's round (HUB_WORK): its own and unowned queued jobs, best first, within the cap and the limiters. */
  async dispatchOnce(): Promise<void> {
    const { config } = this.ctx;
    const q = this.ctx.sql.db;
    // The first dispatch is the hub's start: a limit still in force from before wakes up on time.
    this.limits.start();
    // Jobs run where they were spawned: another hub's queued job is its own to start; an unowned
    // one (its hub died) only where its directory is (the same machine, or a shared path).
    const queued = (await queuedFor(q, this.hubId)).filter((j) => j.hub_id === this.hubId || existsSync(j.cwd));
    const active = await activeOf(q, this.hubId);
    const byId = new Map(queued.map((j) => [j.id, j]));
    for (const id of pickRunnable(queued, active, config.maxAgents, (p) => this.limits.room(p))) {
      if (this.stopped) return;
      const job = byId.get(id)!;
      const admission = this.limits.admit(job.provider, job.id);
      if (admission === 'wait') continue;
      if (admission === 'probe') await addEvent(q, job.id, this.ctx.clock.now(), 'limit_probe', { provider: job.provider });
      await this.startAttempt(job);
    }
  }

  /** Stop dispatching and end every child; their jobs become `interrupted`. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    this.limits.close();
    const running = this.children.all();
    for (const s of running) s.stop('hub_shutdown');
    await Promise.all(running.map((s) => s.done));
    await this.settling;
    await this.d.work.close();
  }

  private settling: Promise<unknown> = Promise.resolve();

  /**
   * This hub was found dead by another, which settled its jobs already (docs/store-plan.md §3.6):
   * start nothing more and kill every child at once. Nothing is recorded for them; the caller
   * exits (or stops) before their ends would be.
   */
  fence(): void {
    this.stopped = true;
    this.limits.close();
    for (const s of this.children.all()) {
      if (!s.pid) continue;
      signalGroup(s.pid, 'SIGCONT');
      signalGroup(s.pid, 'SIGKILL');
    }
  }

  /** Claim a queued job and start its attempt; nothing when another dispatcher claimed it first (or it is no longer queued). */
  private async startAttempt(queued: JobRow): Promise<void> {
    await this.claimAndStart((c) => claimAttempt(this.ctx.sql.db, { ...c, jobId: queued.id, hubId: this.hubId, files: (n) => c.files(queued.id, n) }));
  }

  /**
   * Claim through `claim` (the hub's claim of its own queued job, or a worker's of a job it fetched
   * from the queue: src/services/workSource.ts) and start the attempt it won, by the one launch
   * path. The job claimed, or undefined when the claim lost (another dispatcher won, or it is no
   * longer queued).
   */
  async claimAndStart(claim: (c: ClaimInput) => Promise<Claimed | undefined>): Promise<JobRow | undefined> {
    const { clock, ids } = this.ctx;
    const now = clock.now();
    const token = ids.token();
    // A new attempt starts without the last one's result: finish() or this attempt's final text sets it.
    const claimed = await claim({
      now, tokenHash: hashToken(token),
      files: (jobId, n) => ({ transcript: this.transcriptPath(jobId, n), stderr: this.stderrPath(jobId, n) }),
    });
    if (!claimed) return undefined;
    const { job, n, kind } = claimed;
    const work = this.d.work;
    const localPrep = (job.worktree === 1 && (!job.work_dir || !existsSync(job.work_dir) || (await setupReport(this.ctx.sql.db, job.id))?.status === 'failed'))
      || (job.base_commit === null && JSON.parse(job.checks_json).includes('diff_not_empty'));
    const needsPrep = localPrep || work.mustPrepare(job);
    const choose = job.model === 'auto';
    if (!needsPrep && !choose) {
      // What the launch reads first, so that 'running' is told with its child started right after (as one step).
      const facts = await this.launchFacts(job, kind);
      this.ctx.bus.emit('job', { jobId: job.id, status: 'running' });
      this.launchWith(job, n, kind, token, facts);
      return job;
    }
    this.ctx.bus.emit('job', { jobId: job.id, status: 'running' });
    this.preparing.add(job.id);
    const abort = new AbortController();
    this.preparingAborts.set(job.id, abort);
    void (choose ? this.d.models.choose(job, n, abort.signal) : Promise.resolve())
      .then(() => (needsPrep ? work.prepare(job, () => (localPrep ? this.prepare(job) : Promise.resolve())) : undefined))
      .then(() => {
        // Cancelled while it was being prepared: end the attempt instead of starting the child.
        if (this.cancelReasons.has(job.id)) {
          this.preparing.delete(job.id);
          return this.endAttempt(job.id, n, { ok: false, failureClass: 'cancelled', error: 'cancelled' });
        }
        return getJob(this.ctx.sql.db, job.id).then((j) => this.launch(j!, n, kind, token));
      })
      .catch((err: unknown) => {
        this.ctx.log.error({ err, jobId: job.id }, 'preparing the work tree failed');
        if (err instanceof SetupFailed) void this.endAttempt(job.id, n, { ok: false, failureClass: err instanceof DependencyConflict ? 'dependency_conflict' : 'setup_failed', error: err.message });
        else void this.endAttempt(job.id, n, { ok: false, failureClass: 'crashed', error: `could not prepare the work tree: ${errorMessage(err)}` });
      })
      .finally(() => {
        this.preparing.delete(job.id);
        this.preparingAborts.delete(job.id);
      });
    return job;
  }

  /** Stop what can be stopped of a job's preparation (its model classification) after a cancel. */
  abortPreparation(jobId: string): void {
    this.preparingAborts.get(jobId)?.abort();
  }

  private async prepare(job: JobRow): Promise<void> {
    if (job.worktree === 1) {
      await this.worktrees.prepare(job);
    } else {
      const base = (await headCommit(job.cwd)) ?? null;
      await updateJob(this.ctx.sql.db, job.id, { base_commit: base }, this.ctx.clock.now());
    }
  }

  private async launch(job: JobRow, n: number, kind: string, token: string): Promise<void> {
    this.launchWith(job, n, kind, token, await this.launchFacts(job, kind));
  }

  /**
   * What a launch reads (awaited) before the child starts in one synchronous step (launchWith):
   * the job's attempts, its dependencies' rows, the stack its branch was made from, the messages
   * waiting for it and what the knowledge base remembers for its task (a new session only). A
   * message stored after this read is not lost: the attempt's start pushes what is still
   * undelivered then (AttemptHooks.onStarted), and later ones find the child running.
   */
  private async launchFacts(job: JobRow, kind: string): Promise<LaunchFacts> {
    const q = this.ctx.sql.db;
    const depIds = JSON.parse(job.depends_on_json) as string[];
    const deps: (JobRow | undefined)[] = [];
    for (const id of depIds) deps.push(await getJob(q, id));
    const attempts = await attemptsOf(q, job.id);
    const resume = kind === 'resume' && job.session_id !== null && attempts.some((a) => a.session_id !== null);
    const stack = !resume && depIds.length ? await setupStack(q, job.id) : undefined;
    const pending = await undelivered(q, job.id);
    let memory: string | undefined;
    if (!resume) {
      try {
        memory = (await this.d.memory(job.prompt)) || undefined;
      } catch (err) {
        this.ctx.log.warn({ err, jobId: job.id }, 'memory section failed');
      }
    }
    // A resumed session got the brief in its first prompt or as a message when it changed.
    const brief = resume ? undefined : await readBrief(q);
    const seed = resume ? undefined : await workerLostSeed(q, this.ctx.prompts, job.id, kind, attempts);
    return { attempts, deps, resume, stack, pending, memory, brief, seed };
  }

  private launchWith(job: JobRow, n: number, kind: string, token: string, facts: LaunchFacts): void {
    const { ctx } = this;
    const launcher = ctx.launchers[job.provider as 'claude' | 'codex'];
    const workDir = job.work_dir ?? job.cwd;
    const { resume, pending } = facts;
    const message = this.firstMessage(job, n, kind, pending.map((m) => frameMessage(m.from_id, m.text)), facts);
    const sessionId = resume ? job.session_id! : ctx.ids.uuid();
    const hooks = new AttemptHooks(ctx, { job, attempt: n, sessionId, pending, codex: launcher!.provider === 'codex' }, { ...this.d, limits: this.limits });
    const sup = new Supervisor(
      {
        launcher: launcher!,
        processes: ctx.processes,
        clock: ctx.clock,
        log: ctx.log.child({ jobId: job.id, attempt: n }),
        transcriptPath: this.transcriptPath(job.id, n),
        stderrPath: this.stderrPath(job.id, n),
        timeoutMs: (job.timeout_s ?? ctx.config.defaultTimeoutS) * 1000,
        budgetUsd: job.budget_usd === null ? undefined : Math.max(0, job.budget_usd - job.cost_usd),
        killGraceMs: ctx.config.killGraceMs,
        reportedOutcome: async () => ((await getJob(ctx.sql.db, job.id))?.outcome as 'success' | 'failure' | null) ?? undefined,
        startGate: this.startGate,
      },
      hooks,
    );
    hooks.attach(sup);
    this.children.add(job.id, sup);
    this.d.lockGuard.jobStarted(job.id);
    const budgetLeft = job.budget_usd === null ? undefined : Math.max(0.0001, job.budget_usd - job.cost_usd);
    sup.start({
      jobId: job.id,
      message,
      cwd: workDir,
      model: job.model ?? undefined,
      maxTurns: job.max_turns ?? undefined,
      budgetUsd: budgetLeft,
      sessionId,
      resume,
      mcpUrl: ctx.mcpUrl(),
      token,
      appendSystemPrompt: this.preamble(job, workDir),
      jsonSchema: job.json_schema ?? undefined,
      role: launchRole(job),
      priorUsage: resume && job.thread_usage_json ? (JSON.parse(job.thread_usage_json) as TokenUsage) : undefined,
      // Always: with lock mode off the hub still answers the hook for the protected paths.
      settings: hookSettings(ctx.mcpUrl(), { readDenied: [realTarget(ctx.config.home, '/') ?? ctx.config.home], writeDenied: [join(realTarget(workDir, '/') ?? workDir, '.claude')] }),
      env: ctx.childEnv,
      mcpTimeoutMs: (ctx.config.maxWaitS + 120) * 1000,
    });
    const settled = sup.done.then(async (o) => {
      await hooks.written();
      if (hooks.waitingSlot) await updateJob(ctx.sql.db, job.id, { status_message: null }, ctx.clock.now());
      return this.onExit(job.id, n, o);
    }).catch((err: unknown) => ctx.log.error({ err, jobId: job.id, attempt: n }, 'ending an attempt failed'));
    this.settling = Promise.all([this.settling, settled]);
  }

  private preamble(job: JobRow, workDir: string): string {
    return this.ctx.prompts.render('child-preamble', {
      job_id: job.id,
      title: job.title,
      parent_line: job.parent_id ? `You were spawned by agent \`${job.parent_id}\`.` : 'You were spawned by the lead.',
      work_dir: workDir,
      branch_line: job.branch ? ` (git branch \`${job.branch}\`)` : '',
      depth_left: Math.max(0, this.ctx.config.maxDepth - job.depth),
    });
  }

  private firstMessage(job: JobRow, n: number, kind: string, queued: string[], facts: LaunchFacts): string {
    const { attempts, deps } = facts;
    const parts: string[] = [];
    if (facts.resume) {
      parts.push(job.resume_message || 'Continue where you left off.');
    } else {
      parts.push(job.prompt);
      if (job.context_json) {
        const ctxMap = JSON.parse(job.context_json) as Record<string, string>;
        const keys = Object.keys(ctxMap);
        if (keys.length) parts.push(['## Context', ...keys.map((k) => `### ${k}\n${ctxMap[k]}`)].join('\n\n'));
      }
      const roleText = roleSection(this.ctx, parseStoredRole(job.role_json));
      if (roleText) parts.push(roleText);
      const briefText = briefSection(this.ctx, facts.brief);
      if (briefText) parts.push(briefText);
      if (facts.memory) parts.push(facts.memory);
      const depIds = JSON.parse(job.depends_on_json) as string[];
      if (depIds.length) {
        const { stack } = facts;
        const byId = new Map(deps.filter((d): d is JobRow => d !== undefined).map((d) => [d.id, d]));
        const section = dependencySection(this.ctx.prompts, depIds.map((id) => byId.get(id)).filter((d): d is JobRow => d !== undefined), stack);
        if (section) parts.push(section);
      }
      if (kind === 'retry' || (kind === 'resume' && n > 1)) {
        const prev = attempts.filter((a) => a.n < n).at(-1);
        if (prev) {
          parts.push(this.ctx.prompts.render('retry', {
            attempt: prev.n,
            failure_class: prev.failure_class ?? 'unknown',
            error: prev.error ?? 'no error recorded',
            diagnosis: prev.diagnosis ? `Diagnosis of that attempt:\n${prev.diagnosis}\n` : '',
          }));
        }
      }
      if (facts.seed) parts.push(facts.seed);
      if (job.resume_message) parts.push(job.resume_message);
    }
    if (queued.length) parts.push(['## Messages received while you were not running', ...queued.map((t) => `- ${t}`)].join('\n'));
    return parts.join('\n\n');
  }

  private async onExit(jobId: string, n: number, o: AttemptOutcome): Promise<void> {
    this.children.remove(jobId);
    await this.d.transcripts.attemptEnded(jobId, n);
    this.d.hookLedger.forget(jobId);
    this.d.lockGuard.jobEnded(jobId);
    await this.endAttempt(jobId, n, o);
  }

  /** Decide a finished attempt's consequences. Runs once per attempt. */
  async endAttempt(jobId: string, n: number, o: Partial<AttemptOutcome> & { ok: boolean; failureClass?: FailureClass; error?: string }): Promise<void> {
    const { ctx } = this;
    const q = ctx.sql.db;
    const job = await getJob(q, jobId);
    if (!job) return;
    let ok = o.ok;
    let failureClass = o.failureClass;
    let error = o.error;
    const cancelReason = this.cancelReasons.get(jobId);
    this.cancelReasons.delete(jobId);
    if (failureClass === 'cancelled' && cancelReason) error = `cancelled: ${cancelReason}`;
    const budgetStop = this.children.takeBudgetStop(jobId);
    if (failureClass === 'budget' && budgetStop) error = budgetStop;
    const workDir = job.work_dir ?? job.cwd;
    const checks = JSON.parse(job.checks_json) as string[];
    if (ok && checks.length) {
      const results = await runChecks(checks, { workDir, baseCommit: job.base_commit ?? undefined, sawErrorResult: !!o.sawErrorResult, resultText: o.resultText, env: ctx.childEnv, timeoutMs: 10 * 60_000 });
      const failed = results.filter((r) => !r.ok);
      if (failed.length) {
        ok = false;
        failureClass = 'check_failed';
        error = `completion checks failed: ${failed.map((f) => `${f.check} (${f.detail})`).join('; ')}`;
      }
    }
    // Codex: files the agent changed without holding their lock (before its locks are released).
    if (job.provider === 'codex' && ctx.config.lockMode !== 'off') await this.recordLockViolations(jobId, workDir, job.base_commit);
    const attempts = await attemptsOf(q, jobId);
    // An attempt that ended on a provider limit tells the limiter; the job waits it out and goes on
    // in the same session, its retry budget untouched. A workflow's phase is the exception: the
    // workflow engine moves it to a fallback model (src/domain/workflow.ts).
    const limitHit = !ok && failureClass === 'rate_limited'
      ? limitOfText(error ?? '', undefined, ctx.clock.now()) ?? { kind: 'rate_limit' as const, message: error ?? 'rate limited' }
      : undefined;
    this.limits.attemptEnded(job.provider, jobId, limitHit);
    const ridesOut = !!limitHit && job.phase === null && !this.stopped;
    let next: JobStatus;
    if (o.stopReason === 'stopped' || o.stopReason === 'hub_shutdown') next = 'interrupted';
    else if (ok && await this.pendingForResume(job)) next = 'queued'; // messages that waited for the turn to end
    else if (ok) next = 'succeeded';
    else if (failureClass === 'cancelled') next = 'cancelled';
    else if (ridesOut) next = 'queued';
    else if (job.retry !== 'none' && failureClass && isRetryable(failureClass) && attempts.filter(countsAgainstRetries).length < ctx.config.maxAttempts && !this.stopped) next = 'queued';
    else next = 'failed';

    let diagnosis: string | null = null;
    if (next === 'queued' && job.retry === 'analyze' && !ridesOut) { // no model call to diagnose a limit, during it
      const d = await diagnose(ctx, job, this.transcriptPath(jobId, n), failureClass, error);
      diagnosis = d.text;
      if (d.usage) await addUsage(q, { jobId, attempt: n, kind: 'diagnosis', usage: d.usage, now: ctx.clock.now() });
    }

    const now = ctx.clock.now();
    const finalResult = ok ? (job.result ?? o.resultText ?? null) : job.result;
    const writes = [
      attemptUpdate(q, jobId, n, {
        status: ok ? 'succeeded' : next === 'interrupted' || ridesOut ? 'interrupted' : failureClass === 'cancelled' ? 'cancelled' : 'failed',
        ended_at: now, exit_code: o.exit?.code ?? null, signal: o.exit?.signal ?? null,
        failure_class: ok ? null : failureClass ?? null, error: ok ? null : error ?? null, diagnosis,
      }),
      jobUpdate(q, jobId, {
        status: next,
        pid: null,
        token_hash: null,
        ended_at: next === 'queued' ? null : now,
        result: finalResult,
        error: ok ? null : error ?? null,
        failure_class: ok ? null : failureClass ?? null,
        outcome: next === 'queued' ? null : job.outcome,
        structured_json: o.structured === undefined ? job.structured_json : JSON.stringify(o.structured),
        thread_usage_json: o.threadUsage ? JSON.stringify(o.threadUsage) : job.thread_usage_json,
        ...(ridesOut ? {
          error: null, failure_class: null,
          resume_message: ctx.prompts.render('limit-resume', { provider: job.provider, what: LIMIT_WORDS[limitHit!.kind] }),
        } : {}),
      }, now),
      eventInsert(q, jobId, now, ridesOut ? 'limit_wait' : next === 'queued' ? 'retrying' : 'ended', { attempt: n, status: next, failure_class: failureClass ?? null }),
    ];
    if (next === 'queued' && job.placement === 'queue') {
      // Requeued into the worker queue: the queue job lands with the row that says queued.
      await this.d.queue.prepare(job);
      await transact(q, async (trx) => {
        await batch(trx, writes);
        await this.d.queue.queued(trx, jobId);
      });
    } else {
      await batch(q, writes);
    }
    if (next !== 'queued' && next !== 'interrupted' && job.worktree === 1 && job.work_dir && job.repo_root) {
      await this.d.work.finish(job, () => this.worktrees.close(jobId))
        .catch((err: unknown) => ctx.log.error({ err: errorMessage(err), jobId }, 'closing the job\'s work tree failed'));
    }
    await this.ended(jobId, next);
  }

  /**
   * What follows a job's change of status once it is written (the end of an attempt, a cancel of
   * a job with no process, a retry queued): the reactions the services return to the `job` event
   * (its locks released, its requests cancelled, its reservation released: docs/store-plan.md
   * §1.3 C) are done before this returns, then its dependents are settled and the queue dispatched.
   */
  async ended(jobId: string, status: JobStatus): Promise<void> {
    await this.ctx.bus.emitSettled('job', { jobId, status }, (err) => this.ctx.log.error({ err, jobId, status }, 'a reaction to a job\'s end failed'));
    this.d.work.ended(jobId, status);
    await this.settleDependents(jobId, status);
    void this.dispatch();
  }

  /** A provider that cannot take input while running (Codex) gets queued messages by a resume. */
  private async pendingForResume(job: JobRow): Promise<boolean> {
    const launcher = this.ctx.launchers[job.provider as 'claude' | 'codex'];
    if (!launcher || launcher.streamsInput || this.stopped) return false;
    if ((await undelivered(this.ctx.sql.db, job.id)).length === 0) return false;
    await updateJob(this.ctx.sql.db, job.id, { resume_message: 'New messages arrived while you worked; read them and act on them.' }, this.ctx.clock.now());
    return true;
  }

  /** Compare what the agent changed in its work tree with the locks it holds; record the rest. */
  private async recordLockViolations(jobId: string, workDir: string, baseCommit: string | null): Promise<void> {
    try {
      const changed = await changedFiles(workDir, baseCommit);
      if (!changed.length) return;
      // In its own worktree every change is the agent's; in a shared tree a file another holder
      // has locked is that holder's work, so only unlocked changes are attributed to this agent.
      const q = this.ctx.sql.db;
      const job = await getJob(q, jobId);
      const own = job?.worktree === 1;
      const locks = await allLocks(q);
      const mine = new Set(locks.filter((l) => l.holder === jobId).map((l) => l.path));
      const others = new Set(locks.filter((l) => l.holder !== jobId).map((l) => l.path));
      const violations = changed.filter((p) => !mine.has(p) && (own || !others.has(p)));
      if (!violations.length) return;
      const prev = job?.lock_violations_json;
      const all = [...new Set([...(prev ? (JSON.parse(prev) as string[]) : []), ...violations])];
      const now = this.ctx.clock.now();
      await updateWithEvent(q, jobId, { lock_violations_json: JSON.stringify(all) }, now, 'lock_violation', { files: violations });
      this.ctx.log.warn({ jobId, files: violations }, 'agent changed files it did not hold a lock for');
    } catch (err) {
      this.ctx.log.debug({ err, jobId }, 'lock violation check skipped');
    }
  }

  /** Is the job's end written but its worktree not yet committed and closed (not settled yet for a wait)? */
  isClosing(jobId: string): boolean {
    return this.worktrees.isClosing(jobId);
  }

  /** dependencyState, where a dependency whose worktree is still closing (here, or published by its worker) is not yet succeeded. */
  depState(deps: readonly DepRow[]): DepState {
    return dependencyState(deps.map((d) => (this.worktrees.isClosing(d.id) || awaitingPublish(d) ? { ...d, status: 'closing' } : d)));
  }

  /**
   * At hub start, what a stopped hub left between a job's end and its dependents: worktrees of
   * settled jobs never closed (the end was written, the commit and diff were not: a crash while
   * closing) are closed now, then their dependents settled; and waiting jobs whose dependencies
   * all settled meanwhile are queued or failed (their last dependency's end woke nobody).
   */
  async resumeSettling(): Promise<void> {
    const { ctx } = this;
    const q = ctx.sql.db;
    for (const id of await this.worktrees.unclosed()) {
      void this.worktrees.close(id).then(async () => {
        const j = await getJob(q, id);
        if (!j || this.stopped) return;
        await addEvent(q, id, ctx.clock.now(), 'worktree_closed', { after: 'hub restart' });
        await this.ended(id, j.status);
      }).catch((err: unknown) => ctx.log.error({ err, jobId: id }, 'closing a worktree left by a stopped hub failed'));
    }
    for (const d of await jobsByStatus(q, 'waiting')) await this.settleWaiting(d);
  }

  /** Wake or fail the jobs that wait on `depId`. */
  async settleDependents(depId: string, status: JobStatus): Promise<void> {
    if (status !== 'succeeded' && status !== 'failed' && status !== 'cancelled') return;
    for (const d of await dependents(this.ctx.sql.db, depId)) if (d.status === 'waiting') await this.settleWaiting(d);
  }

  /** Queue a waiting job whose dependencies all succeeded (and whose time has come), fail one whose dependency failed. */
  private async settleWaiting(d: JobRow): Promise<void> {
    const { ctx } = this;
    const st = this.depState(await depsOf(ctx.sql.db, d.id));
    const now = ctx.clock.now();
    if (st === 'ready' && d.not_before != null && d.not_before > now) return; // its time has not come: src/runs/schedules.ts queues it then
    if (st === 'ready') {
      // Only from waiting: two dependencies ending at once queue it once (and send its queue job once).
      await this.d.queue.prepare(d);
      const won = await transact(ctx.sql.db, async (trx) => {
        if (!await updateJobIf(trx, d.id, ['waiting'], { status: 'queued' }, now)) return false;
        await this.d.queue.queued(trx, d.id);
        return true;
      });
      if (won) ctx.bus.emit('job', { jobId: d.id, status: 'queued' });
    } else if (st !== 'blocked') {
      await this.failWaiting(d.id, `dependency ${st.failed} ${st.status}`);
    }
  }

  /** Fail a job that never started (its dependency failed), cascading to its own dependents. */
  async failWaiting(jobId: string, reason: string, failureClass: FailureClass = 'dependency_failed'): Promise<void> {
    const now = this.ctx.clock.now();
    const won = await transact(this.ctx.sql.db, async (trx) => {
      if (!await updateJobIf(trx, jobId, ['waiting', 'queued'], { status: 'failed', failure_class: failureClass, error: reason, ended_at: now }, now)) return false;
      await this.d.queue.withdraw(trx, jobId);
      await addEvent(trx, jobId, now, 'ended', { status: 'failed', failure_class: failureClass, reason });
      return true;
    });
    if (!won) return;
    await this.ctx.bus.emitSettled('job', { jobId, status: 'failed' }, (err) => this.ctx.log.error({ err, jobId }, 'a reaction to a job\'s end failed'));
    await this.settleDependents(jobId, 'failed');
  }

  isActiveJob(jobId: string): boolean {
    return this.children.has(jobId) || this.preparing.has(jobId);
  }
}
