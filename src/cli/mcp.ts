// `overseer mcp` (stdio, for the lead: a bridge to the hub process, started on first use) and
// `overseer serve` (the hub itself; --background is what the bridge starts) and `overseer stop`.
import { UsageError } from './errors.js';
import { join } from 'node:path';
import { loadConfig, type Config } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import { ensureLeadToken } from '../hubfiles/hubLock.js';
import { randomIds } from '../clock.js';
import { locateHub } from '../hubproc/locate.js';
import { spawnHub } from '../hubproc/spawn.js';
import { runHubProcess } from '../hubproc/serve.js';
import { stopHub } from '../hubproc/stop.js';
import { moveLegacyState } from '../hubproc/legacy.js';

function setup(file = 'overseer.log'): { config: Config; log: Logger } {
  const moved = moveLegacyState(process.env, process.cwd());
  const config = loadConfig();
  const log = createLogger({ level: config.logLevel, logDir: join(config.home, 'logs'), file });
  if (moved.moved) log.info(moved, 'moved the runtime state out of the repository');
  return { config, log };
}

export async function runMcp(): Promise<void> {
  const { config, log } = setup('bridge.log');
  const cwd = process.cwd();
  log.info({ home: config.home }, 'bridge starting');
  // Loaded here, not at the top: the bridge speaks stdio with the MCP SDK's transport, which the
  // hub process (`overseer serve`, the same module) must not load (docs/performance-native-mcp.md).
  const { runBridge } = await import('../server/bridge.js');
  await runBridge({
    stateDir: config.home,
    log,
    token: () => ensureLeadToken(config.home, () => randomIds.token()),
    locate: () => locateHub({ stateDir: config.home, start: () => { spawnHub({ stateDir: config.home, settingsDir: config.settingsDir, env: process.env, cwd }); } }),
  });
  process.exit(0);
}

export async function runServe(opts: { port?: string; background?: boolean }): Promise<void> {
  const { config, log } = setup();
  const cfg = opts.port !== undefined ? loadConfigWithPort(config, opts.port) : config;
  await runHubProcess({
    config: cfg, log, background: opts.background === true, cwd: process.cwd(),
    out: (s) => void process.stdout.write(s),
    exit: (code) => process.exit(code),
  });
}

export async function runStop(): Promise<void> {
  const config = loadConfig();
  const r = await stopHub(config.home);
  if (r.kind === 'none') {
    process.stdout.write(`No hub runs for ${config.home}.\n`);
    return;
  }
  if (r.kind === 'timeout') {
    process.stderr.write(`The hub (pid ${r.info.pid}) did not stop within 30 s; it may still be ending its agents. Check again with overseer doctor, or kill ${r.info.pid}.\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`Stopped the hub for ${config.home} (pid ${r.info.pid}, port ${r.info.port}, running since ${r.info.started_at}) in ${r.ms} ms.\n`);
}

function loadConfigWithPort(config: Config, port: string): Config {
  const n = Number(port);
  if (port.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port ${JSON.stringify(port)} is not a port number (0..65535)`);
  return { ...config, port: n };
}
