// The fast path for tool calls over Streamable HTTP (docs/performance-http.md).
//
// The MCP SDK's StreamableHTTPServerTransport turns every POST into a Web Request (Hono's
// adapter), parses the body against the JSON-RPC union schemas (failing branches build zod
// errors), tests every message with isInitializeRequest, and answers a request as an SSE
// stream written in several pieces. For the common call — one `tools/call` of a tool that does
// not block — that is most of the hub's CPU per call.
//
// FastLane sits between the session's McpServer (the Protocol) and the SDK transport: it is
// the transport the server is connected to and hands everything on to the SDK transport, except
// the answer to a request taken by the fast path, which it writes as one JSON response
// (application/json, which every Streamable HTTP client must accept). The request itself goes
// into the same Protocol as on the SDK path, so the tool's lookup, input validation, handler,
// error mapping (registry.ts / result.ts), result validation, cancellation (notifications/
// cancelled, the request's abort signal) and the hub's onCall scope are the same code.
// http.ts keeps auth, Host/Origin checks and session ownership in front of both paths.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type JSONRPCRequest, type MessageExtraInfo, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** May this call block (wait for others, send progress)? Such calls stay on the SDK path. */
export type BlockingTest = (tool: string, args: unknown) => boolean;

type Answer = (message: JSONRPCMessage) => void;

export class FastLane implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  /** Fast requests in flight on this session: request id → where its answer goes. */
  private readonly pending = new Map<RequestId, Answer>();
  /** The server's Protocol, once connected (see deliver). */
  private protocol?: { _onrequest?: unknown };

  /** Connect `server` (McpServer or its Server) to this lane. */
  async connect(server: { connect(t: Transport): Promise<void>; server?: unknown }): Promise<void> {
    await server.connect(this);
    this.protocol = (server.server ?? server) as { _onrequest?: unknown };
  }

  constructor(readonly sdk: StreamableHTTPServerTransport) {}

  get sessionId(): string | undefined {
    return this.sdk.sessionId;
  }

  async start(): Promise<void> {
    this.sdk.onmessage = (m, extra) => this.onmessage?.(m, extra);
    this.sdk.onclose = () => {
      // The SDK path ends its open streams when a session closes; a fast request still waiting
      // gets a JSON-RPC error instead of an answer that will never come.
      const ids = [...this.pending.keys()];
      for (const id of ids) this.pending.get(id)?.({ jsonrpc: '2.0', id, error: { code: ErrorCode.ConnectionClosed, message: 'the MCP session closed before the answer' } });
      this.pending.clear();
      this.onclose?.();
    };
    this.sdk.onerror = (e) => this.onerror?.(e);
    await this.sdk.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = (message as { id?: RequestId }).id;
    if (id !== undefined && ('result' in message || 'error' in message)) {
      const answer = this.pending.get(id);
      if (answer) {
        this.pending.delete(id);
        answer(message);
        return;
      }
    }
    // A notification or request tied to a fast call (none of the fast tools sends one) has no
    // stream to go on: drop it, as the SDK's JSON-response mode does.
    if (options?.relatedRequestId !== undefined && this.pending.has(options.relatedRequestId)) return;
    return this.sdk.send(message, options);
  }

  close(): Promise<void> {
    return this.sdk.close();
  }

  /** Is a fast request with this id still waiting for its answer on this session? */
  busy(id: RequestId): boolean {
    return this.pending.has(id);
  }

  /**
   * Answer `request` through the Protocol, writing the JSON-RPC answer to `res` as one JSON
   * body. A response that closes before the answer cancels the request (as cancelWhenGone does
   * on the SDK path: the same notifications/cancelled into the same Protocol).
   */
  call(request: JSONRPCRequest, req: IncomingMessage, res: ServerResponse): void {
    const id = request.id;
    this.pending.set(id, (message) => {
      if (res.destroyed || res.writableEnded) return;
      const body = JSON.stringify(message);
      const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
      res.writeHead(200, headers);
      res.end(body);
    });
    res.once('close', () => {
      if (!this.pending.delete(id)) return; // answered
      this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the client went away before the answer (HTTP request closed)' } });
    });
    this.deliver(request, { requestInfo: { headers: req.headers as IncomingHttpHeaders & Record<string, string> } });
  }

  /**
   * Hand a request to the Protocol. Its onmessage first tries the message against the JSON-RPC
   * response schemas (two failing zod parses, each building an error: ~10 % of a fast call);
   * for a message already known to be a request, go to the request branch of that dispatch
   * (Protocol._onrequest, the SDK's own next step) when the SDK has it, else through onmessage.
   */
  private deliver(request: JSONRPCRequest, extra: MessageExtraInfo): void {
    const onrequest = this.protocol?._onrequest;
    if (typeof onrequest === 'function') (onrequest as (r: JSONRPCRequest, e: MessageExtraInfo) => void).call(this.protocol, request, extra);
    else this.onmessage?.(request, extra);
  }
}

/**
 * The JSON-RPC request in `body` when the fast path may take it: a single `tools/call` with a
 * well-formed id and params, headers the SDK would accept (Accept, Content-Type, protocol
 * version), an id not already in flight, and a tool call that does not block. Anything else
 * (batches, notifications, other methods, odd headers the SDK answers with an HTTP error) goes
 * the SDK's way.
 */
export function fastRequest(body: unknown, req: IncomingMessage, lane: FastLane, blocking: BlockingTest): JSONRPCRequest | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const m = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (m.jsonrpc !== '2.0' || m.method !== 'tools/call') return undefined;
  if (typeof m.id !== 'string' && !(typeof m.id === 'number' && Number.isInteger(m.id))) return undefined;
  const p = m.params as { name?: unknown; arguments?: unknown; task?: unknown } | undefined;
  if (!p || typeof p !== 'object' || Array.isArray(p) || typeof p.name !== 'string' || p.task !== undefined) return undefined;
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  const ct = req.headers['content-type'];
  if (!ct || !/^application\/json\s*(;|$)/i.test(ct)) return undefined;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  if (lane.busy(m.id)) return undefined;
  if (blocking(p.name, p.arguments)) return undefined;
  return m as JSONRPCRequest;
}
