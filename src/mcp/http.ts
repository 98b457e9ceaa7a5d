// Streamable HTTP for one MCP session, on node:http directly (no Web Request/Response): the
// checks and answers of the SDK's StreamableHTTPServerTransport (406, 415, 400, 405, 409), a
// POST's requests answered as one JSON body when none of them can block, or as an SSE stream
// (text/event-stream) when one can (a blocking tool's progress notifications flow on it), the
// GET stream for what the server sends on its own (elicitation), and DELETE. src/server/http.ts
// does auth, Host/Origin, session lookup and the body before any of this.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, SUPPORTED_PROTOCOL_VERSIONS, messageKind, type RequestId, type RpcMessage, type RpcRequest } from './rpc.js';
import type { McpSession, Outbound } from './session.js';
import { sseComment, sseFrame } from '../http/sse.js';

const KEEP_ALIVE = sseComment('keepalive');

/** Most messages in one batch (the SDK's MAX_BATCH_SIZE). */
export const MAX_BATCH = 100;
/** SSE comment sent on idle streams (the SDK's DEFAULT_SSE_KEEP_ALIVE_MS). */
const KEEP_ALIVE_MS = 15_000;

export interface Problem { status: number; code: number; message: string; headers?: Record<string, string> }

/** Write a transport-level JSON-RPC error (id null), as the SDK's createJsonErrorResponse. */
export function writeProblem(res: ServerResponse, p: Problem): void {
  res.writeHead(p.status, { 'content-type': 'application/json', ...p.headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: p.code, message: p.message }, id: null }));
}

const bad = (status: number, code: number, message: string): Problem => ({ status, code, message });

/** The headers' protocol version, when it is one we do not speak. */
export function versionProblem(req: IncomingMessage): Problem | undefined {
  const v = req.headers['mcp-protocol-version'];
  if (v === undefined || (typeof v === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(v))) return undefined;
  return bad(400, -32000, `Bad Request: Unsupported protocol version: ${String(v)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
}

/** A POST's messages, or what is wrong with it (headers, batch size, JSON-RPC shape), in the SDK's order. */
export function postMessages(req: IncomingMessage, body: unknown): RpcMessage[] | Problem {
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return bad(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  if (!isJsonType(req.headers['content-type'])) return bad(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  if (Array.isArray(body) && body.length > MAX_BATCH) return bad(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
  const messages = (Array.isArray(body) ? body : [body]) as RpcMessage[];
  if (!messages.every((m) => messageKind(m) !== undefined)) return bad(400, -32700, 'Parse error: Invalid JSON-RPC message');
  return messages;
}

function isJsonType(ct: string | undefined): boolean {
  if (!ct) return false;
  if (ct === 'application/json') return true;
  return ct.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

interface Stream {
  res: ServerResponse;
  /** SSE (may block) or one JSON body. */
  sse: boolean;
  ids: RequestId[];
  /** Answers so far, for a batch (a single request is answered as its answer comes). */
  answers?: Map<RequestId, RpcMessage>;
  keepAlive?: NodeJS.Timeout;
}

/** The HTTP side of one session: which response each outgoing message goes on. */
export class HttpChannel implements Outbound {
  private session?: McpSession;
  private readonly byRequest = new Map<RequestId, Stream>();
  private standalone?: Stream;

  constructor(readonly sessionId: string) {}

  attach(session: McpSession): void {
    this.session = session;
  }

  /** Deliver a POST's messages; answer on `res` (202 for notifications and responses only). */
  post(res: ServerResponse, messages: RpcMessage[], mayBlock: (r: RpcRequest) => boolean): void {
    const session = this.session!;
    const requests = messages.filter((m): m is RpcRequest => 'method' in m && 'id' in m);
    if (!requests.length) {
      res.writeHead(202).end();
      for (const m of messages) session.receive(m);
      return;
    }
    const sse = requests.some(mayBlock);
    const s: Stream = { res, sse, ids: requests.map((r) => r.id) };
    for (const id of s.ids) this.byRequest.set(id, s);
    if (sse) this.open(s);
    // A client that goes away before the answers (a timeout, a crash) never learns them: cancel
    // its requests, so a blocking tool stops waiting and a lock granted meanwhile is released.
    res.on('close', () => { // once: a response closes once
      this.end(s);
      for (const id of s.ids) {
        if (this.byRequest.get(id) !== s) continue;
        this.byRequest.delete(id);
        if (!s.answers?.has(id)) session.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the client went away before the answer (HTTP request closed)' } });
      }
    });
    for (const m of messages) session.receive(m);
  }

  /** GET: the session's stream for messages not tied to a request. */
  get(req: IncomingMessage, res: ServerResponse): void {
    if (!req.headers.accept?.includes('text/event-stream')) return writeProblem(res, bad(406, -32000, 'Not Acceptable: Client must accept text/event-stream'));
    const v = versionProblem(req);
    if (v) return writeProblem(res, v);
    if (this.standalone) return writeProblem(res, bad(409, -32000, 'Conflict: Only one SSE stream is allowed per session'));
    const s: Stream = { res, sse: true, ids: [] };
    this.standalone = s;
    this.open(s);
    res.once('close', () => {
      this.end(s);
      if (this.standalone === s) this.standalone = undefined;
    });
  }

  send(m: RpcMessage, related?: RequestId): void {
    const isAnswer = 'result' in m || 'error' in m;
    const id = isAnswer ? (m as { id?: RequestId }).id : related;
    const s = id === undefined ? this.standalone : this.byRequest.get(id);
    if (!s) return; // nobody to tell (the SDK drops these too)
    if (s.sse) write(s, m);
    if (!isAnswer || id === undefined || s === this.standalone) return;
    let all: RpcMessage[];
    if (s.ids.length === 1) all = [m];
    else {
      const answers = (s.answers ??= new Map());
      answers.set(id, m);
      if (answers.size < s.ids.length) return;
      all = s.ids.map((x) => answers.get(x)!);
    }
    for (const x of s.ids) if (this.byRequest.get(x) === s) this.byRequest.delete(x);
    if (s.sse) return this.end(s);
    if (s.res.destroyed || s.res.writableEnded) return;
    this.answerJson(s, all);
  }

  /** The session closed: end every stream; a JSON answer still owed gets an error. */
  close(): void {
    const streams = new Set([...this.byRequest.values()]);
    this.byRequest.clear();
    for (const s of streams) {
      if (s.sse) this.end(s);
      else if (!s.res.headersSent && !s.res.destroyed) {
        this.answerJson(s, s.ids.map((id) => s.answers?.get(id) ?? { jsonrpc: '2.0', id, error: { code: ErrorCode.ConnectionClosed, message: 'the MCP session closed before the answer' } }));
      }
    }
    if (this.standalone) this.end(this.standalone);
    this.standalone = undefined;
  }

  /** A POST's answers as one JSON body: the message itself for one request, an array for a batch. */
  private answerJson(s: Stream, answers: RpcMessage[]): void {
    const body = JSON.stringify(answers.length === 1 ? answers[0] : answers);
    s.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'mcp-session-id': this.sessionId });
    s.res.end(body);
  }

  private open(s: Stream): void {
    s.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no', 'mcp-session-id': this.sessionId });
    s.res.flushHeaders();
    s.keepAlive = setInterval(() => { if (!s.res.writableEnded) s.res.write(KEEP_ALIVE); }, KEEP_ALIVE_MS);
    s.keepAlive.unref();
  }

  private end(s: Stream): void {
    if (s.keepAlive) clearInterval(s.keepAlive);
    s.keepAlive = undefined;
    if (s.sse && !s.res.writableEnded) s.res.end();
  }
}

function write(s: Stream, m: RpcMessage): void {
  if (!s.res.writableEnded && !s.res.destroyed) s.res.write(sseFrame({ event: 'message', data: JSON.stringify(m) }));
}
