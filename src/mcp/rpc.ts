// JSON-RPC 2.0 as MCP uses it: message shapes, error codes, the protocol versions, and the
// checks the MCP SDK makes with its zod schemas (JSONRPCMessageSchema, isInitializeRequest),
// written as plain predicates so the hub never loads the SDK's message schemas
// (docs/performance-native-mcp.md). test/unit/mcp-session.test.ts keeps them equal to the SDK's.
import { isObject } from '../json.js';

export type RequestId = string | number;
export type Params = Record<string, unknown>;
export interface RpcRequest { jsonrpc: '2.0'; id: RequestId; method: string; params?: Params }
export interface RpcNotification { jsonrpc: '2.0'; method: string; params?: Params }
export interface RpcResult { jsonrpc: '2.0'; id: RequestId; result: Params }
export interface RpcErrorResponse { jsonrpc: '2.0'; id?: RequestId | null; error: { code: number; message: string; data?: unknown } }
export type RpcMessage = RpcRequest | RpcNotification | RpcResult | RpcErrorResponse;

/** The MCP SDK's ErrorCode values (sdk/types.js). */
export const ErrorCode = {
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

/** As the SDK (types.js): the newest first; a client asking for another gets the newest. */
export const LATEST_PROTOCOL_VERSION = '2025-11-25';
export const DEFAULT_NEGOTIATED_PROTOCOL_VERSION = '2025-03-26';
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [LATEST_PROTOCOL_VERSION, '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

/** A JSON-RPC error a handler throws; its message reads as the SDK's McpError ("MCP error <code>: …"). */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(`MCP error ${code}: ${message}`);
    this.name = 'McpError';
  }
}

const isId = (v: unknown): v is RequestId => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
/** Request and notification params: an object whose _meta, when given, is an object with a valid progressToken. */
const okParams = (p: unknown): boolean => {
  if (p === undefined) return true;
  if (!isObject(p)) return false;
  const meta = p._meta;
  if (meta === undefined) return true;
  if (!isObject(meta)) return false;
  return meta.progressToken === undefined || isId(meta.progressToken);
};
/** No key but `keys` (for…in: a parsed message's own keys, without an array of them on every message). */
const onlyKeys = (m: Record<string, unknown>, keys: readonly string[]): boolean => {
  for (const k in m) if (!keys.includes(k)) return false;
  return true;
};

export type MessageKind = 'request' | 'notification' | 'result' | 'error';

/** What kind of JSON-RPC message `m` is, or undefined when the SDK's JSONRPCMessageSchema would refuse it (strict keys). */
export function messageKind(m: unknown): MessageKind | undefined {
  if (!isObject(m) || m.jsonrpc !== '2.0') return undefined;
  if (typeof m.method === 'string') {
    if (!okParams(m.params)) return undefined;
    if ('id' in m) return isId(m.id) && onlyKeys(m, ['jsonrpc', 'id', 'method', 'params']) ? 'request' : undefined;
    return onlyKeys(m, ['jsonrpc', 'method', 'params']) ? 'notification' : undefined;
  }
  if ('result' in m) return isId(m.id) && isObject(m.result) && onlyKeys(m, ['jsonrpc', 'id', 'result']) ? 'result' : undefined;
  if ('error' in m) {
    const e = m.error;
    if (m.id !== undefined && !isId(m.id)) return undefined;
    if (!isObject(e) || typeof e.code !== 'number' || !Number.isInteger(e.code) || typeof e.message !== 'string') return undefined;
    return onlyKeys(m, ['jsonrpc', 'id', 'error']) ? 'error' : undefined;
  }
  return undefined;
}

/** The SDK's isInitializeRequest: method "initialize" with a protocol version, capabilities and client info. */
export function isInitializeRequest(m: unknown): boolean {
  if (!isObject(m) || m.method !== 'initialize' || !isObject(m.params)) return false;
  const p = m.params;
  const info = p.clientInfo;
  return typeof p.protocolVersion === 'string' && isObject(p.capabilities) && isObject(info) && typeof info.name === 'string' && typeof info.version === 'string' && okParams(p);
}

/** The JSON-RPC error answer for a failed handler, as the SDK's Protocol writes it. */
export function errorAnswer(id: RequestId, err: unknown): RpcErrorResponse {
  const e = err as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  const code = typeof e?.code === 'number' && Number.isSafeInteger(e.code) ? e.code : ErrorCode.InternalError;
  const message = typeof e?.message === 'string' ? e.message : 'Internal error';
  return { jsonrpc: '2.0', id, error: { code, message, ...(e?.data !== undefined ? { data: e.data } : {}) } };
}
