// The reference the native MCP server (src/mcp) is checked against: the MCP SDK's own McpServer
// with the tools registered exactly as the hub registered them before src/mcp existed (this is
// that registerTools, moved here unchanged). Tests compare tools/list and tools/call answers of
// both, so the published schemas and error texts stay what clients saw.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Caller } from '../../src/services/context.js';
import type { Logger } from '../../src/log.js';
import { errorResult, okResult } from '../../src/tools/result.js';
import { ALWAYS_LOAD_META, checkBounds, objectInside, type CallScope, type ToolDef, type ToolExtra } from '../../src/tools/registry.js';

/** An SDK McpServer carrying `defs` as the pre-src/mcp hub registered them for `caller`. */
export function sdkReferenceServer(defs: readonly ToolDef[], caller: Caller, log: Logger, version = 'test'): McpServer {
  const server = new McpServer({ name: 'overseer', version }, { capabilities: { tools: {}, logging: {} } });
  registerTools(server, defs, caller, log);
  return server;
}

export function registerTools(server: McpServer, defs: readonly ToolDef[], caller: Caller, log: Logger, onCall?: (c: Caller, tool: string) => CallScope | void): string[] {
  const names: string[] = [];
  for (const def of defs) {
    if (!def.roles.includes(caller.role)) continue;
    // The SDK publishes an object schema only: a refined schema (z.object(…).refine) would be
    // published empty, so models saw no parameters. Publish the object inside, check the
    // refinements here.
    const published = objectInside(def.input);
    server.registerTool(
      def.name,
      { title: def.title, description: def.description, inputSchema: published as never, annotations: def.annotations, ...(def.alwaysLoad ? { _meta: { [ALWAYS_LOAD_META]: true } } : {}) },
      (async (args: unknown, extra: { signal: AbortSignal; _meta?: { progressToken?: string | number }; sendNotification: (n: never) => Promise<void> }) => {
        const token = extra._meta?.progressToken;
        const toolExtra: ToolExtra = {
          signal: extra.signal,
          progress: (progress, total, message) => {
            if (token === undefined) return;
            void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } } as never).catch(() => undefined);
          },
        };
        let scope: CallScope | void = undefined;
        try {
          scope = onCall?.(caller, def.name);
          checkBounds(args);
          const input = published === def.input ? args : (def.input.parse(args) as unknown);
          let value = await def.handler(input as never, caller, toolExtra);
          if (scope?.decorate && !def.raw) value = await scope.decorate(value, def.name);
          const result = def.raw ? { content: [{ type: 'text', text: JSON.stringify(value) }] } : okResult(value);
          scope?.end(!extra.signal.aborted);
          return result;
        } catch (err) {
          scope?.end(false);
          return errorResult(err, log);
        }
      }) as never,
    );
    names.push(def.name);
  }
  return names;
}

