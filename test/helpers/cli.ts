// Running the built CLI (node dist/cli/main.js) as a process, in an environment cleaned of any
// outer Overseer or Claude Code session, and building it once per test file.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The test's environment without anything of an outer Overseer or Claude Code session. */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('OVERSEER_') && !k.startsWith('CLAUDE_') && k !== 'CLAUDECODE') env[k] = v;
  }
  return { ...env, ...extra };
}

/** The newest modification time (ms) of the files under `dir` (recursively). */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestUnder(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * `npm run build` unless dist/ is newer than every source (as after `npm test`'s own build);
 * tolerates type errors elsewhere as long as main.js exists. Never rebuilding a fresh dist/
 * matters: test files run two at a time, and a rebuild rewrites the modules another file's CLI
 * process is loading (seen in CI: "does not provide an export named …").
 */
export function buildCli(): void {
  if (existsSync(MAIN) && statSync(MAIN).mtimeMs >= newestUnder(join(REPO_ROOT, 'src'))) return;
  const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, encoding: 'utf8', env: cliEnv() });
  if (build.status !== 0) {
    process.stderr.write(`# npm run build exited ${build.status}: ${(build.stdout + build.stderr).slice(-2000)}\n`);
    assert.ok(existsSync(MAIN), `npm run build failed and ${MAIN} is missing`);
  }
}

/** Runs `node dist/cli/main.js <args>` to its end (killed after 60 s) and collects its output. */
export function overseer(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}, onStdout?: (all: string) => void): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      onStdout?.(stdout);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
