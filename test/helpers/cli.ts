// Running the built CLI (node dist/cli/main.js) as a process, in an environment cleaned of any
// outer Overseer or Claude Code session, and building it once per test file.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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

/** `npm run build`; tolerates type errors elsewhere as long as main.js exists. */
export function buildCli(): void {
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
