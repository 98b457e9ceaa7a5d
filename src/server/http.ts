// Streamable HTTP endpoint for children (and lead clients of `overseer serve`), on loopback
// only. Every request must carry a bearer token: the lead token, or the per-agent token the
// hub generated for a running job. Host and Origin are checked against the listening
// address (no DNS rebinding). An MCP session is bound to the token that opened it; sessions
// are capped per token and closed when idle (sessions.ts). GET /health answers without a
// token with the hub's pid (so a process reading hub.json can tell a live hub from a stale
// or forged record); with the lead token it adds the session counts and limits.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Caller } from '../services/context.js';
import type { Logger } from '../log.js';
import { SessionTable, type Session, type SessionLimits } from './sessions.js';
import { HttpChannel, postMessages, versionProblem, writeProblem } from '../mcp/http.js';
import { isInitializeRequest, type RpcRequest } from '../mcp/rpc.js';
import { BodyError, readJsonBody } from '../http/body.js';
import type { ApiHandler, HealthInfo } from '../http/api.js';
import type { McpSession, Outbound } from '../mcp/session.js';

/** May this tool call block (wait for others, send progress)? It is answered as an SSE stream; the others as one JSON body. */
export type BlockingTest = (tool: string, args: unknown) => boolean;

export interface HttpAuth {
  /** Resolve a bearer token to a caller, or undefined when unknown: at once when known, else a promise. */
  identify(token: string): Caller | undefined | Promise<Caller | undefined>;
}

/** POST /hook: the lock hook's question, answered as JSON; `claude`: asked by a Claude Code HTTP hook (?format=claude). */
/** The hook's verdict, at once or (while a file handed over is made writable) a moment later. */
export type HookHandler = (caller: Caller, body: unknown, format?: 'claude') => unknown;

export interface WebHooks {
  /** Is this path one of the dashboard's pages or assets (served without a bearer token)? */
  isPage(pathname: string): boolean;
  page(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  /** The lead, when the request carries a valid dashboard session cookie; `csrfOk` when its CSRF header matches. */
  cookieCaller(req: IncomingMessage): { caller: Caller; csrfOk: boolean } | undefined;
}

export interface HttpEndpoint {
  port: number;
  url: string;
  server: Server;
  close(): Promise<void>;
  /** Open sessions (of one role); `connected`: only those with a request or stream open now (a bridge holds its GET stream). */
  sessionCount(role?: Caller['role'], connected?: boolean): number;
  /** Close every session idle past the limit now (the sweeper does it periodically). */
  sweep(): number;
}

export interface HttpOptions {
  port: number;
  /** With port 0: try this port first (falls back to any free port). */
  preferredPort?: number;
  auth: HttpAuth;
  /** A new MCP session of `c` (src/mcp) whose output goes to `out`. */
  openSession: (c: Caller, out: Outbound) => McpSession;
  log: Logger;
  onHook?: HookHandler;
  onApi?: ApiHandler;
  /** The dashboard (src/web): its pages and a session cookie standing for the lead on /api/ only. */
  web?: WebHooks;
  sessions?: Partial<SessionLimits>;
  /** How often idle sessions are looked for (default: a tenth of the idle limit, 1..30 s). */
  sweepEveryMs?: number;
  now?: () => number;
  version?: string;
  /** Tool calls that may block (wait, send progress) are answered as SSE streams (default: none). */
  blocking?: BlockingTest;
}

export async function startHttp(o: HttpOptions): Promise<HttpEndpoint> {
  const limits: SessionLimits = { maxPerToken: o.sessions?.maxPerToken ?? 32, idleMs: o.sessions?.idleMs ?? 1_800_000 };
  const sessions = new SessionTable(limits, o.now);
  const startedAt = new Date().toISOString();
  const closeSession = (s: Session): void => {
    o.log.info({ session: s.channel.sessionId, role: s.caller.role }, 'closing an idle MCP session');
    s.session.close();
  };
  const blocking = o.blocking ?? (() => false);
  const mayBlock = (r: RpcRequest): boolean => r.method === 'tools/call' && !!r.params && typeof r.params.name === 'string' && blocking(r.params.name, r.params.arguments);
  let port = o.port;
  const inFlight = { lead: 0, agent: 0 };
  // The names of the listening address (set once the port is known).
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();
  const setPort = (p: number): void => {
    port = p;
    allowedHosts = new Set([`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`]);
    allowedOrigins = new Set([...allowedHosts].map((h) => `http://${h}`));
  };

  const deny = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
  };

  // A route that failed: logged, and a 500 when nothing was sent yet.
  const failed = (res: ServerResponse, err: unknown): void => {
    o.log.error({ err }, 'HTTP request failed');
    if (!res.headersSent) deny(res, 500, 'internal error');
    else res.end();
  };
  const runAsync = (res: ServerResponse, p: Promise<unknown>): void => void p.catch((err: unknown) => failed(res, err));
  /** The request's JSON body, then `f` (guarded); a bad body is a 400. */
  const withBody = (req: IncomingMessage, res: ServerResponse, f: (body: unknown) => void): void => readJsonBody(req, (body) => {
    if (body instanceof BodyError) return deny(res, body.status, body.message);
    try {
      f(body);
    } catch (err) {
      failed(res, err);
    }
  });

  // Synchronous up to the body (and answered synchronously after it, but for /api/ and the
  // dashboard's pages): a tool call costs no promise of its own here.
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    // Parsed only off the MCP path (every tool call POSTs to a bare /mcp).
    const url = req.url === '/mcp' ? MCP_URL : new URL(req.url ?? '/', 'http://127.0.0.1');
    const pathname = url === MCP_URL ? '/mcp' : url.pathname; // the getter makes a new string each time
    const api = pathname.startsWith('/api/');
    const page = !!o.web?.isPage(pathname);
    if (pathname !== '/mcp' && pathname !== '/hook' && pathname !== '/health' && !api && !page) return deny(res, 404, 'not found: the MCP endpoint is /mcp');
    if (!allowedHosts.has(req.headers.host ?? '')) return deny(res, 403, 'forbidden: bad Host header');
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin)) return deny(res, 403, 'forbidden: bad Origin header');
    if (page) return runAsync(res, o.web!.page(req, res, url));
    const token = bearerToken(req.headers.authorization);
    const identified = token ? o.auth.identify(token) : undefined;
    if (identified instanceof Promise) {
      identified.then((c) => authed(req, res, url, pathname, api, origin, token, c), (err: unknown) => failed(res, err));
      return;
    }
    authed(req, res, url, pathname, api, origin, token, identified);
  };

  const authed = (req: IncomingMessage, res: ServerResponse, url: URL, pathname: string, api: boolean, origin: string | undefined, token: string | undefined, caller: Caller | undefined): void => {
    // The dashboard's session cookie stands for the lead on /api/ only (never /mcp or /hook). A
    // state-changing request also needs the session's CSRF token, and must come from the page
    // itself: its Origin (checked above), or — Chromium sends no Origin on a same-origin fetch —
    // the browser's own Sec-Fetch-Site: same-origin, which no page can set.
    if (!token && api && o.web) {
      const web = o.web.cookieCaller(req);
      if (web) {
        const sameOrigin = origin !== undefined || req.headers['sec-fetch-site'] === 'same-origin';
        if (req.method !== 'GET' && req.method !== 'HEAD' && (!sameOrigin || !web.csrfOk)) {
          return deny(res, 403, !sameOrigin ? 'forbidden: a state-changing dashboard request must come from the dashboard page (Origin or Sec-Fetch-Site)' : 'forbidden: missing or wrong CSRF token (x-csrf-token): reload the dashboard');
        }
        return runApi(web.caller, req, res, url);
      }
    }
    if (pathname === '/health') {
      const h: HealthInfo = { pid: process.pid, started_at: startedAt, version: o.version };
      if (caller?.role === 'lead') {
        h.sessions = { total: sessions.count(), lead: sessions.count('lead'), agent: sessions.count('agent') };
        h.calls_in_flight = { ...inFlight };
        h.limits = { max_sessions_per_token: limits.maxPerToken, session_idle_s: limits.idleMs / 1000 };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(h));
      return;
    }
    if (!token || !caller) return deny(res, 401, token ? 'unauthorized: unknown or expired token' : 'unauthorized: missing bearer token', { 'www-authenticate': 'Bearer' });
    if (api) return runApi(caller, req, res, url);
    if (pathname === '/hook') {
      if (req.method !== 'POST' || !o.onHook) return deny(res, 405, 'POST the hook input to /hook');
      const onHook = o.onHook;
      const who = caller;
      return withBody(req, res, (body) => {
        const claude = url.searchParams.get('format') === 'claude';
        const send = (verdict: { decision?: string; reason?: string }): void => {
          // ?format=claude: Claude Code's HTTP hook reads the same JSON a command hook prints. An
          // `allow` (the policy settled the call) skips Claude Code's permission prompt.
          const out = claude
            ? (verdict.decision === 'deny' || verdict.decision === 'allow'
              ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: verdict.decision, permissionDecisionReason: verdict.reason ?? (verdict.decision === 'deny' ? 'denied by Overseer' : 'allowed by Overseer policy') } }
              : {})
            : verdict;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(out));
        };
        const verdict = onHook(who, body, claude ? 'claude' : undefined) as { decision?: string; reason?: string } | Promise<{ decision?: string; reason?: string }>;
        if (!(verdict instanceof Promise)) return send(verdict);
        // The hook waits (a file just handed over is made writable first); it fails closed.
        verdict.then(send, (err: unknown) => send({ decision: 'deny', reason: `Overseer could not decide on this call: ${err instanceof Error ? err.message : String(err)}` }));
      });
    }
    const sid = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sid) ? sid[0] : sid;
    if (sessionId) return onSession(sessionId, token, req, res);
    if (req.method !== 'POST') return deny(res, 400, 'no MCP session: send initialize first');
    const who = caller;
    withBody(req, res, (body) => initialize(who, token, body, req, res));
  };

  const runApi = (caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL): void => runAsync(res, (async () => {
    if (!o.onApi || !(await o.onApi(caller, req, res, url))) deny(res, 404, `not found: no API route ${req.method} ${url.pathname}`);
  })());

  /** A request on an open MCP session: POST (messages), GET (its stream), DELETE. */
  const onSession = (sessionId: string, token: string, req: IncomingMessage, res: ServerResponse): void => {
    const s = sessions.get(sessionId);
    if (!s) return deny(res, 404, 'unknown MCP session: initialize again');
    // Both tokens are valid (identify took this one), so the comparison is no oracle for guessing one.
    if (s.token !== token) return deny(res, 403, 'forbidden: this MCP session belongs to another identity');
    // Counted open until the response (or the GET stream) closes: such a session is not idle.
    const idle = sessions.busy(s);
    if (req.method !== 'POST') {
      res.on('close', idle);
      if (req.method === 'GET') return s.channel.get(req, res);
      if (req.method === 'DELETE') {
        const v = versionProblem(req);
        if (v) return writeProblem(res, v);
        s.session.close();
        res.writeHead(200).end();
        return;
      }
      return writeProblem(res, { status: 405, code: -32000, message: 'Method not allowed.', headers: { allow: 'GET, POST, DELETE' } });
    }
    const role = s.caller.role;
    inFlight[role]++;
    res.on('close', () => { idle(); inFlight[role]--; });
    withBody(req, res, (body) => {
      const messages = postMessages(req, body);
      if (!Array.isArray(messages)) return writeProblem(res, messages);
      if (messages.some(isInitializeRequest)) return writeProblem(res, { status: 400, code: -32600, message: 'Invalid Request: Server already initialized' });
      const v = versionProblem(req);
      if (v) return writeProblem(res, v);
      if (s.session.closed) return deny(res, 404, 'unknown MCP session: initialize again'); // closed while the body came in
      s.channel.post(res, messages, mayBlock);
    });
  };

  /** A POST without a session: initialize opens one. */
  const initialize = (caller: Caller, token: string, body: unknown, req: IncomingMessage, res: ServerResponse): void => {
    if (!isInitializeRequest(body)) {
      // e.g. Claude Code's `server/discover` probe: answer "method not found" so it falls back.
      const id = (body as { id?: unknown })?.id ?? null;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
      return;
    }
    const refused = sessions.refusal(token);
    if (refused) {
      const id = (body as { id?: unknown }).id ?? null;
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32003, message: refused } }));
      return;
    }
    const messages = postMessages(req, body);
    if (!Array.isArray(messages)) return writeProblem(res, messages);
    const id = randomUUID();
    const channel = new HttpChannel(id);
    const session = o.openSession(caller, channel);
    channel.attach(session);
    sessions.add(id, { session, channel, token, caller });
    session.onClose(() => {
      sessions.delete(id);
      channel.close();
    });
    res.once('close', sessions.busy(sessions.get(id)!));
    channel.post(res, messages, mayBlock);
  };

  const http = createHttpServer((req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      failed(res, err);
    }
  });
  // Idle keep-alive sockets stay open a minute. With Node's 5 s, a client that reused a socket
  // just as the hub closed it got "fetch failed" (ECONNRESET) for a POST it cannot retry: clients
  // expire sockets on the hub's Keep-Alive hint minus a margin, and a loaded machine's event-loop
  // lag ate that margin (seen in CI). A minute makes an idle client expire its socket first.
  http.keepAliveTimeout = 60_000;
  const listen = (p: number): Promise<void> => new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    http.once('error', onError);
    http.listen(p, '127.0.0.1', () => { http.off('error', onError); resolve(); });
  });
  // Port 0 with a preferred port (the one this state's hub had before): take it again when it is
  // free, so an open dashboard and its cookie find the hub after a restart; else any free port.
  if (o.port === 0 && o.preferredPort) {
    await listen(o.preferredPort).catch(() => listen(0));
  } else {
    await listen(o.port);
  }
  setPort((http.address() as AddressInfo).port);
  sessions.startSweeping(closeSession, o.sweepEveryMs ?? Math.min(30_000, Math.max(1000, limits.idleMs / 10)));
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    server: http,
    sessionCount: (role, connected) => sessions.count(role, connected),
    sweep: () => {
      const gone = sessions.expired();
      for (const s of gone) closeSession(s);
      return gone.length;
    },
    close: async () => {
      sessions.stopSweeping();
      for (const s of [...sessions.values()]) s.session.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/** The token of an `Authorization: Bearer <token>` header (the scheme in any case, then
 * whitespace, then no whitespace to the end), as /^Bearer\s+(\S+)$/i without a match array and
 * its strings on every request. */
export function bearerToken(h: string | undefined): string | undefined {
  if (!h || h.length < 8 || h.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  let i = 6;
  while (i < h.length && /\s/.test(h[i]!)) i++;
  if (i === 6 || i === h.length) return undefined;
  const token = h.slice(i);
  return /\s/.test(token) ? undefined : token;
}

/** Never changed: handlers of /mcp do not read it (api, page and hook routes get their own). */
const MCP_URL: Readonly<URL> = new URL('/mcp', 'http://127.0.0.1');
