// The job engine without a hub: a real SQLite state database in a temp directory (opened with
// openSql, as the hub opens its layer), the Runner and
// JobService built directly with what they need (as src/compose.ts builds them), a manual clock,
// and the scripted process launcher (./fakeLauncher.ts) standing in for the children's processes
// (the real ClaudeLauncher still builds each command). No HTTP endpoint, no MCP server.
import { HUB_ONLY } from '../../src/services/attemptQueue.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfigFrom, packageRoot, type Config } from '../../src/config.js';
import { openSql } from '../../src/store/sql/open.js';
import { getJob } from '../../src/store/sql/jobs.js';
import type { JobRow } from '../../src/store/jobs.js';
import { Bus } from '../../src/services/bus.js';
import type { HubContext } from '../../src/services/context.js';
import { LiveChildren } from '../../src/services/children.js';
import { MessageService } from '../../src/services/messages.js';
import { Runner, type ActivitySink, type TranscriptSink } from '../../src/services/runner.js';
import { HUB_WORK } from '../../src/services/workSource.js';
import { NO_POSTER } from '../../src/services/commands.js';
import { JobService, NOT_CONFINABLE, NO_TAKEOVER, type SpawnSchedules, type TakenOver } from '../../src/services/jobs.js';
import { RequestService } from '../../src/approvals/service.js';
import { PermissionService } from '../../src/services/permissions.js';
import { Budgets } from '../../src/money/budgets.js';
import { ModelChooser, autoModels } from '../../src/models/choice.js';
import { Limits } from '../../src/limits/service.js';
import { accounts } from '../../src/limits/account.js';
import { HookLedger } from '../../src/confine/hookLedger.js';
import { guardLocks } from '../../src/confine/guard.js';
import { ClaudeLauncher } from '../../src/launch/claude/launcher.js';
import { PromptLibrary } from '../../src/prompts/load.js';
import { ScheduleBook } from '../../src/runs/scheduleBook.js';
import { silentLogger } from '../../src/log.js';
import { randomIds } from '../../src/clock.js';
import { SpawnInput } from '../../src/contract/agents.js';
import { ScriptedLauncher, type TurnScript } from './fakeLauncher.js';
import { claudeBin, makeTempDir } from './claude.js';
import { waitUntil } from '../../src/services/wait.js';

/** A clock the test moves. */
export class ManualClock {
  constructor(public t = Date.UTC(2026, 0, 5, 9, 0, 0)) {}
  now(): number { return this.t; }
  advance(ms: number): void { this.t += ms; }
}

/** What the runner told its transcript index and its health monitor, in order. */
export class Heard implements TranscriptSink {
  readonly lines: { jobId: string; attempt: number; line: string }[] = [];
  readonly ended: { jobId: string; attempt: number }[] = [];
  /** Jobs whose child printed something (the health monitor's activity), once per line. */
  readonly active: string[] = [];
  line(jobId: string, attempt: number, line: string): void { this.lines.push({ jobId, attempt, line }); }
  attemptEnded(jobId: string, attempt: number): void { this.ended.push({ jobId, attempt }); }
  /** The runner's activity sink. */
  readonly sink: ActivitySink = { activity: (jobId) => { this.active.push(jobId); }, commands: () => undefined };
}

export interface Engine {
  dir: string;
  ctx: HubContext;
  clock: ManualClock;
  launcher: ScriptedLauncher;
  children: LiveChildren;
  runner: Runner;
  jobs: JobService;
  heard: Heard;
  /** spawn_agent as the lead (its input parsed as the tool parses it). */
  spawn(input: Record<string, unknown>): ReturnType<JobService['spawn']>;
  /** The job's row, read through the layer; throws when there is none. */
  job(id: string): Promise<JobRow>;
  /** The job once `pred` holds, re-checked on every job event; rejects after `ms`. */
  until(id: string, pred: (j: JobRow) => boolean | Promise<boolean>, ms?: number): Promise<JobRow>;
  /** Stop the children and close the database, then remove the directory. */
  close(): Promise<void>;
}

/** A context without the SQLite handle and the synchronous store, which leave HubContext at the switch (nothing in src/ reads them). */
const layerOnly = (c: Omit<HubContext, 'db' | 'store'>): HubContext => c as HubContext;

export async function startEngine(o: {
  config?: Partial<Config>;
  script?: TurnScript;
  takeover?: TakenOver;
  schedules?: SpawnSchedules;
  /** The runner's transcript sink (default: a recorder, `heard`). */
  transcripts?: TranscriptSink;
} = {}): Promise<Engine> {
  const dir = await makeTempDir('ovs-engine');
  const config = loadConfigFrom({ home: join(dir, 'state'), claudeBin: claudeBin(), killGraceMs: 500, startConcurrency: 0, worktreesDir: join(dir, 'worktrees'), ...o.config });
  const sql = await openSql({ home: config.home });
  const clock = new ManualClock();
  const launcher = new ScriptedLauncher(o.script ?? (() => ({ resultText: 'done' })));
  const root = packageRoot();
  // The context as the hub builds it once PostgreSQL is switched on: the layer alone (no SQLite
  // handle, no synchronous store; docs/store-plan.md §4 step 8).
  const ctx = layerOnly({
    config, projectDir: dir, sql, bus: new Bus(), clock, ids: randomIds, log: silentLogger,
    processes: launcher,
    launchers: { claude: new ClaudeLauncher({ bin: config.claudeBin, packageRoot: root }) },
    prompts: new PromptLibrary(join(root, 'prompts')),
    mcpUrl: () => 'http://127.0.0.1:9/mcp',
    childEnv: {},
    progressEveryMs: 10_000,
  });
  const heard = new Heard();
  const children = new LiveChildren(ctx);
  const messages = new MessageService(ctx, children, 'h-engine');
  const budgets = new Budgets(ctx, { actions: { stop: (id, e) => children.stopForBudget(id, e) }, autoModels: (p) => autoModels(config, p), runBudget: async () => undefined });
  const models = new ModelChooser(ctx, budgets);
  const limits = new Limits(
    { q: ctx.sql.db, clock, bus: ctx.bus, log: silentLogger, settings: config.limits, accounts: accounts({}) },
    { pause: (id, p) => children.pauseAtLimit(id, p), unpause: (id) => children.unpauseAtLimit(id), dispatch: () => runner.dispatch() },
  );
  const runner = new Runner(ctx, {
    children, limits, models, memory: () => undefined, transcripts: o.transcripts ?? heard,
    activity: heard.sink,
    lockGuard: guardLocks(ctx, messages, 'h-engine'), hookLedger: new HookLedger(), hubId: 'h-engine', queue: HUB_ONLY, work: HUB_WORK,
  });
  const requests = new RequestService(ctx, { ask: async () => undefined });
  const permissions = new PermissionService(ctx, requests);
  const jobs = new JobService(ctx, {
    runner, children, messages, budgets, models, requests,
    schedules: o.schedules ?? new ScheduleBook(ctx),
    bashPolicy: (id, cmd) => permissions.decideBash(id, cmd),
    takeover: o.takeover ?? NO_TAKEOVER,
    confinement: NOT_CONFINABLE,
    commands: NO_POSTER,
    queue: HUB_ONLY,
  });
  await limits.ready(); // as the hub does before its first dispatch
  const job = async (id: string): Promise<JobRow> => {
    const j = await getJob(sql.db, id);
    if (!j) throw new Error(`no job ${id}`);
    return j;
  };
  return {
    dir, ctx, clock, launcher, children, runner, jobs, heard,
    spawn: (input) => jobs.spawn(SpawnInput.parse(input), { role: 'lead' }),
    job,
    async until(id, pred, ms = 15_000) {
      const r = await waitUntil({ bus: ctx.bus, events: ['job'], timeoutMs: ms, check: async () => {
        const j = await job(id);
        return (await pred(j)) ? j : undefined;
      } });
      if (!r.ok) {
        const j = await job(id);
        throw new Error(`job ${id} is ${j.status} after ${ms} ms (${j.error ?? 'no error'})`);
      }
      return r.value;
    },
    async close() {
      await runner.shutdown();
      await sql.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
