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

/**
 * V8 flags the hub process runs with (docs/performance-hub-memory.md). A young generation of
 * 1 MB semi-spaces instead of the default up to 16 MB: the hub allocates little per request, and
 * the default semi-spaces, grown while the modules load, stayed resident (about 17 MB of the
 * idle hub's RSS; the list_agents round trip did not get slower).
 */
export const HUB_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/** The node arguments of a hub process: HUB_NODE_FLAGS, except a flag this process was given itself (on its command line or in NODE_OPTIONS), then this process's own. */
export function hubNodeArgs(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((a) => a.split('=')[0]!.replace(/_/g, '-'));
  return [...HUB_NODE_FLAGS.filter((f) => !given.includes(f.split('=')[0]!)), ...execArgv];
}

export function spawnHub(o: { stateDir: string; settingsDir?: string; env: NodeJS.ProcessEnv; cwd: string }): number | undefined {
  const logs = join(o.stateDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const err = openSync(join(logs, 'hub.stderr'), 'a');
  try {
    const child = spawn(process.execPath, [...hubNodeArgs(), cliMain(), 'serve', '--background'], {
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
