// A request's JSON body, for the hub's HTTP routes. Every MCP tool call reads one, so this
// keeps its per-request cost down: the listeners are shared functions and one small state
// object hangs on the request (no promise and no closures per request, which a busy crew's
// calls paid for in allocation and young-generation GC, docs/performance-native-mcp.md).
import type { IncomingMessage } from 'node:http';

/** The body was not JSON, was over MAX_BODY, or the request ended before it did. */
export const BAD_BODY = Symbol('bad body');
export const MAX_BODY = 32 * 1024 * 1024;

interface Reading {
  first?: Buffer;
  /** every chunk, once there is more than one */
  more?: Buffer[];
  size: number;
  done: (body: unknown) => void;
}

const READING = Symbol('reading the body');
type Req = IncomingMessage & { [READING]?: Reading };
const EMPTY = Buffer.alloc(0);

/** Read req's body and call `done` once: the parsed JSON, or BAD_BODY. `done` must not throw
 * (it runs in the request's event listeners). */
export function readJsonBody(req: IncomingMessage, done: (body: unknown) => void): void {
  (req as Req)[READING] = { size: 0, done };
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
  if (r.size > MAX_BODY) {
    this.resume();
    return finish(this, BAD_BODY);
  }
  if (!r.first) r.first = c;
  else (r.more ??= [r.first]).push(c);
}

function onEnd(this: Req): void {
  const r = this[READING];
  if (!r) return;
  let body: unknown;
  try {
    body = JSON.parse((r.more ? Buffer.concat(r.more) : (r.first ?? EMPTY)).toString('utf8'));
  } catch {
    body = BAD_BODY;
  }
  finish(this, body);
}

function onGone(this: Req): void {
  finish(this, BAD_BODY);
}
