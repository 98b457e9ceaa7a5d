// A session on any transport shaped like the MCP SDK's Transport (start, send, close, onmessage,
// onclose): the in-memory pair of the tests (InMemoryTransport) and stdio. Only the shape is
// used; nothing of the SDK is loaded here.
import type { McpSession, Outbound } from './session.js';
import type { RpcMessage } from './rpc.js';

export interface SdkTransport {
  start(): Promise<void>;
  send(message: never, options?: never): Promise<void>;
  close(): Promise<void>;
  onmessage?: ((message: never, extra?: never) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
}

/** Attach a new session (made by `make` around the transport's output) to `t` and start it; returns a close function. */
export async function connectTransport(t: SdkTransport, make: (out: Outbound) => McpSession): Promise<() => Promise<void>> {
  const send = t.send.bind(t) as (m: RpcMessage, o?: { relatedRequestId?: unknown }) => Promise<void>;
  const session = make({
    send: (m, related) => { void send(m, related === undefined ? undefined : { relatedRequestId: related }).catch(() => undefined); },
  });
  (t as { onmessage?: (m: unknown, extra?: unknown) => void }).onmessage = (m, extra) => session.receive(m, extra);
  t.onclose = () => session.close();
  await t.start();
  return async () => {
    session.close();
    await t.close();
  };
}
