// The deterministic permission policy (docs/permissions.md): ordered allow/ask/deny
// rules over the tool name and glob patterns on the tool input; the first matching rule wins,
// nothing matching gives `default`. No model decides. Pure: no I/O, paths are only normalised
// (path.resolve), never resolved through symlinks — the lock hook confines real paths.
//
// Globs: `*` any characters (in path fields: within one path segment), `**` anything, `**/` zero
// or more directories, `{a,b}` alternation, `\` escapes the next character; anchored on both ends.
// Path fields (file_path, notebook_path, path) inside the work dir are matched as `$WORKDIR/<rel>`
// and as `<rel>`; outside it as the absolute path. Bash `command`: a deny/ask pattern matches the
// whole command or any simple command in it (`cd x && sudo rm y` is caught by "sudo *"); an allow
// pattern must match every top-level simple command (`npm test; rm -rf ~` is not "npm test*").
import path from 'node:path';
import { z } from 'zod';
import { parse } from 'shell-quote';
import { simpleCommands, type SimpleCommand } from './bashTargets.js';
import { isInside } from './paths.js';
import { commandsOf, DANGER_NAMES, isDanger, type Cmd, type DangerName } from './commandMeaning.js';

/** What a rule (or the default) does with a tool call. */
export type PolicyAction = 'allow' | 'ask' | 'deny';

/** One rule: tool pattern, optional input conditions (all must match), reason shown on deny/ask. */
export interface PolicyRule {
  action: PolicyAction;
  /** tool name pattern: exact, or glob with `*` (e.g. "mcp__*", "Bash") */
  tool: string;
  /** input field → glob; `command` for Bash, `file_path`/`notebook_path` for file tools; `$WORKDIR/**` = inside the work dir */
  input?: Record<string, string>;
  /** a built-in danger of a Bash command, matched on its meaning (src/domain/commandMeaning.ts) */
  match?: DangerName;
  /** human reason shown on deny/ask */
  reason?: string;
}

/** Ordered rules and the action when nothing matches. */
export interface Policy {
  rules: PolicyRule[];
  default: PolicyAction;
}

const ACTION = z.enum(['allow', 'ask', 'deny'], { errorMap: () => ({ message: 'must be "allow", "ask" or "deny"' }) });
const pattern = (what: string) =>
  z.string({ required_error: `is required (${what})`, invalid_type_error: `must be a string (${what})` }).min(1, `must not be empty (${what})`);

const RuleSchema = z
  .object({
    action: ACTION,
    tool: pattern('a tool name or glob, e.g. "Bash" or "mcp__*"'),
    input: z.record(z.string().min(1, 'field names must not be empty'), pattern('a glob on that input field, e.g. "$WORKDIR/**"')).optional(),
    match: z.enum(DANGER_NAMES as [DangerName, ...DangerName[]], { errorMap: () => ({ message: `must be one of ${DANGER_NAMES.join(', ')}` }) }).optional(),
    reason: z.string({ invalid_type_error: 'must be a string' }).optional(),
  })
  .strict();

/** Schema of policy.json (strict: unknown keys are errors); issue paths name the rule index and field, e.g. rules.3.tool. */
export const PolicySchema: z.ZodType<Policy> = z
  .object({ rules: z.array(RuleSchema, { required_error: 'is required (a list of rules, may be empty)' }), default: ACTION })
  .strict();

/** Human text for a schema error: "rules[3].tool: must not be empty (…)"; one line per issue. */
export function policyErrorText(error: z.ZodError): string {
  return error.issues
    .map((i) => `${i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '') || '(top level)'}: ${i.message}`)
    .join('\n');
}

const EDIT_TOOLS = '{Edit,Write,MultiEdit,NotebookEdit}';
const bashDeny = (match: DangerName, reason: string): PolicyRule => ({ action: 'deny', tool: 'Bash', match, reason });

/** Safe defaults: read-only tools and Overseer's own tools allowed, edits only inside the work dir, dangerous shell denied, pushes and the web asked. */
export const DEFAULT_POLICY: Policy = {
  rules: [
    { action: 'allow', tool: '{Read,Glob,Grep,LS,TodoWrite,Task}' },
    { action: 'allow', tool: 'mcp__overseer__*' },
    { action: 'allow', tool: '{Edit,Write,MultiEdit}', input: { file_path: '$WORKDIR/**' } },
    { action: 'allow', tool: 'NotebookEdit', input: { notebook_path: '$WORKDIR/**' } },
    { action: 'deny', tool: EDIT_TOOLS, reason: 'an agent may only edit files inside its own work tree' },
    bashDeny('rm-root-or-home', 'deleting the filesystem root, a system directory or the home directory is never allowed'),
    bashDeny('privilege', 'agents may not use sudo (or doas, su, pkexec)'),
    bashDeny('force-push', 'force pushes (and deleting remote branches) are not allowed; push normally or ask the lead'),
    bashDeny('download-to-shell', 'running a download as a shell script is not allowed'),
    bashDeny('mkfs', 'formatting or partitioning a disk is not allowed'),
    bashDeny('block-device-write', 'writing to a block device is not allowed'),
    bashDeny('shutdown', 'agents may not shut down or reboot the machine'),
    { action: 'ask', tool: 'Bash', match: 'git-push', reason: 'pushing to a remote needs the lead\'s approval' },
    { action: 'allow', tool: 'Bash' },
    { action: 'ask', tool: '{WebFetch,WebSearch}', reason: 'web access needs the lead\'s approval' },
  ],
  default: 'ask',
};

/** One permission prompt: the tool, its input, and the agent's work dir. */
export interface PolicyRequest {
  toolName: string;
  input: Record<string, unknown>;
  workDir: string;
}

/** The answer, and which rule gave it (null: the default). */
export interface PolicyDecision {
  action: PolicyAction;
  ruleIndex: number | null;
  reason: string;
}

const PATH_FIELDS = new Set(['file_path', 'notebook_path', 'path']);
const cache = new Map<string, RegExp>();

const esc = (c: string): string => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// Index of the `}` closing the `{` at i and the top-level commas inside, or null (then literal).
function braces(p: string, i: number): { end: number; commas: number[] } | null {
  const commas: number[] = [];
  for (let j = i + 1, depth = 0; j < p.length; j++) {
    const c = p[j];
    if (c === '\\') j++;
    else if (c === '{') depth++;
    else if (c === '}' && depth-- === 0) return commas.length > 0 ? { end: j, commas } : null;
    else if (c === ',' && depth === 0) commas.push(j);
  }
  return null;
}

function source(p: string, paths: boolean): string {
  let out = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    if (c === '\\' && i + 1 < p.length) out += esc(p[++i] as string);
    else if (c === '*' && p[i + 1] === '*') {
      i++;
      if (paths && p[i + 1] === '/') { i++; out += '(?:.*/)?'; } else out += '.*';
    } else if (c === '*') out += paths ? '[^/]*' : '.*';
    else if (c === '{' && braces(p, i)) {
      const b = braces(p, i) as { end: number; commas: number[] };
      const cuts = [i, ...b.commas, b.end];
      out += `(?:${cuts.slice(1).map((cut, k) => source(p.slice((cuts[k] as number) + 1, cut), paths)).join('|')})`;
      i = b.end;
    } else out += esc(c);
  }
  return out;
}

function glob(pattern: string, value: string, paths = false): boolean {
  const key = `${paths ? 'p' : 's'}${pattern}`;
  let re = cache.get(key);
  if (!re) cache.set(key, (re = new RegExp(`^${source(pattern, paths)}$`, 's')));
  return re.test(value);
}

function pathCandidates(value: string, workDir: string): string[] {
  const root = path.resolve(workDir);
  const abs = path.resolve(root, value);
  if (abs === root) return ['$WORKDIR', '.'];
  if (!isInside(abs, root)) return [abs];
  const rel = path.relative(root, abs).split(path.sep).join('/');
  return [`$WORKDIR/${rel}`, rel];
}

function normalisedCommand(command: string): string {
  try {
    return parse(command, (k) => `$${k}`)
      .map((e) => (typeof e === 'string' ? e : 'comment' in e ? `#${e.comment}` : e.op === 'glob' ? e.pattern : e.op))
      .join(' ');
  } catch {
    return command;
  }
}

/** A simple command's text with its program as a basename (`/usr/bin/npm publish` → `npm publish`). */
const withBasename = (text: string): string => text.replace(/^(\S*\/)([^\s/]+)/, '$2');

function commandMatches(pattern: string, command: string, action: PolicyAction, split: () => SimpleCommand[]): boolean {
  const segs = split();
  if (action === 'allow') {
    const top = segs.filter((s) => !s.nested);
    return top.length > 0 ? top.every((s) => glob(pattern, s.text)) : glob(pattern, command.trim());
  }
  return [command.trim(), normalisedCommand(command), ...segs.flatMap((s) => [s.text, withBasename(s.text)])].some((c) => glob(pattern, c));
}

// Per decision: the Bash command is split once, however many rules look at it.
interface Lazy { segs?: SimpleCommand[]; cmds?: Cmd[] }

function fieldMatches(field: string, pattern: string, value: unknown, req: PolicyRequest, action: PolicyAction, lazy: Lazy): boolean {
  if (typeof value === 'number' || typeof value === 'boolean') value = String(value);
  if (typeof value !== 'string') return false;
  if (PATH_FIELDS.has(field)) return pathCandidates(value, req.workDir).some((c) => glob(pattern, c, true));
  if (field === 'command' && req.toolName === 'Bash') {
    const command = value;
    return commandMatches(pattern, command, action, () => (lazy.segs ??= simpleCommands(command)));
  }
  return glob(pattern, value);
}

/** First matching rule wins (its action, index and reason); otherwise the policy's default. Pure. */
export function decide(policy: Policy, req: PolicyRequest): PolicyDecision {
  const lazy: Lazy = {};
  for (const [i, rule] of policy.rules.entries()) {
    if (!glob(rule.tool, req.toolName)) continue;
    const conds = Object.entries(rule.input ?? {});
    if (!conds.every(([f, p]) => fieldMatches(f, p, req.input[f], req, rule.action, lazy))) continue;
    if (rule.match !== undefined) {
      const command = req.input.command;
      if (typeof command !== 'string' || !isDanger(rule.match, command, (lazy.cmds ??= commandsOf(command)))) continue;
    }
    return { action: rule.action, ruleIndex: i, reason: rule.reason ?? `${rule.action} by policy rule ${i} (tool ${rule.tool})` };
  }
  return { action: policy.default, ruleIndex: null, reason: `no policy rule matched ${req.toolName}; the default is ${policy.default}` };
}
