// `overseer init [--dry-run] [--force]`: wires Overseer into a git repository so that it is safe
// to commit for a team. Files:
//   .mcp.json                   (shared)   mcpServers.overseer — `overseer mcp` when overseer is on
//                                          PATH, else `npx -y overseer-mcp mcp`: no path of this machine
//   .claude/settings.json       (shared)   permissions.allow "mcp__overseer__*" (no prompt per tool)
//   .claude/settings.local.json (personal) the lead's lock hook: bash (else /bin/sh) + this installation's
//                                          hooks/overseer-hook.sh + node for its fallback
//                                          (absolute paths, so never shared)
//   .git/info/exclude           (personal) .claude/settings.local.json, unless git already ignores it
// An Overseer hook an older init put into the shared settings.json is moved out. Prints what it
// changed per file and changes nothing on a second run. Outside a git repository it refuses
// (exit 2) unless --force.
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { gitRoot, packageRoot } from '../config.js';
import { gitSync } from '../git/exec.js';
import { which } from '../launch/which.js';
import { HOOK_MATCHER, hookCommandLine, isOverseerHookCommand } from '../launch/claude/launcher.js';
import { writeFileAtomic } from '../hubfiles/hubLock.js';
import { CliError, UsageError } from './errors.js';

type Json = Record<string, unknown>;
interface HookEntry { matcher?: string; hooks?: { command?: string }[] }

/** The permission rule that lets Claude Code run every Overseer tool without asking (§1.3). */
export const PERMISSION_RULE = 'mcp__overseer__*';
const SAME_RULES = new Set([PERMISSION_RULE, 'mcp__overseer']);
export const LOCAL_SETTINGS = join('.claude', 'settings.local.json');

function readJson(file: string): Json | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
    return v as Json;
  } catch (err) {
    throw new CliError(`${file} is not valid JSON (${(err as Error).message}); fix it by hand, then run overseer init again. Nothing was changed.`);
  }
}

/** The server entry: `overseer mcp` when overseer is on PATH, else `npx -y overseer-mcp mcp`; never a path. */
export function serverEntry(): Json {
  if (which('overseer')) return { type: 'stdio', command: 'overseer', args: ['mcp'] };
  return { type: 'stdio', command: 'npx', args: ['-y', 'overseer-mcp', 'mcp'] };
}

/** The lead's hook: this installation's sh hook and this node (its fallback), so: personal settings only. */
export function hookCommand(): string {
  return hookCommandLine(process.execPath, join(packageRoot(), 'hooks', 'overseer-hook.sh'));
}

/** Ours: the sh hook, or the `node …/overseer-hook.mjs` an older init wrote (replaced on the next run). */
const isOurs = (e: HookEntry): boolean => !!e.hooks?.some((h) => typeof h.command === 'string' && isOverseerHookCommand(h.command));

export interface InitChange {
  file: string;
  action: 'created' | 'updated' | 'unchanged';
  what: string;
}

interface Plan { changes: InitChange[]; writes: { file: string; text: string }[]; excludes: { file: string; line: string }[] }

const jsonText = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

function planMcp(root: string, p: Plan): void {
  const file = join(root, '.mcp.json');
  const mcp = readJson(file);
  if (mcp?.mcpServers !== undefined && (typeof mcp.mcpServers !== 'object' || mcp.mcpServers === null || Array.isArray(mcp.mcpServers))) {
    throw new CliError(`${file}: mcpServers is not an object; fix it by hand. Nothing was changed.`);
  }
  const servers = (mcp?.mcpServers ?? {}) as Json;
  if (servers.overseer) {
    p.changes.push({ file, action: 'unchanged', what: 'mcpServers.overseer already present (kept as is)' });
    return;
  }
  const entry = serverEntry();
  p.changes.push({ file, action: mcp ? 'updated' : 'created', what: `added mcpServers.overseer (${String(entry.command)} ${(entry.args as string[]).join(' ')})` });
  p.writes.push({ file, text: jsonText({ ...(mcp ?? {}), mcpServers: { ...servers, overseer: entry } }) });
}

/** PreToolUse entries without ours; `hooks` without PreToolUse, settings without hooks, when emptied. */
function withoutOurHook(settings: Json): { next: Json; removed: boolean } {
  const hooks = (settings.hooks ?? {}) as Json;
  const pre = (Array.isArray(hooks.PreToolUse) ? hooks.PreToolUse : []) as HookEntry[];
  const kept = pre.filter((e) => !isOurs(e));
  if (kept.length === pre.length) return { next: settings, removed: false };
  const nextHooks: Json = { ...hooks, PreToolUse: kept };
  if (kept.length === 0) delete nextHooks.PreToolUse;
  const next: Json = { ...settings, hooks: nextHooks };
  if (Object.keys(nextHooks).length === 0) delete next.hooks;
  return { next, removed: true };
}

function planSharedSettings(root: string, p: Plan): void {
  const file = join(root, '.claude', 'settings.json');
  const settings = readJson(file);
  let next: Json = settings ?? {};
  const what: string[] = [];
  const { next: cleaned, removed } = withoutOurHook(next);
  if (removed) {
    next = cleaned;
    what.push(`removed the Overseer lock hook (a path of this machine; it now lives in ${LOCAL_SETTINGS})`);
  }
  const perms = (next.permissions ?? {}) as Json;
  if (typeof perms !== 'object' || perms === null || Array.isArray(perms) || (perms.allow !== undefined && !Array.isArray(perms.allow))) {
    throw new CliError(`${file}: permissions.allow is not a list; fix it by hand. Nothing was changed.`);
  }
  const allow = (perms.allow ?? []) as unknown[];
  if (!allow.some((r) => typeof r === 'string' && SAME_RULES.has(r))) {
    next = { ...next, permissions: { ...perms, allow: [...allow, PERMISSION_RULE] } };
    what.push(`allowed the Overseer tools (permissions.allow "${PERMISSION_RULE}")`);
  }
  if (what.length === 0) {
    p.changes.push({ file, action: 'unchanged', what: `the Overseer tools are already allowed (${PERMISSION_RULE})` });
    return;
  }
  p.changes.push({ file, action: settings ? 'updated' : 'created', what: what.join('; ') });
  p.writes.push({ file, text: jsonText(next) });
}

function planLocalSettings(root: string, p: Plan): void {
  const file = join(root, LOCAL_SETTINGS);
  const settings = readJson(file);
  const hooks = (settings?.hooks ?? {}) as Json;
  const pre = (Array.isArray(hooks.PreToolUse) ? hooks.PreToolUse : []) as HookEntry[];
  // No onFailure "block": the script itself denies when a hub runs but cannot answer; a hook
  // that cannot even start (Overseer uninstalled or moved) then lets the person work.
  const entry = { matcher: HOOK_MATCHER, hooks: [{ type: 'command', command: hookCommand(), timeout: 15 }] };
  const ours = pre.findIndex(isOurs);
  if (ours >= 0 && JSON.stringify(pre[ours]) === JSON.stringify(entry)) {
    p.changes.push({ file, action: 'unchanged', what: 'the Overseer lock hook is already installed' });
    return;
  }
  const list = [...pre];
  if (ours >= 0) list[ours] = entry;
  else list.push(entry);
  p.changes.push({ file, action: settings ? 'updated' : 'created', what: ours >= 0 ? 'updated the Overseer lock hook command' : `added the Overseer lock hook (PreToolUse ${HOOK_MATCHER}; this machine only)` });
  p.writes.push({ file, text: jsonText({ ...(settings ?? {}), hooks: { ...hooks, PreToolUse: list } }) });
}

/** Keep settings.local.json out of commits: add it to .git/info/exclude unless git ignores it already. */
function planExclude(root: string, isGit: boolean, p: Plan): void {
  if (!isGit) return;
  const rel = LOCAL_SETTINGS.split('\\').join('/');
  const git = (args: string[]): string | undefined => {
    const r = gitSync(args, { cwd: root, allowFail: true });
    return r.code === 0 ? r.stdout.trim() : undefined;
  };
  if (git(['check-ignore', '-q', '--no-index', rel]) !== undefined) return; // exit 0: ignored
  const ex = git(['rev-parse', '--git-path', 'info/exclude']);
  if (!ex) return;
  const file = isAbsolute(ex) ? ex : resolve(root, ex);
  p.changes.push({ file, action: existsSync(file) ? 'updated' : 'created', what: `git ignores ${rel} here (a personal file, never committed)` });
  p.excludes.push({ file, line: `/${rel}` });
}

/** Compute (and unless dryRun, write) the changes for the repository holding `cwd`. */
export function init(cwd: string, dryRun: boolean, opts: { force?: boolean } = {}): InitChange[] {
  const top = gitRoot(cwd);
  if (!top && !opts.force) {
    throw new UsageError(`${cwd} is not inside a git repository. overseer init writes project files meant to be committed (.mcp.json, .claude/settings.json): run it in your project's repository, or pass --force to set up ${cwd} anyway. Nothing was changed.`);
  }
  const root = top ?? cwd;
  const p: Plan = { changes: [], writes: [], excludes: [] };
  // Read (and so validate) every file before writing any: a bad one changes nothing.
  planMcp(root, p);
  planSharedSettings(root, p);
  planLocalSettings(root, p);
  planExclude(root, !!top, p);
  if (!dryRun) {
    for (const w of p.writes) {
      mkdirSync(dirname(w.file), { recursive: true });
      // Keep the mode of a file that exists (a 0600 .mcp.json stays 0600).
      writeFileAtomic(w.file, w.text, existsSync(w.file) ? statSync(w.file).mode & 0o777 : 0o644);
    }
    for (const x of p.excludes) {
      mkdirSync(dirname(x.file), { recursive: true });
      const prev = existsSync(x.file) ? readFileSync(x.file, 'utf8') : '';
      appendFileSync(x.file, `${prev && !prev.endsWith('\n') ? '\n' : ''}# Overseer: personal Claude Code settings (overseer init)\n${x.line}\n`);
    }
  }
  return p.changes;
}

export function runInit(o: { dryRun?: boolean; force?: boolean }): void {
  const cwd = process.cwd();
  const changes = init(cwd, !!o.dryRun, { force: o.force });
  for (const c of changes) process.stdout.write(`${o.dryRun && c.action !== 'unchanged' ? `would be ${c.action}` : c.action}: ${relative(cwd, c.file) || c.file} — ${c.what}\n`);
  if (changes.every((c) => c.action === 'unchanged')) {
    process.stdout.write('Nothing to do: Overseer is already set up here.\n');
    return;
  }
  if (o.dryRun) return;
  process.stdout.write([
    'Commit .mcp.json and .claude/settings.json; .claude/settings.local.json stays on this machine.',
    'The lock hook makes your own edits respect the files agents have locked: with no hub running it allows everything; with a hub running it asks the hub and denies the edit if the hub does not answer.',
    'Restart Claude Code in this project to pick up the overseer server.',
    '',
  ].join('\n'));
}
