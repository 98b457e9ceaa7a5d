// Checks of the agent CLIs: which claude/codex binary would be used and why (the launchers'
// order: *_BIN, else PATH, else overseer-mcp's node_modules/.bin), whether `--version` runs,
// whether the model endpoint answers, and whether credentials are present (never printed).
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Config } from '../config.js';
import { which } from '../launch/which.js';
import { bundledAgentBin } from '../launch/common.js';
import { describeFetchError, firstLine, formatSeconds, safeUrl } from './io.js';
import { execProblem } from './system.js';
import type { Check, CheckStatus, DoctorDeps } from './types.js';

export interface AgentCli {
  /** Binary name, also the check name. */
  name: 'claude' | 'codex';
  envVar: 'CLAUDE_BIN' | 'CODEX_BIN';
  configKey: 'claudeBin' | 'codexBin';
  npmPackage: string;
  /** What the worst outcome counts as: claude is needed, codex is optional. */
  worst: Extract<CheckStatus, 'warn' | 'fail'>;
}

export const CLAUDE_CLI: AgentCli = { name: 'claude', envVar: 'CLAUDE_BIN', configKey: 'claudeBin', npmPackage: '@anthropic-ai/claude-code', worst: 'fail' };
export const CODEX_CLI: AgentCli = { name: 'codex', envVar: 'CODEX_BIN', configKey: 'codexBin', npmPackage: '@openai/codex', worst: 'warn' };

export const DEFAULT_ANTHROPIC_URL = 'https://api.anthropic.com';
export const DEFAULT_OPENAI_URL = 'https://api.openai.com/v1';

export type BinChoice = { found: true; path: string; why: string } | { found: false; detail: string; configured: boolean };

type Deps = Pick<DoctorDeps, 'env' | 'cwd' | 'packageRoot'>;

/**
 * The binary a launcher would run, and why. Mirrors resolveAgentBin (launch/common.ts) with the
 * reasons added: a configured value is checked here (relative paths, PATH names) rather than
 * trusted, and a miss says what was tried.
 */
export function resolveAgentBin(cli: AgentCli, config: Partial<Config> | undefined, deps: Deps): BinChoice {
  const fromEnv = deps.env[cli.envVar];
  const configured = fromEnv || config?.[cli.configKey];
  if (configured) {
    const origin = fromEnv ? cli.envVar : `${cli.configKey} in config.json`;
    if (configured.includes('/') || configured.includes('\\')) {
      const p = isAbsolute(configured) ? configured : resolve(deps.cwd, configured);
      if (existsSync(p)) return { found: true, path: p, why: `from ${origin}` };
      return { found: false, configured: true, detail: `${origin} is ${configured}, which does not exist` };
    }
    const onPath = which(configured, deps.env.PATH ?? '');
    if (onPath) return { found: true, path: onPath, why: `${origin}=${configured}, found on PATH` };
    return { found: false, configured: true, detail: `${origin} is ${configured}, which is not on PATH` };
  }
  const onPath = which(cli.name, deps.env.PATH ?? '');
  if (onPath) return { found: true, path: onPath, why: `${cli.name} on PATH` };
  const bundled = deps.packageRoot ? bundledAgentBin(cli.name, deps.packageRoot) : undefined;
  if (bundled && existsSync(bundled)) return { found: true, path: bundled, why: 'bundled with overseer-mcp' };
  return {
    found: false,
    configured: false,
    detail: `no ${cli.name} binary: ${cli.envVar} is not set, ${cli.name} is not on PATH${bundled ? `, and there is no bundled one (${bundled})` : ''}`,
  };
}

/** Which binary, why, and its `--version` (stdin ignored, short time limit). */
export async function checkAgentBinary(cli: AgentCli, config: Partial<Config> | undefined, deps: Pick<DoctorDeps, 'env' | 'cwd' | 'packageRoot' | 'exec' | 'execTimeoutMs'>): Promise<{ check: Check; bin?: string }> {
  const choice = resolveAgentBin(cli, config, deps);
  const install = `npm i -g ${cli.npmPackage}`;
  const optional = cli.worst === 'warn' ? ` (${cli.name} children are unavailable; claude children are not affected)` : '';
  if (!choice.found) {
    const fix = choice.configured
      ? `point ${cli.envVar} at an existing ${cli.name} binary (${cli.envVar}=/path/to/${cli.name}), or unset it and ${install}`
      : `set ${cli.envVar}=/path/to/${cli.name} or ${install}`;
    return { check: { name: cli.name, status: cli.worst, detail: `${choice.detail}${optional}`, fix } };
  }
  const r = await deps.exec(choice.path, ['--version'], { timeoutMs: deps.execTimeoutMs, env: deps.env, cwd: deps.cwd });
  if (r.kind === 'exited' && r.code === 0) {
    const version = firstLine(r.stdout) || firstLine(r.stderr) || 'version unknown';
    return { check: { name: cli.name, status: 'ok', detail: `${choice.path} (${choice.why}): ${version}` }, bin: choice.path };
  }
  return {
    check: {
      name: cli.name,
      status: cli.worst,
      detail: `${choice.path} (${choice.why}) does not work: ${execProblem(`${cli.name} --version`, r, deps.execTimeoutMs)}${optional}`,
      fix: `reinstall it (${install}) or point ${cli.envVar} at a working ${cli.name}`,
    },
    bin: choice.path,
  };
}

/** Any HTTP answer (401, 404…) means the endpoint is reachable; only no answer is a problem. */
export async function checkEndpoint(
  o: { name: string; url: string; source: string; worst: Extract<CheckStatus, 'warn' | 'fail'>; fix: string },
  deps: Pick<DoctorDeps, 'fetch' | 'fetchTimeoutMs' | 'env'>,
): Promise<Check> {
  const shown = safeUrl(o.url);
  let parsed: URL | undefined;
  try {
    parsed = new URL(o.url);
  } catch {
    /* reported below */
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    return { name: o.name, status: o.worst, detail: `${o.source} is not a valid http(s) URL`, fix: o.fix };
  }
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), deps.fetchTimeoutMs);
  try {
    const res = await deps.fetch(o.url, { method: 'GET', signal: ac.signal, redirect: 'manual' });
    await res.body?.cancel().catch(() => undefined);
    return { name: o.name, status: 'ok', detail: `${shown} (${o.source}) answers (HTTP ${res.status})` };
  } catch (err) {
    const why = ac.signal.aborted ? `no answer within ${formatSeconds(deps.fetchTimeoutMs)}` : describeFetchError(err, deps.fetchTimeoutMs);
    const proxy = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].find((k) => deps.env[k]);
    const note = proxy ? ` (this check connects directly, without ${proxy})` : '';
    return { name: o.name, status: o.worst, detail: `${shown} (${o.source}) is not reachable: ${why}${note}`, fix: o.fix };
  } finally {
    clearTimeout(timer);
  }
}

const truthy = (v: string | undefined): boolean => v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';

function cloudProvider(env: NodeJS.ProcessEnv): string | undefined {
  if (truthy(env.CLAUDE_CODE_USE_BEDROCK)) return 'Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK)';
  if (truthy(env.CLAUDE_CODE_USE_VERTEX)) return 'Google Vertex AI (CLAUDE_CODE_USE_VERTEX)';
  return undefined;
}

export async function checkClaudeEndpoint(deps: Pick<DoctorDeps, 'fetch' | 'fetchTimeoutMs' | 'env'>): Promise<Check> {
  const cloud = cloudProvider(deps.env);
  if (cloud) return { name: 'claude endpoint', status: 'ok', detail: `claude talks to ${cloud}; not probed` };
  const custom = deps.env.ANTHROPIC_BASE_URL;
  return checkEndpoint({
    name: 'claude endpoint',
    url: custom || DEFAULT_ANTHROPIC_URL,
    source: custom ? 'ANTHROPIC_BASE_URL' : 'default',
    worst: 'fail',
    fix: custom
      ? 'start the server ANTHROPIC_BASE_URL points at, correct ANTHROPIC_BASE_URL, or unset it to use https://api.anthropic.com'
      : 'check the network connection, firewall or proxy (claude honours HTTPS_PROXY), or set ANTHROPIC_BASE_URL to a reachable gateway',
  }, deps);
}

/** Which credentials claude would find. Reports presence only: no value is ever read out. */
export function checkClaudeCredentials(deps: Pick<DoctorDeps, 'env' | 'homedir' | 'platform'>): Check {
  const name = 'claude credentials';
  const env = deps.env;
  const found: string[] = [];
  for (const k of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN']) if (env[k]) found.push(`${k} is set`);
  const cloud = cloudProvider(env);
  if (cloud) found.push(`${cloud} uses your cloud credentials (not checked)`);
  const loginFile = join(env.CLAUDE_CONFIG_DIR || join(deps.homedir, '.claude'), '.credentials.json');
  if (existsSync(loginFile)) found.push(`a Claude Code login exists (${loginFile})`);
  if (found.length > 0) return { name, status: 'ok', detail: found.join('; ') };
  const none = `ANTHROPIC_API_KEY is not set and there is no Claude Code login (${loginFile})`;
  const fix = 'export ANTHROPIC_API_KEY=<your key>, or log in once: run claude, then /login';
  if (deps.platform === 'darwin') return { name, status: 'warn', detail: `${none}; on macOS a login is kept in the Keychain, which this check cannot see`, fix: `if children fail with authentication errors: ${fix}` };
  if (env.ANTHROPIC_BASE_URL) return { name, status: 'warn', detail: `${none}; fine only if the server at ANTHROPIC_BASE_URL needs no key`, fix };
  return { name, status: 'fail', detail: `no credentials: ${none}`, fix };
}

export interface CodexProvider {
  base_url: string;
  env_key?: string;
  name?: string;
  id?: string;
}

/** `codexProvider` from the configuration, read defensively (shape checked here, not trusted). */
export function codexProviderOf(config: unknown): { provider?: CodexProvider; problem?: string } {
  const raw = (config as { codexProvider?: unknown } | undefined)?.codexProvider;
  if (raw === undefined || raw === null) return {};
  const p = raw as Record<string, unknown>;
  if (typeof raw !== 'object' || typeof p.base_url !== 'string' || p.base_url === '') return { problem: 'codexProvider in the configuration has no base_url' };
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
  return { provider: { base_url: p.base_url, env_key: str(p.env_key), name: str(p.name), id: str(p.id) } };
}

/** How a provider is named in reports: its name, else its id, else the id the hub gives it. */
const providerLabel = (p: CodexProvider): string => `provider ${p.name ?? p.id ?? 'overseer'}`;

/** The private CODEX_HOME the hub gives codex children (CodexLauncher: <state>/codex-home). */
export const codexHomeOf = (stateHome: string): string => join(stateHome, 'codex-home');

export async function checkCodexEndpoint(config: unknown, deps: Pick<DoctorDeps, 'fetch' | 'fetchTimeoutMs' | 'env'>): Promise<Check> {
  const { provider, problem } = codexProviderOf(config);
  if (problem) return { name: 'codex endpoint', status: 'warn', detail: problem, fix: 'give codexProvider a base_url, e.g. OVERSEER_CODEX_PROVIDER=\'{"base_url":"https://host/v1","env_key":"MY_KEY"}\'' };
  return checkEndpoint({
    name: 'codex endpoint',
    url: provider?.base_url ?? DEFAULT_OPENAI_URL,
    source: provider ? providerLabel(provider) : "codex's built-in OpenAI provider",
    worst: 'warn',
    fix: provider
      ? 'start the server codexProvider.base_url points at, or correct base_url in OVERSEER_CODEX_PROVIDER / codexProvider in config.json'
      : 'check the network connection, firewall or proxy, or set OVERSEER_CODEX_PROVIDER=\'{"base_url":"https://host/v1","env_key":"MY_KEY"}\' for a reachable Responses endpoint',
  }, deps);
}

/**
 * Which key codex children would authenticate with. They run with the hub's private CODEX_HOME
 * (<state>/codex-home), so a login in the user's own ~/.codex does not reach them.
 */
export function checkCodexCredentials(config: unknown, stateHome: string, deps: Pick<DoctorDeps, 'env' | 'homedir'>): Check {
  const name = 'codex credentials';
  const env = deps.env;
  const { provider } = codexProviderOf(config);
  if (provider) {
    const label = providerLabel(provider);
    if (!provider.env_key) return { name, status: 'ok', detail: `${label} names no env_key: no key is sent` };
    if (env[provider.env_key]) return { name, status: 'ok', detail: `${provider.env_key} is set (${label})` };
    return { name, status: 'warn', detail: `${label} takes its key from ${provider.env_key}, which is not set`, fix: `export ${provider.env_key}=<key for ${safeUrl(provider.base_url)}>` };
  }
  if (env.CODEX_API_KEY) return { name, status: 'ok', detail: 'CODEX_API_KEY is set' };
  const privateHome = codexHomeOf(stateHome);
  const privateLogin = join(privateHome, 'auth.json');
  if (existsSync(privateLogin)) return { name, status: 'ok', detail: `CODEX_API_KEY is not set; a codex login exists in overseer's CODEX_HOME (${privateLogin})` };
  const fix = 'export CODEX_API_KEY=<your OpenAI key>';
  if (env.OPENAI_API_KEY) {
    return {
      name, status: 'warn',
      detail: "only OPENAI_API_KEY is set: codex's built-in provider authenticates from CODEX_API_KEY, not OPENAI_API_KEY",
      fix: 'export CODEX_API_KEY="$OPENAI_API_KEY"',
    };
  }
  const userLogin = join(env.CODEX_HOME || join(deps.homedir, '.codex'), 'auth.json');
  if (existsSync(userLogin)) {
    return {
      name, status: 'warn',
      detail: `CODEX_API_KEY is not set; your codex login (${userLogin}) does not reach children, which run with overseer's own CODEX_HOME (${privateHome})`,
      fix: `${fix}, or log in for overseer: CODEX_HOME=${privateHome} codex login`,
    };
  }
  return { name, status: 'warn', detail: 'no codex credentials: CODEX_API_KEY is not set', fix };
}
