// Roles (issue 31 point 4): what an agent may do, enforced by the hub — never asked of the model.
// A role is plain data stored on the job when it is spawned (jobs.role, jobs.role_json, migration
// 31), so a later edit of a role file cannot widen an agent that already runs. Pure: the role
// files are read by load.ts; the hook, the policy and the confinement ask `roleRefusal` and
// `readOnly` (docs/decisions.md "Roles").
import { globToRegExp } from '../git/glob.js';

export const BUILTIN_ROLES = ['implementer', 'reviewer', 'planner'] as const;
export type BuiltinRole = (typeof BUILTIN_ROLES)[number];
export const DEFAULT_ROLE: BuiltinRole = 'implementer';

/** A role resolved for one job (what role_json holds). */
export interface RoleSpec {
  name: string;
  /** Path globs (relative to the agent's work tree) its writes may touch; undefined = anywhere the
   * policy allows (an implementer); [] = nowhere (read-only: its work tree is mounted read-only). */
  writes?: string[];
  /** The only tools it may use besides Overseer's own (undefined = any). */
  tools?: string[];
  /** Tools it may never use. */
  denied?: string[];
  /** Claude Code's plan mode (`--permission-mode plan`); Codex's read-only sandbox. */
  plan?: boolean;
  model?: string;
  provider?: 'claude' | 'codex';
  /** The role's standing instructions, added to the agent's first prompt. */
  instructions: string;
}

/** The built-in roles (without their instructions, which live in prompts/role-<name>.md). */
export function builtinRole(name: BuiltinRole): Omit<RoleSpec, 'instructions'> {
  switch (name) {
    case 'implementer': return { name };
    case 'reviewer': return { name, writes: [] };
    case 'planner': return { name, writes: [], plan: true };
  }
}

export const isBuiltin = (name: string): name is BuiltinRole => (BUILTIN_ROLES as readonly string[]).includes(name);

/** No write anywhere: the hook refuses every write and the work tree is mounted read-only. */
export const readOnly = (r: Pick<RoleSpec, 'writes'> | undefined): boolean => r?.writes !== undefined && r.writes.length === 0;

/** Tools that write files, whatever their input says. */
const WRITE_TOOLS = /^(Edit|Write|MultiEdit|NotebookEdit|apply_patch)$/;
/** Where output may always go: not a file of the tree. */
const HARMLESS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);

/** Does tool name `tool` match a rule (`Bash`, `mcp__github__*`)? */
function toolMatches(rule: string, tool: string): boolean {
  return rule.endsWith('*') ? tool.startsWith(rule.slice(0, -1)) : rule === tool;
}

export interface WriteFacts {
  /** The paths the call writes, absolute and real (symlinks resolved). */
  paths: readonly string[];
  /** It also writes somewhere that cannot be named (a Bash line the parser cannot follow). */
  unknown: boolean;
  /** The agent's work tree, absolute and real. */
  tree: string;
  /** A shell call's command line (git commands that write the repository name no file). */
  command?: string;
}

/** git commands that change the repository (its objects, refs, index or config) without naming a file. */
const GIT_WRITES = /\bgit\s+(?:-[Cc]\s+\S+\s+)*(?:commit|add|rm|mv|reset|checkout|switch|restore|merge|rebase|cherry-pick|revert|stash|push|pull|fetch|tag\s+\S|am|apply|clean|gc|prune|update-ref|update-index|config\s+(?!--get|-l|--list)\S|worktree\s+(?:add|remove|move|prune)|branch\s+-[dDmMcCf])\b/;

/**
 * Why `role` refuses a tool call, or undefined. Overseer's own tools (mcp__overseer__*) are never
 * refused: an agent must be able to finish and ask. `w`: the writes the call makes (the hook
 * finds them; file tools always write).
 */
export function roleRefusal(role: RoleSpec | undefined, tool: string, w: WriteFacts): string | undefined {
  if (!role || tool.startsWith('mcp__overseer__')) return undefined;
  const who = `your role "${role.name}"`;
  if (role.denied?.some((d) => toolMatches(d, tool))) return `Denied by Overseer: ${who} may not use ${tool}.`;
  if (role.tools && !role.tools.some((a) => toolMatches(a, tool))) return `Denied by Overseer: ${who} may use only ${role.tools.join(', ')} (and Overseer's tools), not ${tool}.`;
  if (role.writes === undefined) return undefined;
  const paths = w.paths.filter((p) => !HARMLESS.has(p));
  const writes = paths.length > 0 || w.unknown || WRITE_TOOLS.test(tool) || (w.command !== undefined && GIT_WRITES.test(w.command));
  if (!writes) return undefined;
  if (role.writes.length === 0) return `Denied by Overseer: ${who} is read-only: it may read and run commands that change nothing, but not write (${tool}${paths.length ? ` → ${paths.join(', ')}` : ''}). Report what should change in your result instead.`;
  if (w.unknown) return `Denied by Overseer: ${who} may write only ${role.writes.join(', ')}, and where this command writes cannot be told: write with Edit/Write or a plain redirection.`;
  if (paths.length === 0) return `Denied by Overseer: ${who} may write only ${role.writes.join(', ')}, and ${tool} names no file.`;
  const res = role.writes.map(globToRegExp);
  for (const p of paths) {
    const rel = p === w.tree ? '' : p.startsWith(`${w.tree}/`) ? p.slice(w.tree.length + 1) : undefined;
    if (rel === undefined || rel === '' || !res.some((r) => r.test(rel))) return `Denied by Overseer: ${who} may write only ${role.writes.join(', ')} (inside ${w.tree}), not ${p}.`;
  }
  return undefined;
}

// ---- "wider" ---------------------------------------------------------------------------------

/** Is glob `child` within glob `parent` (every path it matches, `parent` matches)? Conservative:
 * equal globs, a literal path `parent` matches, or a pattern under a `dir/**` parent. */
export function globWithin(child: string, parent: string): boolean {
  const norm = (g: string): string => g.replace(/^\.\/+/, '').replace(/^\/+/, '');
  const c = norm(child);
  const p = norm(parent);
  if (c === p || p === '**') return true;
  if (!/[*?[{]/.test(c)) return globToRegExp(parent).test(c);
  if (p.endsWith('/**')) return c.startsWith(p.slice(0, -2));
  return false;
}

/**
 * Why a child with role `child` may not be spawned by an agent whose role is `parent`, or undefined
 * (docs/decisions.md "Roles"). A role is at most as wide as its parent's when it writes nowhere the
 * parent may not (read-only ⊂ some globs ⊂ anywhere), uses no tool the parent may not, and keeps
 * every tool the parent is denied. Plan mode only narrows. The lead's children may have any role.
 */
export function widerThan(child: RoleSpec, parent: RoleSpec | undefined): string | undefined {
  if (!parent) return undefined;
  const why = (what: string): string => `role "${child.name}" is wider than your own role "${parent.name}": ${what}. An agent can give its sub-agents only its own role or a narrower one (reviewer and planner are the narrowest); ask the lead to start this agent.`;
  if (parent.writes !== undefined) {
    if (child.writes === undefined) return why(`it may write anywhere, you ${parent.writes.length ? `only ${parent.writes.join(', ')}` : 'nowhere'}`);
    const out = child.writes.filter((g) => !parent.writes!.some((p) => globWithin(g, p)));
    if (out.length) return why(`it may write ${out.join(', ')}, which you may not${parent.writes.length ? ` (you: ${parent.writes.join(', ')})` : ' (you are read-only)'}`);
  }
  if (parent.tools) {
    if (!child.tools) return why(`it may use any tool, you only ${parent.tools.join(', ')}`);
    const extra = child.tools.filter((t) => !parent.tools!.some((a) => toolMatches(a, t.replace(/\*$/, '')) && (a.endsWith('*') || !t.endsWith('*'))));
    if (extra.length) return why(`it may use ${extra.join(', ')}, which you may not`);
  }
  for (const d of parent.denied ?? []) {
    const deniedToo = child.denied?.some((c) => toolMatches(c, d.replace(/\*$/, '')) && (c.endsWith('*') || !d.endsWith('*')));
    const notAllowed = child.tools !== undefined && !child.tools.some((t) => toolMatches(d, t.replace(/\*$/, '')) || toolMatches(t, d.replace(/\*$/, '')));
    if (!deniedToo && !notAllowed) return why(`you may not use ${d}, and it does not deny it`);
  }
  return undefined;
}

/** role_json of a job (null/absent: an implementer, as every job before roles). */
export function parseStoredRole(roleJson: string | null | undefined): RoleSpec | undefined {
  if (!roleJson) return undefined;
  return JSON.parse(roleJson) as RoleSpec;
}
