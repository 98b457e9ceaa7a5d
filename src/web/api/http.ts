// What every module of the dashboard's API shares: JSON answers, `{ error: { code, message } }`
// errors, bodies read with a size cap and validated with zod, query parameters checked the
// same way, and the typed errors of the services mapped to HTTP statuses in one place.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { OverseerError } from '../../errors.js';
import { BodyError, readBody as readJson } from '../../http/body.js';

/** A typed service error → its status (anything else is a 500, logged by the endpoint). */
export const STATUS: Readonly<Record<string, number>> = { invalid_input: 400, forbidden: 403, not_found: 404, invalid_state: 409, conflict: 409, budget_exceeded: 409 };
const MAX_BODY = 256 * 1024;

export const send = (res: ServerResponse, status: number, body: unknown): true => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
  return true;
};

export const fail = (res: ServerResponse, status: number, code: string, message: string): true => send(res, status, { error: { code, message } });

/** What a route returns when the path is not one of its own: the next module is asked. */
export const PASS: unique symbol = Symbol('not this route');

/** A refusal that is not a service error: the route names what was wrong. */
export class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export const methodNotAllowed = (req: IncomingMessage, allowed: string, path: string): HttpError =>
  new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here: ${allowed} ${path}`);

/** The request's JSON body (`{}` when empty), or an HttpError saying why it is not one. */
export async function readBody(req: IncomingMessage): Promise<unknown> {
  try {
    return await readJson(req, { limit: MAX_BODY, empty: {} });
  } catch (err) {
    if (err instanceof BodyError) throw new HttpError(err.status, 'invalid_input', err.message);
    throw err;
  }
}

const issues = (e: z.ZodError): string => e.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');

/** The body, validated: a 400 naming each bad field otherwise. */
export async function parseBody<T extends z.ZodTypeAny>(req: IncomingMessage, schema: T): Promise<z.infer<T>> {
  const r = schema.safeParse(await readBody(req));
  if (!r.success) throw new HttpError(400, 'invalid_input', issues(r.error));
  return r.data as z.infer<T>;
}

/** The query parameters as an object (unknown names refused), validated by `schema`. */
export function parseQuery<T extends z.ZodTypeAny>(url: URL, schema: T, known: readonly string[]): z.infer<T> {
  const unknown = [...url.searchParams.keys()].filter((k) => !known.includes(k));
  if (unknown.length) throw new HttpError(400, 'invalid_input', `unknown parameter ${unknown.map((k) => JSON.stringify(k)).join(', ')}: use ${known.join(', ') || 'none'}`);
  const r = schema.safeParse(Object.fromEntries(url.searchParams));
  if (!r.success) throw new HttpError(400, 'invalid_input', issues(r.error));
  return r.data as z.infer<T>;
}

/** Runs a route; typed errors become their `{ error }` answer, anything else propagates (500). */
export async function answer(res: ServerResponse, fn: () => Promise<unknown> | unknown): Promise<true> {
  try {
    const r = await fn();
    if (r === true) return true; // the route answered by itself (a stream)
    return send(res, 200, r);
  } catch (err) {
    if (err instanceof HttpError) return fail(res, err.status, err.code, err.message);
    if (err instanceof OverseerError && STATUS[err.code]) return fail(res, STATUS[err.code]!, err.code, err.message);
    throw err;
  }
}
