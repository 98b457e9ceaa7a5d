// The confinement plan of one child, read from the disk: which of the hub's directories it
// must not see and which files decide the rules it runs under. See plan.ts for what each
// list does and docs/security.md for why these paths.
import { gitSync } from '../git/exec.js';
import { existsSync, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { databaseCredentialFiles } from '../launch/childEnv.js';
import { outermost, type ConfinePlan } from './plan.js';

export interface JailInputs {
  /** The hub's state directory (hidden). */
  stateDir: string;
  /** Where every hub of the user keeps its state ($XDG_STATE_HOME/overseer): hidden too. */
  stateRoot?: string;
  /** The project the hub serves: its `.overseer/` settings are read-only. */
  projectDir: string;
  /** Overseer's own package: its code, hook and prompts are read-only. */
  packageRoot: string;
  /** Files no child may read or write (the shared knowledge base). */
  secretFiles?: readonly string[];
  /** The hub's database URL (`databaseUrl`): the TLS key and certificate it names are hidden. */
  databaseUrl?: string;
  /** The hub's own environment (default: this process's): where its password file and TLS files are. */
  hubEnv?: NodeJS.ProcessEnv;
}

export class ConfineError extends Error {}

const real = (p: string): string | undefined => {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
};
const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};
const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);

/** Claude Code's user-level files that carry rules (settings with hooks and permissions, and
 * definitions that can carry hooks of their own). */
const CLAUDE_USER_RULES = ['settings.json', 'settings.local.json', 'agents', 'commands', 'skills', 'hooks', 'plugins'];
const CODEX_RULES = ['config.toml', 'hooks.json'];
const PACKAGE_PARTS = ['dist', 'hooks', 'prompts', 'package.json'];

const gitCommonDirs = new Map<string, { top?: string; common?: string }>();
/** The work tree's top level and git's common directory (cached per directory). */
function gitDirsOf(cwd: string): { top?: string; common?: string } {
  const hit = gitCommonDirs.get(cwd);
  if (hit) return hit;
  let v: { top?: string; common?: string } = {};
  try {
    const out = gitSync(['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'], { cwd, timeout: 5000 }).stdout;
    const [top, common] = out.trim().split('\n');
    v = { top: top ? real(top) : undefined, common: common ? real(common) : undefined };
  } catch {
    // not a repository
  }
  gitCommonDirs.set(cwd, v);
  return v;
}

/** Make sure a directory exists, so it can be bound read-only (a missing one could be created by the child). */
function ensureDir(dir: string, mode?: number): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, ...(mode === undefined ? {} : { mode }) });
  } catch {
    return undefined;
  }
  return real(dir);
}

/**
 * Where Claude Code keeps what lets one session reach another: the messaging sockets
 * (`<XDG_RUNTIME_DIR or the temp dir>/cc-socks/<pid>.sock`, else `/tmp/cc-socks-<uid>`) and the
 * session registry that lists them (`<config dir>/sessions`). Each confined child gets them
 * empty and its own (created here when missing, so the mount point is not the child's to make).
 */
function sessionDirs(env: NodeJS.ProcessEnv, claudeDirs: readonly string[]): string[] {
  const uid = process.getuid?.() ?? 0;
  const temps = [env.XDG_RUNTIME_DIR, env.CLAUDE_CODE_TMPDIR, env.TMPDIR, '/tmp'].filter((d): d is string => !!d && path.isAbsolute(d));
  const dirs = [...temps.map((d) => path.join(d, 'cc-socks')), `/tmp/cc-socks-${uid}`, ...claudeDirs.map((d) => path.join(d, 'sessions'))];
  return outermost(dirs.map((d) => ensureDir(d, 0o700)).filter((d): d is string => !!d));
}

/**
 * What the CLI itself writes that lies inside a read-only tree: its HOME (Claude Code's session
 * files under ~/.claude/projects, ~/.claude.json, rewritten by rename in HOME), CLAUDE_CONFIG_DIR,
 * CODEX_HOME, TMPDIR. Without them a reviewer whose HOME is in its project (a test hub) cannot
 * save its conversation, and Continue finds none. The rules inside stay read-only (bound after).
 */
function cliStateIn(tree: string, env: NodeJS.ProcessEnv, hidden: (p: string) => boolean): string[] {
  const dirs = [env.HOME, env.CLAUDE_CONFIG_DIR, env.CODEX_HOME, env.TMPDIR]
    .map((d) => (d && path.isAbsolute(d) ? ensureDir(d) : undefined))
    .filter((d): d is string => !!d && d !== tree && inside(d, tree) && !hidden(d));
  return outermost(dirs);
}

/** The plan for a child started in `cwd` with environment `env`. Throws ConfineError when the
 * child's own tree lies inside what it must not see. */
export function planFor(cwd: string, env: NodeJS.ProcessEnv, o: JailInputs, role: { readOnlyTree?: boolean } = {}): ConfinePlan {
  const tree = real(cwd) ?? path.resolve(cwd);
  const hide = outermost([o.stateDir, o.stateRoot].map((d) => (d ? real(d) : undefined)).filter((d): d is string => !!d));
  for (const h of hide) {
    if (inside(tree, h)) throw new ConfineError(`the work tree ${tree} is inside the hub's state ${h}: agents cannot be kept out of it; run them in another directory`);
  }
  const hidden = (p: string): boolean => hide.some((h) => inside(p, h));

  const reveal: string[] = [];
  const codexHome = env.CODEX_HOME ? real(env.CODEX_HOME) : undefined;
  if (codexHome && hidden(codexHome)) reveal.push(codexHome);

  const ro: string[] = [];
  const add = (p: string | undefined): void => {
    const r = p ? real(p) : undefined;
    if (r && (!hidden(r) || reveal.some((d) => inside(r, d)))) ro.push(r);
  };

  // The tree's own rules: .claude at the tree and its git top level (created when missing, so
  // a child cannot create one with `disableAllHooks`), .codex and .mcp.json where they exist.
  const { top, common } = gitDirsOf(tree);
  const roots = [...new Set([tree, top ?? tree])];
  for (const d of roots) add(ensureDir(path.join(d, '.claude')));
  for (let d = tree; top && inside(d, top); d = path.dirname(d)) {
    add(path.join(d, '.claude'));
    add(path.join(d, '.codex'));
    add(path.join(d, '.mcp.json'));
    if (d === top) break;
  }
  if (!top) {
    add(path.join(tree, '.codex'));
    add(path.join(tree, '.mcp.json'));
  }
  // git runs commands from hooks/ and config when the hub (or the lead) commits.
  if (common) {
    add(ensureDir(path.join(common, 'hooks')));
    add(path.join(common, 'config'));
  }
  // Claude Code's user configuration: settings files a child could create are created empty.
  const home = env.HOME;
  const claudeDirs = [env.CLAUDE_CONFIG_DIR, home ? path.join(home, '.claude') : undefined].filter((d): d is string => !!d);
  for (const d of claudeDirs) {
    const dir = ensureDir(d);
    if (!dir) continue;
    for (const name of ['settings.json', 'settings.local.json']) {
      const settings = path.join(dir, name);
      if (existsSync(settings)) continue;
      try {
        writeFileSync(settings, '{}\n', { flag: 'wx' });
      } catch {
        // another launch created it, or the directory is not writable: bound below if it exists
      }
    }
    for (const f of CLAUDE_USER_RULES) add(path.join(dir, f));
  }
  if (home) for (const f of CODEX_RULES) add(path.join(home, '.codex', f));
  if (codexHome) for (const f of CODEX_RULES) add(path.join(codexHome, f));
  // The links Codex's own sandbox runs its helper through (src/launch/codex/sandboxHelpers.ts):
  // a command Codex's sandbox lets write there could otherwise swap the helper of the next one.
  if (codexHome) add(path.join(codexHome, 'bin'));
  add('/etc/claude-code');
  add(path.join(o.projectDir, '.overseer'));
  for (const p of PACKAGE_PARTS) add(path.join(o.packageRoot, p));

  // The database's credentials (docs/security.md): the hub's password file and TLS key/cert, and
  // a ~/.pgpass in the child's own home, when they exist as files.
  const dbFiles = [...databaseCredentialFiles(o.hubEnv ?? process.env, [o.databaseUrl]), ...(home ? [path.join(home, '.pgpass')] : [])]
    .map((f) => real(f)).filter((f): f is string => !!f && isFile(f));
  const hideFiles = [...new Set([...(o.secretFiles ?? []).map((f) => real(f)), ...dbFiles])].filter((f): f is string => !!f && !hidden(f));
  // A role that writes nothing (src/roles): the whole tree, and the repository's git directory
  // (a worktree's lives outside it: `git commit` would write there), are read-only.
  if (role.readOnlyTree && common) add(common);
  return {
    hide, hideFiles, reveal, readOnly: outermost(ro), private: sessionDirs(env, claudeDirs),
    ...(role.readOnlyTree ? { readOnlyTree: tree, writable: cliStateIn(tree, env, hidden) } : {}),
  };
}
