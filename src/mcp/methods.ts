// A role's MCP method table: server info, capabilities, instructions and the request and
// notification handlers. Built once per role (server.ts) and shared by every session of it;
// per-session state lives in McpSession. initialize, ping and logging/setLevel are the
// session's own (session.ts).
import { ErrorCode, RpcError, type Params, type RequestId } from './rpc.js';
import type { Caller } from '../services/context.js';

/** What a handler sees of the session it serves; McpSession (session.ts) is one. */
export interface SessionView {
  readonly caller: Caller;
  /** Send a notification to the client (`related`: on that request's stream). */
  notify(method: string, params?: Params, related?: RequestId): void;
}

export interface HandlerContext {
  session: SessionView;
  /** The request's JSON-RPC id (notifications tied to it go on its stream). */
  id: RequestId;
  /** Aborted by notifications/cancelled, a client that went away, or the session's close. */
  readonly signal: AbortSignal;
  /** The same as signal.aborted, known without making the signal (sessions make it on first use). */
  readonly aborted?: boolean;
  /** What the transport knows of the request (over HTTP: its headers). */
  info?: unknown;
}

export type RequestHandler = (params: Params, ctx: HandlerContext) => unknown;
export type NotificationHandler = (params: Params, session: SessionView) => void;

export interface Methods {
  info: { name: string; version: string };
  instructions?: string;
  capabilities: Record<string, Record<string, unknown>>;
  requests: Map<string, RequestHandler>;
  notifications: Map<string, NotificationHandler>;
}

/** An empty table with these capabilities (features add their handlers and capabilities). */
export function methodTable(info: Methods['info'], capabilities: Methods['capabilities'], instructions?: string): Methods {
  return { info, instructions, capabilities, requests: new Map(), notifications: new Map() };
}

/** The params object's `name`-like string field, or an InvalidParams error naming the method. */
export function stringParam(method: string, params: Params, key: string): string {
  const v = params[key];
  if (typeof v !== 'string') throw new RpcError(ErrorCode.InvalidParams, `Invalid ${method} request: params.${key} must be a string`);
  return v;
}
