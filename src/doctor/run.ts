// All doctor checks in their report order, the verdict, and the plain-text rendering.
import { checkConfinement, checkStatePlace } from './confine.js';
import { homedir } from 'node:os';
import { packageRoot } from '../config.js';
import { pidAlive } from '../launch/process.js';
import { CLAUDE_CLI, CODEX_CLI, checkAgentBinary, checkClaudeCredentials, checkClaudeEndpoint, checkCodexCredentials, checkCodexEndpoint } from './agents.js';
import { execCommand, httpFetch } from './io.js';
import { checkCodexShell } from './codexShellRun.js';
import { checkConfig, checkHub, checkStateDb, checkStateDir } from './state.js';
import { checkDatabase } from './database.js';
import { checkGh, checkGit, checkNode } from './system.js';
import { checkSessions } from './session.js';
import { checkNotify } from '../floor/notify/doctor.js';
import type { Check, CheckStatus, DoctorDeps } from './types.js';

export const DEFAULT_EXEC_TIMEOUT_MS = 10_000;
export const DEFAULT_FETCH_TIMEOUT_MS = 3_000;

function ownPackageRoot(): string | undefined {
  try {
    return packageRoot();
  } catch {
    return undefined;
  }
}

/** Real dependencies, with any of them replaced. */
export function doctorDeps(over: Partial<DoctorDeps> = {}): DoctorDeps {
  const env = over.env ?? process.env;
  return {
    env,
    cwd: over.cwd ?? process.cwd(),
    exec: over.exec ?? execCommand,
    fetch: over.fetch ?? httpFetch,
    homedir: over.homedir ?? (env.HOME || homedir()),
    platform: over.platform ?? process.platform,
    nodeVersion: over.nodeVersion ?? process.versions.node,
    packageRoot: 'packageRoot' in over ? over.packageRoot : ownPackageRoot(),
    pidAlive: over.pidAlive ?? pidAlive,
    execTimeoutMs: over.execTimeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS,
    fetchTimeoutMs: over.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS,
    hubHealth: over.hubHealth,
    probeConfine: over.probeConfine,
    which: over.which,
    runCodexShell: over.runCodexShell,
  };
}

/** Every check, in report order. Slow ones (commands, requests) run concurrently. Never throws. */
export async function runChecks(deps: DoctorDeps): Promise<Check[]> {
  const cfg = checkConfig(deps);
  const guard = async (name: string, f: () => Check | Promise<Check>): Promise<Check> => {
    try {
      return await f();
    } catch (err) {
      return { name, status: 'fail', detail: `the check itself failed: ${(err as Error).message}`, fix: 'report this as an overseer bug (run with OVERSEER_DEBUG=1 for details)' };
    }
  };
  const optional = async (name: string, f: () => Promise<Check | undefined>): Promise<Check[]> => {
    const c = await guard(name, async () => (await f()) ?? { name: '', status: 'ok', detail: '' });
    return c.name ? [c] : [];
  };
  const codexPart = async (): Promise<Check[]> => {
    const bin = await checkAgentBinary(CODEX_CLI, cfg.config, deps);
    // Without a codex binary, its endpoint and key do not matter: one warning is enough.
    if (bin.bin === undefined) return [bin.check];
    const shell = bin.check.status === 'ok' ? [guard('codex shell', () => checkCodexShell(cfg.config, bin.bin!, cfg.home, deps))] : [];
    return [bin.check, ...(await Promise.all([
      guard('codex endpoint', () => checkCodexEndpoint(cfg.config, deps)),
      guard('codex credentials', () => checkCodexCredentials(cfg.config, cfg.home, deps)),
      ...shell,
    ]))];
  };
  const [git, claude, claudeEndpoint, codex, gh] = await Promise.all([
    guard('git', () => checkGit(deps)),
    guard('claude', async () => (await checkAgentBinary(CLAUDE_CLI, cfg.config, deps)).check),
    guard('claude endpoint', () => checkClaudeEndpoint(deps)),
    codexPart().catch(async (err: unknown) => [await guard('codex', () => { throw err; })]),
    guard('gh', () => checkGh(deps)),
  ]);
  return [
    checkNode(deps),
    git,
    cfg.check,
    await guard('state dir', () => checkStateDir(cfg.home)),
    await guard('state place', () => checkStatePlace(cfg.home, deps)),
    await guard('confinement', () => checkConfinement(cfg.config, deps)),
    await guard('state db', () => checkStateDb(cfg.home, undefined, cfg.config?.databaseUrl)),
    ...(await optional('database', () => checkDatabase(cfg.config, deps))),
    await guard('hub', () => checkHub(cfg.home, deps)),
    await guard('sessions', () => checkSessions(cfg.config, cfg.home, deps)),
    await guard('notifications', () => checkNotify(cfg.config, deps)),
    claude,
    claudeEndpoint,
    await guard('claude credentials', () => checkClaudeCredentials(deps)),
    ...codex,
    gh,
  ];
}

/** Everything needed for Claude children works: no check failed (warnings are fine). */
export const doctorOk = (checks: readonly Check[]): boolean => checks.every((c) => c.status !== 'fail');

const MARK: Record<CheckStatus, string> = { ok: '✔', warn: '!', fail: '✘' };

/** One line per check, then a summary line (`worker`: the verdict of `overseer doctor --worker`). */
export function renderText(checks: readonly Check[], o: { worker?: boolean } = {}): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) => `${MARK[c.status]} ${c.name.padEnd(width)}  ${c.detail}${c.fix ? ` — fix: ${c.fix}` : ''}`);
  const fails = checks.filter((c) => c.status === 'fail').map((c) => c.name);
  const warns = checks.filter((c) => c.status === 'warn').map((c) => c.name);
  const plural = (n: number, w: string): string => `${n} ${w}${n === 1 ? '' : 's'}`;
  const warnText = warns.length ? `${plural(warns.length, 'warning')} (${warns.join(', ')})` : '';
  const what = o.worker ? 'this machine can serve as a worker (overseer worker)' : 'overseer can run Claude children';
  lines.push(fails.length
    ? `Not ready: ${plural(fails.length, 'problem')} (${fails.join(', ')}) must be fixed before ${what}${warnText ? `; ${warnText}` : ''}.`
    : `Ready: ${what}${warnText ? `; ${warnText}` : ''}.`);
  return `${lines.join('\n')}\n`;
}
