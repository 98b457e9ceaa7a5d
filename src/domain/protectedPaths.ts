// Paths no agent may write, whatever the policy or the lock mode says: the rules it runs under
// (Claude Code's settings at every level it reads, the project's MCP and Codex configuration,
// git's hooks and config, which run commands when the hub uses git in the tree) and the hub's
// own state. Pure: paths must already be real (symlinks resolved, `..` applied) and absolute.
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
}

/** Why an agent may not write `real`, or undefined when it may. */
export function protectedReason(real: string, c: ProtectedContext): string | undefined {
  if (isInside(real, c.stateDir)) return `${real} is the Overseer hub's own state (${c.stateDir})`;
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
