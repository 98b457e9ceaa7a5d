// Harness for running the real `claude` CLI (devDependency) in tests, against the fake
// Anthropic API: a clean environment, a fresh HOME, its own process group, killed at the end.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess, type ProcessRun } from './process.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Absolute path to node_modules/.bin/claude in the repo. */
export function claudeBin(): string {
  return path.join(REPO_ROOT, 'node_modules', '.bin', 'claude');
}

/** Variables that an outer Claude Code session (or the developer's shell) could leak into the child. */
function leaks(key: string): boolean {
  return key.startsWith('ANTHROPIC_') || key.startsWith('CLAUDE_') || key === 'CLAUDECODE' || key === 'AI_AGENT';
}

/** Environment for a claude run against a fake API: outer ANTHROPIC_*, CLAUDE_* and CLAUDECODE
 * removed, a fresh HOME, no retries to speak of, no telemetry, full MCP tool schemas. */
export function claudeEnv(opts: { home: string; baseUrl: string; extra?: Record<string, string> }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !leaks(k)) env[k] = v;
  }
  Object.assign(env, {
    HOME: opts.home,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
    ENABLE_TOOL_SEARCH: 'false',
    DISABLE_AUTOUPDATER: '1',
  });
  if (opts.extra) Object.assign(env, opts.extra);
  return env;
}

/** A fresh directory under `base` (default os.tmpdir()); the caller removes it. */
export async function makeTempDir(prefix: string, base = os.tmpdir()): Promise<string> {
  return mkdtemp(path.join(base, prefix.endsWith('-') ? prefix : `${prefix}-`));
}

/**
 * Where most Codex tests put their state (and so CODEX_HOME): /var/tmp, where Codex makes its own
 * sandbox helper links. Under the temporary directory it refuses to, and the launcher's own links
 * take over (src/launch/codex/sandboxHelpers.ts); test/e2e/codex-sandbox.test.ts covers that place.
 */
export const codexTempBase = (): string => (existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir());

export type ClaudeRun = ProcessRun;

/**
 * Runs claude with `args` in its own process group. stdin is /dev/null unless `stdin` lines are
 * given (written, then closed). Resolves when claude has exited and its output is drained; on
 * timeout kills the whole group and rejects with the tails of stderr and stdout.
 */
export async function runClaude(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; stdin?: string[] },
): Promise<ClaudeRun> {
  const stdin = opts.stdin?.map((line) => (line.endsWith('\n') ? line : `${line}\n`)).join('');
  return runProcess(claudeBin(), args, { cwd: opts.cwd, env: opts.env, timeoutMs: opts.timeoutMs, stdin });
}

/**
 * Interactive Claude Code in a fresh HOME shows first-run screens (theme, "use this API key?",
 * folder trust). ~/.claude.json with these keys skips them (docs/attach.md); the hub's `-p`
 * children keep what is there when they write the file.
 */
export function skipFirstRun(home: string, trusted: string): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, '.claude.json'), JSON.stringify({
    hasCompletedOnboarding: true, theme: 'dark',
    customApiKeyResponses: { approved: ['sk-test'], rejected: [] },
    projects: { [trusted]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
  }));
}
