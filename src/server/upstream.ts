// One MCP session with the hub over Streamable HTTP, spoken by hand (fetch + SSE) so the
// bridge sees exactly when the hub goes away: a POST or the event stream failing, never a
// silent reconnect loop. Messages the hub sends (responses, notifications, its own requests)
// go to onMessage; onLost is called once when the event stream breaks.
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { HubInfo } from '../hubfiles/hubLock.js';
import { readSse } from '../http/sse.js';

export type PostResult =
  | { kind: 'ok'; answered: boolean }
  /** The hub does not know this session (it expired or the hub restarted): initialize again. */
  | { kind: 'gone' }
  | { kind: 'refused'; message: string };

type Deliver = (m: JSONRPCMessage) => void;

/** Every message of an SSE body, in order, until the body ends. */
function readMessages(body: ReadableStream<Uint8Array>, deliver: Deliver): Promise<void> {
  return readSse(body, (e) => { if (e.data.trim()) deliver(JSON.parse(e.data) as JSONRPCMessage); });
}

const isResponseTo = (m: JSONRPCMessage, id: unknown): boolean => 'id' in m && m.id === id && !('method' in m);

export class HubSession {
  sessionId?: string;
  protocolVersion?: string;
  initResult?: unknown;
  closed = false;
  private readonly aborts = new Set<AbortController>();

  constructor(readonly info: HubInfo, private readonly token: string, private readonly onMessage: Deliver, private readonly onLost: (why: string) => void) {}

  private headers(): Record<string, string> {
    const h: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (this.sessionId) h['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion) h['mcp-protocol-version'] = this.protocolVersion;
    return h;
  }

  /** Open the session with the client's initialize (under the bridge's own id); replays `initialized` too when asked. */
  async initialize(init: JSONRPCRequest, sendInitialized: boolean): Promise<void> {
    let answer: JSONRPCMessage | undefined;
    const r = await this.post(init, (m) => { if (isResponseTo(m, init.id)) answer = m; else this.onMessage(m); });
    if (r.kind !== 'ok' || !answer) throw new Error(r.kind === 'refused' ? r.message : 'the hub did not answer initialize');
    if ('error' in answer) throw new Error(`the hub refused initialize: ${JSON.stringify(answer.error)}`);
    this.initResult = (answer as { result: unknown }).result;
    this.protocolVersion = (this.initResult as { protocolVersion?: string }).protocolVersion;
    if (sendInitialized) await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  async post(m: JSONRPCMessage, deliver: Deliver = this.onMessage): Promise<PostResult> {
    const ac = new AbortController();
    this.aborts.add(ac);
    try {
      const res = await fetch(this.info.url, {
        method: 'POST',
        headers: { ...this.headers(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(m),
        signal: ac.signal,
      });
      if (res.status === 404 && this.sessionId) {
        await res.body?.cancel();
        return { kind: 'gone' };
      }
      if (!res.ok) {
        const text = await res.text();
        let msg = text;
        try { msg = (JSON.parse(text) as { error: { message: string } }).error.message; } catch { /* plain text */ }
        return { kind: 'refused', message: `the hub answered HTTP ${res.status}: ${msg}` };
      }
      const sid = res.headers.get('mcp-session-id');
      if (sid) this.sessionId = sid;
      const id = 'id' in m && !('result' in m) && !('error' in m) ? m.id : undefined;
      let answered = false;
      const each: Deliver = (x) => { if (id !== undefined && isResponseTo(x, id)) answered = true; deliver(x); };
      const type = res.headers.get('content-type') ?? '';
      if (type.includes('text/event-stream') && res.body) await readMessages(res.body, each);
      else if (type.includes('application/json')) {
        const j = (await res.json()) as JSONRPCMessage | JSONRPCMessage[];
        for (const x of Array.isArray(j) ? j : [j]) each(x);
      } else await res.body?.cancel();
      if ('method' in m && m.method === 'notifications/initialized') void this.listen();
      return { kind: 'ok', answered };
    } finally {
      this.aborts.delete(ac);
    }
  }

  /** The standalone event stream: the hub's own requests and notifications. Its end means the session or the hub went away. */
  private async listen(): Promise<void> {
    const ac = new AbortController();
    this.aborts.add(ac);
    let why = 'closed its event stream';
    try {
      const res = await fetch(this.info.url, { method: 'GET', headers: { ...this.headers(), accept: 'text/event-stream' }, signal: ac.signal });
      if (!res.ok || !res.body) {
        await res.body?.cancel();
        return; // no stream on offer: the bridge's pid watch still notices the hub dying
      }
      await readMessages(res.body, this.onMessage);
    } catch (err) {
      why = `event stream failed (${(err as Error).message})`;
    } finally {
      this.aborts.delete(ac);
    }
    if (!this.closed) this.onLost(why);
  }

  /** Abort everything in flight; `forget` also ends the session on the hub (best effort). */
  async close(forget = false): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const a of this.aborts) a.abort();
    this.aborts.clear();
    if (forget && this.sessionId) {
      await fetch(this.info.url, { method: 'DELETE', headers: this.headers(), signal: AbortSignal.timeout(1000) }).then((r) => r.body?.cancel(), () => undefined);
    }
  }
}
