// The environment children inherit: the hub's own (so ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY,
// CLAUDE_CODE_MAX_RETRIES and the like pass through) minus the variables Claude Code sets for
// *its* session and MCP servers. When the hub runs under a lead claude, those describe the
// lead's session (its id, messaging socket, project dir) and would confuse each child.
const LEAD_SESSION_VARS = [
  'CLAUDECODE', 'CLAUDE_CODE_SESSION_ID', 'CLAUDE_CODE_ENTRYPOINT', 'CLAUDE_PROJECT_DIR', 'CLAUDE_PID',
  'CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS', 'CLAUDE_CODE_MESSAGING_SOCKET', 'CLAUDE_CODE_MESSAGING_TOKEN',
  'CLAUDE_CODE_CHILD_SESSION', 'CLAUDE_CODE_CHILD_NOTES_DIR', 'CLAUDE_CODE_SESSION_ATTENDED', 'CLAUDE_EFFORT',
  'AI_AGENT', 'OVERSEER_AGENT_ID', 'OVERSEER_TOKEN', 'OVERSEER_URL',
];
/** The hub's database credentials never reach an agent (docs/security.md): its URL carries the password. */
const HUB_DATABASE_VARS = ['OVERSEER_DATABASE_URL'];

export function childEnvFrom(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !LEAD_SESSION_VARS.includes(k) && !HUB_DATABASE_VARS.includes(k)) out[k] = v;
  return out;
}
