// The hub's open MCP sessions (Streamable HTTP), bounded two ways: at most `maxPerToken` open
// at once per bearer token (one agent cannot open thousands), and a session with no request
// in flight, no open stream and no activity for `idleMs` is closed and its state freed (a
// client that comes back gets "session not found" and initializes again, per the MCP spec).
import type { Caller } from '../services/context.js';
import type { McpSession } from '../mcp/session.js';
import type { HttpChannel } from '../mcp/http.js';

export interface Session {
  /** The MCP protocol state (src/mcp/session.ts). */
  session: McpSession;
  /** Its HTTP side: the streams its messages go on (src/mcp/http.ts). */
  channel: HttpChannel;
  token: string;
  caller: Caller;
  /** Requests and streams currently open on this session. */
  open: number;
  lastActive: number;
}

export interface SessionLimits {
  maxPerToken: number;
  idleMs: number;
}

export class SessionTable {
  private readonly byId = new Map<string, Session>();
  private sweeper?: NodeJS.Timeout;

  constructor(readonly limits: SessionLimits, private readonly now: () => number = Date.now) {}

  get(id: string): Session | undefined {
    return this.byId.get(id);
  }

  add(id: string, s: Omit<Session, 'open' | 'lastActive'>): void {
    this.byId.set(id, { ...s, open: 0, lastActive: this.now() });
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  /** Why a new session for this token is refused, or undefined when it may open one. */
  refusal(token: string): string | undefined {
    let n = 0;
    for (const s of this.byId.values()) if (s.token === token) n++;
    if (n < this.limits.maxPerToken) return undefined;
    return `too many MCP sessions: this token already holds ${n}, the cap is ${this.limits.maxPerToken} (OVERSEER_MAX_SESSIONS_PER_TOKEN / maxSessionsPerToken). Reuse an open session, close unused ones (HTTP DELETE with their Mcp-Session-Id), or wait: idle sessions close after ${Math.round(this.limits.idleMs / 1000)} s`;
  }

  /** Mark a request or stream open on s; the returned function marks it closed. */
  busy(s: Session): () => void {
    s.open++;
    s.lastActive = this.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      s.open--;
      s.lastActive = this.now();
    };
  }

  /** Sessions (of one role); `connected`: only those with a request or stream open right now. */
  count(role?: Caller['role'], connected = false): number {
    let n = 0;
    for (const s of this.byId.values()) if ((!role || s.caller.role === role) && (!connected || s.open > 0)) n++;
    return n;
  }

  values(): IterableIterator<Session> {
    return this.byId.values();
  }

  /** Sessions idle past the limit (closing them is the caller's job). */
  expired(): Session[] {
    const cutoff = this.now() - this.limits.idleMs;
    return [...this.byId.values()].filter((s) => s.open === 0 && s.lastActive <= cutoff);
  }

  /** Close expired sessions every `everyMs`. */
  startSweeping(close: (s: Session) => void, everyMs: number): void {
    this.sweeper = setInterval(() => { for (const s of this.expired()) close(s); }, everyMs);
    this.sweeper.unref();
  }

  stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }
}
