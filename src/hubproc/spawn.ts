// Start a background hub for a state directory: `overseer serve --background` in a session
// and process group of its own (setsid via detached), stdin/stdout closed, stderr appended to
// <state>/logs/hub.stderr. A window closing (SIGHUP to its group, or kill of the group) never
// reaches it. If another hub holds the claim the new process exits at once.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI entry next to this module (dist/cli/main.js, or src/cli/main.ts under tsx). */
export function cliMain(): string {
  const here = fileURLToPath(import.meta.url);
  return fileURLToPath(new URL(`../cli/main${extname(here)}`, import.meta.url));
}

export function spawnHub(o: { stateDir: string; settingsDir?: string; env: NodeJS.ProcessEnv; cwd: string }): number | undefined {
  const logs = join(o.stateDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const err = openSync(join(logs, 'hub.stderr'), 'a');
  try {
    const child = spawn(process.execPath, [...process.execArgv, cliMain(), 'serve', '--background'], {
      cwd: o.cwd,
      env: { ...o.env, OVERSEER_HOME: o.stateDir, ...(o.settingsDir ? { OVERSEER_SETTINGS_DIR: o.settingsDir } : {}) },
      detached: true,
      stdio: ['ignore', 'ignore', err],
    });
    child.on('error', () => undefined);
    child.unref();
    return child.pid;
  } finally {
    closeSync(err);
  }
}
