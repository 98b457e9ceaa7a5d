// Test helpers for the git layer: real repositories and bare remotes in temp dirs, built with
// plain `git` child processes (not the code under test) and a clean git environment.
import { execFile } from 'node:child_process';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** Environment for test git commands: no outer GIT_DIR & co., no prompts, no global config. */
export function testGitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^GIT_(DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|PREFIX)$/.test(k)) env[k] = v;
  }
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.LC_ALL = 'C';
  return env;
}

/** Run git in cwd and return trimmed stdout; rejects with git's stderr on failure. */
export async function gitOut(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileP('git', args, { cwd, env: testGitEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** Create a real repo in dir (git init -b main, local identity, files, first commit); returns its real path. */
export async function initRepo(dir: string, files: Record<string, string> = { 'README.md': '# test repo\n' }): Promise<string> {
  await mkdir(dir, { recursive: true });
  const root = await realpath(dir);
  await gitOut(root, ['init', '-q', '-b', 'main']);
  await gitOut(root, ['config', 'user.name', 'Test User']);
  await gitOut(root, ['config', 'user.email', 'test@example.com']);
  await gitOut(root, ['config', 'commit.gpgsign', 'false']);
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  await gitOut(root, ['add', '-A']);
  await gitOut(root, ['commit', '-q', '--allow-empty', '-m', 'initial']);
  return root;
}

/** Create a bare repository in dir (to act as a push remote); returns its real path. */
export async function makeBareRemote(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const root = await realpath(dir);
  await gitOut(root, ['init', '-q', '--bare', '-b', 'main']);
  return root;
}
