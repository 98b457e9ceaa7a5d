// Asks the person directly through an interactive lead client (MCP form elicitation) when one
// is connected and says it can. Claude Code in -p mode cancels every elicitation. Aborting the
// signal withdraws the form: the SDK sends notifications/cancelled for the elicitation request.
// A client that answers anyway (it missed or ignores the cancellation) is not dropped: its
// reply is routed to `onLate`, so the person is told their answer came too late.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { EmptyResultSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Elicitor } from '../approvals/service.js';
import type { FormResult, FormSpec } from '../approvals/form.js';

/** _meta key naming the Overseer request an elicitation is for (also seen by the client). */
const META = 'overseer/request_id';
/** Withdrawn forms remembered per connection for late replies (oldest forgotten first). */
const MAX_WITHDRAWN = 200;

interface Wiring {
  /** Outgoing elicitation ids by request id, captured as the SDK sends them. */
  sent: Map<string, string | number>;
  /** Withdrawn elicitation ids → where a late reply goes. */
  withdrawn: Map<string | number, (r: FormResult) => void>;
  /** The first request to a client gets JSON-RPC id 0, and the SDK's client ignores a
   *  notifications/cancelled for id 0 (`if (!requestId) return`): a ping takes that id. */
  ready: Promise<unknown>;
}

export class LeadElicitor implements Elicitor {
  private readonly leads = new Set<McpServer>();
  private readonly wired = new WeakMap<Transport, Wiring>();

  /** Track a lead connection for as long as it is open. */
  add(server: McpServer): void {
    this.leads.add(server);
    const prev = server.server.onclose;
    server.server.onclose = () => {
      this.leads.delete(server);
      prev?.();
    };
  }

  async ask(form: FormSpec, signal: AbortSignal, onLate: (r: FormResult) => void): Promise<FormResult | undefined> {
    const lead = [...this.leads].find((s) => s.isConnected() && s.server.getClientCapabilities()?.elicitation);
    const transport = lead?.server.transport;
    if (!lead || !transport) return undefined;
    const w = this.wire(transport, lead);
    await w.ready;
    if (signal.aborted) return undefined;
    signal.addEventListener('abort', () => {
      const msgId = w.sent.get(form.requestId);
      w.sent.delete(form.requestId);
      if (msgId === undefined) return;
      w.withdrawn.set(msgId, onLate);
      if (w.withdrawn.size > MAX_WITHDRAWN) w.withdrawn.delete(w.withdrawn.keys().next().value!);
    }, { once: true });
    try {
      const res = await lead.server.elicitInput({
        mode: 'form', message: form.message, requestedSchema: form.requestedSchema, _meta: { [META]: form.requestId },
      } as never, { signal, timeout: form.timeoutMs });
      return { action: res.action, content: res.content as Record<string, unknown> | undefined };
    } finally {
      if (!signal.aborted) w.sent.delete(form.requestId);
    }
  }

  /** Watch a lead transport's elicitation traffic (once per transport). */
  private wire(t: Transport, server: McpServer): Wiring {
    const known = this.wired.get(t);
    if (known) return known;
    const w: Wiring = { sent: new Map(), withdrawn: new Map(), ready: server.server.request({ method: 'ping' }, EmptyResultSchema, { timeout: 5000 }).catch(() => undefined) };
    const send = t.send.bind(t);
    t.send = (msg, opts) => {
      const m = msg as { id?: string | number; method?: string; params?: { _meta?: Record<string, unknown> } };
      const rid = m.method === 'elicitation/create' ? m.params?._meta?.[META] : undefined;
      if (typeof rid === 'string' && m.id !== undefined) w.sent.set(rid, m.id);
      return send(msg, opts);
    };
    const onmessage = t.onmessage;
    t.onmessage = (msg: JSONRPCMessage, extra) => {
      const m = msg as { id?: string | number; result?: FormResult; error?: unknown };
      const late = m.id !== undefined && ('result' in m || 'error' in m) ? w.withdrawn.get(m.id) : undefined;
      if (!late) return onmessage?.(msg, extra as never);
      w.withdrawn.delete(m.id!);
      if (m.result && typeof m.result.action === 'string') late(m.result);
    };
    this.wired.set(t, w);
    return w;
  }
}
