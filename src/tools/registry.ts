// Tool definitions as data: name, which roles see it, MCP metadata, zod input schema and a
// handler. `registerTools` puts the tools a caller's role may see onto an McpServer and
// wraps every handler with the single error mapping of result.ts.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Caller } from '../services/context.js';
import type { Logger } from '../log.js';
import { errorResult, okResult } from './result.js';

/** The tool `_meta` key Claude Code reads to never defer a tool (claude-code-interface.md §1.2). */
export const ALWAYS_LOAD_META = 'anthropic/alwaysLoad';

export interface ToolExtra {
  signal: AbortSignal;
  /** Send an MCP progress notification if the caller asked for them. */
  progress(progress: number, total?: number, message?: string): void;
}

export interface ToolDef<S extends z.ZodTypeAny = z.ZodTypeAny> {
  name: string;
  roles: readonly Caller['role'][];
  title: string;
  description: string;
  input: S;
  annotations?: ToolAnnotations;
  /** Return the handler's value as JSON text without shrinking it (check_permission's updatedInput must arrive whole). */
  raw?: boolean;
  /** Claude Code sends this tool's full definition from the first request instead of deferring
   * it behind ToolSearch (MCP `_meta` "anthropic/alwaysLoad"): for the tools every child must call. */
  alwaysLoad?: boolean;
  handler(input: z.infer<S>, caller: Caller, extra: ToolExtra): unknown;
}

/** Identity helper that keeps the schema's type flowing into the handler. */
export function defineTool<S extends z.ZodTypeAny>(def: ToolDef<S>): ToolDef<S> {
  return def;
}

export function registerTools(server: McpServer, defs: readonly ToolDef[], caller: Caller, log: Logger, onCall?: (c: Caller) => void): string[] {
  const names: string[] = [];
  for (const def of defs) {
    if (!def.roles.includes(caller.role)) continue;
    server.registerTool(
      def.name,
      { title: def.title, description: def.description, inputSchema: def.input as never, annotations: def.annotations, ...(def.alwaysLoad ? { _meta: { [ALWAYS_LOAD_META]: true } } : {}) },
      (async (args: unknown, extra: { signal: AbortSignal; _meta?: { progressToken?: string | number }; sendNotification: (n: never) => Promise<void> }) => {
        const token = extra._meta?.progressToken;
        const toolExtra: ToolExtra = {
          signal: extra.signal,
          progress: (progress, total, message) => {
            if (token === undefined) return;
            void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } } as never).catch(() => undefined);
          },
        };
        try {
          onCall?.(caller);
          const value = await def.handler(args as never, caller, toolExtra);
          return def.raw ? { content: [{ type: 'text', text: JSON.stringify(value) }] } : okResult(value);
        } catch (err) {
          return errorResult(err, log);
        }
      }) as never,
    );
    names.push(def.name);
  }
  return names;
}
