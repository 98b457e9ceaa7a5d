// Running the built `overseer` CLI (node dist/cli/main.js) against a test hub's state directory,
// optionally on a pseudo-terminal (util-linux `script`) so that it sees an interactive TTY.
import { join } from 'node:path';
import { runProcess, type ProcessRun } from './process.js';
import { testDatabaseUrl } from './hub.js';

const MAIN = join(process.cwd(), 'dist/cli/main.js');

/**
 * `overseer <args>` with OVERSEER_HOME = home; `stdin` typed in; `tty: true` runs it on a pty. When a
 * test hub keeps that state in PostgreSQL (OVERSEER_TEST_DATABASE=postgres), the CLI is given its URL
 * as a person's shell would give it (OVERSEER_DATABASE_URL): the state directory has no state.db then.
 */
export function runOverseer(home: string, args: string[], o: { stdin?: string; tty?: boolean; env?: Record<string, string> } = {}): Promise<ProcessRun> {
  const url = testDatabaseUrl(home);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, OVERSEER_HOME: home, OVERSEER_LOG_LEVEL: 'silent', ...(url ? { OVERSEER_DATABASE_URL: url } : {}), ...o.env };
  const cmd = [process.execPath, MAIN, ...args];
  if (!o.tty) return runProcess(process.execPath, [MAIN, ...args], { cwd: home, env, timeoutMs: 30_000, stdin: o.stdin });
  const quoted = cmd.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return runProcess('script', ['-qefc', quoted, '/dev/null'], { cwd: home, env, timeoutMs: 30_000, stdin: o.stdin });
}
