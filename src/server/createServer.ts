// createServer(hub, caller): one McpServer per connection, carrying exactly the tools the
// caller's role may see. Used by the stdio entry (lead), the HTTP entry (lead or agent) and
// the in-memory transport of the integration tests.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import type { Caller } from '../services/context.js';
import type { Logger } from '../log.js';
import { registerTools, type CallScope, type ToolDef } from '../tools/registry.js';
import { registerPrompts, type PromptDeps } from './prompts.js';
import { registerResources, type ResourceDeps } from './resources.js';

export const SERVER_NAME = 'overseer';

export interface ServerDeps {
  tools: readonly ToolDef[];
  version: string;
  log: Logger;
  /** Runs around every tool call (renews the caller's locks, tracks an agent's time in our tools, the lead's digest). */
  onCall?: (c: Caller, tool: string) => CallScope | void;
  /** MCP prompts (recipes and project templates) and resources, for leads. */
  prompts?: PromptDeps;
  resources?: ResourceDeps;
}

/**
 * The SDK builds an Ajv instance with its formats for every Server (about 20 kB of heap per MCP
 * session, docs/performance-hub-memory.md), used only to check a client's answer to an
 * elicitation, which only a lead's session sends: build it on the first such check.
 */
function lazyValidator(): jsonSchemaValidator {
  let ajv: AjvJsonSchemaValidator | undefined;
  return { getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema) };
}

export function createServer(deps: ServerDeps, caller: Caller): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: deps.version },
    {
      jsonSchemaValidator: lazyValidator(),
      capabilities: { tools: {}, logging: {} },
      instructions: caller.role === 'lead'
        ? 'Overseer runs a crew of coding agents for you. spawn_agent starts one (returns a job_id at once); wait_for_agents blocks until they end; get_agent / read_agent_output show what they did.'
        : 'You are an Overseer agent. Use report_status while you work and finish when done.',
    },
  );
  registerTools(server, deps.tools, caller, deps.log, deps.onCall);
  // Resources ignore subtree rights and prompts are slash commands for the person: lead only.
  if (caller.role === 'lead') {
    if (deps.prompts) registerPrompts(server, deps.prompts);
    if (deps.resources) registerResources(server, deps.resources);
  }
  return server;
}
