// `overseer doctor --worker`: what a worker host (`overseer worker`, issue 30) needs, checked on
// the machine that runs it — the crew's PostgreSQL database reachable and at this overseer's schema
// (a worker never creates or upgrades it: a hub does), its clones directory writable and each
// clone's remote answering (`git ls-remote`, with a timeout), the agent CLIs it would register
// (src/worker/clis.ts, the same lookup, passed in by the CLI: the worker is an entry above the doctor) with their versions, and confinement as for a hub. Each
// a line, with what to do when it fails; no password is printed (every URL is masked, every
// driver's message scrubbed).
import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../config.js';
import { probePostgres } from '../store/sql/probe.js';
import { maskUrl, scrub } from '../store/sql/url.js';
import { checkConfinement } from './confine.js';
import { checkConfig } from './state.js';
import { checkGit, checkNode, execProblem } from './system.js';
import type { Check, DoctorDeps } from './types.js';

/** Where a worker keeps its clones: `<its state directory>/repos/<repo key>` (docs/workers-plan.md §3). */
export const clonesDir = (home: string): string => join(home, 'repos');

/** The database line: reachable, and at this overseer's schema. */
export async function checkWorkerDatabase(config: Config | undefined): Promise<Check> {
  const name = 'database';
  const url = config?.databaseUrl;
  if (!url) {
    return { name, status: 'fail', detail: 'no database: a worker needs the crew\'s PostgreSQL database (OVERSEER_DATABASE_URL is not set)', fix: 'set OVERSEER_DATABASE_URL to the URL the hubs use (postgres://user:password@host:5432/database)' };
  }
  let p;
  try {
    p = await probePostgres(url);
  } catch (err) {
    return { name, status: 'fail', detail: scrub((err as Error).message, url).replace(/\s*\n\s*/g, '; '), fix: 'check the host, port and credentials in OVERSEER_DATABASE_URL and that this machine may reach the server (firewall, pg_hba.conf), then run overseer doctor --worker again' };
  }
  const where = `${p.shown}: PostgreSQL ${p.serverVersion}, connected in ${Math.round(p.connectMs)} ms, ${p.tls.inUse ? `TLS ${p.tls.version ?? ''}`.trim() : 'no TLS'}`;
  if (p.schema.unknown.length) {
    return { name, status: 'fail', detail: `${where}; the database has migrations this overseer does not know (${p.schema.unknown.join(', ')}): the hubs run a newer overseer`, fix: 'upgrade overseer-mcp on this machine to the version the hubs run' };
  }
  if (p.schema.applied === 0) {
    return { name, status: 'fail', detail: `${where}; no Overseer schema in it: a worker never creates it`, fix: 'start a hub (overseer mcp or overseer serve) once with this OVERSEER_DATABASE_URL: it creates the schema; or check that the URL names the crew\'s database' };
  }
  if (p.schema.pending.length) {
    return { name, status: 'fail', detail: `${where}; its schema is older than this overseer (${p.schema.pending.length} migration(s) to apply: ${p.schema.pending.slice(0, 3).join(', ')}${p.schema.pending.length > 3 ? ', …' : ''}): a worker never upgrades it`, fix: 'start a hub of this version against it (it upgrades the schema), or run the overseer version the hubs run' };
  }
  if (!p.listen) return { name, status: 'fail', detail: `${where}; LISTEN refused`, fix: 'a worker is woken by LISTEN/NOTIFY: connect as a role that may use it (an ordinary owner of the database may)' };
  return { name, status: 'ok', detail: `${where}; schema current (${p.schema.applied} migrations)` };
}

/** The nearest directory of `dir` that exists (itself, or a parent). */
function nearestExisting(dir: string): string {
  let d = dir;
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  return d;
}

/** The clones directory writable (or creatable), then one line per clone: its remote answers `git ls-remote`. */
export async function checkClones(home: string, deps: Pick<DoctorDeps, 'exec' | 'env' | 'cwd' | 'execTimeoutMs'>): Promise<Check[]> {
  const dir = clonesDir(home);
  const base = nearestExisting(dir);
  try {
    accessSync(base, constants.W_OK | constants.X_OK);
  } catch {
    return [{ name: 'clones', status: 'fail', detail: `${dir}: ${base === dir ? 'not writable' : `cannot be created (${base} is not writable)`} by this user`, fix: `give this user write access to ${base}, or set OVERSEER_HOME to a directory it owns` }];
  }
  if (base !== dir) return [{ name: 'clones', status: 'ok', detail: `${dir}: none yet (created at the first job; ${base} is writable)` }];
  const clones = readdirSync(dir).filter((n) => { try { return statSync(join(dir, n)).isDirectory(); } catch { return false; } }).sort();
  const head: Check = { name: 'clones', status: 'ok', detail: `${dir}: writable, ${clones.length} clone${clones.length === 1 ? '' : 's'}` };
  const env = { ...deps.env, GIT_TERMINAL_PROMPT: '0', GIT_SSH_COMMAND: deps.env.GIT_SSH_COMMAND ?? 'ssh -o BatchMode=yes' };
  const each = await Promise.all(clones.map(async (n): Promise<Check> => {
    const cwd = join(dir, n);
    const name = `clone ${n}`;
    const got = await deps.exec('git', ['remote', 'get-url', 'origin'], { timeoutMs: deps.execTimeoutMs, env, cwd });
    const remote = got.kind === 'exited' && got.code === 0 ? got.stdout.trim() : '';
    if (!remote) return { name, status: 'warn', detail: `${cwd}: not a clone with an origin remote (${execProblem('git remote get-url origin', got, deps.execTimeoutMs)})`, fix: `remove ${cwd}: the worker clones the repository again at its next job` };
    const shown = maskUrl(remote);
    const r = await deps.exec('git', ['ls-remote', '--heads', 'origin'], { timeoutMs: deps.execTimeoutMs, env, cwd });
    if (r.kind === 'exited' && r.code === 0) return { name, status: 'ok', detail: `${shown} answers (${r.stdout.split('\n').filter(Boolean).length} branches)` };
    return { name, status: 'fail', detail: `${shown} does not answer: ${scrub(execProblem('git ls-remote origin', r, deps.execTimeoutMs), remote)}`, fix: 'check that this machine reaches the remote and has the credentials to fetch and push (an ssh key or a credential helper for this user); jobs of this repository fail here until it answers' };
  }));
  return [head, ...each];
}

/** src/worker/clis.ts `findClis`: CLI name → its `--version` line, for each agent CLI found here. */
export type FindClis = (s: { claudeBin?: string | undefined; codexBin?: string | undefined; packageRoot: string | undefined; path: string | undefined }) => Promise<Record<string, string>>;

/** The agent CLIs this worker would register, with their versions: it claims only jobs whose CLI it has. */
export async function checkWorkerClis(config: Config | undefined, deps: Pick<DoctorDeps, 'env' | 'packageRoot'>, findClis: FindClis): Promise<Check> {
  const clis = await findClis({ claudeBin: config?.claudeBin, codexBin: config?.codexBin, packageRoot: deps.packageRoot, path: deps.env.PATH });
  const names = Object.keys(clis);
  if (!names.length) {
    return { name: 'agent CLIs', status: 'fail', detail: 'neither claude nor codex answers `--version` here: this worker could claim no job', fix: 'install the CLIs the crew uses (npm install -g @anthropic-ai/claude-code, npm install -g @openai/codex) or set CLAUDE_BIN / CODEX_BIN' };
  }
  const missing = ['claude', 'codex'].filter((c) => !names.includes(c));
  const detail = `${names.map((n) => `${n} ${clis[n]}`).join(', ')}${missing.length ? `; no ${missing.join(', ')}: jobs for it go to other workers` : ''}`;
  return { name: 'agent CLIs', status: 'ok', detail };
}

/** Every check of a worker host, in report order. */
export async function runWorkerChecks(deps: DoctorDeps, findClis: FindClis): Promise<Check[]> {
  const cfg = checkConfig(deps);
  const guard = async <T extends Check | Check[]>(name: string, f: () => Promise<T>): Promise<T | Check> => {
    try {
      return await f();
    } catch (err) {
      return { name, status: 'fail', detail: `the check itself failed: ${(err as Error).message}`, fix: 'report this as an overseer bug (run with OVERSEER_DEBUG=1 for details)' };
    }
  };
  const [git, database, clones, clis] = await Promise.all([
    guard('git', () => checkGit(deps)),
    guard('database', () => checkWorkerDatabase(cfg.config)),
    guard('clones', () => checkClones(cfg.home, deps)),
    guard('agent CLIs', () => checkWorkerClis(cfg.config, deps, findClis)),
  ]);
  return [checkNode(deps), git, cfg.check, database, ...[clones].flat(), clis, checkConfinement(cfg.config, deps)];
}
