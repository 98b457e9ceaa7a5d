// Logging. stdout is the MCP protocol in stdio mode, so pino never writes there: everything
// goes to <state>/logs/overseer.log, and warn and above also to stderr.
//
// The log file is opened synchronously and handed to pino as a file descriptor: an
// asynchronously opened destination is "not ready" for a moment, and a process.exit() in that
// moment made pino's exit hook throw a stack trace ("sonic boom is not ready yet").
import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';

export type { Logger };

/** Asynchronous destinations opened here, flushed by flushAndExit. */
const live = new Set<{ flushSync(): void }>();

export function createLogger(opts: { level: string; logDir?: string; stderr?: boolean; file?: string }): Logger {
  const streams: pino.StreamEntry[] = [];
  if (opts.logDir) {
    mkdirSync(opts.logDir, { recursive: true });
    const fd = openSync(join(opts.logDir, opts.file ?? 'overseer.log'), 'a');
    const dest = pino.destination({ dest: fd, sync: false });
    live.add(dest);
    streams.push({ level: opts.level as pino.Level, stream: dest });
  }
  if (opts.stderr !== false) streams.push({ level: 'warn', stream: pino.destination({ dest: 2, sync: true }) });
  return pino({ level: opts.level, base: { pid: process.pid } }, pino.multistream(streams));
}

/** Writes out what every log file opened here still buffers. Never throws. */
export function flushLogs(): void {
  for (const d of live) {
    try {
      d.flushSync();
    } catch {
      /* nothing buffered, or the file is gone: nothing to save */
    }
  }
}

/** Flush the logs, then exit with `code`. Use instead of process.exit() wherever a logger may exist. */
export function flushAndExit(code: number): never {
  flushLogs();
  process.exit(code);
}

/** A logger that drops everything, for tests and short CLI commands. */
export const silentLogger: Logger = pino({ level: 'silent' });
