// Logging. stdout is the MCP protocol in stdio mode, so pino never writes there: everything
// goes to <state>/logs/overseer.log, and warn and above also to stderr.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(opts: { level: string; logDir?: string; stderr?: boolean; file?: string }): Logger {
  const streams: pino.StreamEntry[] = [];
  if (opts.logDir) {
    mkdirSync(opts.logDir, { recursive: true });
    streams.push({ level: opts.level as pino.Level, stream: pino.destination({ dest: join(opts.logDir, opts.file ?? 'overseer.log'), sync: false, mkdir: true }) });
  }
  if (opts.stderr !== false) streams.push({ level: 'warn', stream: pino.destination({ dest: 2, sync: true }) });
  return pino({ level: opts.level, base: { pid: process.pid } }, pino.multistream(streams));
}

/** A logger that drops everything, for tests and short CLI commands. */
export const silentLogger: Logger = pino({ level: 'silent' });
