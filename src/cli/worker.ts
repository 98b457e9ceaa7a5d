// `overseer worker [--name] [--capacity] [--labels] [--lease]`: a worker host for the crew in the
// PostgreSQL database of OVERSEER_DATABASE_URL (issue 30; docs/workers-plan.md). This step
// registers it (name, host, capacity, labels, the agent CLIs it has and their versions), beats,
// and marks it stopped on SIGTERM/SIGINT; running agents on it is a later step. It never creates
// or upgrades the schema: a hub does.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError } from '../errors.js';
import { CliError, UsageError } from './errors.js';

export async function runWorker(raw: { name?: string; capacity?: string; labels?: string; lease?: string }): Promise<void> {
  const [{ parseWorkerOptions, WorkerOptionError }, { loadConfig, packageRoot }, { openSql }, { findClis }, { WorkerHost, WorkerNameTaken }, { createLogger, flushAndExit }, { packageVersion }] = await Promise.all([
    import('../worker/options.js'), import('../config.js'), import('../store/sql/open.js'), import('../worker/clis.js'),
    import('../worker/host.js'), import('../log.js'), import('../version.js'),
  ]);
  let o;
  try {
    o = parseWorkerOptions(raw);
  } catch (err) {
    if (err instanceof WorkerOptionError) throw new UsageError(err.message);
    throw err;
  }
  const config = loadConfig();
  if (!config.databaseUrl) {
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
  let host;
  try {
    const clis = await findClis({ claudeBin: config.claudeBin, codexBin: config.codexBin, packageRoot: packageRoot(), path: process.env.PATH });
    host = await WorkerHost.start({
      sql, log,
      identity: { name: o.name, host: hostname(), pid: process.pid, capacity: o.capacity, labels: o.labels, clis, version: packageVersion(), leaseMs: o.leaseMs },
      onLostName: (err) => {
        process.stderr.write(`overseer: ${err.message}\n`);
        void sql!.close().finally(() => flushAndExit(1));
      },
    });
    const cliText = Object.entries(clis).map(([k, v]) => `${k} ${v}`).join(', ') || 'none found (it can run no agent)';
    process.stdout.write(`worker ${o.name} registered: epoch ${host.epoch}, capacity ${o.capacity}, labels ${o.labels.join(',') || '-'}, lease ${o.leaseMs / 1000} s; CLIs: ${cliText}\n`);
  } catch (err) {
    await sql.close();
    if (err instanceof WorkerNameTaken) throw new CliError(err.message);
    throw err;
  }
  const running = host;
  let stopping = false;
  const stop = async (sig: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    try {
      const marked = await running.stop();
      log.info({ worker: o.name, sig, marked }, 'worker stopped');
      process.stdout.write(`worker ${o.name} stopped (${sig})${marked ? '' : ': its lease had already ended'}\n`);
      await sql!.close();
      flushAndExit(0);
    } catch (err) {
      process.stderr.write(`overseer: the worker's stop failed: ${(err as Error).message}\n`);
      flushAndExit(1);
    }
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => void stop(sig));
}
