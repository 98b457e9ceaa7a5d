// A second `overseer mcp` for the same state directory does not start a second hub: it
// relays its stdio to the running hub's HTTP endpoint as another lead (lead token).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Logger } from '../log.js';

export async function runBridge(o: { url: string; token: string; log: Logger }): Promise<void> {
  const up = new StreamableHTTPClientTransport(new URL(o.url), { requestInit: { headers: { Authorization: `Bearer ${o.token}` } } });
  const down = new StdioServerTransport();
  let closed = false;
  let finished!: () => void;
  const done = new Promise<void>((r) => { finished = r; });
  const closeBoth = async (why: string): Promise<void> => {
    if (closed) return;
    closed = true;
    o.log.info({ why }, 'bridge closing');
    await Promise.allSettled([up.close(), down.close()]);
    finished();
  };
  down.onmessage = (m) => { void up.send(m).catch((err: unknown) => o.log.error({ err }, 'bridge: hub send failed')); };
  up.onmessage = (m) => { void down.send(m).catch((err: unknown) => o.log.error({ err }, 'bridge: stdio send failed')); };
  up.onerror = (err) => o.log.warn({ err }, 'bridge: hub transport error');
  up.onclose = () => void closeBoth('hub connection closed');
  down.onclose = () => void closeBoth('stdio closed');
  await up.start();
  await down.start();
  process.stdin.once('end', () => void closeBoth('stdin ended'));
  await done;
}
