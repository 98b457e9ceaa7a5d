// Composition root: builds the hub's services from config and injected seams (clock, ids,
// process launcher, logger), reconciles the database, opens the children's HTTP endpoint
// and hands out MCP servers per caller. Used by `overseer mcp`, `overseer serve`, the tests
// and the demo.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Config } from './config.js';
import { packageRoot, settingsDirOf } from './config.js';
import { setupConfinement, type Confinement } from './confine/setup.js';
import { HookLedger } from './confine/hookLedger.js';
import { guardLocks } from './confine/guard.js';
import { randomIds, systemClock, type Clock, type IdSource } from './clock.js';
import { silentLogger, type Logger } from './log.js';
import { openDb, type Db } from './store/db.js';
import { JobStore } from './store/jobs.js';
import { Bus } from './services/bus.js';
import type { Caller, HubContext } from './services/context.js';
import { JobService } from './services/jobs.js';
import { Runner } from './services/runner.js';
import { MessageService } from './services/messages.js';
import { LockService, OPEN_GATE } from './services/locks.js';
import { NoteService } from './services/notes.js';
import { RequestService } from './approvals/service.js';
import { personApi } from './approvals/http.js';
import { floorApi, type FloorApi } from './floor/http.js';
import { PermissionService } from './services/permissions.js';
import { HookService } from './services/hook.js';
import { checkHookInput } from './domain/hookInput.js';
import { coordTools } from './tools/coord.js';
import { WorkflowService } from './workflow/service.js';
import { workflowTools } from './tools/workflows.js';
import { DebateService } from './debate/index.js';
import { debateTools } from './tools/debates.js';
import { mergeTools } from './tools/merge.js';
import { MergeService } from './branches/mergeJobs.js';
import { workflowTemplates } from './templates/templates.js';
import { KnowledgeBase, globalKbPath } from './kb/service.js';
import { UsageStore } from './money/usageStore.js';
import { Budgets } from './money/budgets.js';
import { ModelChooser } from './models/choice.js';
import { createTriageAgent } from './kb/triageAgent.js';
import { kbTools } from './tools/kb.js';
import { createSearch, type Search } from './search/index.js';
import { searchTools } from './tools/search.js';
import { overlapTools } from './tools/overlaps.js';
import { Schedules } from './runs/schedules.js';
import { scheduleTools } from './tools/schedules.js';
import { projectTools } from './tools/projects.js';
import { ProjectService } from './projects/service.js';
import { RunService } from './runs/index.js';
import { runTools } from './tools/runs.js';
import type { PromptDeps } from './mcp/prompts.js';
import { hubResourceDeps, type ResourceDeps } from './mcp/resources.js';
import { LeadElicitor } from './server/elicit.js';
import { hashToken as sha } from './services/runner.js';
import { reconcile, type ReconcileReport } from './services/reconcile.js';
import { NodeLauncher } from './launch/process.js';
import { ClaudeLauncher } from './launch/claude/launcher.js';
import { CodexLauncher, writeCodexHome } from './launch/codex/launcher.js';
import type { AgentLauncher, ProcessLauncher } from './launch/types.js';
import { childEnvFrom } from './launch/childEnv.js';
import { excludeOverseerDirs } from './git/worktree.js';
import { PromptLibrary } from './prompts/load.js';
import { agentTools } from './tools/agents.js';
import { takeoverTools } from './tools/takeover.js';
import { TakeoverService } from './takeover/service.js';
import { HealthMonitor } from './floor/monitor.js';
import { LeadDigest } from './floor/digest.js';
import { OverlapGuard } from './branches/overlapGuard.js';
import { blockingTest, type CallScope, type ToolDef } from './tools/registry.js';
import { NativeMcpServer, type McpConnection } from './mcp/server.js';
import type { McpSession, Outbound } from './mcp/session.js';
import { startHttp, type HttpEndpoint } from './server/http.js';
import { composeApi } from './http/api.js';
import { tokenAuth } from './server/tokenAuth.js';
import { createWeb, type Web } from './web/index.js';
import { ensureLeadToken, writeFileAtomic, type HubInfo } from './hubfiles/hubLock.js';
import { attachNotifier, type Notifier } from './floor/notify/index.js';

export interface HubOptions {
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
  /** Write hub.json (real hubs do; in-process test hubs may not). */
  writeHubInfo?: boolean;
  /** Publishes hub.json for the holder of the state directory's claim (src/hubproc/). */
  publish?: (info: HubInfo) => void;
}

import { packageVersion } from './version.js';

export { packageVersion };

export class Hub {
  readonly ctx: HubContext;
  readonly jobs: JobService;
  readonly messages: MessageService;
  readonly locks: LockService;
  readonly notes: NoteService;
  readonly requests: RequestService;
  readonly permissions: PermissionService;
  readonly hook: HookService;
  readonly workflows: WorkflowService;
  /** Debates on the job engine (src/debate). */
  readonly debates: DebateService;
  readonly kb: KnowledgeBase;
  /** The transcript index and search_output (src/search). */
  readonly search: Search;
  readonly health: HealthMonitor;
  /** The conflict guard: files two live worktree branches both change (src/git/overlapGuard.ts). */
  readonly overlaps: OverlapGuard;
  /** The house, label and subtree budgets: reservations at spawn, stops when one is crossed (src/money/budgets.ts). */
  readonly budgets: Budgets;
  /** Schedules and repeats: spawn_agent { at, every_s, cron } (src/runs/schedules.ts); tests drive it with tick(). */
  readonly schedules: Schedules;
  /** Batch dispatch from a file (src/runs). */
  readonly runs: RunService;
  private readonly digest: LeadDigest;
  /** Agents a person took over with overseer attach (src/takeover). */
  private readonly takeover: TakeoverService;
  private readonly promptDeps: PromptDeps;
  private readonly resourceDeps: ResourceDeps;
  private readonly elicitor = new LeadElicitor();
  private mcpServer?: NativeMcpServer;
  /** An agent opened an MCP session: its start is past the CPU-heavy part (the start gate's slot is freed). */
  private readonly agentConnected: (jobId: string) => void;
  readonly tools: ToolDef[];
  readonly db: Db;
  readonly version: string;
  /** The dashboard (src/web), once started. */
  web?: Web;
  /** The floor (/api/floor and its stream, src/floor/http.ts), once started. */
  floor?: FloorApi;
  leadToken = '';
  http?: HttpEndpoint;
  reconciled?: ReconcileReport;
  private stopping?: Promise<void>;
  /** OS confinement of children (undefined with an injected process launcher). */
  readonly confinement?: Confinement;
  private detachConfinement?: () => void;
  private detachGuard?: () => void;
  /** Sends what a person should hear of to the configured sinks (src/floor/notify). */
  notifier?: Notifier;

  constructor(private readonly o: HubOptions) {
    const log = o.log ?? silentLogger;
    this.db = openDb(join(o.config.home, 'state.db'));
    const root = packageRoot();
    const kbGlobal = o.kbGlobalDb ?? globalKbPath(process.env);
    const clock = o.clock ?? systemClock;
    this.confinement = o.processes ? undefined : setupConfinement({
      config: o.config, db: this.db, projectDir: o.projectDir, packageRoot: root, kbGlobal, log, now: () => clock.now(), base: new NodeLauncher(),
    });
    let url = '';
    this.ctx = {
      config: o.config,
      projectDir: o.projectDir,
      db: this.db,
      store: new JobStore(this.db),
      bus: new Bus(),
      clock,
      ids: o.ids ?? randomIds,
      log,
      processes: o.processes ?? this.confinement!.processes,
      confinement: this.confinement?.status,
      hookLedger: new HookLedger(),
      launchers: o.launchers ?? {
        claude: new ClaudeLauncher({ bin: o.config.claudeBin, packageRoot: root }),
        codex: new CodexLauncher({
          bin: o.config.codexBin, packageRoot: root, codexHome: join(o.config.home, 'codex-home'), model: o.config.codexModel,
          sandbox: o.config.codexSandbox, nodeBin: process.execPath, hookScript: join(root, 'hooks', 'overseer-hook.sh'),
          hook: true, prices: o.config.codexPrices,
        }),
      },
      prompts: new PromptLibrary(join(root, 'prompts')),
      mcpUrl: () => url,
      childEnv: childEnvFrom(o.childEnv ?? process.env),
      progressEveryMs: o.progressEveryMs ?? 10_000,
    };
    this.version = packageVersion();
    this.kb = new KnowledgeBase({
      projectDb: join(o.config.home, 'kb.db'), globalDb: kbGlobal, projectDir: o.projectDir, log,
      triageAgent: o.config.kbTriage ? createTriageAgent({
        bin: () => this.ctx.launchers.claude?.resolveBin(), prompts: this.ctx.prompts, env: this.ctx.childEnv, cwd: o.projectDir, log,
        onUsage: (usage, jobId) => new UsageStore(this.db).add({ jobId: jobId && this.ctx.store.get(jobId) ? jobId : null, kind: 'triage', usage, now: this.ctx.clock.now() }),
      }) : undefined,
    });
    this.ctx.kb = this.kb;
    this.search = createSearch({ db: this.db, now: () => this.ctx.clock.now(), log });
    this.ctx.transcripts = this.search.indexer;
    const runner = new Runner(this.ctx);
    this.agentConnected = (id) => runner.startReleased(id);
    this.messages = new MessageService(this.ctx, runner);
    this.ctx.lockGuard = guardLocks(this.ctx, this.messages, this.confinement?.lockMounts);
    this.jobs = new JobService(this.ctx, runner, this.messages);
    this.budgets = new Budgets(this.ctx);
    this.budgets.actions = { stop: (id, error) => runner.stopForBudget(id, error) };
    this.jobs.budgets = this.budgets;
    // Model auto-choice (src/models): spawns check "auto", the runner chooses before the first attempt, budgets cover every candidate.
    const models = new ModelChooser(this.ctx);
    models.budgets = this.budgets;
    this.jobs.models = models;
    runner.chooseModel = (job, n, signal) => models.choose(job, n, signal);
    this.budgets.autoModels = (provider) => models.candidates(provider);
    this.schedules = new Schedules(this.ctx, this.jobs);
    this.jobs.schedules = this.schedules;
    this.health = new HealthMonitor(this.ctx);
    this.ctx.health = this.health;
    this.health.actions = {
      live: (id) => runner.live(id),
      settleLost: (id) => runner.settleLost(id),
      message: (id, text) => { this.messages.deliver('overseer', id, text); },
      freeze: async (id) => { await this.jobs.pause({ job_id: id, mode: 'freeze' }, { role: 'lead' }); },
      cancel: async (id, reason) => { await this.jobs.cancel({ job_id: id, reason, cascade: true }, { role: 'lead' }); },
    };
    this.digest = new LeadDigest(this.ctx);
    this.overlaps = new OverlapGuard(this.ctx, (to, text) => { this.messages.deliver('overseer', to, text); });
    this.locks = new LockService(this.ctx, this.confinement?.lockMounts ?? OPEN_GATE);
    this.notes = new NoteService(this.ctx);
    this.requests = new RequestService(this.ctx);
    this.requests.elicitor = this.elicitor;
    this.jobs.requests = this.requests;
    this.permissions = new PermissionService(this.ctx, this.requests);
    this.jobs.bashPolicy = (jobId, command) => this.permissions.decideBash(jobId, command);
    this.hook = new HookService(this.locks, this.ctx, this.permissions);
    this.workflows = new WorkflowService(this.ctx, this.jobs, this.notes, this.requests);
    this.runs = new RunService(this.ctx, this.jobs);
    this.runs.budgets = this.budgets;
    this.debates = new DebateService(this.ctx, this.jobs, this.notes);
    this.takeover = new TakeoverService(this.ctx, this.jobs);
    this.jobs.takenOver = (id) => this.takeover.isAttached(id);
    this.tools = [...agentTools(this.jobs), ...coordTools(this), ...workflowTools(this.workflows), ...kbTools(this.kb), ...searchTools(this.search.service), ...overlapTools(this.db), ...scheduleTools(this.schedules),
      ...projectTools({ projects: new ProjectService(this.db, () => this.ctx.clock.now()), db: this.db, now: () => this.ctx.clock.now() }), ...runTools(this.runs), ...debateTools(this.debates), ...takeoverTools(this.takeover),
      ...mergeTools(new MergeService({ db: this.db, now: () => this.ctx.clock.now(), worktree: this.ctx.config.worktree, env: this.ctx.childEnv }), this.ctx.progressEveryMs)];
    const templatesDir = join(settingsDirOf(o.config), 'templates');
    this.workflows.templates = workflowTemplates(templatesDir);
    this.promptDeps = { templatesDir, promptsDir: join(root, 'prompts'), log };
    this.resourceDeps = hubResourceDeps(this, {
      plan: (id) => this.workflows.get(id).plan ?? undefined,
      recent: (n) => this.workflows.list({ limit: Math.min(n, 100) }).workflows.map((w) => ({ id: w.workflow_id, title: w.title })),
    });
    this.setUrl = (u) => { url = u; };
  }

  private readonly setUrl: (u: string) => void;

  /** Reconcile, listen for children, and start whatever is queued. */
  async start(): Promise<void> {
    writeCodexHome(join(this.o.config.home, 'codex-home'), { model: this.o.config.codexModel, provider: this.o.config.codexProvider, modelCatalog: this.o.config.codexModelCatalog });
    this.reconciled = reconcile(this.ctx);
    // After reconcile: what it settled releases its reservation.
    this.budgets.attach();
    this.ctx.lockGuard?.locksChanged();
    this.detachGuard = this.ctx.bus.on('lock', () => this.ctx.lockGuard?.locksChanged());
    this.detachConfinement = this.confinement?.attach(this.ctx.bus);
    this.reconciled.locksReleasedFor = this.locks.reconcile();
    this.reconciled.requestsCancelled = this.requests.reconcile();
    // After reconcile: what it settled happened before this hub and is not news.
    this.notifier = attachNotifier(this.ctx);
    await excludeOverseerDirs(this.o.projectDir);
    this.leadToken = ensureLeadToken(this.o.config.home, () => this.ctx.ids.token());
    const leadHash = sha(this.leadToken);
    const startedAt = this.ctx.clock.now();
    this.floor = floorApi({ db: this.db, bus: this.ctx.bus, now: () => this.ctx.clock.now(), cap: this.o.config.maxAgents, log: this.ctx.log, hub: () => ({ url: this.http?.url ?? null, pid: process.pid, started_at: startedAt, version: this.version }) });
    let port = 0;
    this.web = createWeb({ ctx: this.ctx, jobs: this.jobs, services: { workflows: this.workflows, notes: this.notes, locks: this.locks, kb: this.kb, runs: this.runs, debates: this.debates, schedules: this.schedules }, packageRoot: packageRoot(), port: () => port, url: () => this.http?.url ?? '', version: this.version });
    this.http = await startHttp({
      port: this.o.config.port,
      preferredPort: lastPort(this.o.config.home),
      web: this.web.hooks,
      log: this.ctx.log,
      openSession: (c, out) => this.session(c, out),
      blocking: blockingTest(this.tools),
      onHook: (c, body, format) => {
        const h = checkHookInput(body);
        return h.ok ? this.hook.answer(c, h.input, format) : { decision: 'deny', reason: `Overseer denied this call: ${h.reason}` };
      },
      onApi: composeApi(personApi(this.requests), this.floor.handle, this.web.api, this.search.api),
      version: this.version,
      sessions: { maxPerToken: this.o.config.maxSessionsPerToken, idleMs: this.o.config.sessionIdleS * 1000 },
      auth: tokenAuth(this.db, leadHash, sha),
    });
    this.setUrl(this.http.url);
    port = this.http.port;
    rememberPort(this.o.config.home, port);
    if (this.o.writeHubInfo !== false) {
      const info: HubInfo = { pid: process.pid, port: this.http.port, url: this.http.url, started_at: new Date().toISOString(), version: this.version };
      if (this.o.publish) this.o.publish(info);
      else writeFileAtomic(join(this.o.config.home, 'hub.json'), `${JSON.stringify(info, null, 2)}\n`);
    }
    this.ctx.log.info({ url: this.http.url, reconciled: this.reconciled }, 'hub started');
    // Occurrences that settled or came due while no hub ran: once each, then the timer.
    this.schedules.start();
    this.jobs.runner.resumeSettling();
    this.jobs.runner.dispatch();
    this.workflows.reconcile();
    await this.runs.start();
    this.debates.reconcile();
    this.health.start();
    this.overlaps.start();
    // Transcripts not (completely) indexed yet — all of them after an upgrade — in the background.
    this.search.start();
  }

  /** Nothing to keep a background hub alive: no live job, no lead connected (a session of a killed bridge, its stream gone, does not count).
   * A scheduled run is a `waiting` job (src/runs/schedules.ts), so a hub with scheduled work is never idle. */
  idle(): boolean {
    if ((this.http?.sessionCount('lead', true) ?? 0) > 0) return false;
    if (this.runs.hasWork()) return false;
    if (this.takeover.active()) return false; // a person works on an agent's session
    return this.ctx.store.byStatus('queued', 'waiting', 'running', 'frozen', 'needs_input').length === 0;
  }

  /** Around every tool call: renew the caller's locks; an agent's time in our tools is not idleness; the lead's digest. */
  private onCall(c: Caller): CallScope {
    this.locks.renew(c);
    if (c.role === 'agent') {
      const end = this.health.callStarted(c.jobId);
      return { end: () => end() };
    }
    return this.digest.scope();
  }

  /** The MCP server (src/mcp): one method table per role, built once, shared by every session. */
  private get mcp(): NativeMcpServer {
    return (this.mcpServer ??= new NativeMcpServer({ tools: this.tools, version: this.version, log: this.ctx.log, onCall: (c) => this.onCall(c), prompts: this.promptDeps, resources: this.resourceDeps }));
  }

  /** An MCP server for one connection of `caller`, to connect to a transport (in-memory, stdio). */
  server(caller: Caller): McpConnection {
    return this.mcp.connection(caller, (s) => this.opened(s));
  }

  /** An MCP session of `caller` whose messages go to `out` (the HTTP endpoint's). */
  session(caller: Caller, out: Outbound): McpSession {
    return this.opened(this.mcp.session(caller, out));
  }

  private opened(s: McpSession): McpSession {
    if (s.caller.role === 'lead') this.elicitor.add(s);
    else this.agentConnected(s.caller.jobId);
    return s;
  }

  /** Stop children (their jobs become interrupted), close the endpoint and the database. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.health.stop();
      // First: nothing new is queued while the children stop (the next hub catches up).
      this.schedules.close();
      this.runs.close();
      this.overlaps.close();
      await this.jobs.runner.shutdown();
      await this.workflows.drain();
      await this.debates.drain();
      this.budgets.close();
      await this.notifier?.close();
      await this.search.close();
      this.detachConfinement?.();
      this.detachGuard?.();
      this.locks.close();
      this.floor?.close();
      this.web?.close();
      this.mcpServer?.close();
      await this.http?.close();
      this.db.close();
      this.kb.close();
      this.ctx.log.info('hub stopped');
    })();
    return this.stopping;
  }
}

/** The port this state's hub listened on last time (a restarted hub takes it again when free). */
function lastPort(home: string): number | undefined {
  try {
    const n = Number(readFileSync(join(home, 'last-port'), 'utf8').trim());
    return Number.isInteger(n) && n > 0 && n < 65536 ? n : undefined;
  } catch {
    return undefined;
  }
}

function rememberPort(home: string, port: number): void {
  try { writeFileAtomic(join(home, 'last-port'), `${port}\n`); } catch { /* a read-only state directory: no preference next time */ }
}
