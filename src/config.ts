// Configuration: environment first, then an optional <project>/.overseer/config.json, validated once with zod.
// Pipeline: locate state dir → read file → merge env over it → validate. `loadConfigFrom` lets
// tests skip the disk.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { InvalidInputError } from './errors.js';
import { gitSync } from './git/exec.js';
import { NotifySchema } from './config/notify.js';
import { ModelTiersSchema } from './config/modelTiers.js';
import { LimitsSchema } from './config/limits.js';

/** Env values are strings: a JSON object in an env var is parsed before validation. */
const jsonText = (v: unknown): unknown => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v; // zod then says it is not an object
  }
};

const intFromString = (min: number, max: number) =>
  z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be a whole number').min(min).max(max);

const REACTIONS = z.enum(['notify', 'message', 'freeze', 'cancel']);

export const HealthSchema = z.object({
  /** No output from a child for this long (outside Overseer's own blocking tools) raises `stalled`. */
  stalledS: z.number().int().min(1).max(7 * 24 * 3600).default(600),
  /** A job running this long raises `long_running` (0: never). */
  longRunningS: z.number().int().min(0).max(30 * 24 * 3600).default(0),
  /** turns_high / budget_high / time_high fire at this fraction of max_turns / budget_usd / timeout_s. */
  highFraction: z.number().gt(0).max(1).default(0.8),
  /** How often the monitor and the watchdog look. */
  checkMs: z.number().int().min(50).max(60_000).default(1000),
  /** What happens when a warning is raised, per kind (default notify: shown and sent to the notification sinks only). */
  reactions: z.object({
    stalled: REACTIONS.optional(),
    turns_high: REACTIONS.optional(),
    budget_high: REACTIONS.optional(),
    time_high: REACTIONS.optional(),
    long_running: REACTIONS.optional(),
    commands_failed: REACTIONS.optional(),
  }).strict().default({}),
  /** The text a `message` reaction sends the agent; {warning} and {detail} are filled in. */
  nudge: z.string().min(1).max(2000).default('Overseer: {warning}: {detail}. If you are stuck, say so with report_status or finish with what you have.'),
}).strict();

export type HealthConfig = z.infer<typeof HealthSchema>;

/** Worktree bootstrap (src/git/bootstrap.ts, docs/worktrees.md). */
export const WorktreeSchema = z.object({
  /** Globs of untracked or ignored files copied from the main checkout into each new worktree, e.g. [".env*"]. */
  copy: z.array(z.string().min(1, 'a copy pattern is not empty').max(500)).max(100).default([]),
  /** Shell commands run in each new worktree before its agent starts, e.g. ["npm ci"]. */
  setup: z.array(z.string().min(1, 'a setup command is not empty').max(4000)).max(20).default([]),
  /** Longest one setup command may run (seconds). */
  setupTimeoutS: z.number().int().min(1).max(24 * 3600).default(600),
  /** With no setup configured, run the install command the worktree's lockfile implies (npm ci, uv sync, ...). */
  detect: z.boolean().default(true),
}).strict();

/**
 * Optional capabilities, each on unless switched off (docs/configuration.md). Off, the hub does not
 * offer its tools and does not build it (src/compose.ts); everything else stays as it is.
 */
export const CapabilitiesSchema = z.object({
  /** start_debate, get_debate, list_debates, cancel_debate (src/debate). */
  debates: z.boolean().default(true),
  /** spawn_agent's at / every_s / cron, list_schedules, cancel_schedule (src/runs/schedules.ts). */
  schedules: z.boolean().default(true),
  /** search_output and the transcript index (src/search). */
  search: z.boolean().default(true),
  /** attach_agent, detach_agent: a person takes an agent's session over (src/takeover). */
  takeover: z.boolean().default(true),
}).strict('unknown capability: capabilities takes only debates, schedules, search, takeover (each true or false)');

export type Capabilities = z.infer<typeof CapabilitiesSchema>;

export const ConfigSchema = z
  .object({
    home: z.string().min(1),
    /** The project's settings directory (config.json, policy.json, templates/); default: home. */
    settingsDir: z.string().min(1).optional(),
    claudeBin: z.string().min(1).optional(),
    codexBin: z.string().min(1).optional(),
    maxAgents: intFromString(1, 256).default(8),
    port: intFromString(0, 65535).default(0),
    lockMode: z.enum(['auto', 'strict', 'off']).default('auto'),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    /** How deep agents may nest (lead's children are depth 1). */
    maxDepth: intFromString(1, 10).default(2),
    /** Default wall clock per attempt when spawn_agent gives no timeout_s. */
    defaultTimeoutS: intFromString(1, 7 * 24 * 3600).default(3600),
    /** SIGTERM → SIGKILL grace period. */
    killGraceMs: intFromString(0, 60_000).default(3000),
    /** Attempts in all for a job with retry `same`/`analyze`. */
    maxAttempts: intFromString(1, 10).default(3),
    /** Longest blocking wait a tool allows (seconds); the child's MCP timeout sits above it. */
    maxWaitS: intFromString(1, 24 * 3600).default(3600),
    /** Models a workflow phase rotates to when its model is rate limited (comma-separated in env). */
    fallbackModels: z.preprocess((v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v), z.array(z.string().min(1)).max(10)).default([]),
    /** Triage reported learnings with a short claude run (small model) before storing them. */
    kbTriage: z.preprocess((v) => (v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v), z.boolean()).default(false),
    /** Codex children: default model, sandbox, a Responses-compatible provider, extra prices. */
    codexModel: z.string().min(1).optional(),
    /** A Codex model catalog (JSON) describing models Codex does not know, e.g. behind a gateway. */
    codexModelCatalog: z.string().min(1).optional(),
    codexSandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).default('workspace-write'),
    codexProvider: z.preprocess(jsonText, z.object({
      id: z.string().regex(/^[a-z][a-z0-9_-]*$/, 'id must be lower-case letters, digits, - or _').optional(),
      name: z.string().optional(),
      base_url: z.string().url('base_url must be a URL such as http://127.0.0.1:8080/v1'),
      env_key: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'env_key names an environment variable, e.g. MY_API_KEY').optional(),
      supports_websockets: z.boolean().optional(),
      request_max_retries: z.number().int().min(0).max(100).optional(),
      stream_max_retries: z.number().int().min(0).max(100).optional(),
    }).strict()).optional(),
    codexPrices: z.preprocess(jsonText, z.record(z.object({ input: z.number().min(0), output: z.number().min(0), cached_input: z.number().min(0).optional() }).strict())).default({}),
    /** Base folder of job worktrees (default $XDG_DATA_HOME/overseer/worktrees, see src/git/placement.ts). */
    worktreesDir: z.string().min(1).optional(),
    /** Worktree bootstrap: files copied into and commands run in each new worktree (docs/worktrees.md). */
    worktree: z.preprocess(jsonText, WorktreeSchema).default({}),
    /** Largest note value in bytes. */
    noteMaxBytes: intFromString(1, 64 * 1024 * 1024).default(1024 * 1024),
    /** A background hub exits after this many seconds with no live job and no connected lead (0 = never). */
    idleExitS: intFromString(0, 7 * 24 * 3600).default(300),
    /** OS confinement of children (bubblewrap on Linux): `auto` uses it when it works, `require` refuses to start children without it, `off` never uses it. */
    confine: z.enum(['auto', 'require', 'off']).default('auto'),
    /** Open MCP sessions one bearer token may hold at once. */
    maxSessionsPerToken: intFromString(1, 10_000).default(32),
    /** An MCP session with no request and no open stream for this long is closed. */
    sessionIdleS: intFromString(1, 7 * 24 * 3600).default(1800),
    /** Health warnings of running agents (src/floor/health.ts): thresholds, how often they are checked, what happens. */
    health: z.preprocess(jsonText, HealthSchema).default({}),
    /** Notifications to a person who is not looking (src/floor/notify, docs/notifications.md): sinks, events, rate limits. */
    notify: z.preprocess(jsonText, NotifySchema).default({}),
    /** The house budget (USD): what all jobs of this state together may spend and reserve (docs/budgets.md); none when unset. */
    budgetUsd: z.preprocess((v) => (typeof v === 'string' ? (v.trim() === '' ? NaN : Number(v)) : v), z.number({ invalid_type_error: 'must be a number of US dollars, e.g. 25' })
      .finite('must be a number of US dollars, e.g. 25').min(0, 'must be 0 or more (a budget of US dollars; 0 refuses every spawn)').max(1_000_000, 'must be at most 1000000')).optional(),
    /** A budget (USD) per label: what the jobs carrying it together may spend and reserve (docs/budgets.md). */
    labelBudgets: z.preprocess(jsonText, z.record(
      z.string().min(1, 'a label is not empty').max(100, 'a label is at most 100 characters'),
      z.number({ invalid_type_error: 'must be a number of US dollars, e.g. {"tests": 5}' }).finite().min(0, 'must be 0 or more (a budget of US dollars)').max(1_000_000, 'must be at most 1000000'),
      { invalid_type_error: 'must be a JSON object of label → US dollars, e.g. {"tests": 5, "docs": 1.5}' },
    )).default({}),
    /** The model of a spawn that names none: a model name (Claude spawns; Codex has codexModel) or "auto" (every provider with tiers) (docs/models.md). */
    defaultModel: z.string().min(1).max(200).optional(),
    /** Model tiers per provider for model "auto": {"claude": {"small": …, "medium": …, "large": …, "fallback"?: …}, "codex": null (no auto)}; merged over the defaults (docs/models.md). */
    modelTiers: z.preprocess(jsonText, ModelTiersSchema).default({}),
    /** The small model that classifies a task for model "auto". */
    classifierModel: z.string().min(1).max(200).default('claude-haiku-4-5'),
    /** Longest a classification may take (seconds); then the job falls back. */
    classifierTimeoutS: intFromString(1, 600).default(30),
    /** Child starts in flight at once (src/launch/startGate.ts): "auto" (default: one per core, more when others overload the machine), a number, or 0 (no gate: every child starts at once). */
    startConcurrency: z.union([z.literal('auto'), intFromString(0, 256)]).default('auto'),
    /** The longest one start holds its slot when its child does not open its MCP session sooner (ms; src/launch/startGate.ts). */
    startHoldMs: intFromString(100, 600_000).default(1500),
    /** The provider limiter (src/limits, docs/limits.md): backoff when a limit answer names no wait, the probe's lease. */
    limits: z.preprocess(jsonText, LimitsSchema).default({}),
    /** Optional capabilities switched on or off, e.g. {"debates": false} (all on by default). */
    capabilities: z.preprocess(jsonText, CapabilitiesSchema).default({}),
    /** Where the state lives: unset = SQLite in <home>/state.db; `postgres://user:password@host:5432/db?sslmode=…` = PostgreSQL (src/store/sql): every piece of state in that database.
     * Checked when the database is opened, not here: a schema message would print the value, password and all. */
    databaseUrl: z.string().min(1).optional(),
    /** Many hubs on one database (docs/store-plan.md §3.6): how often a hub beats, and how old a heartbeat makes a dead hub (ms). */
    hubBeatMs: intFromString(50, 600_000).default(5000),
    hubTimeoutMs: intFromString(100, 3_600_000).default(30_000),
    /** What merge_branch / merge_queue / `overseer merge` do when a branch's checks fail or it conflicts, when the call does not say: stop (report it) or send_back (resume its agent with the failure, src/branches/sendBack.ts). */
    mergeOnFailure: z.enum(['stop', 'send_back']).default('stop'),
    /** How many times one job's branch is sent back to its agent before Overseer stops and asks the person. */
    sendBackRounds: intFromString(0, 20).default(2),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;

const ENV_KEYS: Record<string, keyof Config> = {
  OVERSEER_HOME: 'home',
  CLAUDE_BIN: 'claudeBin',
  CODEX_BIN: 'codexBin',
  OVERSEER_MAX_AGENTS: 'maxAgents',
  OVERSEER_PORT: 'port',
  OVERSEER_LOCK_MODE: 'lockMode',
  OVERSEER_LOG_LEVEL: 'logLevel',
  OVERSEER_MAX_DEPTH: 'maxDepth',
  OVERSEER_DEFAULT_TIMEOUT_S: 'defaultTimeoutS',
  OVERSEER_KILL_GRACE_MS: 'killGraceMs',
  OVERSEER_MERGE_ON_FAILURE: 'mergeOnFailure',
  OVERSEER_SEND_BACK_ROUNDS: 'sendBackRounds',
  OVERSEER_MAX_ATTEMPTS: 'maxAttempts',
  OVERSEER_MAX_WAIT_S: 'maxWaitS',
  OVERSEER_NOTE_MAX_BYTES: 'noteMaxBytes',
  OVERSEER_FALLBACK_MODELS: 'fallbackModels',
  OVERSEER_IDLE_EXIT_S: 'idleExitS',
  OVERSEER_MAX_SESSIONS_PER_TOKEN: 'maxSessionsPerToken',
  OVERSEER_SESSION_IDLE_S: 'sessionIdleS',
  OVERSEER_KB_TRIAGE: 'kbTriage',
  OVERSEER_CODEX_MODEL: 'codexModel',
  OVERSEER_CODEX_SANDBOX: 'codexSandbox',
  OVERSEER_CODEX_MODEL_CATALOG: 'codexModelCatalog',
  OVERSEER_CODEX_PROVIDER: 'codexProvider',
  OVERSEER_CODEX_PRICES: 'codexPrices',
  OVERSEER_WORKTREES_DIR: 'worktreesDir',
  OVERSEER_WORKTREE: 'worktree',
  OVERSEER_CONFINE: 'confine',
  OVERSEER_HEALTH: 'health',
  OVERSEER_NOTIFY: 'notify',
  OVERSEER_BUDGET_USD: 'budgetUsd',
  OVERSEER_LABEL_BUDGETS: 'labelBudgets',
  OVERSEER_DEFAULT_MODEL: 'defaultModel',
  OVERSEER_MODEL_TIERS: 'modelTiers',
  OVERSEER_CLASSIFIER_MODEL: 'classifierModel',
  OVERSEER_CLASSIFIER_TIMEOUT_S: 'classifierTimeoutS',
  OVERSEER_START_CONCURRENCY: 'startConcurrency',
  OVERSEER_START_HOLD_MS: 'startHoldMs',
  OVERSEER_LIMITS: 'limits',
  OVERSEER_CAPABILITIES: 'capabilities',
  OVERSEER_DATABASE_URL: 'databaseUrl',
  OVERSEER_HUB_BEAT_MS: 'hubBeatMs',
  OVERSEER_HUB_TIMEOUT_MS: 'hubTimeoutMs',
};

/** The git top level of `dir`, or undefined outside a repository. */
export function gitRoot(dir: string): string | undefined {
  try {
    const r = gitSync(['rev-parse', '--show-toplevel'], { cwd: dir, allowFail: true });
    return r.code === 0 ? r.stdout.trim() : undefined;
  } catch {
    return undefined; // git missing, or dir gone
  }
}

/** Where every hub of this user keeps its state: `$XDG_STATE_HOME/overseer` (default
 * `~/.local/state/overseer`). Agents never see it (src/confine). */
export function stateRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'overseer');
}

/** The project a process started in `cwd` serves: the git top level, else `cwd` (real path). */
export function projectRoot(cwd: string): string {
  const root = gitRoot(cwd) ?? resolve(cwd);
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}

/** A project's state directory under the state root: its name plus 8 hex of sha256(real path),
 * so two clones named alike never share one (hooks/overseer-hook.mjs and
 * overseer-hook.sh compute the same: change all three together). */
export function projectStateDir(projectRealPath: string, env: NodeJS.ProcessEnv = process.env): string {
  const hash = createHash('sha256').update(projectRealPath).digest('hex').slice(0, 8);
  const name = basename(projectRealPath).replace(/[^A-Za-z0-9._-]/g, '_') || 'project';
  return join(stateRoot(env), 'projects', `${name}-${hash}`);
}

/** The project's own Overseer settings (config.json, policy.json, templates/): `<project>/.overseer`,
 * or OVERSEER_SETTINGS_DIR, or OVERSEER_HOME when set (then settings and state share it, as before). */
export function resolveSettingsDir(env: NodeJS.ProcessEnv, cwd: string): string {
  if (env.OVERSEER_SETTINGS_DIR) return resolve(cwd, env.OVERSEER_SETTINGS_DIR);
  if (env.OVERSEER_HOME) return resolve(cwd, env.OVERSEER_HOME);
  return join(projectRoot(cwd), '.overseer');
}

/** The hub's runtime state (database, tokens, hub.json, transcripts, logs): `OVERSEER_HOME`, else
 * the project's directory under the state root — outside the repository, out of every agent's
 * tree. A project whose state is still in `<project>/.overseer` (layout before 0.2, see
 * src/hubproc/legacy.ts) keeps it there until a hub starts with none running. */
export function resolveStateDir(env: NodeJS.ProcessEnv, cwd: string): string {
  if (env.OVERSEER_HOME) return resolve(cwd, env.OVERSEER_HOME);
  const root = projectRoot(cwd);
  const dir = projectStateDir(root, env);
  const legacy = join(root, '.overseer');
  if (!existsSync(join(dir, 'state.db')) && existsSync(join(legacy, 'state.db'))) return legacy;
  return dir;
}

/** The directory of the project's settings (config.json, policy.json, templates/). */
export const settingsDirOf = (c: Pick<Config, 'home' | 'settingsDir'>): string => c.settingsDir ?? c.home;

const MISSING = Symbol('missing');

/** The value at `path` in the raw configuration (a JSON text from the environment is looked into), or MISSING. */
function valueAt(raw: unknown, path: readonly (string | number)[]): unknown {
  let v: unknown = raw;
  for (const p of path) {
    v = jsonText(v);
    if (v === null || typeof v !== 'object' || !(p in v)) return MISSING;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

/** Validate a plain object (file contents merged with env) into a Config. */
export function loadConfigFrom(raw: Record<string, unknown>, source = 'configuration'): Config {
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const key = i.path.join('.');
      const envName = Object.entries(ENV_KEYS).find(([, k]) => k === i.path[0])?.[0];
      const where = `${key}${envName ? ` (env ${envName})` : ''}`;
      if (i.code === 'unrecognized_keys') {
        const names = i.keys.map((k) => JSON.stringify(k)).join(', ');
        // Inside a nested object (health, notify…) its schema's own message says which keys it takes.
        return i.path.length ? `${where}: ${names}: ${i.message}` : `unknown key(s) ${names}: remove them (known keys: ${Object.keys(ConfigSchema.shape).join(', ')})`;
      }
      const value = valueAt(raw, i.path);
      return `${where} = ${value === MISSING ? '(missing)' : JSON.stringify(value)}: ${i.message}`;
    });
    throw new InvalidInputError(`Invalid ${source}:\n  ${lines.join('\n  ')}`);
  }
  const c = parsed.data;
  if (c.hubTimeoutMs <= c.hubBeatMs) throw new InvalidInputError(`Invalid ${source}:\n  hubTimeoutMs (env OVERSEER_HUB_TIMEOUT_MS) = ${c.hubTimeoutMs} is not longer than hubBeatMs (env OVERSEER_HUB_BEAT_MS) = ${c.hubBeatMs}: a hub is taken for dead after it missed several beats; raise the timeout or lower the beat`);
  return c;
}

/** Load config for a process started in `cwd` with environment `env`. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Config {
  const home = resolveStateDir(env, cwd);
  const settingsDir = resolveSettingsDir(env, cwd);
  const file = join(settingsDir, 'config.json');
  let fromFile: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      fromFile = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new InvalidInputError(`${file} is not valid JSON: ${(err as Error).message}`);
    }
  }
  refuseFilePassword(fromFile, file);
  const fromEnv: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const v = env[name];
    if (v !== undefined && v !== '') fromEnv[key] = v;
  }
  return loadConfigFrom({ ...fromFile, ...fromEnv, home, settingsDir }, existsSync(file) ? `configuration (${file} and environment)` : 'configuration (environment)');
}

/**
 * The project's config file lies inside the repository, which every agent of the crew can read:
 * a database URL there must not carry a password (docs/security.md, "The hub's database").
 */
function refuseFilePassword(fromFile: Record<string, unknown>, file: string): void {
  const url = fromFile.databaseUrl;
  if (typeof url !== 'string') return;
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    return; // not a URL: the database layer says what is wrong with it
  }
  if (!password) return;
  throw new InvalidInputError(`${file} sets databaseUrl with a password; this file is inside the project, where every agent can read it. Remove the password from it and give the URL with the password in the hub's environment instead (OVERSEER_DATABASE_URL, which agents never see), or keep the password in a PostgreSQL password file under the state directory (PGPASSFILE).`);
}

/** The package root (where prompts/ and hooks/ live), found from this compiled file. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'prompts'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('cannot locate the overseer-mcp package root (package.json + prompts/)');
}
