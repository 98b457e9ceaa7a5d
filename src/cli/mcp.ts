// `overseer mcp` (stdio, for the lead) and `overseer serve` (long-lived hub over HTTP).
// mcp: become the hub for this state directory, or bridge to the one already running.
import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadConfig, type Config } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import { Hub } from '../hub.js';
import { acquireHubLock, ensureLeadToken } from '../server/hubLock.js';
import { runBridge } from '../server/bridge.js';
import { randomIds } from '../clock.js';

function setup(): { config: Config; log: Logger } {
  const config = loadConfig();
  const log = createLogger({ level: config.logLevel, logDir: join(config.home, 'logs') });
  return { config, log };
}

/** Run `stop` once on SIGTERM/SIGINT/SIGHUP, then exit. */
function onSignals(stop: (why: string) => Promise<void>): void {
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => void stop(sig));
}

export async function runMcp(): Promise<void> {
  const { config, log } = setup();
  const lock = await acquireHubLock(config.home, log);
  if (lock.kind === 'running') {
    log.info({ hub: lock.info }, 'a hub already runs for this state directory: bridging stdio to it');
    const token = ensureLeadToken(config.home, () => randomIds.token());
    await runBridge({ url: lock.info.url, token, log });
    process.exit(0);
  }
  const hub = new Hub({ config, projectDir: process.cwd(), log });
  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ why }, 'stopping the hub');
    try {
      await hub.stop();
      await lock.release();
    } finally {
      process.exit(0);
    }
  };
  onSignals(stop);
  await hub.start();
  const transport = new StdioServerTransport();
  const server = hub.server({ role: 'lead' });
  transport.onclose = () => void stop('stdio closed');
  process.stdin.once('end', () => void stop('stdin ended'));
  process.stdin.once('close', () => void stop('stdin closed'));
  await server.connect(transport);
}

export async function runServe(opts: { port?: string }): Promise<void> {
  const { config, log } = setup();
  const cfg = opts.port !== undefined ? loadConfigWithPort(config, opts.port) : config;
  const lock = await acquireHubLock(cfg.home, log);
  if (lock.kind === 'running') {
    process.stderr.write(`A hub already runs for ${cfg.home} (pid ${lock.info.pid}, ${lock.info.url}). Connect to it with the lead token in ${join(cfg.home, 'lead.token')}.\n`);
    process.exit(1);
  }
  const hub = new Hub({ config: cfg, projectDir: process.cwd(), log });
  let stopping = false;
  onSignals(async (why) => {
    if (stopping) return;
    stopping = true;
    log.info({ why }, 'stopping the hub');
    await hub.stop();
    await lock.release();
    process.exit(0);
  });
  await hub.start();
  process.stdout.write(`overseer hub listening on ${hub.http!.url}\nlead token: ${join(cfg.home, 'lead.token')} (send it as "Authorization: Bearer <token>")\n`);
}

function loadConfigWithPort(config: Config, port: string): Config {
  const n = Number(port);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port ${JSON.stringify(port)} is not a port number (0..65535)`);
  return { ...config, port: n };
}
