// One MCP connection's protocol state (no I/O): the initialize handshake, request dispatch to a
// method table shared by every session of a role (methods.ts), cancellation of in-flight
// handlers (notifications/cancelled, a session that closes), and the server's own requests to
// the client (elicitation/create, ping) with a pending map and timeouts. What goes out is handed
// to `out.send` with the id of the request it belongs to, so a transport can route it (http.ts
// writes it on that request's stream; memory.ts passes it on).
import { ErrorCode, LATEST_PROTOCOL_VERSION, RpcError, SUPPORTED_PROTOCOL_VERSIONS, errorAnswer, messageKind, type Params, type RequestId, type RpcMessage, type RpcRequest } from './rpc.js';
import type { HandlerContext, Methods, RequestHandler, SessionView } from './methods.js';
import type { Caller } from '../services/context.js';

export interface Outbound {
  /** Deliver a message; `related`: the id of the client request it answers or belongs to. */
  send(message: RpcMessage, related?: RequestId): void;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Default 60 s, as the SDK's DEFAULT_REQUEST_TIMEOUT_MSEC. */
  timeoutMs?: number;
  /** Told the JSON-RPC id the request goes out with. */
  onId?(id: RequestId): void;
}

interface Pending { resolve(v: Params): void; reject(e: Error): void; cleanup(): void }

const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export class McpSession implements SessionView {
  clientCapabilities?: Record<string, unknown>;
  clientInfo?: Record<string, unknown>;
  protocolVersion?: string;
  logLevel?: string;
  closed = false;
  /** In-flight handlers by request id. */
  private readonly running = new Map<RequestId, Running>();
  /** Our requests to the client, by id. */
  private readonly pending = new Map<RequestId, Pending>();
  private nextId = 0;
  private readonly closers: (() => void)[] = [];
  /** A response to a request of ours that is no longer pending (timed out, withdrawn). */
  onLateResponse?: (id: RequestId, message: RpcMessage) => void;

  constructor(readonly methods: Methods, readonly caller: Caller, private readonly out: Outbound) {}

  /** Run `f` when the session closes (once). */
  onClose(f: () => void): void {
    if (this.closed) f();
    else this.closers.push(f);
  }

  /** Handle one incoming message (already parsed JSON). */
  receive(m: unknown, info?: unknown): void {
    if (this.closed) return;
    const kind = messageKind(m);
    if (kind === 'request') return this.onRequest(m as RpcRequest, info);
    if (kind === 'notification') return this.onNotification(m as { method: string; params?: Params });
    if (kind === 'result' || kind === 'error') return this.onResponse(m as RpcMessage & { id: RequestId });
    // Not JSON-RPC: answer a parse error when it carries an id, as a JSON-RPC server should.
    const id = (m as { id?: unknown } | null)?.id;
    if (typeof id === 'string' || typeof id === 'number') this.out.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request: not a JSON-RPC 2.0 message' } });
  }

  /** Send a notification; `related` ties it to a client request (its stream, over HTTP). */
  notify(method: string, params?: Params, related?: RequestId): void {
    if (this.closed) return;
    this.out.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) }, related);
  }

  /** Send a request to the client; resolves with its result, rejects with its error, a timeout, a withdrawal or the close. */
  request(method: string, params: Params | undefined, o: RequestOptions = {}): Promise<Params> {
    if (this.closed) return Promise.reject(new RpcError(ErrorCode.ConnectionClosed, 'Connection closed'));
    if (o.signal?.aborted) return Promise.reject(o.signal.reason as Error);
    const id = ++this.nextId;
    return new Promise<Params>((resolve, reject) => {
      const timeoutMs = o.timeoutMs ?? 60_000;
      const withdraw = (reason: unknown, err: Error): void => {
        if (!this.pending.has(id)) return;
        this.pending.get(id)!.cleanup();
        this.pending.delete(id);
        this.notify('notifications/cancelled', { requestId: id, reason: String(reason) });
        reject(err);
      };
      const timer = setTimeout(() => {
        const err = new RpcError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs });
        withdraw(err, err);
      }, timeoutMs);
      const onAbort = (): void => {
        const reason: unknown = o.signal?.reason;
        withdraw(reason, reason instanceof RpcError ? reason : new RpcError(ErrorCode.RequestTimeout, String(reason)));
      };
      o.signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = (): void => {
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
      };
      this.pending.set(id, { resolve, reject, cleanup });
      o.onId?.(id);
      this.out.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
    });
  }

  /** End the session: abort running handlers, fail our pending requests, run the close hooks. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.running.values()) c.abort();
    this.running.clear();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) {
      p.cleanup();
      p.reject(new RpcError(ErrorCode.ConnectionClosed, 'Connection closed'));
    }
    for (const f of this.closers.splice(0)) f();
  }

  /** Requests being handled now. */
  get inFlight(): number {
    return this.running.size;
  }

  private onRequest(req: RpcRequest, info: unknown): void {
    const { id, method } = req;
    const params = req.params ?? {};
    let handler = this.methods.requests.get(method);
    if (method === 'initialize') handler = () => this.initialize(params);
    else if (method === 'ping') handler = () => ({});
    else if (method === 'logging/setLevel' && this.methods.capabilities.logging) handler = () => this.setLevel(params);
    if (!handler) return this.out.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.MethodNotFound, message: 'Method not found' } }, id);
    const run = new Running(this, id, info, handler, params, this.finished);
    this.running.set(id, run);
    // The handler starts after receive() returns (a batch's messages are all taken first).
    queueMicrotask(() => run.start());
  }

  /** A request's answer: sent unless the request was cancelled meanwhile. */
  private readonly finished = (run: Running, answer: RpcMessage): void => {
    if (this.running.get(run.id) === run) this.running.delete(run.id);
    if (!run.aborted) this.out.send(answer, run.id);
  };

  private initialize(p: Params): Params {
    const requested = p.protocolVersion;
    if (typeof requested !== 'string' || !p.capabilities || typeof p.capabilities !== 'object' || !p.clientInfo || typeof p.clientInfo !== 'object') {
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid initialize request: protocolVersion, capabilities and clientInfo are required');
    }
    const caps = { ...(p.capabilities as Record<string, unknown>) };
    // As the SDK's ClientCapabilities schema: `elicitation: {}` (the older spec) means form elicitation.
    const el = caps.elicitation;
    if (el && typeof el === 'object' && !Array.isArray(el) && Object.keys(el).length === 0) caps.elicitation = { form: {} };
    this.clientCapabilities = caps;
    this.clientInfo = p.clientInfo as Record<string, unknown>;
    this.protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    const m = this.methods;
    return { protocolVersion: this.protocolVersion, capabilities: m.capabilities, serverInfo: m.info, ...(m.instructions ? { instructions: m.instructions } : {}) };
  }

  private setLevel(p: Params): Params {
    if (typeof p.level !== 'string' || !LOG_LEVELS.includes(p.level)) throw new RpcError(ErrorCode.InvalidParams, `Invalid logging level: ${JSON.stringify(p.level)} (one of ${LOG_LEVELS.join(', ')})`);
    this.logLevel = p.level;
    return {};
  }

  private onNotification(n: { method: string; params?: Params }): void {
    if (n.method === 'notifications/cancelled') {
      const rid = n.params?.requestId;
      if (typeof rid === 'string' || typeof rid === 'number') this.running.get(rid)?.abort(n.params?.reason);
      return;
    }
    this.methods.notifications.get(n.method)?.(n.params ?? {}, this);
  }

  private onResponse(m: RpcMessage & { id: RequestId }): void {
    const p = this.pending.get(m.id);
    if (!p) {
      this.onLateResponse?.(m.id, m);
      return;
    }
    this.pending.delete(m.id);
    p.cleanup();
    if ('result' in m) p.resolve(m.result);
    else if ('error' in m) p.reject(new RpcError(m.error.code, m.error.message, m.error.data));
  }
}

/**
 * One request being handled: its HandlerContext. The AbortSignal is made only when a handler
 * asks for it (a blocking tool that waits): most calls end without one, and an AbortController
 * per call was a measurable share of a short call's CPU.
 */
class Running implements HandlerContext {
  aborted = false;
  private ac?: AbortController;
  private reason: unknown;

  constructor(
    readonly session: McpSession, readonly id: RequestId, readonly info: unknown,
    private readonly handler: RequestHandler, private readonly params: Params,
    private readonly finished: (run: Running, answer: RpcMessage) => void,
  ) {}

  get signal(): AbortSignal {
    if (!this.ac) {
      this.ac = new AbortController();
      if (this.aborted) this.ac.abort(this.reason);
    }
    return this.ac.signal;
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.ac?.abort(reason);
  }

  /** Run the handler; its promise, if it returns one, is followed directly (a promise returned
   * into a then() costs two more ticks). */
  start(): void {
    let r: unknown;
    try {
      r = this.handler(this.params, this);
    } catch (err) {
      return this.fail(err);
    }
    if (r instanceof Promise) r.then((v: unknown) => this.settle(v), (err: unknown) => this.fail(err));
    else this.settle(r);
  }

  /** An answer that cannot be sent (it does not serialise) goes back as the request's error. */
  private settle(result: unknown): void {
    try {
      this.finished(this, { jsonrpc: '2.0', id: this.id, result: (result ?? {}) as Params });
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    this.finished(this, errorAnswer(this.id, err));
  }
}
