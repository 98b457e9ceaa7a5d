// `overseer init [--dry-run]`: wires Overseer into the person's repository. Merges the
// `overseer` server into .mcp.json and the lock hook into .claude/settings.json (so the lead's
// own edits respect agents' locks), prints what it changed, and changes nothing on a second run.
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitRoot, packageRoot } from '../config.js';
import { which } from '../launch/which.js';
import { HOOK_MATCHER, hookCommandLine } from '../launch/claude/launcher.js';
import { writeFileAtomic } from '../server/hubLock.js';
import { CliError } from './status.js';


type Json = Record<string, unknown>;

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

/** The server entry: `overseer mcp` when overseer is on PATH, else this installation's node + main.js. */
export function serverEntry(): Json {
  if (which('overseer')) return { type: 'stdio', command: 'overseer', args: ['mcp'] };
  return { type: 'stdio', command: process.execPath, args: [fileURLToPath(new URL('./main.js', import.meta.url)), 'mcp'] };
}

export function hookCommand(): string {
  return hookCommandLine(process.execPath, join(packageRoot(), 'hooks', 'overseer-hook.mjs'));
}

export interface InitChange {
  file: string;
  action: 'created' | 'updated' | 'unchanged';
  what: string;
}

/** Compute (and unless dryRun, write) the changes for the repository holding `cwd`. */
export function init(cwd: string, dryRun: boolean): InitChange[] {
  const root = gitRoot(cwd) ?? cwd;
  const changes: InitChange[] = [];

  const mcpFile = join(root, '.mcp.json');
  const settingsFile = join(root, '.claude', 'settings.json');
  // Read (and so validate) both files before writing either: a bad one changes nothing.
  const mcp = readJson(mcpFile);
  const settings = readJson(settingsFile);
  const writes: { file: string; text: string }[] = [];
  const servers = (mcp?.mcpServers ?? {}) as Json;
  if (mcp?.mcpServers !== undefined && (typeof mcp.mcpServers !== 'object' || Array.isArray(mcp.mcpServers))) throw new CliError(`${mcpFile}: mcpServers is not an object; fix it by hand. Nothing was changed.`);
  if (servers.overseer) changes.push({ file: mcpFile, action: 'unchanged', what: 'mcpServers.overseer already present (kept as is)' });
  else {
    const next = { ...(mcp ?? {}), mcpServers: { ...servers, overseer: serverEntry() } };
    changes.push({ file: mcpFile, action: mcp ? 'updated' : 'created', what: 'added mcpServers.overseer' });
    writes.push({ file: mcpFile, text: `${JSON.stringify(next, null, 2)}\n` });
  }

  const hooks = (settings?.hooks ?? {}) as Json;
  const pre = (Array.isArray(hooks.PreToolUse) ? hooks.PreToolUse : []) as { matcher?: string; hooks?: { command?: string }[] }[];
  const command = hookCommand();
  const ours = pre.findIndex((e) => e.hooks?.some((h) => typeof h.command === 'string' && h.command.includes('overseer-hook.mjs')));
  const entry = { matcher: HOOK_MATCHER, hooks: [{ type: 'command', command, timeout: 15, onFailure: 'block' }] };
  if (ours >= 0 && JSON.stringify(pre[ours]) === JSON.stringify(entry)) {
    changes.push({ file: settingsFile, action: 'unchanged', what: 'the Overseer lock hook is already installed' });
  } else {
    const list = [...pre];
    if (ours >= 0) list[ours] = entry;
    else list.push(entry);
    const next = { ...(settings ?? {}), hooks: { ...hooks, PreToolUse: list } };
    changes.push({ file: settingsFile, action: settings ? 'updated' : 'created', what: ours >= 0 ? 'updated the Overseer lock hook command' : `added the Overseer lock hook (PreToolUse ${HOOK_MATCHER})` });
    writes.push({ file: settingsFile, text: `${JSON.stringify(next, null, 2)}\n` });
  }
  if (!dryRun) {
    for (const w of writes) {
      mkdirSync(dirname(w.file), { recursive: true });
      // Keep the mode of a file that exists (a 0600 .mcp.json stays 0600).
      writeFileAtomic(w.file, w.text, existsSync(w.file) ? statSync(w.file).mode & 0o777 : 0o644);
    }
  }
  return changes;
}

export function runInit(o: { dryRun?: boolean }): void {
  const cwd = process.cwd();
  const changes = init(cwd, !!o.dryRun);
  for (const c of changes) process.stdout.write(`${o.dryRun && c.action !== 'unchanged' ? `would be ${c.action}` : c.action}: ${relative(cwd, c.file) || c.file} — ${c.what}\n`);
  if (changes.every((c) => c.action === 'unchanged')) process.stdout.write('Nothing to do: Overseer is already set up here.\n');
  else if (!o.dryRun) process.stdout.write('Restart Claude Code in this project to pick up the overseer server.\n');
}
