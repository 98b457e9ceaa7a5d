// The shapes the hub's HTTP endpoint (src/server/http.ts) shares with the features that serve
// routes on it or read it: a route handler under /api/ and what GET /health says. Here, below
// the features, so that floor/, search/ and doctor/ need nothing of the server.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../domain/caller.js';

/** Routes under /api/ (after the Host, Origin and token checks); false = not found. */
export type ApiHandler = (caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

/** One ApiHandler of several: each is tried in turn until one handles the route. */
export function composeApi(...handlers: ApiHandler[]): ApiHandler {
  return async (caller, req, res, url) => {
    for (const h of handlers) if (await h(caller, req, res, url)) return true;
    return false;
  };
}

/** What GET /health says: pid and start always; counts and limits to the lead. */
export interface HealthInfo {
  pid: number;
  started_at: string;
  version?: string;
  sessions?: { total: number; lead: number; agent: number };
  /** MCP calls (POSTs on a session) being answered right now, by role. */
  calls_in_flight?: { lead: number; agent: number };
  limits?: { max_sessions_per_token: number; session_idle_s: number };
}
