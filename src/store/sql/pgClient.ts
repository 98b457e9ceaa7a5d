// Ending a dedicated pg.Client (the LISTEN connection, the hub's liveness lock) without hanging:
// end() sends Terminate and waits for the server to close, which never happens on a connection
// cut without a word (a network that drops packets). After `ms` the socket is dropped instead.
import type pg from 'pg';

/** Drop the client's socket now (pg keeps it on `connection.stream`, untyped). */
export function destroyClient(c: pg.Client): void {
  (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/** End the client; resolves within `ms` whatever the connection does. */
export async function endClient(c: pg.Client, ms = 1000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    c.end().catch(() => undefined),
    new Promise<void>((res) => {
      timer = setTimeout(() => {
        destroyClient(c);
        res();
      }, ms);
    }),
  ]);
  clearTimeout(timer);
}
