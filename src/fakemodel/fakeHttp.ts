// Scaffolding shared by the scripted API fakes (fakeAnthropic.ts, fakeOpenAI.ts): a request's
// JSON body (src/http/body.ts) or the API's own error for a bad one, JSON answers, a log of
// recorded requests that tests can wait on, a loopback server that tracks its sockets (waits that end early when the client goes away, a
// close() that ends all of it), and the named scripts whose steps answer the requests. Each fake
// keeps its own wire format: routes, request contexts, rendering and error bodies.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { BodyError, readBody } from '../http/body.js';

/** Largest request body a fake accepts (a long transcript's history fits). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The request body parsed as JSON. When it cannot be read or is not JSON, answers with
 * `malformed(status, message)` (413 past the size cap, else 400) and resolves undefined.
 */
export async function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  malformed: (status: number, message: string) => string,
): Promise<unknown> {
  try {
    return await readBody(req, { limit: MAX_BODY_BYTES });
  } catch (e) {
    const status = e instanceof BodyError ? e.status : 400;
    sendJson(res, status, malformed(status, `malformed request body: ${e instanceof Error ? e.message : String(e)}`));
    return undefined;
  }
}

/** Sends a JSON payload with `status` (and extra `headers`), unless an answer was already started or the response is gone. */
export function sendJson(res: ServerResponse, status: number, payload: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

/** What a recorded request needs for the log: its outcome and HTTP status, set once finished. */
export interface Finishable {
  outcome?: string;
  status?: number;
}

export interface RequestLog<R extends Finishable> {
  /** the recorded requests, in arrival order (the same array for the log's whole life) */
  readonly requests: R[];
  /** records a request that has just arrived */
  record(rec: R): void;
  /** sets the outcome (and the status, if given) of a recorded request, once: later calls are ignored */
  finish(rec: R | undefined, outcome: NonNullable<R['outcome']>, status?: number): void;
  /** resolves when a request matching pred has arrived (checks already-recorded ones first), rejects after timeoutMs.
   * The predicate is re-checked whenever a request arrives or a recorded request gets its `outcome`. */
  waitForRequest(pred: (r: R) => boolean, timeoutMs: number): Promise<R>;
  /** rejects the pending waits; later waits for requests not yet recorded reject at once */
  close(): void;
}

/** A log of recorded requests; `name` ('fake anthropic') prefixes its error messages. */
export function createRequestLog<R extends Finishable>(name: string): RequestLog<R> {
  const requests: R[] = [];
  let closed = false;

  interface Waiter {
    pred: (r: R) => boolean;
    resolve: (r: R) => void;
    reject: (e: unknown) => void;
    timer: NodeJS.Timeout;
  }
  const waiters = new Set<Waiter>();

  const check = (r: R): void => {
    for (const w of [...waiters]) {
      let hit: boolean;
      try {
        hit = w.pred(r);
      } catch (e) {
        waiters.delete(w);
        clearTimeout(w.timer);
        w.reject(e);
        continue;
      }
      if (hit) {
        waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve(r);
      }
    }
  };

  return {
    requests,
    record(rec) {
      requests.push(rec);
      check(rec);
    },
    finish(rec, outcome, status) {
      if (!rec || rec.outcome) return;
      rec.outcome = outcome;
      if (status !== undefined) rec.status = status;
      check(rec);
    },
    waitForRequest(pred, timeoutMs) {
      try {
        for (const r of requests) {
          if (pred(r)) return Promise.resolve(r);
        }
      } catch (e) {
        return Promise.reject(e);
      }
      if (closed) return Promise.reject(new Error(`${name} is closed`));
      return new Promise<R>((resolve, reject) => {
        const w: Waiter = {
          pred,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(w);
            reject(new Error(`${name}: no matching request within ${timeoutMs} ms (${requests.length} recorded)`));
          }, timeoutMs),
        };
        waiters.add(w);
      });
    },
    close() {
      if (closed) return;
      closed = true;
      for (const w of waiters) {
        clearTimeout(w.timer);
        w.reject(new Error(`${name} closed while waiting for a request`));
      }
      waiters.clear();
    },
  };
}

export interface FakeHttpOptions {
  /** prefixes error messages ('fake openai') */
  name: string;
  /** default 127.0.0.1 */
  host?: string;
  /** answers one request; a rejection becomes a 500 with `internalError(e)` (or a destroyed response once headers are out) */
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** the JSON payload of that 500 */
  internalError: (e: unknown) => string;
}

export interface FakeHttpServer {
  /** http://host:port (IPv6 hosts in brackets), no trailing slash */
  origin: string;
  port: number;
  /** the server is closed, or the response or its socket is destroyed */
  gone(res: ServerResponse): boolean;
  /** waits ms, or less if the client goes away (or the server closes); resolves true when the client is still there */
  waitUnlessGone(ms: number, res: ServerResponse): Promise<boolean>;
  /** ends the pending waits, stops listening, destroys the open sockets; resolves once the server is closed */
  close(): Promise<void>;
}

/** Starts a loopback HTTP server on port 0 for a fake API. */
export async function startFakeHttp(opts: FakeHttpOptions): Promise<FakeHttpServer> {
  const host = opts.host ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  const closers = new Set<() => void>();
  let closed = false;

  const server = createServer((req, res) => {
    opts.handle(req, res).catch((e: unknown) => {
      // Never let a handler failure escape into the test process.
      try {
        if (!res.headersSent) sendJson(res, 500, opts.internalError(e));
        else res.destroy();
      } catch {
        /* ignore */
      }
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => {
    /* after listen, errors are per-connection; never crash the test process */
  });
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error(`${opts.name}: unexpected server address`);
  const port = addr.port;

  const gone = (res: ServerResponse): boolean => closed || res.destroyed || (res.socket !== null && res.socket.destroyed);

  return {
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    gone,
    waitUnlessGone: (ms, res) =>
      new Promise((resolve) => {
        if (gone(res)) return resolve(false);
        const done = (alive: boolean): void => {
          clearTimeout(timer);
          res.off('close', onClose);
          closers.delete(onClose);
          resolve(alive);
        };
        const onClose = (): void => done(false);
        const timer = setTimeout(() => done(true), ms);
        res.on('close', onClose);
        closers.add(onClose);
      }),
    async close() {
      if (closed) return;
      closed = true;
      for (const c of [...closers]) c();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      sockets.clear();
      await done;
    },
  };
}

// ---- Scripts: each request is answered by a step of a named script. ----

/** What the scripts need of a request's context: the script name matched and the step index. */
export interface ScriptContext {
  script: string;
  step: number;
}

/** What the scaffolding needs of a step (every field of a fake's step is optional). */
export interface ScriptStep {
  text?: string;
  delayMs?: number;
}

/** A named script of a fake: its steps by index, or a function of the request's context. */
export type ScriptOf<C, S> = S[] | ((ctx: C) => S | Promise<S>);

export interface ScriptedFakeOptions<Sc> {
  scripts?: Record<string, Sc>;
  /** choose a script name for a request; undefined: the fake's default route (by `@script:NAME` marker) */
  route?: (body: any, prompt: string) => string | undefined;
  host?: string;
}

/** A request a scripted fake recorded. */
export interface ScriptedRequest extends Finishable {
  /** arrival time (ms since epoch) */
  at: number;
  script: string;
  step: number;
  body: any;
  /** HTTP status sent, once sent */
  status?: number;
}

/** The API of a scripted fake, as its tests see it. */
export interface ScriptedFake<Sc, R> {
  url: string;
  port: number;
  requests: R[];
  addScript(name: string, s: Sc): void;
  /** resolves when a request matching pred has arrived (checks already-recorded ones first), rejects after timeoutMs.
   * The predicate is re-checked whenever a request arrives or a recorded request gets its `outcome`. */
  waitForRequest(pred: (r: R) => boolean, timeoutMs: number): Promise<R>;
  close(): Promise<void>;
}

export interface ScriptBook<C extends ScriptContext, S extends ScriptStep> {
  add(name: string, s: ScriptOf<C, S>): void;
  /** `routed` when the router chose a name, else `fallback()`; a fallback name that ends in dots and
   * names no script stands for the name without them (a marker at the end of a sentence,
   * "… @script:demo.", names script "demo") */
  name(routed: string | undefined, fallback: () => string): string;
  /** the step for ctx: element ctx.step of a list ({ text: 'done' } past its end) or the function's
   * result; { text: 'no script named …' } for an unknown script. Rejects unless the step is an object. */
  step(ctx: C): Promise<S>;
}

export function createScriptBook<C extends ScriptContext, S extends ScriptStep>(
  initial: Record<string, ScriptOf<C, S>> = {},
): ScriptBook<C, S> {
  const scripts = new Map<string, ScriptOf<C, S>>(Object.entries(initial));
  // Every field of a fake's step is optional, so a text-only step is one.
  const textStep = (text: string): S => ({ text }) as S;
  return {
    add(name, s) {
      scripts.set(name, s);
    },
    name(routed, fallback) {
      if (routed !== undefined) return routed;
      let name = fallback();
      if (!scripts.has(name) && name.endsWith('.')) {
        const trimmed = name.replace(/\.+$/, '');
        if (scripts.has(trimmed)) name = trimmed;
      }
      return name;
    },
    async step(ctx) {
      const script = scripts.get(ctx.script);
      if (script === undefined) return textStep(`no script named ${ctx.script}`);
      const step = typeof script === 'function' ? await script(ctx) : (script[ctx.step] ?? textStep('done'));
      if (typeof step !== 'object' || step === null || Array.isArray(step)) {
        throw new Error(`script returned ${step === undefined ? 'undefined' : typeof step}, not a step`);
      }
      return step;
    },
  };
}

/** What a scripted fake is made of: its scripts, its request log and its server. */
export interface ScriptedFakeParts<C extends ScriptContext, S extends ScriptStep, R extends ScriptedRequest> {
  scripts: ScriptBook<C, S>;
  log: RequestLog<R>;
  http: FakeHttpServer;
}

/**
 * Records `rec` and plays the step of `ctx`. A script that throws (or returns no object) is
 * answered with 400 and `scriptError(message)` (a 400 is not retried, so a broken script fails
 * fast and visibly); a step's `delayMs` is waited out unless the client goes away. Resolves the
 * step to answer with, or undefined when the request is finished already ('error' or 'aborted').
 */
export async function playStep<C extends ScriptContext, S extends ScriptStep, R extends ScriptedRequest>(
  parts: ScriptedFakeParts<C, S, R>,
  rec: R,
  ctx: C,
  res: ServerResponse,
  scriptError: (message: string) => string,
): Promise<S | undefined> {
  const { scripts, log, http } = parts;
  // Outcomes every fake has ('error', 'aborted'); R narrows `outcome` to its own list of them.
  const outcome = (o: 'error' | 'aborted'): NonNullable<R['outcome']> => o as NonNullable<R['outcome']>;
  log.record(rec);
  let step: S;
  try {
    step = await scripts.step(ctx);
  } catch (e) {
    sendJson(res, 400, scriptError(`fake script ${ctx.script} step ${ctx.step} threw: ${e instanceof Error ? e.message : String(e)}`));
    log.finish(rec, outcome('error'), 400);
    return undefined;
  }
  if (step.delayMs && step.delayMs > 0 && !(await http.waitUnlessGone(step.delayMs, res))) {
    log.finish(rec, outcome('aborted'));
    return undefined;
  }
  if (http.gone(res)) {
    log.finish(rec, outcome('aborted'));
    return undefined;
  }
  return step;
}

/** The ScriptedFake of `parts`, reachable at `url`. */
export function scriptedFake<C extends ScriptContext, S extends ScriptStep, R extends ScriptedRequest>(
  parts: ScriptedFakeParts<C, S, R>,
  url: string,
): ScriptedFake<ScriptOf<C, S>, R> {
  const { scripts, log, http } = parts;
  return {
    url,
    port: http.port,
    requests: log.requests,
    addScript: (name, s) => scripts.add(name, s),
    waitForRequest: (pred, timeoutMs) => log.waitForRequest(pred, timeoutMs),
    async close() {
      log.close();
      await http.close();
    },
  };
}
