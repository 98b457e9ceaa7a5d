// Tool definitions as data: name, which roles see it, MCP metadata, zod input schema and a
// handler. src/mcp/tools.ts builds one table per role from them (tools/list, tools/call) and
// wraps every handler with the single error mapping of result.ts.
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Caller } from '../services/context.js';
import { InvalidInputError } from '../errors.js';

/** The tool `_meta` key Claude Code reads to never defer a tool (docs/cli-facts.md C2). */
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
  /** May a call wait (for others, for a person) or send progress? Over HTTP such calls are
   * answered as an SSE stream (progress flows on it); the others as one JSON body. A function gets
   * the raw arguments (before validation). Default: true when the handler takes the extra
   * (signal, progress), i.e. `handler: (i, c, x) => …`. */
  blocks?: boolean | ((args: Record<string, unknown>) => boolean);
  handler(input: z.infer<S>, caller: Caller, extra: ToolExtra): unknown;
}

/** Identity helper that keeps the schema's type flowing into the handler. */
export function defineTool<S extends z.ZodTypeAny>(def: ToolDef<S>): ToolDef<S> {
  return def;
}

export type { CallScope } from '../contract/call.js';

/** Whether a call of `name` with these raw arguments may block (see ToolDef.blocks); unknown
 * tools do not (the server answers "not found" at once). */
export function blockingTest(defs: readonly ToolDef[]): (name: string, args: unknown) => boolean {
  const byName = new Map(defs.map((d) => [d.name, d]));
  return (name, args) => {
    const def = byName.get(name);
    if (!def) return false;
    const b = def.blocks ?? def.handler.length >= 3;
    if (typeof b === 'boolean') return b;
    return b(args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {});
  };
}

/** The z.object a tool's schema refines (the schema itself when it is not refined). */
export function objectInside(s: z.ZodTypeAny): z.ZodTypeAny {
  let cur = s;
  while (cur instanceof z.ZodEffects) cur = cur.innerType() as z.ZodTypeAny;
  return cur instanceof z.ZodObject ? cur : s;
}

/** How deep a tool's arguments may nest (Claude Code's own tool inputs stay under 10). */
export const MAX_INPUT_DEPTH = 64;

/**
 * Refuse arguments nested deeper than MAX_INPUT_DEPTH before any handler (or the policy, or
 * JSON.stringify) recurses into them: a hostile input must get a readable refusal, not a stack
 * overflow. The check's own recursion stops at that depth; the path is built only for a refusal
 * (every tool call runs this).
 */
export function checkBounds(args: unknown): void {
  const path = tooDeep(args, 0);
  if (!path) return;
  let at = '';
  for (const k of path) if (at.length < 200) at = at ? `${at}.${k}` : k;
  throw new InvalidInputError(`${at || '(input)'}: nested deeper than ${MAX_INPUT_DEPTH} levels; send flatter input`);
}

/** The keys down to a value nested MAX_INPUT_DEPTH deep (recursion stops there), or undefined. */
function tooDeep(v: unknown, depth: number): string[] | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  if (depth >= MAX_INPUT_DEPTH) return [];
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const below = tooDeep((v as Record<string, unknown>)[k], depth + 1);
    if (below) {
      below.unshift(k);
      return below;
    }
  }
  return undefined;
}
