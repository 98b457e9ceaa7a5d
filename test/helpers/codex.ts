// Harness for running the real `codex` CLI (devDependency) in tests, against the fake OpenAI
// Responses API: a private CODEX_HOME with a custom provider, a clean environment, a fresh HOME,
// its own process group, killed at the end. See docs/codex-notes.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fakeModelCatalog } from '../../src/testing/fakeOpenAI.js';

export { makeTempDir } from './claude.js';

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

export interface CodexRun {
  code: number | null;
  signal: string | null;
  /** stdout lines that parsed as JSON, in order */
  events: any[];
  /** the whole stdout, JSON lines included */
  stdout: string;
  stderr: string;
  durationMs: number;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* ESRCH: the group is already gone */
  }
}

export interface RunCodexOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** written to stdin, then stdin is closed; without it stdin is /dev/null ('ignore') */
  stdin?: string;
  /** called with each parsed JSONL event as it arrives (e.g. to signal the child mid-run) */
  onEvent?: (ev: any, child: ChildProcess) => void;
  /** called once right after spawn */
  onSpawn?: (child: ChildProcess) => void;
}

/**
 * Runs `codex <args>` in its own process group. Resolves when codex has exited and its output is
 * drained; on timeout kills the whole group and rejects with the stderr and the tail of stdout.
 * Note: tool processes that codex starts with setsid are outside the group (codex-interface.md §5).
 */
export async function runCodex(args: string[], opts: RunCodexOptions): Promise<CodexRun> {
  const started = Date.now();
  const child = spawn(codexBin(), args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  let stdout = '';
  let stderr = '';
  let partial = '';
  const events: any[] = [];
  const takeLine = (line: string): void => {
    const t = line.trim();
    if (!t.startsWith('{')) return;
    let ev: any;
    try {
      ev = JSON.parse(t);
    } catch {
      return; /* not JSON: kept in stdout only */
    }
    events.push(ev);
    opts.onEvent?.(ev, child);
  };
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (d: string) => {
    stdout += d;
    partial += d;
    let nl: number;
    while ((nl = partial.indexOf('\n')) >= 0) {
      takeLine(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
    }
  });
  child.stderr!.on('data', (d: string) => {
    stderr += d;
  });

  let exited = false;
  try {
    return await new Promise<CodexRun>((resolve, reject) => {
      let code: number | null = null;
      let signal: string | null = null;
      const timer = setTimeout(() => {
        killGroup(pid, 'SIGKILL');
        reject(
          new Error(
            `codex timed out after ${opts.timeoutMs} ms (args: ${args.join(' ')})\n` +
              `--- stderr ---\n${stderr.slice(-4000)}\n--- stdout (tail) ---\n${stdout.slice(-4000)}`,
          ),
        );
      }, opts.timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`could not run ${codexBin()}: ${e.message}`));
      });
      child.on('exit', (c, s) => {
        exited = true;
        code = c;
        signal = s;
        // Leftovers in the group (the native binary, MCP servers, tools) could hold the pipes open.
        killGroup(pid, 'SIGKILL');
      });
      child.on('close', () => {
        clearTimeout(timer);
        if (partial) takeLine(partial);
        resolve({ code, signal, events, stdout, stderr, durationMs: Date.now() - started });
      });
      opts.onSpawn?.(child);
      if (opts.stdin !== undefined && child.stdin) {
        child.stdin.on('error', () => {
          /* EPIPE if codex exits early: reported through the exit code */
        });
        child.stdin.end(opts.stdin);
      }
    });
  } finally {
    if (!exited) killGroup(pid, 'SIGKILL');
  }
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
