// The interactive command a person runs to take over an agent's session: the launcher's own
// headless invocation (src/launch/*/launcher.ts, so the MCP config, the lock hook settings and
// the Overseer variables are exactly the child's), turned into the interactive form.
import type { SpawnCmd } from '../launch/types.js';
import { CHILD_DISALLOWED_TOOLS } from '../launch/claude/launcher.js';

/** Headless-only flags of `claude -p …` and how many values each takes. */
const CLAUDE_HEADLESS: Record<string, number> = {
  '-p': 0, '--verbose': 0, '--replay-user-messages': 0, '--include-partial-messages': 0,
  '--input-format': 1, '--output-format': 1, '--max-turns': 1, '--max-budget-usd': 1, '--json-schema': 1,
  // A person answers permission prompts in the terminal instead of the hub's policy tool.
  '--permission-prompt-tool': 1,
};

/** Variadic claude flags: their values run up to the next flag. */
const CLAUDE_VARIADIC = new Set(['--allowedTools', '--disallowedTools']);

/**
 * `claude --resume <session> …` for a person: the child's command without its headless flags,
 * without `--permission-prompt-tool` (the person gets Claude Code's own prompts) and without the
 * tools every child goes without (AskUserQuestion: there is someone to answer now). The tools its
 * role denies stay denied, and its `--permission-mode` (a planner's plan mode) and `--tools` stay.
 */
export function interactiveClaude(cmd: SpawnCmd): string[] {
  const out: string[] = [];
  const a = cmd.args;
  for (let i = 0; i < a.length; i++) {
    const f = a[i]!;
    if (f in CLAUDE_HEADLESS) { i += CLAUDE_HEADLESS[f]!; continue; }
    if (f === '--disallowedTools') {
      const role: string[] = [];
      while (i + 1 < a.length && !a[i + 1]!.startsWith('--')) {
        const t = a[++i]!;
        if (!CHILD_DISALLOWED_TOOLS.includes(t)) role.push(t);
      }
      if (role.length) out.push(f, ...role);
      continue;
    }
    out.push(f);
    if (CLAUDE_VARIADIC.has(f)) {
      while (i + 1 < a.length && !a[i + 1]!.startsWith('--')) out.push(a[++i]!);
    } else if (i + 1 < a.length && !a[i + 1]!.startsWith('-')) {
      out.push(a[++i]!);
    }
  }
  if (!out.includes('--resume')) throw new Error('the launcher did not build a --resume command');
  return out;
}

/** Headless-only options of `codex exec …` and how many values each takes. */
const CODEX_HEADLESS: Record<string, number> = { exec: 0, '--json': 0, '--skip-git-repo-check': 0, '-o': 1, '--disable': 1, '--output-schema': 1, '-': 0 };

/** `codex resume <session> …` for a person: the child's options (-C, -s, -m, the MCP and hook -c overrides) on the interactive `resume` subcommand. */
export function interactiveCodex(cmd: SpawnCmd, sessionId: string): string[] {
  const out: string[] = ['resume', sessionId];
  const a = cmd.args;
  for (let i = 0; i < a.length; i++) {
    const f = a[i]!;
    if (f in CODEX_HEADLESS) { i += CODEX_HEADLESS[f]!; continue; }
    if (f === 'resume') { i += 1; continue; }
    out.push(f);
    if (['-C', '-s', '-m', '-c'].includes(f)) out.push(a[++i]!);
  }
  return out;
}

/** The Overseer part of a child's environment (what the person's terminal environment lacks). */
export function overseerEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const keep = ['OVERSEER_AGENT_ID', 'OVERSEER_URL', 'OVERSEER_TOKEN', 'MCP_TOOL_TIMEOUT', 'CODEX_HOME'];
  const out: Record<string, string> = {};
  for (const k of keep) if (env[k] !== undefined) out[k] = env[k]!;
  return out;
}
