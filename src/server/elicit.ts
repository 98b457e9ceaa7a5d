// Asks the person directly through an interactive lead client (MCP form elicitation) when one
// is connected and says it can. Claude Code in -p mode cancels every elicitation; cancel,
// decline-to-answer and errors all fall back to the lead answering with `respond`.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Elicitor } from '../services/requests.js';
import type { FullRequestRow } from '../store/requests.js';

export class LeadElicitor implements Elicitor {
  private readonly leads = new Set<McpServer>();

  /** Track a lead connection for as long as it is open. */
  add(server: McpServer): void {
    this.leads.add(server);
    const prev = server.server.onclose;
    server.server.onclose = () => {
      this.leads.delete(server);
      prev?.();
    };
  }

  async ask(r: FullRequestRow, signal: AbortSignal): Promise<{ decision?: 'approved' | 'rejected'; answer?: string; comment?: string } | undefined> {
    const lead = [...this.leads].find((s) => s.isConnected() && s.server.getClientCapabilities()?.elicitation);
    if (!lead) return undefined;
    const options = r.options_json ? (JSON.parse(r.options_json) as string[]) : undefined;
    const question = r.kind === 'question';
    const res = await lead.server.elicitInput({
      mode: 'form',
      message: `Agent ${r.job_id} ${question ? 'asks' : 'requests approval'}: ${r.summary}${r.plan_json ? `\n\nPlan: ${r.plan_json}` : ''}`,
      requestedSchema: {
        type: 'object',
        properties: question
          ? { answer: options ? { type: 'string', enum: options, title: 'Answer' } : { type: 'string', title: 'Answer' } }
          : { decision: { type: 'string', enum: ['approved', 'rejected'], title: 'Decision' }, comment: { type: 'string', title: 'Comment' } },
        required: [question ? 'answer' : 'decision'],
      },
    } as never, { signal, timeout: r.expires_at ? Math.max(1000, r.expires_at - Date.now()) : undefined });
    if (res.action === 'accept' && res.content) {
      const c = res.content as Record<string, unknown>;
      if (question && typeof c.answer === 'string') return { answer: c.answer };
      if (!question && (c.decision === 'approved' || c.decision === 'rejected')) return { decision: c.decision, comment: typeof c.comment === 'string' ? c.comment : undefined };
    }
    if (res.action === 'decline' && !question) return { decision: 'rejected', comment: 'declined by the person' };
    return undefined;
  }
}
