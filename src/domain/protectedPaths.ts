// Paths no agent may write, whatever the policy or the lock mode says: the rules it runs under
// (Claude Code's settings at every level it reads, the project's MCP and Codex configuration,
// git's hooks and config, which run commands when the hub uses git in the tree) and the hub's
// own state. Pure: paths must already be real (symlinks resolved, `..` applied) and absolute.
// Some of those places are secret as well (secretPlaces): no agent may read them either, nor
// name them in a command (src/services/stateGuard.ts).
import path from 'node:path';
import { isInside } from './paths.js';

export interface ProtectedContext {
  /** The hub's state directory (database, tokens, hub.json, policy). */
  stateDir: string;
  /** The agent's HOME (Claude Code reads ~/.claude/settings.json there). */
  home?: string;
  /** CLAUDE_CONFIG_DIR, when set: Claude Code's user configuration. */
  claudeConfigDir?: string;
  /** Other directories the hub owns (e.g. the children's private config homes). */
  hubDirs?: readonly string[];
  /** The project's Overseer settings (config.json, policy.json, templates/): what the policy is made of. */
  settingsDir?: string;
  /** Where every hub of the user keeps its state (src/config.ts stateRoot): every project's lead token and database. */
  stateRoot?: string;
  /** Files hidden from every confined child (src/confine/setup.ts secretFiles): the shared knowledge base and its journals. */
  secretFiles?: readonly string[];
}

/** A place no agent may read, write or name, and what it is (said in every refusal). */
export interface SecretPlace { path: string; what: string }

/** What confinement hides from every child, as places: the hub's state, the state root, the secret files. */
export function secretPlaces(c: ProtectedContext): SecretPlace[] {
  return [
    { path: c.stateDir, what: `the Overseer hub's own state (${c.stateDir}), which holds the lead's token (the lead's identity) and the hub's database` },
    ...(c.stateRoot ? [{ path: c.stateRoot, what: `Overseer's state root (${c.stateRoot}), where every hub of this user keeps its state: each project's lead token and database` }] : []),
    ...(c.secretFiles ?? []).map((f) => ({ path: f, what: `the knowledge base every project shares (${f}); agents reach it through search_kb and report_learnings` })),
  ];
}

/** Why no agent may read `real` (real and absolute), or undefined when nothing secret is there. */
export function secretReason(real: string, c: ProtectedContext): string | undefined {
  const s = secretPlaces(c).find((p) => isInside(real, p.path));
  return s && `${real} is in ${s.what}`;
}

/** Why an agent may not write `real`, or undefined when it may. */
export function protectedReason(real: string, c: ProtectedContext): string | undefined {
  if (isInside(real, c.stateDir)) return `${real} is the Overseer hub's own state (${c.stateDir})`;
  const secret = secretReason(real, c);
  if (secret) return secret;
  if (c.settingsDir && isInside(real, c.settingsDir)) return `${real} is the project's Overseer settings (${c.settingsDir}): the permission policy and the hub's configuration`;
  for (const d of c.hubDirs ?? []) if (isInside(real, d)) return `${real} belongs to the Overseer hub (${d})`;
  if (c.claudeConfigDir && isInside(real, c.claudeConfigDir)) return `${real} is Claude Code's configuration (CLAUDE_CONFIG_DIR)`;
  if (c.home && isInside(real, path.join(c.home, '.claude'))) return `${real} is Claude Code's user configuration (~/.claude)`;
  if (c.home && isInside(real, path.join(c.home, '.codex'))) return `${real} is Codex's user configuration (~/.codex)`;
  const parts = real.split('/');
  const base = parts.at(-1) ?? '';
  if (parts.includes('.claude')) return `${real} is in a .claude directory: Claude Code's settings, hooks, agents, commands and skills decide what agents may do`;
  if (parts.includes('.codex')) return `${real} is in a .codex directory: Codex's project configuration and hooks`;
  if (base === '.mcp.json') return `${real} configures the project's MCP servers`;
  const git = parts.lastIndexOf('.git');
  if (git >= 0) {
    const inGit = parts.slice(git + 1);
    if (inGit[0] === 'hooks' || (inGit.length === 1 && inGit[0] === 'config') || (inGit[0] === 'worktrees' && (inGit[2] === 'config' || inGit[2] === 'config.worktree'))) {
      return `${real} is git's ${inGit[0] === 'hooks' ? 'hooks' : 'configuration'}: git runs commands from it when the hub commits in the tree`;
    }
  }
  return undefined;
}
