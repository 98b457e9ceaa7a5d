// The Codex CLI launcher: `codex exec --json` in the job's work tree with a private CODEX_HOME
// (the hub writes its config.toml), Overseer reached over HTTP with the agent's bearer token,
// MCP tools pre-approved (exec cannot ask), the lock hook installed with trust bypassed (or
// Codex silently skips it), no endless reconnects, the prompt on stdin. Follow-up messages
// wait for the turn to end and go in by resuming the thread. Codex's own sandbox stays on
// (`-s workspace-write` unless configured otherwise; docs/security.md says why), with the links it
// needs on PATH wherever CODEX_HOME is (sandboxHelpers.ts).
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { AgentLauncher, LaunchSpec, ParserOptions, SpawnCmd, StreamParser, TokenUsage, UsageChannel } from '../types.js';
import { agentEnv, resolveAgentBin } from '../common.js';
import { which } from '../which.js';
import { hookCommandLine } from '../claude/launcher.js';
import { newCodexParser } from './events.js';
import { priceOf, type Price } from './prices.js';
import { RolloutReader } from './rollout.js';
import { helperDir, installHelpers, nativeCodexBinary } from './sandboxHelpers.js';

export interface CodexLauncherOptions {
  bin?: string;
  packageRoot?: string;
  pathEnv?: string;
  /** Private CODEX_HOME of this hub (config.toml written by writeCodexHome). */
  codexHome: string;
  /** Default model when a job names none. */
  model?: string;
  sandbox?: 'read-only' | 'workspace-write' | 'danger-full-access';
  /** The node the sh hook falls back to (hookCommandLine). */
  nodeBin: string;
  /** hooks/overseer-hook.sh of this installation. */
  hookScript: string;
  /** Install the lock hook (lock mode not `off`). */
  hook: boolean;
  prices?: Record<string, Price>;
}

/** A TOML basic string (JSON escapes are valid TOML basic-string escapes). */
const toml = (s: string): string => JSON.stringify(s);

/** OpenAI strict json_schema wants every property required and no extra ones: optional properties become nullable. */
export function strictSchema(s: unknown): unknown {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return s;
  const o = { ...(s as Record<string, unknown>) };
  if (o.type === 'object' && o.properties && typeof o.properties === 'object') {
    const req = new Set((o.required as string[] | undefined) ?? []);
    const props: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o.properties as Record<string, unknown>)) {
      const p = strictSchema(v) as Record<string, unknown>;
      props[k] = req.has(k) || typeof p.type !== 'string' ? p : { ...p, type: [p.type, 'null'] };
    }
    o.properties = props;
    o.required = Object.keys(props);
    o.additionalProperties = false;
  }
  if (o.items) o.items = strictSchema(o.items);
  return o;
}

export class CodexLauncher implements AgentLauncher {
  readonly provider = 'codex' as const;
  readonly streamsInput = false;
  /** SIGINT ends Codex gracefully with all its descendants; SIGTERM can leave tool processes behind. */
  readonly stopSignal = 'SIGINT' as const;
  readonly sweepsDescendants = true;
  /** `codex exec` has no turn limit: the supervisor counts model calls (rollout token_count lines). */
  readonly enforcesMaxTurns = false;
  readonly binHint = 'Install the Codex CLI (npm i -g @openai/codex) or set CODEX_BIN to the path of the codex binary.';

  /** The native binary behind each launcher binary (undefined: not one we can link to). */
  private readonly natives = new Map<string, string | undefined>();

  constructor(private readonly o: CodexLauncherOptions) {}

  resolveBin(): string | undefined {
    return resolveAgentBin('codex', this.o.bin, this.o.packageRoot, this.o.pathEnv);
  }

  build(spec: LaunchSpec, bin: string): SpawnCmd {
    const model = spec.model ?? this.o.model;
    const args = ['exec', '--json', '--skip-git-repo-check', '-C', spec.cwd, '-s', spec.role?.readOnly || spec.role?.plan ? 'read-only' : this.o.sandbox ?? 'workspace-write',
      '-o', join(this.o.codexHome, 'last', `${spec.jobId}.txt`), '--disable', 'unbounded_connection_retries'];
    if (model) args.push('-m', model);
    const mcp = (k: string, v: string): void => { args.push('-c', `mcp_servers.overseer.${k}=${v}`); };
    mcp('url', toml(spec.mcpUrl));
    mcp('bearer_token_env_var', toml('OVERSEER_TOKEN'));
    mcp('default_tools_approval_mode', toml('approve'));
    mcp('tool_timeout_sec', String(Math.ceil(spec.mcpTimeoutMs / 1000)));
    mcp('startup_timeout_sec', '30');
    mcp('required', 'true');
    if (this.o.hook) {
      args.push('--dangerously-bypass-hook-trust', '-c',
        `hooks.PreToolUse=[{matcher=${toml('^(apply_patch|Bash|Edit|Write|mcp__.*)$')},hooks=[{type="command",command=${toml(hookCommandLine(this.o.nodeBin, this.o.hookScript))},timeout=15}]}]`);
    }
    if (spec.jsonSchema) args.push('--output-schema', this.schemaFile(spec.jsonSchema));
    if (spec.resume) args.push('resume', spec.sessionId);
    args.push('-'); // the prompt comes on stdin: no argv size limit, nothing in `ps`
    mkdirSync(join(this.o.codexHome, 'last'), { recursive: true });
    return {
      bin,
      args,
      cwd: spec.cwd,
      ...(spec.role?.readOnly ? { readOnlyTree: true } : {}),
      stdin: 'pipe',
      env: agentEnv(spec, { CODEX_HOME: this.o.codexHome, ...this.helperPath(bin, spec.env.PATH) }),
    };
  }

  /**
   * PATH with <CODEX_HOME>/bin first, holding the `codex-linux-sandbox` (and apply_patch) links
   * Codex refuses to make when CODEX_HOME is under the temporary directory. Linux only (elsewhere
   * Codex's sandbox needs no such name); nothing when the binary is not one we can link to.
   */
  private helperPath(bin: string, path: string | undefined): { PATH?: string } {
    if (process.platform !== 'linux') return {};
    if (!this.natives.has(bin)) this.natives.set(bin, nativeCodexBinary(bin.includes('/') ? bin : which(bin, path) ?? bin));
    const native = this.natives.get(bin);
    if (!native) return {};
    const dir = helperDir(this.o.codexHome);
    try {
      installHelpers(dir, native);
    } catch {
      return {}; // an unwritable CODEX_HOME: Codex makes its own links, or `overseer doctor` says why commands fail
    }
    return { PATH: path ? `${dir}${delimiter}${path}` : dir };
  }

  /** The schema file for --output-schema, content-addressed under CODEX_HOME. */
  private schemaFile(schema: string): string {
    const text = JSON.stringify(strictSchema(JSON.parse(schema)));
    const file = join(this.o.codexHome, 'schemas', `${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`);
    mkdirSync(join(this.o.codexHome, 'schemas'), { recursive: true });
    writeFileSync(file, text);
    return file;
  }

  userMessageLine(text: string): string {
    return text;
  }

  priceCall(model: string | undefined, tokens: TokenUsage): number | null {
    return priceOf(model ?? this.o.model, tokens, this.o.prices);
  }

  canPrice(model: string | undefined): boolean {
    return this.priceCall(model, { input: 0, output: 0 }) !== null;
  }

  /** Per-response usage from the thread's rollout file, as the turn goes. */
  usageChannel(spec: LaunchSpec): UsageChannel {
    return new RolloutReader(this.o.codexHome, { resumeThread: spec.resume ? spec.sessionId : undefined, priorUsage: spec.priorUsage, model: spec.model ?? this.o.model });
  }

  /** Codex has no system-prompt flag: a fresh thread gets the preamble ahead of the task. */
  firstInput(spec: LaunchSpec): string {
    return spec.resume ? spec.message : `${spec.appendSystemPrompt}\n\n---\n\n${spec.message}`;
  }

  newParser(opts?: ParserOptions): StreamParser {
    return newCodexParser({ ...opts, model: opts?.model ?? this.o.model, prices: this.o.prices });
  }
}

export interface CodexProviderConfig {
  id?: string;
  name?: string;
  base_url: string;
  env_key?: string;
  supports_websockets?: boolean;
  request_max_retries?: number;
  stream_max_retries?: number;
}

/** Write <codexHome>/config.toml: the default model and, when configured, a Responses provider. */
export function writeCodexHome(codexHome: string, o: { model?: string; provider?: CodexProviderConfig; modelCatalog?: string }): void {
  mkdirSync(codexHome, { recursive: true });
  const lines: string[] = ['# Written by Overseer at hub start; edits are overwritten.'];
  if (o.model) lines.push(`model = ${toml(o.model)}`);
  if (o.modelCatalog) lines.push(`model_catalog_json = ${toml(o.modelCatalog)}`);
  if (o.provider) {
    const id = o.provider.id ?? 'overseer';
    lines.push(`model_provider = ${toml(id)}`, '', `[model_providers.${id}]`,
      `name = ${toml(o.provider.name ?? id)}`, `base_url = ${toml(o.provider.base_url)}`, 'wire_api = "responses"',
      `supports_websockets = ${o.provider.supports_websockets ? 'true' : 'false'}`,
      `request_max_retries = ${o.provider.request_max_retries ?? 2}`, `stream_max_retries = ${o.provider.stream_max_retries ?? 2}`);
    if (o.provider.env_key) lines.push(`env_key = ${toml(o.provider.env_key)}`);
  }
  writeFileSync(join(codexHome, 'config.toml'), `${lines.join('\n')}\n`);
}
