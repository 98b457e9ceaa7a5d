// The programmatic API of overseer-mcp (package.json "exports": "."). Stable within a major
// version: createHub / Hub (start, server(caller), stop), loadConfig / loadConfigFrom and the
// Config type, createLogger, the typed errors, the permission policy types and defaults, and
// the get_agent summary type. Everything else under dist/ is internal and may change in any
// release; the MCP tool contract (docs/tools.md) is the main interface.
import { Hub, type HubOptions } from './hub.js';
import { loadConfig } from './config.js';

export { Hub, packageVersion, type HubOptions } from './hub.js';
export { loadConfig, loadConfigFrom, resolveStateDir, ConfigSchema, type Config } from './config.js';
export { createLogger, silentLogger, type Logger } from './log.js';
export {
  OverseerError, InvalidInputError, NotFoundError, InvalidStateError, ForbiddenError, ConflictError, StoreBusyError, BudgetExceededError,
  errorMessage, type ErrorCode,
} from './errors.js';
export { DEFAULT_POLICY, PolicySchema, decide, type Policy, type PolicyRule, type PolicyAction } from './domain/policy.js';
export type { AgentSummary, AttemptSummary } from './contract/agentSummary.js';
export type { Caller } from './services/context.js';

/**
 * A started hub for `projectDir` (default: the current directory) with the configuration from
 * the environment and .overseer/config.json (the settings directory) unless `config` is given. Call `hub.server(caller)`
 * to get an MCP server for a transport, and `hub.stop()` when done.
 */
export async function createHub(o: Partial<HubOptions> & { projectDir?: string } = {}): Promise<Hub> {
  const projectDir = o.projectDir ?? process.cwd();
  const hub = await Hub.open({ ...o, projectDir, config: o.config ?? loadConfig(process.env, projectDir) });
  await hub.start();
  return hub;
}
