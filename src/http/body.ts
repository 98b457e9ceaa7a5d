// The one reader of HTTP request bodies (the hub's MCP and hook routes, its /api/ routes, the
// fake model APIs). `readJsonBody` is the callback form every MCP tool call goes through, so it
// keeps its per-request cost down: the listeners are shared functions and one small state object
// hangs on the request (no promise and no closures per request, which a busy crew's calls paid
// for in allocation and young-generation GC, docs/performance-native-mcp.md). `readBody` and
// `readBodyText` are the promise forms on top of it. A body that is over its limit, not JSON,
// or cut off is a BodyError that says which, with the HTTP status to answer.
import type { IncomingMessage } from 'node:http';

/** The default limit of a body (the MCP endpoint's). */
export const MAX_BODY = 32 * 1024 * 1024;

/** Why a body could not be read: `status` is the HTTP status to answer with (413 over the
 * limit, 400 otherwise). */
export class BodyError extends Error {
  constructor(readonly status: 400 | 413, message: string) {
    super(message);
    this.name = 'BodyError';
  }
}

export interface BodyOptions {
  /** Largest body accepted, in bytes (default MAX_BODY). */
  limit?: number;
  /** What an empty body means (default: not JSON, a BodyError). */
  empty?: unknown;
}

interface Reading {
  first?: Buffer;
  /** every chunk, once there is more than one */
  more?: Buffer[];
  size: number;
  limit: number;
  /** parse as JSON (else the text) */
  json: boolean;
  empty: unknown;
  done: (body: unknown) => void;
}

const READING = Symbol('reading the body');
type Req = IncomingMessage & { [READING]?: Reading };
const EMPTY = Buffer.alloc(0);
const NO_EMPTY = Symbol('an empty body is not JSON');

/** Read req's body and call `done` once: the parsed JSON, or a BodyError. `done` must not throw
 * (it runs in the request's event listeners). */
export function readJsonBody(req: IncomingMessage, done: (body: unknown) => void, o: BodyOptions = {}): void {
  start(req, { size: 0, limit: o.limit ?? MAX_BODY, json: true, empty: 'empty' in o ? o.empty : NO_EMPTY, done });
}

/** The body parsed as JSON; rejects with a BodyError. */
export function readBody(req: IncomingMessage, o: BodyOptions = {}): Promise<unknown> {
  return new Promise((resolve, reject) => readJsonBody(req, (b) => (b instanceof BodyError ? reject(b) : resolve(b)), o));
}

/** The body as UTF-8 text; rejects with a BodyError (413 over the limit, 400 cut off). */
export function readBodyText(req: IncomingMessage, limit = MAX_BODY): Promise<string> {
  return new Promise((resolve, reject) => {
    start(req, { size: 0, limit, json: false, empty: NO_EMPTY, done: (b) => (b instanceof BodyError ? reject(b) : resolve(b as string)) });
  });
}

function start(req: IncomingMessage, r: Reading): void {
  (req as Req)[READING] = r;
  // `on`: each fires at most once for a request, which dies with its listeners.
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onGone);
  req.on('close', onGone);
}

function finish(req: Req, body: unknown): void {
  const r = req[READING];
  if (!r) return;
  req[READING] = undefined;
  r.done(body);
}

function onData(this: Req, c: Buffer): void {
  const r = this[READING];
  if (!r) return; // over the limit already: drained unread
  r.size += c.length;
  if (r.size > r.limit) {
    this.resume();
    return finish(this, new BodyError(413, `the body is over ${r.limit} bytes; send less`));
  }
  if (!r.first) r.first = c;
  else (r.more ??= [r.first]).push(c);
}

function onEnd(this: Req): void {
  const r = this[READING];
  if (!r) return;
  const text = (r.more ? Buffer.concat(r.more) : (r.first ?? EMPTY)).toString('utf8');
  if (!r.json) return finish(this, text);
  if (text === '' && r.empty !== NO_EMPTY) return finish(this, r.empty);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    body = new BodyError(400, `the body is not valid JSON (${text === '' ? 'it is empty' : (err as Error).message}); send a JSON value`);
  }
  finish(this, body);
}

function onGone(this: Req): void {
  finish(this, new BodyError(400, 'the request ended before its body did'));
}
