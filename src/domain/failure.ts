// Failure classification of one attempt from what the process showed: the last `result`
// event, the init event, exit code/signal, stderr, and the reason the hub itself stopped it
// (the first termination reason wins). Pure.
import type { FailureClass } from './job.js';
import { limitKind } from './limitKind.js';

export type StopReason = 'timeout' | 'budget' | 'max_turns' | 'cancelled' | 'stopped' | 'hub_shutdown' | 'mcp_unavailable' | 'hook_bypassed';

export interface AttemptFacts {
  /** The hub's own reason for ending the process, if it did. */
  stopReason?: StopReason;
  spawnError?: { code?: string; message: string };
  exitCode?: number | null;
  signal?: string | null;
  lastResult?: {
    is_error?: boolean;
    subtype?: string;
    terminal_reason?: string | null;
    api_error_status?: number | null;
    result?: string;
    errors?: string[];
  };
  stderrTail?: string;
  /** The agent's own `finish` outcome. */
  reportedOutcome?: 'success' | 'failure';
}

export interface Classification {
  ok: boolean;
  failureClass?: FailureClass;
  error?: string;
}

export function classifyAttempt(f: AttemptFacts): Classification {
  if (f.spawnError) {
    if (f.spawnError.code === 'ENOENT' || f.spawnError.code === 'EACCES') {
      return { ok: false, failureClass: 'binary_not_found', error: f.spawnError.message };
    }
    return { ok: false, failureClass: 'crashed', error: f.spawnError.message };
  }
  switch (f.stopReason) {
    case 'timeout': return { ok: false, failureClass: 'timeout', error: 'the attempt ran past its timeout_s and was stopped' };
    case 'budget': return { ok: false, failureClass: 'budget', error: 'the attempt spent past its budget_usd and was stopped' };
    case 'max_turns': return { ok: false, failureClass: 'max_turns', error: 'the attempt made more model calls than its max_turns and was stopped' };
    case 'cancelled': return { ok: false, failureClass: 'cancelled', error: 'cancelled' };
    case 'hook_bypassed': return { ok: false, failureClass: 'hook_bypassed', error: 'a tool call ran without the lock hook deciding on it (the hook was switched off or bypassed): the agent was stopped, and its work needs review before anyone uses it' };
    case 'mcp_unavailable': return { ok: false, failureClass: 'mcp_unavailable', error: 'the overseer MCP server did not connect in the child (system/init showed it not connected)' };
    case 'stopped':
    case 'hub_shutdown':
      return { ok: false, failureClass: 'interrupted', error: f.stopReason === 'stopped' ? 'stopped by pause_agent' : 'the hub shut down' };
    default: break;
  }
  const r = f.lastResult;
  if (r?.is_error) {
    const text = [r.result, ...(r.errors ?? [])].filter(Boolean).join('; ');
    if (r.subtype === 'error_max_turns' || r.terminal_reason === 'max_turns') return { ok: false, failureClass: 'max_turns', error: text || 'reached max_turns' };
    if (r.subtype === 'error_max_budget_usd' || r.terminal_reason === 'budget_exhausted') return { ok: false, failureClass: 'budget', error: text || 'reached budget_usd' };
    const status = r.api_error_status ?? undefined;
    // A provider limit (429, 529, a usage limit, Codex's "high demand"): the limiter waits it out (src/limits).
    if (limitKind(status, text)) return { ok: false, failureClass: 'rate_limited', error: text };
    if (status === 401 || status === 403 || /invalid api key|authentication|\/login/i.test(text)) return { ok: false, failureClass: 'auth', error: text };
    if (status !== undefined || r.terminal_reason === 'api_error' || /API Error/i.test(text)) return { ok: false, failureClass: 'api_error', error: text };
    return { ok: false, failureClass: 'crashed', error: text || `the agent ended with an error (${r.subtype ?? 'unknown'})` };
  }
  if (!r) {
    const how = f.signal ? `signal ${f.signal}` : `exit code ${f.exitCode ?? 'unknown'}`;
    const tail = f.stderrTail?.trim();
    // Codex with `required = true` exits before any event when the overseer server cannot connect.
    if (tail && /required MCP servers? failed to initiali[sz]e/i.test(tail)) return { ok: false, failureClass: 'mcp_unavailable', error: `the overseer MCP server did not connect: ${tail.slice(-500)}` };
    if (tail && /invalid api key|not logged in|authentication/i.test(tail)) return { ok: false, failureClass: 'auth', error: tail.slice(-500) };
    return { ok: false, failureClass: 'crashed', error: `the process ended (${how}) without a result${tail ? `: ${tail.slice(-500)}` : ''}` };
  }
  if (f.reportedOutcome === 'failure') return { ok: false, failureClass: 'reported_failure', error: 'the agent reported failure with finish(outcome: "failure")' };
  return { ok: true };
}

/** Failures worth another attempt under retry `same`/`analyze`. Cancels and bad setup are not. */
export function isRetryable(c: FailureClass): boolean {
  return !['cancelled', 'binary_not_found', 'auth', 'dependency_failed', 'budget', 'interrupted', 'hook_bypassed', 'setup_failed', 'dependency_conflict'].includes(c);
}

/** Does an ended attempt use up the job's retry budget? Not one that ended on a provider limit: the job waited it out (src/limits). */
export function countsAgainstRetries(a: { status: string; failure_class: string | null }): boolean {
  return !(a.status === 'interrupted' && a.failure_class === 'rate_limited');
}
