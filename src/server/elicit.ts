// Asks the person directly through an interactive lead client (MCP form elicitation) when one
// is connected and says it can. Claude Code in -p mode cancels every elicitation. Aborting the
// signal withdraws the form: notifications/cancelled for the elicitation request.
// A client that answers anyway (it missed or ignores the cancellation) is not dropped: its
// reply is routed to `onLate`, so the person is told their answer came too late.
// An accepted answer is checked against the form's schema (as the MCP SDK's Server did), with
// Ajv loaded at the first such answer.
import type { Elicitor } from '../approvals/service.js';
import type { FormResult, FormSpec } from '../approvals/form.js';
import type { McpSession } from '../mcp/session.js';
import { ErrorCode, RpcError, type RequestId } from '../mcp/rpc.js';
import { lazyImport } from '../lazy.js';

/** _meta key naming the Overseer request an elicitation is for (also seen by the client). */
const META = 'overseer/request_id';
/** Withdrawn forms remembered per connection for late replies (oldest forgotten first). */
const MAX_WITHDRAWN = 200;

type Validator = { getValidator(schema: unknown): (v: unknown) => { valid: boolean; errorMessage?: string } };
const ajv = lazyImport('ajv', async (): Promise<Validator> => {
  const { AjvJsonSchemaValidator } = await import('@modelcontextprotocol/sdk/validation/ajv');
  return new AjvJsonSchemaValidator() as unknown as Validator;
});

export class LeadElicitor implements Elicitor {
  private readonly leads = new Set<McpSession>();
  /** Withdrawn elicitation ids → where a late reply goes, per lead session. */
  private readonly withdrawn = new WeakMap<McpSession, Map<RequestId, (r: FormResult) => void>>();

  /** Track a lead session for as long as it is open. */
  add(session: McpSession): void {
    this.leads.add(session);
    const late = new Map<RequestId, (r: FormResult) => void>();
    this.withdrawn.set(session, late);
    session.onLateResponse = (id, m) => {
      const f = late.get(id);
      if (!f) return;
      late.delete(id);
      const r = (m as { result?: FormResult }).result;
      if (r && typeof r.action === 'string') f(r);
    };
    session.onClose(() => this.leads.delete(session));
  }

  async ask(form: FormSpec, signal: AbortSignal, onLate: (r: FormResult) => void): Promise<FormResult | undefined> {
    const lead = [...this.leads].find((s) => !s.closed && (s.clientCapabilities?.elicitation as { form?: unknown } | undefined)?.form);
    if (!lead || signal.aborted) return undefined;
    let msgId: RequestId | undefined;
    signal.addEventListener('abort', () => {
      if (msgId === undefined) return;
      const late = this.withdrawn.get(lead)!;
      late.set(msgId, onLate);
      if (late.size > MAX_WITHDRAWN) late.delete(late.keys().next().value!);
    }, { once: true });
    const res = await lead.request('elicitation/create', {
      mode: 'form', message: form.message, requestedSchema: form.requestedSchema, _meta: { [META]: form.requestId },
    }, { signal, timeoutMs: form.timeoutMs, onId: (id) => { msgId = id; } });
    const action = res.action;
    if (action !== 'accept' && action !== 'decline' && action !== 'cancel') throw new RpcError(ErrorCode.InvalidParams, `Invalid elicitation result: action ${JSON.stringify(action)}`);
    const content = (res.content ?? undefined) as Record<string, unknown> | undefined;
    if (action === 'accept' && content && form.requestedSchema) {
      const check = (await ajv()).getValidator(form.requestedSchema)(content);
      if (!check.valid) throw new RpcError(ErrorCode.InvalidParams, `Elicitation response content does not match requested schema: ${check.errorMessage}`);
    }
    return { action, content };
  }
}
