// Composition root: builds the hub's services (src/compose.ts, every one through its
// constructor), reconciles the database, opens the children's HTTP endpoint and hands out MCP
// servers per caller. Used by `overseer mcp`, `overseer serve`, the tests and the demo.
import type { ShipLane } from './floor/ship.js';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { packageRoot, type Config } from './config.js';
import type { Confinement } from './confine/setup.js';
import type { LockGuard } from './confine/lockGuard.js';
import type { Caller, HubContext } from './services/context.js';
import type { JobService } from './services/jobs.js';
import type { MessageService } from './services/messages.js';
import type { LockService } from './services/locks.js';
import type { NoteService } from './services/notes.js';
import type { RequestService } from './approvals/service.js';
import type { PermissionService } from './services/permissions.js';
import type { HookService } from './services/hook.js';
import type { WorkflowService } from './workflow/service.js';
import type { DebateService } from './debate/index.js';
import type { KnowledgeBase } from './kb/service.js';
import type { Budgets } from './money/budgets.js';
import type { Search } from './search/index.js';
import type { Schedules } from './runs/schedules.js';
import type { RunService } from './runs/index.js';
import type { ScriptRuns } from './scripts/runs.js';
import type { HealthMonitor } from './floor/monitor.js';
import type { LeadDigest } from './floor/digest.js';
import type { OverlapGuard } from './branches/overlapGuard.js';
import type { Runner } from './services/runner.js';
import type { LiveChildren } from './services/children.js';
import { personApi } from './approvals/http.js';
import { floorApi, type FloorApi } from './floor/http.js';
import type { BriefService } from './brief/service.js';
import { checkHookInput } from './domain/hookInput.js';
import { settingsDirOf } from './config.js';
import type { PromptDeps } from './mcp/prompts.js';
import { hubResourceDeps, type ResourceDeps } from './mcp/resources.js';
import { LeadElicitor } from './server/elicit.js';
import { hashToken as sha } from './services/runner.js';
import { reconcile, type ReconcileReport } from './services/reconcile.js';
import { deadHubReconciler } from './services/hubReconcile.js';
import type { AttemptQueueService } from './services/attemptQueue.js';
import { requeueStopped } from './services/workerLost.js';
import { workerOfHub } from './store/sql/workers.js';
import { HubRegistry } from './store/sql/hubs.js';
import { hostname } from 'node:os';
import { writeCodexHome } from './launch/codex/launcher.js';
import { excludeOverseerDirs } from './git/worktree.js';
import { blockingTest, type CallScope, type ToolDef } from './tools/registry.js';
import { NativeMcpServer, type McpConnection } from './mcp/server.js';
import type { McpSession, Outbound } from './mcp/session.js';
import { startHttp, type HttpEndpoint } from './server/http.js';
import { composeApi } from './http/api.js';
import { tokenAuth } from './server/tokenAuth.js';
import { createWeb, type Web } from './web/index.js';
import { ensureLeadToken, writeFileAtomic, type HubInfo } from './hubfiles/hubLock.js';
import { attachNotifier, type Notifier } from './floor/notify/index.js';
import { InvalidStateError } from './errors.js';
import { compose, type ComposeOptions, type Lifecycle } from './compose.js';
import { openSql, type SqlDb } from './store/sql/open.js';

export interface HubOptions extends ComposeOptions {
  /** Write hub.json (real hubs do; in-process test hubs may not). */
  writeHubInfo?: boolean;
  /** Publishes hub.json for the holder of the state directory's claim (src/hubproc/). */
  publish?: (info: HubInfo) => void;
  /** Another hub found this one dead (docs/store-plan.md §3.6): its children are killed, nothing recorded; then this
   * (the hub process exits: src/hubproc/serve.ts). Without it the hub stops. */
  onFenced?: () => void;
  /** false: the database must have Overseer's schema already, and it is not upgraded (a worker: docs/workers-plan.md §3). */
  migrate?: boolean;
  /** false: a hub in worker mode (src/worker/run.ts): it takes up no runs, scripts, workflows, debates or schedules
   * (the lead's hubs drive them; a worker's hub would spawn jobs it never starts), and adopts none of a dead hub's. */
  drives?: boolean;
}

import { packageVersion } from './version.js';
import { countByStatus } from './store/sql/jobs.js';

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
  readonly kb: KnowledgeBase;
  readonly health: HealthMonitor;
  /** The conflict guard: files two live worktree branches both change (src/branches/overlapGuard.ts). */
  readonly overlaps: OverlapGuard;
  /** The house, label and subtree budgets: reservations at spawn, stops when one is crossed (src/money/budgets.ts). */
  readonly budgets: Budgets;
  /** Batch dispatch from a file (src/runs). */
  readonly runs: RunService;
  /** A lead's scripts (src/scripts). */
  readonly scripts: ScriptRuns;
  private readonly runner: Runner;
  private readonly children: LiveChildren;
  private readonly lockGuard: LockGuard;
  private readonly digest: LeadDigest;
  /** The optional capabilities switched on (config.capabilities; src/compose.ts). */
  private readonly caps: { debates?: DebateService; search?: Search; schedules?: Schedules };
  private readonly lifecycle: { schedules: Lifecycle; debates: Lifecycle; search: Lifecycle; relay: Lifecycle; commands: Lifecycle; sendBack: Lifecycle; queue: Lifecycle };
  /** Agents a person took over with overseer attach (src/takeover); never any without the capability. */
  private readonly takenOver: { active(): boolean; load(): Promise<void> };
  private readonly promptDeps: PromptDeps;
  private readonly resourceDeps: ResourceDeps;
  private readonly elicitor = new LeadElicitor();
  private mcpServer?: NativeMcpServer;
  readonly tools: ToolDef[];
  /** READY TO SHIP's verbs (src/floor/ship.ts), served on the floor's API. */
  private readonly ship: ShipLane;
  /** The crew brief (src/brief): the lead's tool and the person's API set it. */
  readonly brief: BriefService;
  readonly version: string;
  /** The dashboard (src/web), once started. */
  web?: Web;
  /** The floor (/api/floor and its stream, src/floor/http.ts), once started. */
  floor?: FloorApi;
  leadToken = '';
  http?: HttpEndpoint;
  reconciled?: ReconcileReport;
  /** This hub's id and its row in `hubs` (heartbeat, dead hubs: src/store/sql/hubs.ts). */
  readonly hubId: string;
  private registry?: HubRegistry;
  /** Placement and the worker queue: a lost worker's jobs go back into it (src/services/workerLost.ts). */
  private readonly queue: AttemptQueueService;
  private stopping?: Promise<void>;
  /** Adoptions of what dead hubs drove, one after another; undefined until start() has taken up its own. */
  private adoption?: Promise<void>;
  /** OS confinement of children (undefined with an injected process launcher). */
  readonly confinement?: Confinement;
  private detachConfinement?: () => void;
  private detachGuard?: () => void;
  /** Sends what a person should hear of to the configured sinks (src/floor/notify). */
  notifier?: Notifier;
  /** The children's MCP endpoint, known once the HTTP listener is up. */
  private url = '';

  /**
   * Open the state (SQLite in the state directory, or the PostgreSQL database the configuration
   * names: connected and migrated; a wrong URL fails here with what to check) and build the hub
   * over it. Not started: call `start()`.
   */
  static async open(o: HubOptions): Promise<Hub> {
    const sql = await openSql(o.config, { migrate: o.migrate ?? true });
    try {
      return new Hub(o, sql);
    } catch (err) {
      await sql.close();
      throw err;
    }
  }

  private constructor(private readonly o: HubOptions, sql: SqlDb) {
    const s = compose(o, sql, this.elicitor, () => this.url);
    this.ctx = s.ctx;
    this.queue = s.queue;
    this.confinement = s.confinement;
    this.lockGuard = s.lockGuard;
    this.children = s.children;
    this.runner = s.runner;
    this.jobs = s.jobs;
    this.messages = s.messages;
    this.locks = s.locks;
    this.notes = s.notes;
    this.requests = s.requests;
    this.permissions = s.permissions;
    this.hook = s.hook;
    this.workflows = s.workflows;
    this.kb = s.kb;
    this.health = s.health;
    this.overlaps = s.overlaps;
    this.budgets = s.budgets;
    this.runs = s.runs;
    this.scripts = s.scripts;
    this.digest = s.digest;
    this.caps = { debates: s.debates, search: s.search, schedules: s.schedules };
    this.lifecycle = s.lifecycle;
    this.takenOver = s.takenOver;
    this.tools = s.tools;
    this.ship = s.ship;
    this.brief = s.brief;
    this.hubId = s.hubId;
    this.version = packageVersion();
    this.promptDeps = { templatesDir: join(settingsDirOf(o.config), 'templates'), promptsDir: join(packageRoot(), 'prompts'), log: s.ctx.log };
    this.resourceDeps = hubResourceDeps(this, {
      plan: async (id) => (await this.workflows.get(id)).plan ?? undefined,
      recent: async (n) => (await this.workflows.list({ limit: Math.min(n, 100) })).workflows.map((w) => ({ id: w.workflow_id, title: w.title })),
    });
  }

  /** Debates on the job engine (src/debate); an error when the capability is switched off. */
  get debates(): DebateService {
    return switchedOn(this.caps.debates, 'debates');
  }

  /** The transcript index and search_output (src/search); an error when the capability is switched off. */
  get search(): Search {
    return switchedOn(this.caps.search, 'search');
  }

  /** Schedules and repeats: spawn_agent { at, every_s, cron } (src/runs/schedules.ts); tests drive it with tick(). */
  get schedules(): Schedules {
    return switchedOn(this.caps.schedules, 'schedules');
  }

  /** Reconcile, listen for children, and start whatever is queued. */
  async start(): Promise<void> {
    // First: what reconcile settles crosses to the other hubs, and a database that cannot be listened to fails the start.
    await this.lifecycle.relay.start();
    writeCodexHome(join(this.o.config.home, 'codex-home'), { model: this.o.config.codexModel, provider: this.o.config.codexProvider, modelCatalog: this.o.config.codexModelCatalog });
    this.registry = await this.register();
    this.reconciled = await reconcile(this.ctx, this.hubId);
    await this.takenOver.load();
    // After reconcile: what it settled releases its reservation.
    await this.budgets.attach();
    this.lockGuard.locksChanged();
    const guard = (): void => void this.lockGuard.locksChanged();
    this.detachGuard = this.ctx.bus.on('lock', guard, { remote: true, resync: guard });
    this.detachConfinement = this.confinement?.attach(this.ctx.bus);
    this.reconciled.locksReleasedFor = await this.locks.reconcile();
    this.reconciled.requestsCancelled = await this.requests.reconcile();
    // After reconcile: what it settled happened before this hub and is not news.
    this.notifier = attachNotifier(this.ctx);
    await excludeOverseerDirs(this.o.projectDir);
    this.leadToken = ensureLeadToken(this.o.config.home, () => this.ctx.ids.token());
    const leadHash = sha(this.leadToken);
    const startedAt = this.ctx.clock.now();
    this.floor = floorApi({ sql: this.ctx.sql, bus: this.ctx.bus, now: () => this.ctx.clock.now(), cap: this.o.config.maxAgents, log: this.ctx.log, ship: this.ship, brief: this.brief, hub: () => ({ id: this.hubId, url: this.http?.url ?? null, pid: process.pid, started_at: startedAt, version: this.version }) });
    let port = 0;
    this.web = createWeb({ ctx: this.ctx, jobs: this.jobs, services: { workflows: this.workflows, notes: this.notes, locks: this.locks, kb: this.kb, runs: this.runs, tools: this.tools, debates: this.caps.debates, schedules: this.caps.schedules }, packageRoot: packageRoot(), port: () => port, url: () => this.http?.url ?? '', version: this.version });
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
      onApi: composeApi(personApi(this.requests), this.floor.handle, this.web.api, ...(this.caps.search ? [this.caps.search.api] : [])),
      version: this.version,
      sessions: { maxPerToken: this.o.config.maxSessionsPerToken, idleMs: this.o.config.sessionIdleS * 1000 },
      auth: tokenAuth(this.ctx.sql.db, leadHash, sha, this.hubId),
    });
    this.url = this.http.url;
    await this.registry.setUrl(this.http.url);
    port = this.http.port;
    rememberPort(this.o.config.home, port);
    if (this.o.writeHubInfo !== false) {
      const info: HubInfo = { pid: process.pid, port: this.http.port, url: this.http.url, started_at: new Date().toISOString(), version: this.version };
      if (this.o.publish) this.o.publish(info);
      else writeFileAtomic(join(this.o.config.home, 'hub.json'), `${JSON.stringify(info, null, 2)}\n`);
    }
    this.ctx.log.info({ url: this.http.url, reconciled: this.reconciled }, 'hub started');
    const drives = this.o.drives ?? true;
    // Occurrences that settled or came due while no hub ran: once each, then the timer.
    if (drives) await this.lifecycle.schedules.start();
    await this.runner.resumeSettling();
    await this.runner.limits.ready(); // the limits in force before this hub, before anything starts
    await this.runner.dispatch();
    // Commands other hubs left for this hub's jobs (its predecessors' are its own now).
    await this.lifecycle.commands.start();
    if (!drives) return this.startedWithoutDriving();
    await this.runs.start();
    // Script runs a previous hub left running: their scripts run again, the journal answers what was done.
    await this.scripts.resumeAll();
    // After them: only a workflow from before workflows ran as a script gets a run here.
    await this.workflows.reconcile();
    await this.workflows.adopt(); // the workflows whose runs were adopted above follow them
    this.lifecycle.debates.start();
    // A hub found dead while this one started: its runs were released after the take-ups above read.
    this.adoption = Promise.resolve();
    void this.adoptOrphans();
    this.health.start();
    await this.overlaps.start();
    // Transcripts not (completely) indexed yet — all of them after an upgrade — in the background.
    this.lifecycle.search.start();
    this.lifecycle.sendBack.start(); // sent-back jobs that ended while no hub listened are merged again
  }

  /** The rest of a start for a hub in worker mode: what watches its own children only. */
  private startedWithoutDriving(): void {
    this.health.start();
    this.lifecycle.search.start();
  }

  /**
   * Runs, workflows and debates left without a driver (a hub this one found dead, or unowned):
   * adopted by compare-and-set and driven on as a start takes up its own (docs/decisions.md "Runs,
   * workflows and debates across hubs"). One adoption at a time; none before start() took up its own.
   */
  private adoptOrphans(): Promise<void> {
    if (!this.adoption) return Promise.resolve();
    this.adoption = this.adoption.then(async () => {
      if (this.stopping) return;
      await this.runs.adopt();
      await this.scripts.resumeAll();
      await this.workflows.adopt();
      await this.caps.debates?.adopt();
    }).catch((err: unknown) => this.ctx.log.error({ err }, 'could not adopt what a dead hub drove'));
    return this.adoption;
  }

  /** This hub's row in `hubs`, beating; on both dialects (on SQLite the rows are bookkeeping: one hub per database). */
  private register(): Promise<HubRegistry> {
    const { config } = this.o;
    const dead = deadHubReconciler(this.ctx, this.hubId, () => this.adoptOrphans(), (trx, id, replacing) => this.queue.queued(trx, id, replacing));
    return HubRegistry.start({
      id: this.hubId, db: this.ctx.sql.db, dialect: this.ctx.sql.dialect, url: config.databaseUrl, log: this.ctx.log,
      identity: { host: hostname(), pid: process.pid, url: null, stateDir: config.home, version: this.version },
      beatMs: config.hubBeatMs, timeoutMs: config.hubTimeoutMs,
      reconcile: dead.reconcile, onReconciled: dead.onReconciled,
      onFenced: () => this.fence(),
    });
  }

  /** Nothing to keep a background hub alive: no live job, no lead connected (a session of a killed bridge, its stream gone, does not count).
   * A scheduled run is a `waiting` job (src/runs/schedules.ts), so a hub with scheduled work is never idle. */
  async idle(): Promise<boolean> {
    if ((this.http?.sessionCount('lead', true) ?? 0) > 0) return false;
    if (this.runs.hasWork() || this.scripts.hasWork()) return false;
    if (this.takenOver.active()) return false; // a person works on an agent's session
    return (await countByStatus(this.ctx.sql.db, 'queued', 'waiting', 'running', 'frozen', 'needs_input')) === 0;
  }

  /** Around every tool call: renew the caller's locks; an agent's time in our tools is not idleness; the lead's digest. */
  private onCall(c: Caller): CallScope {
    void this.locks.renew(c)?.catch((err: unknown) => this.ctx.log.error({ err: err instanceof Error ? err.message : String(err) }, 'locks: renewing failed'));
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
    else this.children.startReleased(s.caller.jobId); // its start is past the CPU-heavy part: the start gate's slot is freed
    return s;
  }

  /** Another hub settled this one's jobs already (or, for a worker, its lease ended): kill the
   * children, record nothing for them; then the process's own handler (it exits), else stop. */
  fence(): void {
    this.runner.fence();
    if (this.o.onFenced) this.o.onFenced();
    else void this.stop();
  }

  /** In worker mode, at a clean stop: the jobs just interrupted here are queued again for another worker (src/services/workerLost.ts). */
  private async requeueStopped(): Promise<void> {
    const db = this.ctx.sql.db;
    const hub = await db.selectFrom('hubs').selectAll().where('id', '=', this.hubId).executeTakeFirst();
    if (!hub) return;
    const ids = await requeueStopped(db, { hub, worker: await workerOfHub(db, this.hubId) }, {
      now: this.ctx.clock.now(), maxAttempts: this.ctx.config.maxAttempts, requeue: (trx, id, replacing) => this.queue.queued(trx, id, replacing),
    });
    for (const jobId of ids) this.ctx.bus.emit('job', { jobId, status: 'queued' });
    if (ids.length) this.ctx.log.info({ jobs: ids }, 'this worker stopped: its interrupted jobs are queued again');
  }

  /** Stop children (their jobs become interrupted), close the endpoint and the database. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.health.stop();
      await this.lifecycle.commands.stop();
      // First: nothing new is queued while the children stop (the next hub catches up).
      await this.lifecycle.schedules.stop();
      this.runs.close();
      // Before the children stop: a script must not take their interruption for a failure.
      await this.scripts.close();
      this.overlaps.close();
      await this.runner.shutdown();
      // A worker's interrupted jobs go back to the queue at once (another worker takes them; no lease wait).
      if (!(this.o.drives ?? true)) await this.requeueStopped().catch((err: unknown) => this.ctx.log.error({ err }, 'could not queue this worker\'s interrupted jobs again: they stay interrupted'));
      // After the children were interrupted: nobody waits a timeout for this hub.
      await this.registry?.stop().catch((err: unknown) => this.ctx.log.warn({ err }, 'could not mark this hub stopped'));
      await this.workflows.drain();
      await this.lifecycle.sendBack.stop(); // re-merges of sent-back jobs that finished: done before the database closes
      await this.lifecycle.debates.stop();
      await this.lifecycle.relay.stop(); // after the children's interruptions: their events reach the other hubs
      await this.lifecycle.queue.stop(); // the worker queue's pg-boss, if this hub opened it
      this.budgets.close();
      await this.notifier?.close();
      await this.lifecycle.search.stop();
      this.detachConfinement?.();
      this.detachGuard?.();
      this.locks.close();
      this.floor?.close();
      this.web?.close();
      this.mcpServer?.close();
      await this.http?.close();
      await this.ctx.sql.close();
      await this.kb.close();
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

/** A capability's service, or a clear error when the configuration switched it off. */
function switchedOn<T>(service: T | undefined, name: keyof Config['capabilities']): T {
  if (service === undefined) throw new InvalidStateError(`The ${name} capability is switched off in this hub's configuration (capabilities.${name}: false). Switch it on in .overseer/config.json or OVERSEER_CAPABILITIES and restart the hub.`);
  return service;
}
