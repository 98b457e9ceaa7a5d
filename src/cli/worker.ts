// `overseer worker [--name] [--capacity] [--labels] [--lease]`: a worker host for the crew in the
// PostgreSQL database of OVERSEER_DATABASE_URL (issue 30; docs/workers-plan.md). It registers (name,
// host, capacity, labels, the agent CLIs it has and their versions), beats, runs the agents the
// hubs queue for it (a hub in worker mode on its own state directory: src/worker/run.ts) and on
// SIGTERM/SIGINT ends them interrupted and marks itself stopped. It never creates or upgrades the
// schema: a hub does.
import { InvalidInputError } from '../errors.js';
import { CliError, UsageError } from './errors.js';

export async function runWorker(raw: { name?: string; capacity?: string; labels?: string; lease?: string }): Promise<void> {
  const [{ parseWorkerOptions, parsePollMs, WorkerOptionError }, { loadConfig, packageRoot }, { openSql }, { findClis }, { runWorkerProcess, WorkerStartRefused }, { createLogger, flushAndExit }, { packageVersion }, { join }] = await Promise.all([
    import('../worker/options.js'), import('../config.js'), import('../store/sql/open.js'), import('../worker/clis.js'),
    import('../worker/run.js'), import('../log.js'), import('../version.js'), import('node:path'),
  ]);
  let o;
  let pollMs;
  try {
    o = parseWorkerOptions(raw);
    pollMs = parsePollMs(process.env.OVERSEER_WORKER_POLL_MS);
  } catch (err) {
    if (err instanceof WorkerOptionError) throw new UsageError(err.message);
    throw err;
  }
  const config = loadConfig();
  const databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    throw new CliError(`a worker needs the crew's PostgreSQL database: set OVERSEER_DATABASE_URL (or databaseUrl) to the URL the hubs use. This state (${config.home}) is SQLite, which only its own hub's machine reads; on SQLite every agent runs on the hub's machine.`);
  }
  let sql;
  try {
    sql = await openSql(config, { migrate: false });
  } catch (err) {
    if (err instanceof InvalidInputError) throw new CliError(`overseer worker does not create or upgrade the schema: ${err.message}`);
    throw err;
  }
  const log = createLogger({ level: config.logLevel, logDir: join(config.home, 'logs'), file: `worker-${o.name}.log` });
  try {
    const clis = await findClis({ claudeBin: config.claudeBin, codexBin: config.codexBin, packageRoot: packageRoot(), path: process.env.PATH });
    await runWorkerProcess({
      // Its hub row beats at least six times a lease: the hubs judge it by its lease (src/store/sql/hubs.ts).
      config: { ...config, databaseUrl, hubBeatMs: Math.min(config.hubBeatMs, Math.max(50, Math.floor(o.leaseMs / 6))) }, sql, log, options: o, pollMs, clis, version: packageVersion(), cwd: process.cwd(),
      out: (s) => void process.stdout.write(s),
      exit: (code) => flushAndExit(code),
    });
  } catch (err) {
    await sql.close();
    if (err instanceof WorkerStartRefused) throw new CliError(err.message);
    throw err;
  }
}
