// The guard that keeps agents out of the hub's state by name, for the hosts where OS
// confinement is missing (docs/security.md, "The state is refused by name"): a tool call of an
// agent that names a path inside a secret place (src/domain/protectedPaths.ts secretPlaces: the
// hub's state with the lead's token, the state root of every hub, the shared knowledge base) is
// refused, whatever it is (Read, Glob, LS, a Bash or Codex shell command that reads, writes or
// only mentions it) and whatever the permission policy says. Used by check_permission
// (PermissionService.judge, before any policy rule) and by the PreToolUse hook (HookService.check,
// Claude and Codex children). Paths are judged both as written (lexically) and where they
// really lead (symlinks followed); a glob is judged by what it can expand to.
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { settingsDirOf, stateRoot } from '../config.js';
import { globalKbPath } from '../kb/service.js';
import { applyPatchTargets } from '../domain/applyPatch.js';
import { MAX_NAMED, bashNamedPaths, firstInside, toolNamedPaths, type NamingContext } from '../domain/namedPaths.js';
import { realTarget } from './realPaths.js';
import { secretPlaces, type ProtectedContext, type SecretPlace } from '../domain/protectedPaths.js';
import type { HubContext } from './context.js';

/** Input fields that hold a path, in any tool (Claude Code's, Codex's, an MCP server's). */
const PATH_FIELDS = ['file_path', 'notebook_path', 'path', 'paths', 'file', 'files', 'filename', 'dir', 'directory', 'cwd', 'workdir'];
/** Tools that write the path they are given (their refusal says so). */
const WRITERS = /^(Edit|Write|MultiEdit|NotebookEdit|apply_patch)$/;
/** Tools that read the directory they run in when given no path. */
const READS_CWD = /^(Read|Grep|Glob|LS|NotebookRead)$/;

interface Guard { c: ProtectedContext; places: SecretPlace[]; vars: Record<string, string | undefined> }
const guards = new WeakMap<HubContext, Guard>();

/**
 * Where a path really leads (symlinks followed, `..` after them), for firstInside: one call's
 * walker, which resolves each parent directory once (most candidates share the cwd) and then
 * looks at the last component alone (one lstat) unless it is a link, `.` or `..`.
 */
function walker(): (p: string) => string | undefined {
  const dirs = new Map<string, string | undefined>();
  return (p) => {
    const cut = p.lastIndexOf('/');
    const dir = p.slice(0, cut) || '/';
    const base = p.slice(cut + 1);
    if (base === '' || base === '.' || base === '..') return realTarget(p, '/');
    let real = dirs.get(dir);
    if (!dirs.has(dir)) dirs.set(dir, (real = realTarget(dir, '/')));
    if (real === undefined) return undefined;
    const full = real === '/' ? `/${base}` : `${real}/${base}`;
    try {
      if (!lstatSync(full).isSymbolicLink()) return full;
    } catch {
      return full; // missing (or unreadable): it would be created, or fail, right there
    }
    return realTarget(full, '/');
  };
}
const real = (p: string | undefined): string | undefined => (p ? realTarget(p, '/') ?? p : undefined);

/**
 * What the hub protects from every agent, from the hub's configuration and the children's
 * environment: fixed for a hub's life, so resolved once per hub, not on every hook call.
 */
export function protectedContextOf(ctx: HubContext): ProtectedContext {
  return guardOf(ctx).c;
}

function guardOf(ctx: HubContext): Guard {
  let g = guards.get(ctx);
  if (g) return g;
  const kb = globalKbPath(process.env);
  // As confinement hides them (src/confine/setup.ts): the hub's own environment says where.
  const given: ProtectedContext = { stateDir: ctx.config.home, stateRoot: stateRoot(process.env), secretFiles: ['', '-wal', '-shm', '-journal'].map((s) => `${kb}${s}`) };
  const c: ProtectedContext = {
    stateDir: real(given.stateDir) as string, home: real(ctx.childEnv.HOME), claudeConfigDir: real(ctx.childEnv.CLAUDE_CONFIG_DIR),
    stateRoot: real(given.stateRoot), secretFiles: given.secretFiles!.map((f) => real(f) as string), settingsDir: real(settingsDirOf(ctx.config)),
  };
  // Each place under its real path and as configured (a glob is matched as text).
  const places = [...secretPlaces(c), ...secretPlaces(given)].filter((p, i, all) => all.findIndex((q) => q.path === p.path) === i);
  g = { c, places, vars: { ...ctx.childEnv } };
  guards.set(ctx, g);
  return g;
}

/**
 * Why an agent's tool call may not run because it names a secret place (the message the agent
 * sees), or undefined. `cwds`: where relative paths start (the call's cwd, the work tree).
 */
export function secretRefusal(ctx: HubContext, toolName: string, input: Record<string, unknown>, cwds: readonly string[]): string | undefined {
  const g = guardOf(ctx);
  const naming: NamingContext = { cwds: cwds.filter((d) => path.isAbsolute(d)), vars: g.vars };
  const command = input.command;
  const text = typeof command === 'string' ? command : Array.isArray(command) ? command.map(String).join(' ') : undefined;
  const named: string[] = [];
  if (toolName === 'apply_patch') {
    // Codex's patch tool: the files its headers name (the patch text is not a shell command).
    const patch = [input.input, input.patch, command].find((v): v is string => typeof v === 'string') ?? '';
    for (const t of applyPatchTargets(patch)) named.push(...toolNamedPaths(t, naming));
  } else if (text !== undefined) {
    // A shell command (Claude's Bash, Codex's shell, any tool's `command`): every path it names.
    const named = bashNamedPaths(text, naming);
    const hit = firstInside(named.paths, g.places, walker(), false);
    if (hit?.place) return refusal(`\`${clip(text)}\` names ${hit.path}`, hit.place);
    if (named.truncated) return `Overseer: \`${clip(text)}\` names more than ${MAX_NAMED} paths, too many to check that none is in the hub's own state; split it into smaller commands.`;
  }
  if (toolName === 'Bash' || toolName === 'shell') return undefined;
  for (const f of PATH_FIELDS) {
    const v = input[f];
    for (const s of typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []) named.push(...toolNamedPaths(s, naming));
  }
  if (toolName === 'Glob' && typeof input.pattern === 'string') {
    const base = typeof input.path === 'string' ? toolNamedPaths(input.path, naming) : naming.cwds;
    named.push(...toolNamedPaths(input.pattern, { ...naming, cwds: base }));
  }
  if (named.length === 0 && READS_CWD.test(toolName)) named.push(...naming.cwds);
  const hit = firstInside(named, g.places, walker(), true);
  if (!hit) return undefined;
  if (!hit.place) return `Overseer: agents may not read the hub's own state, and where ${JSON.stringify(clip(hit.path))} leads cannot be told (a symlink loop, or too deep): use the real path.`;
  return WRITERS.test(toolName) ? `Overseer: agents may not write there: ${hit.path} is in ${hit.place.what}.` : refusal(`${toolName} of ${hit.path}`, hit.place);
}

function refusal(what: string, place: SecretPlace): string {
  return `Overseer: agents may not read the hub's own state, nor name it: ${what}, in ${place.what}. No permission rule can allow this (docs/security.md).`;
}

const clip = (s: string): string => (s.length > 200 ? `${s.slice(0, 197)}...` : s);
