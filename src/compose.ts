// The composition root's builder (docs/architecture.md, "The composition root"): every service
// of the hub, each built once, in dependency order, with all it needs passed to its constructor.
// Nothing is assigned after construction. A service that needs one built later is given a small
// interface its own module declares (BudgetActions, MonitorActions, LimitActions, SpawnSchedules,
// TakenOver, Conversations…); the only closures over a later service are the two true cycles,
// marked "cycle:" below. An optional capability switched off in the configuration
// (config.capabilities) is not built: its tools are not offered, and where the engine would call
// it, it gets a null object (SCHEDULES_OFF, NO_TAKEOVER, NO_TRANSCRIPT_SINK).
import { join } from 'node:path';
import type { Config } from './config.js';
import { packageRoot, projectRoot, settingsDirOf } from './config.js';
import { setupConfinement, type Confinement } from './confine/setup.js';
import { UNCONFINED } from './confine/launcher.js';
import { HookLedger } from './confine/hookLedger.js';
import { guardLocks } from './confine/guard.js';
import type { LockGuard } from './confine/lockGuard.js';
import { randomIds, systemClock, type Clock, type IdSource } from './clock.js';
import { silentLogger, type Logger } from './log.js';
import type { SqlDb } from './store/sql/open.js';
import { Bus, type BusEvents } from './services/bus.js';
import { relayBus } from './services/relay.js';
import { CommandService, commandPoster } from './services/commands.js';
import { notifierFor, type LayerEvents } from './store/sql/notify.js';
import { sqlTarget } from './store/sql/url.js';
import { newHubId } from './store/sql/hubs.js';
import { leadOf } from './domain/lead.js';
import type { HubContext } from './services/context.js';
import { JobService, NOT_CONFINABLE, NO_TAKEOVER, spawnConfinement } from './services/jobs.js';
import { NO_TRANSCRIPT_SINK, Runner } from './services/runner.js';
import { LiveChildren } from './services/children.js';
import { HUB_ONLY, WorkerQueue, type AttemptQueueService } from './services/attemptQueue.js';
import { HUB_WORK, type WorkSourceFactory } from './services/workSource.js';
import { MessageService } from './services/messages.js';
import { LockService, OPEN_GATE } from './services/locks.js';
import { NoteService } from './services/notes.js';
import { RequestService, type Elicitor } from './approvals/service.js';
import { PermissionService } from './services/permissions.js';
import { HookService } from './services/hook.js';
import { coordTools } from './tools/coord.js';
import { WorkflowCore, WorkflowService } from './workflow/service.js';
import { workflowTools } from './tools/workflows.js';
import { DebateService } from './debate/index.js';
import { debateTools } from './tools/debates.js';
import { mergeTools } from './tools/merge.js';
import { MergeService } from './branches/mergeJobs.js';
import { SendBackService } from './branches/sendBack.js';
import { ShipLane } from './floor/ship.js';
import { workflowTemplates } from './templates/templates.js';
import { KnowledgeBase, globalKbPath } from './kb/service.js';
import { memorySection } from './kb/memory.js';
import { addUsage } from './store/sql/usage.js';
import { Budgets } from './money/budgets.js';
import { ModelChooser, autoModels } from './models/choice.js';
import { createTriageAgent } from './kb/triageAgent.js';
import { kbTools } from './tools/kb.js';
import { createSearch, type Search } from './search/index.js';
import { searchTools } from './tools/search.js';
import { overlapTools } from './tools/overlaps.js';
import { briefTools } from './tools/brief.js';
import { BriefService } from './brief/service.js';
import { Schedules } from './runs/schedules.js';
import { ScheduleBook, SCHEDULES_OFF } from './runs/scheduleBook.js';
import { scheduleTools } from './tools/schedules.js';
import { projectTools } from './tools/projects.js';
import { ProjectService } from './projects/service.js';
import { RunService } from './runs/index.js';
import { runTools } from './tools/runs.js';
import { ScriptRuns } from './scripts/runs.js';
import { scriptRunBudget } from './scripts/view.js';
import { BundledScripts } from './scripts/bundled.js';
import { NodeLauncher } from './launch/process.js';
import { ClaudeLauncher } from './launch/claude/launcher.js';
import { CodexLauncher } from './launch/codex/launcher.js';
import type { AgentLauncher, ProcessLauncher } from './launch/types.js';
import { childEnvFrom } from './launch/childEnv.js';
import { PromptLibrary } from './prompts/load.js';
import { agentTools } from './tools/agents.js';
import { takeoverTools } from './tools/takeover.js';
import { TakeoverService } from './takeover/service.js';
import { Attachments } from './takeover/attachments.js';
import { HealthMonitor } from './floor/monitor.js';
import { LeadDigest } from './floor/digest.js';
import { OverlapGuard } from './branches/overlapGuard.js';
import { Limits } from './limits/service.js';
import { accounts } from './limits/account.js';
import type { ToolDef } from './tools/registry.js';

/** What the hub is built from: configuration and the seams tests inject (clock, ids, launchers, logger). */
export interface ComposeOptions {
  config: Config;
  projectDir: string;
  clock?: Clock;
  ids?: IdSource;
  log?: Logger;
  processes?: ProcessLauncher;
  launchers?: Partial<Record<'claude' | 'codex', AgentLauncher>>;
  childEnv?: NodeJS.ProcessEnv;
  progressEveryMs?: number;
  /** The global knowledge base file (default: $XDG_DATA_HOME/overseer/kb.db); tests pass a temp path. */
  kbGlobalDb?: string;
  /** A hub in worker mode (`overseer worker`, docs/workers-plan.md §3) takes its work from the attempt
   * queue instead of its own queued jobs: the worker's source. Default: the hub's (HUB_WORK). */
  work?: WorkSourceFactory;
}

/** What the hub starts after reconcile and stops before the database closes; NOTHING for a capability switched off. */
export interface Lifecycle {
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export const NOTHING: Lifecycle = { start: () => undefined, stop: () => undefined };

/** Every service of one hub, built. */
export interface Services {
  ctx: HubContext;
  /** Placement and the worker queue (src/services/attemptQueue.ts). */
  queue: AttemptQueueService;
  /** OS confinement of children (undefined with an injected process launcher: nothing to confine). */
  confinement: Confinement | undefined;
  lockGuard: LockGuard;
  children: LiveChildren;
  runner: Runner;
  jobs: JobService;
  messages: MessageService;
  locks: LockService;
  notes: NoteService;
  requests: RequestService;
  permissions: PermissionService;
  hook: HookService;
  workflows: WorkflowService;
  kb: KnowledgeBase;
  health: HealthMonitor;
  overlaps: OverlapGuard;
  budgets: Budgets;
  runs: RunService;
  /** A lead's scripts (src/scripts, docs/scripts.md). */
  scripts: ScriptRuns;
  digest: LeadDigest;
  /** The optional capabilities that are switched on (config.capabilities). */
  debates?: DebateService;
  search?: Search;
  schedules?: Schedules;
  takeover?: TakeoverService;
  /** Started and stopped by the hub, in its order; NOTHING for those switched off. */
  lifecycle: { schedules: Lifecycle; debates: Lifecycle; search: Lifecycle; relay: Lifecycle; commands: Lifecycle; sendBack: Lifecycle; queue: Lifecycle };
  /** Whether a person works on an agent's session (keeps the hub up); never, without takeover. */
  /** `load` reads the jobs a person took over under an earlier hub (at the hub's start, before it listens). */
  takenOver: { active(): boolean; load(): Promise<void> };
  /** The tools offered, in the order of tools/list. */
  tools: ToolDef[];
  /** READY TO SHIP's verbs on the floor's API (ship through the merge service, dismiss). */
  ship: ShipLane;
  /** The crew brief (src/brief): set by the lead's tool and the person's API, sent to running agents. */
  brief: BriefService;
  /** This hub's id (docs/store-plan.md §3.4): the owner of what it creates, its row in `hubs` once it starts, the origin of the events it relays. */
  hubId: string;
}

/**
 * Build the hub's services over the opened state (`sql`: SQLite or PostgreSQL, opened and migrated
 * by `Hub.open`). `elicitor` asks the lead's client for forms; `mcpUrl` is the children's endpoint
 * once the HTTP listener is up (the hub knows it only after start).
 */
export function compose(o: ComposeOptions, sql: SqlDb, elicitor: Elicitor, mcpUrl: () => string): Services {
  const { config } = o;
  const caps = config.capabilities;
  const log = o.log ?? silentLogger;
  const root = packageRoot();
  const kbGlobal = o.kbGlobalDb ?? globalKbPath(process.env);
  const clock = o.clock ?? systemClock;
  const confinement = o.processes ? undefined : setupConfinement({
    config, q: sql.db, projectDir: o.projectDir, packageRoot: root, kbGlobal, log, now: () => clock.now(), base: new NodeLauncher(),
  });
  const ctx: HubContext = {
    config,
    projectDir: o.projectDir,
    sql,
    bus: new Bus(),
    clock,
    ids: o.ids ?? randomIds,
    log,
    processes: o.processes ?? confinement!.processes,
    launchers: o.launchers ?? {
      claude: new ClaudeLauncher({ bin: config.claudeBin, packageRoot: root }),
      codex: new CodexLauncher({
        bin: config.codexBin, packageRoot: root, codexHome: join(config.home, 'codex-home'), model: config.codexModel,
        sandbox: config.codexSandbox, nodeBin: process.execPath, hookScript: join(root, 'hooks', 'overseer-hook.sh'),
        hook: true, prices: config.codexPrices,
      }),
    },
    prompts: new PromptLibrary(join(root, 'prompts')),
    mcpUrl,
    childEnv: childEnvFrom(o.childEnv ?? process.env),
    progressEveryMs: o.progressEveryMs ?? 10_000,
  };
  const kb = new KnowledgeBase({
    // SQLite: the project's file in its state directory and the global one; PostgreSQL: kb_entries under the project's root.
    source: ctx.sql.dialect === 'postgres'
      ? { dialect: 'postgres', db: ctx.sql.db, projectKey: projectRoot(o.projectDir) }
      : { dialect: 'sqlite', projectDb: join(config.home, 'kb.db'), globalDb: kbGlobal },
    projectDir: o.projectDir, log,
    triageAgent: config.kbTriage ? createTriageAgent({
      bin: () => ctx.launchers.claude?.resolveBin(), prompts: ctx.prompts, env: ctx.childEnv, cwd: o.projectDir, log,
      onUsage: (usage, jobId) => void addUsage(ctx.sql.db, { jobId, kind: 'triage', usage, now: ctx.clock.now() })
        .catch((err: unknown) => log.warn({ err, jobId }, 'the triage\'s usage was not recorded')),
    }) : undefined,
  });
  // The bus across hubs on one PostgreSQL database (src/services/relay.ts); nothing on SQLite.
  const hubId = newHubId();
  const target = sqlTarget(config);
  const notifier = notifierFor<BusEvents & LayerEvents>(target.dialect === 'postgres' ? { dialect: 'postgres', url: target.url } : { dialect: 'sqlite' }, hubId, log);
  const relay = relayBus({ bus: ctx.bus, db: sql.db, log, notifier });
  // Placement and the worker queue (issue 30): pg-boss on PostgreSQL only (opened at the first job
  // placed in the queue); on SQLite every job is the hub's and a host is refused.
  const queue: AttemptQueueService = target.dialect === 'postgres'
    ? new WorkerQueue({ sql, url: target.url, log, defaultTimeoutS: config.defaultTimeoutS, now: () => ctx.clock.now() })
    : HUB_ONLY;
  const search = caps.search ? createSearch({ sql: ctx.sql, now: () => ctx.clock.now(), log }) : undefined;

  // The children and what only talks to them: built before the runner, which needs them.
  const children = new LiveChildren(ctx);
  const messages = new MessageService(ctx, children, hubId);
  const lockGuard = guardLocks(ctx, messages, hubId, confinement?.lockMounts);
  const hookLedger = new HookLedger();
  const budgets = new Budgets(ctx, { actions: { stop: (id, error) => children.stopForBudget(id, error) }, autoModels: (p) => autoModels(config, p), runBudget: scriptRunBudget });
  const models = new ModelChooser(ctx, budgets);
  // cycle: the limiter's wake-up starts queued work through the runner, and the runner asks the limiter before each start.
  const limits = new Limits(
    { q: ctx.sql.db, clock, bus: ctx.bus, log, settings: config.limits, accounts: accounts(ctx.childEnv, config.codexProvider) },
    { pause: (id, provider) => children.pauseAtLimit(id, provider), unpause: (id) => children.unpauseAtLimit(id), dispatch: () => runner.dispatch() },
  );
  // cycle: the monitor hears the runner's children, and reacts (freeze, cancel) through JobService, which drives the runner.
  const health = new HealthMonitor(ctx, {
    live: (id) => children.live(id),
    settleLost: (id) => children.settleLost(id),
    message: (id, text) => { messages.notify('overseer', id, text); },
    freeze: async (id) => { await jobs.pause({ job_id: id, mode: 'freeze' }, { role: 'lead' }); },
    cancel: async (id, reason) => { await jobs.cancel({ job_id: id, reason, cascade: true }, { role: 'lead' }); },
  });
  const runner = new Runner(ctx, {
    hubId, children, limits, models, lockGuard, hookLedger, activity: health, queue,
    work: o.work ? o.work({ ctx, hubId }) : HUB_WORK,
    memory: (prompt) => memorySection(kb, prompt),
    transcripts: search ? search.indexer : NO_TRANSCRIPT_SINK,
  });

  // The job engine's callers. Bus listeners run in the order services are built: locks release
  // a settled job's files before its requests are cancelled, as they always have.
  const locks = new LockService(ctx, confinement?.lockMounts ?? OPEN_GATE, leadOf(hubId, sql.dialect === 'postgres'));
  const notes = new NoteService(ctx);
  const requests = new RequestService(ctx, elicitor);
  const permissions = new PermissionService(ctx, requests);
  const attachments = caps.takeover ? new Attachments() : undefined;
  const jobs = new JobService(ctx, {
    runner, children, messages, budgets, models, requests,
    schedules: caps.schedules ? new ScheduleBook(ctx) : SCHEDULES_OFF,
    bashPolicy: (jobId, command) => permissions.decideBash(jobId, command),
    takeover: attachments ?? NO_TAKEOVER,
    confinement: confinement ? spawnConfinement(confinement.status) : NOT_CONFINABLE,
    commands: commandPoster(sql.db, notifier, () => ctx.clock.now()),
    queue,
  });
  // Commands other hubs leave for this hub's jobs (cancel, stop, freeze, thaw: docs/store-plan.md §3.5).
  const commands = new CommandService(ctx, hubId, jobs, relay);
  const schedules = caps.schedules ? new Schedules(ctx, jobs, runner, hubId, queue) : undefined;
  const digest = new LeadDigest(ctx);
  const overlaps = new OverlapGuard(ctx, (to, text) => { messages.notify('overseer', to, text); });
  const hook = new HookService(locks, ctx, permissions, { hookLedger, lockGuard });
  // The implement/review workflow is a bundled script on the script engine (src/workflow/steps.ts).
  const workflowCore = new WorkflowCore(ctx, jobs, notes, requests, workflowTemplates(join(settingsDirOf(config), 'templates')));
  const runs = new RunService(ctx, jobs, budgets, hubId);
  const scripts = new ScriptRuns(ctx, jobs, requests, new BundledScripts([workflowCore.script]), hubId);
  const workflows = new WorkflowService(ctx, jobs, workflowCore, scripts, hubId);
  const debates = caps.debates ? new DebateService(ctx, jobs, notes, hubId) : undefined;
  const takeover = attachments ? new TakeoverService(ctx, jobs, runner, attachments, confinement?.commands ?? UNCONFINED) : undefined;

  const now = (): number => ctx.clock.now();
  const merges = new MergeService({ sql: ctx.sql.db, now, worktree: config.worktree, env: ctx.childEnv, bus: ctx.bus });
  // A failed merge goes back to the job's own agent (issue 31): resumed through the engine, the person asked at the bound.
  const sendBack = new SendBackService({
    sql: ctx.sql.db, now, bus: ctx.bus, log, prompts: ctx.prompts, merges,
    resume: (jobId, message) => jobs.resume({ job_id: jobId, message }, { role: 'lead' }),
    ask: (jobId, summary, plan) => requests.openDetached({ jobId, kind: 'question', summary, plan }),
    closing: (id) => runner.isClosing(id), rounds: config.sendBackRounds, onFailure: config.mergeOnFailure, worktree: config.worktree, env: ctx.childEnv,
  });
  // READY TO SHIP's verbs (the floor's watch keys and dashboard buttons) merge through the same service as merge_branch.
  const ship = new ShipLane(ctx.sql.db, merges, sendBack, ctx.bus, now);
  const brief = new BriefService(ctx, messages);
  const tools = [
    ...agentTools(jobs), ...coordTools({ messages, locks, notes, requests, permissions }), ...workflowTools(workflows), ...kbTools(kb),
    ...(search ? searchTools(search.service) : []), ...overlapTools(ctx.sql.db), ...(schedules ? scheduleTools(schedules) : []),
    ...projectTools({ projects: new ProjectService(ctx.sql.db, now), sql: ctx.sql.db, now }), ...runTools(runs, scripts, ctx.bus, ctx.progressEveryMs), ...(debates ? debateTools(debates) : []),
    ...(takeover ? takeoverTools(takeover) : []),
    ...mergeTools(merges, sendBack, ctx.progressEveryMs), ...briefTools(brief),
  ];
  return {
    ctx, hubId, queue, confinement, lockGuard, children, runner, jobs, messages, locks, notes, requests, permissions, hook, workflows, kb, health,
    overlaps, budgets, runs, scripts, digest, debates, search, schedules, takeover, tools, ship, brief,
    lifecycle: {
      schedules: schedules ? { start: () => schedules.start(), stop: () => schedules.close() } : NOTHING,
      debates: debates ? { start: () => debates.reconcile(), stop: () => debates.drain() } : NOTHING,
      search: search ? { start: () => search.start(), stop: () => search.close() } : NOTHING,
      relay,
      commands,
      sendBack: { start: () => sendBack.start(), stop: () => sendBack.stop() },
      queue: { start: () => undefined, stop: () => queue.stop() },
    },
    takenOver: takeover ?? { active: () => false, load: async () => undefined },
  };
}
