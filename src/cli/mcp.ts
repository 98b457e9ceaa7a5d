// `overseer mcp` (stdio, for the lead: a bridge to the hub process, started on first use) and
// `overseer serve` (the hub itself; --background is what the bridge starts) and `overseer stop`.
// Nothing heavy at the top: `overseer mcp` answers the client's start-up requests before the
// configuration, the logger or the hub discovery are loaded (src/server/bridge.ts), and
// `overseer serve` loads the hub, which the bridge never does.
import { join } from 'node:path';
import { UsageError } from './errors.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { HubSide } from '../server/bridge.js';

async function setup(file = 'overseer.log'): Promise<{ config: Config; log: Logger }> {
  const [{ moveLegacyState }, { loadConfig }, { createLogger }] = await Promise.all([import('../hubproc/legacy.js'), import('../config.js'), import('../log.js')]);
  const moved = moveLegacyState(process.env, process.cwd());
  const config = loadConfig();
  const log = createLogger({ level: config.logLevel, logDir: join(config.home, 'logs'), file });
  if (moved.moved) log.info(moved, 'moved the runtime state out of the repository');
  return { config, log };
}

export async function runMcp(): Promise<void> {
  const { runBridge } = await import('../server/bridge.js');
  const { readLeadAnswers, mayHaveTemplates } = await import('../server/bridgeLocal.js');
  await runBridge({ answers: readLeadAnswers(), hubSide, projectPrompts: () => (mayHaveTemplates(process.env, process.cwd()) ? projectPrompts() : undefined) });
  process.exit(0);
}

/** What the bridge needs to reach the hub, loaded once its first answers are out. */
async function hubSide(): Promise<HubSide> {
  const { config, log } = await setup('bridge.log');
  const [hubLock, { randomIds }, { locateHub }, { spawnHub }, { processRunning }] = await Promise.all([
    import('../hubfiles/hubLock.js'), import('../clock.js'), import('../hubproc/locate.js'), import('../hubproc/spawn.js'), import('../hubfiles/pid.js'),
  ]);
  const cwd = process.cwd();
  log.info({ home: config.home }, 'bridge starting');
  return {
    stateDir: config.home,
    log,
    token: () => hubLock.ensureLeadToken(config.home, () => randomIds.token()),
    locate: () => locateHub({ stateDir: config.home, start: () => { spawnHub({ stateDir: config.home, settingsDir: config.settingsDir, env: process.env, cwd }); } }),
    readHubInfo: hubLock.readHubInfo,
    pidAlive: processRunning,
  };
}

/** prompts/list with the project's templates, by the hub's own code (src/server/prompts.ts). */
async function projectPrompts(): Promise<Record<string, unknown>> {
  const [{ loadConfig, settingsDirOf, packageRoot }, { registerPrompts }, { methodTable }] = await Promise.all([import('../config.js'), import('../mcp/prompts.js'), import('../mcp/methods.js')]);
  const config = loadConfig();
  const methods = methodTable({ name: 'overseer', version: '' }, {});
  registerPrompts(methods, { templatesDir: join(settingsDirOf(config), 'templates'), promptsDir: join(packageRoot(), 'prompts'), watch: false });
  return (await methods.requests.get('prompts/list')!({}, undefined as never)) as Record<string, unknown>;
}

export async function runServe(opts: { port?: string; background?: boolean }): Promise<void> {
  const { config, log } = await setup();
  const cfg = opts.port !== undefined ? loadConfigWithPort(config, opts.port) : config;
  const { runHubProcess } = await import('../hubproc/serve.js');
  await runHubProcess({
    config: cfg, log, background: opts.background === true, cwd: process.cwd(),
    out: (s) => void process.stdout.write(s),
    exit: (code) => process.exit(code),
  });
}

export async function runStop(): Promise<void> {
  const [{ loadConfig }, { stopHub }] = await Promise.all([import('../config.js'), import('../hubproc/stop.js')]);
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
