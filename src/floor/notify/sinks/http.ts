// The webhook and Slack sinks: one POST each, 5 s at most, and anything but a 2xx is a failure
// (redirects are not followed: a webhook that moved should be reconfigured, not chased).
import type { NotifyPayload } from '../payload.js';
import { slackText } from '../text.js';
import type { Sink, SinkDeps } from './types.js';

const TIMEOUT_MS = 5_000;

/** The URL without its path and query, for messages (a webhook's path is its secret). */
export const urlOrigin = (url: string): string => new URL(url).origin;

async function post(deps: SinkDeps, url: string, body: unknown): Promise<void> {
  let res: Response;
  try {
    res = await deps.fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
      redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why = e.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : e.cause?.code ?? e.cause?.message ?? e.message;
    throw new Error(`POST to ${urlOrigin(url)} failed: ${why}`);
  }
  // Read the answer out so the connection can be reused (or closed), whatever it said.
  const text = await res.text().catch(() => '');
  if (res.status < 200 || res.status > 299) {
    const said = text.trim().replace(/\s+/g, ' ').slice(0, 200);
    throw new Error(`POST to ${urlOrigin(url)} answered HTTP ${res.status}${said ? `: ${said}` : ''}`);
  }
}

/** POSTs the payload as JSON. */
export function webhookSink(name: string, url: string, deps: SinkDeps): Sink {
  return { name, type: 'webhook', send: (p: NotifyPayload) => post(deps, url, p) };
}

/** POSTs `{ text }` to a Slack incoming webhook (or anything that takes the same). */
export function slackSink(name: string, url: string, deps: SinkDeps): Sink {
  return { name, type: 'slack', send: (p: NotifyPayload) => post(deps, url, { text: slackText(p) }) };
}
