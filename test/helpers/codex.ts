// Harness for running the real `codex` CLI (devDependency) in tests, against the fake OpenAI
// Responses API: a private CODEX_HOME with a custom provider, a clean environment, a fresh HOME,
// its own process group, killed at the end. See docs/codex-notes.md.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fakeModelCatalog } from '../../src/fakemodel/fakeOpenAI.js';
import { runProcess, type ProcessRun, type RunProcessOptions } from './process.js';

export { codexTempBase, makeTempDir } from './claude.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The model slug of codexHome(): not in codex's catalog, so MCP tools come as namespace tools (no tool_search). */
export const FAKE_MODEL = 'fake-model';
export const FAKE_API_KEY = 'sk-fake';

/** Absolute path to node_modules/.bin/codex in the repo. */
export function codexBin(): string {
  return path.join(REPO_ROOT, 'node_modules', '.bin', 'codex');
}

/** A TOML basic string (JSON string escapes are valid TOML for the characters we write). */
export function tomlString(s: string): string {
  return JSON.stringify(s);
}

export interface CodexHomeOptions {
  /** default model slug (config `model`); default FAKE_MODEL */
  model?: string;
  /** write `dir/fake-models.json` = fakeModelCatalog([model]) and point `model_catalog_json` at it (default true).
   * false: the slug is uncatalogued, so codex offers no apply_patch tool and adds a "Model metadata" error item. */
  catalog?: boolean;
  /** appended verbatim after the provider table (start with a [table] header for tables) */
  extraToml?: string;
  /** top-level keys, inserted before any table */
  topToml?: string;
}

/**
 * Writes `dir/config.toml` for a private CODEX_HOME whose default model provider is the fake at
 * `fakeUrl` (a FakeOpenAI `url`, ending in /v1): HTTP+SSE only, no request or stream retries, and
 * (by default) a model catalog defining the model slug. Returns `dir`.
 */
export async function codexHome(dir: string, fakeUrl: string, opts: CodexHomeOptions = {}): Promise<string> {
  const model = opts.model ?? FAKE_MODEL;
  const top: string[] = [];
  if (opts.catalog !== false) {
    const file = path.join(dir, 'fake-models.json');
    await writeFile(file, JSON.stringify(fakeModelCatalog([model]), null, 2));
    top.push(`model_catalog_json = ${tomlString(file)}`);
  }
  if (opts.topToml) top.push(opts.topToml);
  const toml = [
    ...top,
    `model = ${tomlString(model)}`,
    'model_provider = "fake"',
    '',
    '[model_providers.fake]',
    'name = "Fake"',
    `base_url = ${tomlString(fakeUrl)}`,
    'env_key = "FAKE_API_KEY"',
    'wire_api = "responses"',
    'supports_websockets = false',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    opts.extraToml ?? '',
  ].join('\n');
  await writeFile(path.join(dir, 'config.toml'), toml);
  return dir;
}

/** Variables that an outer Codex/OpenAI setup (or the developer's shell) could leak into the child. */
function leaks(key: string): boolean {
  return key.startsWith('OPENAI_') || key.startsWith('CODEX_') || key === 'RUST_LOG';
}

/** Environment for a codex run against the fake: outer OPENAI_* / CODEX_* removed, HOME = `home`,
 * CODEX_HOME = `codexHome`, FAKE_API_KEY set. */
export function codexEnv(opts: { home: string; codexHome: string; extra?: Record<string, string> }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !leaks(k)) env[k] = v;
  }
  Object.assign(env, {
    HOME: opts.home,
    CODEX_HOME: opts.codexHome,
    FAKE_API_KEY: FAKE_API_KEY,
    NO_COLOR: '1',
  });
  if (opts.extra) Object.assign(env, opts.extra);
  return env;
}

export type CodexRun = ProcessRun;

export type RunCodexOptions = RunProcessOptions;

/**
 * Runs `codex <args>` in its own process group. Resolves when codex has exited and its output is
 * drained; on timeout kills the whole group and rejects with the stderr and the tail of stdout.
 * Note: tool processes that codex starts with setsid are outside the group (docs/cli-facts.md X4).
 */
export async function runCodex(args: string[], opts: RunCodexOptions): Promise<CodexRun> {
  return runProcess(codexBin(), args, opts);
}

/** Items of `item.completed` events, optionally of one type. */
export function completedItems(events: any[], type?: string): any[] {
  return events
    .filter((e) => e.type === 'item.completed' && e.item && (type === undefined || e.item.type === type))
    .map((e) => e.item);
}

/** Common `codex exec` flags for a test run in `cwd` (JSON events, no git check, workspace-write sandbox). */
export function execFlags(cwd: string): string[] {
  return ['--json', '--skip-git-repo-check', '-C', cwd, '-s', 'workspace-write'];
}
