// One tool table per role, built once (not per session): the tools/list result with every
// tool's JSON Schema (the SDK's McpServer rebuilt them on every tools/list of every session),
// and tools/call: lookup, input validation and the handler inside the hub's onCall scope, with
// the single error mapping of src/tools/result.ts. Results and error texts are the ones the
// SDK's McpServer gave (test/integration/mcp-native.test.ts compares them).
import type { ZodTypeAny } from 'zod';
import type { Caller } from '../services/context.js';
import type { Logger } from '../log.js';
import { ALWAYS_LOAD_META, checkBounds, objectInside, type CallScope, type ToolDef, type ToolExtra } from '../tools/registry.js';
import { errorResult, okResult } from '../tools/result.js';
import { inputJsonSchema } from './jsonSchema.js';
import { ErrorCode, RpcError, type Params } from './rpc.js';
import type { HandlerContext } from './methods.js';

export type OnCall = (c: Caller, tool: string) => CallScope | void;

interface Entry { def: ToolDef; published: ZodTypeAny }

export class ToolTable {
  private readonly byName = new Map<string, Entry>();
  private list?: { tools: Record<string, unknown>[] };

  constructor(defs: readonly ToolDef[], readonly role: Caller['role'], private readonly log: Logger, private readonly onCall?: OnCall) {
    for (const def of defs) if (def.roles.includes(role)) this.byName.set(def.name, { def, published: objectInside(def.input) });
  }

  /** The tools/list result: built on the first call, then the same object for every session of the role. */
  listResult(): { tools: Record<string, unknown>[] } {
    return (this.list ??= {
      tools: [...this.byName.values()].map(({ def, published }) => {
        const t: Record<string, unknown> = { name: def.name, title: def.title, description: def.description, inputSchema: inputJsonSchema(published) };
        if (def.annotations) t.annotations = def.annotations;
        t.execution = { taskSupport: 'forbidden' }; // what the SDK's registerTool published for every tool
        if (def.alwaysLoad) t._meta = { [ALWAYS_LOAD_META]: true };
        return t;
      }),
    });
  }

  /** tools/call for `caller`: always a CallToolResult (errors as isError results), as the SDK's
   * McpServer answered; at once when the handler answers at once (most do), else a promise. */
  call(params: Params, caller: Caller, ctx: HandlerContext): Answer | Promise<Answer> {
    const name = params.name;
    const rawArgs = params.arguments;
    if (typeof name !== 'string') throw new RpcError(ErrorCode.InvalidParams, 'Invalid tools/call request: params.name must be a string');
    if (rawArgs !== undefined && (rawArgs === null || typeof rawArgs !== 'object' || Array.isArray(rawArgs))) {
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid tools/call request: params.arguments must be an object');
    }
    const entry = this.byName.get(name);
    if (!entry) return toolError(`MCP error ${ErrorCode.InvalidParams}: Tool ${name} not found`);
    const { def, published } = entry;
    const parsed = published.safeParse(rawArgs ?? {});
    if (!parsed.success) return toolError(`MCP error ${ErrorCode.InvalidParams}: Input validation error: Invalid arguments for tool ${name}: ${parseErrorMessage(parsed.error.issues)}`);
    const args = parsed.data as unknown;
    const token = (params._meta as { progressToken?: string | number } | undefined)?.progressToken;
    let scope: CallScope | void = undefined;
    try {
      scope = this.onCall?.(caller, def.name);
      checkBounds(args);
      // The tool's schema with its refinements (published is the object inside it, for the JSON Schema).
      const input = published === def.input ? args : (def.input.parse(args) as unknown);
      const value: unknown = def.handler(input as never, caller, new CallExtra(ctx, token));
      if (!(value instanceof Promise)) return this.answer(def, value, scope, ctx);
      const s = scope;
      return value.then((v) => {
        try {
          return this.answer(def, v, s, ctx);
        } catch (err) {
          return this.failed(err, s);
        }
      }, (err: unknown) => this.failed(err, s));
    } catch (err) {
      return this.failed(err, scope);
    }
  }

  private answer(def: ToolDef, value: unknown, scope: CallScope | void, ctx: HandlerContext): Answer | Promise<Answer> {
    if (scope?.decorate && !def.raw) {
      const decorated = scope.decorate(value, def.name);
      // A decoration that reads the store (the lead's digest) answers later; a failed read is the call's error.
      if (decorated instanceof Promise) return decorated.then((v) => this.answered(def, v, scope, ctx), (err: unknown) => this.failed(err, scope));
      value = decorated;
    }
    return this.answered(def, value, scope, ctx);
  }

  private answered(def: ToolDef, value: unknown, scope: CallScope | void, ctx: HandlerContext): Answer {
    const result = def.raw ? { content: [{ type: 'text', text: JSON.stringify(value) }] } : okResult(value);
    scope?.end(!aborted(ctx));
    return result as Answer;
  }

  private failed(err: unknown, scope: CallScope | void): Answer {
    scope?.end(false);
    return errorResult(err, this.log) as Answer;
  }
}

type Answer = Record<string, unknown>;

/** A call's ToolExtra: the signal made only if the handler reads it (HandlerContext.signal is
 * lazy), progress sent only when the caller asked for it. A class: no closures per call. */
class CallExtra implements ToolExtra {
  constructor(private readonly ctx: HandlerContext, private readonly token: string | number | undefined) {}

  get signal(): AbortSignal {
    return this.ctx.signal;
  }

  progress(progress: number, total?: number, message?: string): void {
    const { ctx, token } = this;
    if (token === undefined || aborted(ctx)) return;
    ctx.session.notify('notifications/progress', { progressToken: token, progress, total, message }, ctx.id);
  }
}

/** Was the call cancelled? Without making its signal when nobody asked for one. */
function aborted(ctx: HandlerContext): boolean {
  return ctx.aborted ?? ctx.signal.aborted;
}

function toolError(text: string): Record<string, unknown> {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The SDK's getParseErrorMessage: one line per issue, "<message> at <dot path>". */
function parseErrorMessage(issues: readonly { message: string; path: readonly (string | number)[] }[]): string {
  return issues.map((i) => (i.path.length ? `${i.message} at ${dotPath(i.path)}` : i.message)).join('\n');
}

function dotPath(path: readonly (string | number)[]): string {
  return path.reduce<string>((acc, seg, i) => (i === 0 ? String(seg) : typeof seg === 'number' ? `${acc}[${seg}]` : `${acc}.${seg}`), '');
}
