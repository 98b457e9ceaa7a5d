// The launcher seam. `SpawnCmd` is plain data; `ProcessLauncher` turns it into a running
// child in its own process group. `AgentLauncher` is one per provider (claude now, codex
// later): it builds the command and parses the provider's event stream into `AgentSignal`s
// the supervisor understands.

export interface SpawnCmd {
  bin: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** 'pipe' keeps stdin open for stream-json input; 'ignore' is /dev/null. */
  stdin: 'pipe' | 'ignore';
  /** Its role writes nothing (src/roles): a confined child gets its work tree (cwd) mounted read-only. */
  readOnlyTree?: boolean;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** Set when the process could not be started at all (ENOENT, EACCES…). */
  spawnError?: { code?: string; message: string };
}

export interface ChildHandle {
  readonly pid: number | undefined;
  onStdout(cb: (chunk: Buffer) => void): void;
  onStderr(cb: (chunk: Buffer) => void): void;
  /** Write to stdin; false when stdin is closed or was never a pipe. */
  write(data: string): boolean;
  closeStdin(): void;
  stdinOpen(): boolean;
  /** Signal the whole process group; false when it no longer exists. */
  signalGroup(signal: NodeJS.Signals): boolean;
  /** Resolves once the process has exited and its stdout/stderr are drained. */
  readonly exited: Promise<ExitInfo>;
}

export interface ProcessLauncher {
  launch(cmd: SpawnCmd): ChildHandle;
}

/** Token counts (per invocation, or a thread's running total). */
export interface TokenUsage {
  input: number;
  output: number;
  /** Cache reads (Claude: on top of input; Codex: the cached part of input). */
  cachedInput?: number;
  /** Cache writes (Claude's cache_creation_input_tokens, on top of input). */
  cacheCreation?: number;
}

/** The shell commands of one attempt so far: how many ended, how many never started, and why the last of those did not. */
export interface CommandTally {
  run: number;
  failedToStart: number;
  reason?: string;
}

/** What a provider's event stream means to the supervisor. */
export type AgentSignal =
  | { kind: 'init'; sessionId?: string; mcpConnected: boolean; mcpStatus: string }
  | { kind: 'turn'; messageId?: string; text?: string; model?: string; usage?: TokenUsage; toolUses?: { id: string; name: string; detail?: string }[];
      /** Tool calls that ended with this item (Codex: a finished command or patch; it has no separate result event). */
      ended?: { toolUseId: string; name: string; /** What it printed (a command's output), when the stream says. */ text?: string }[] }
  /** Results of tool calls (Claude: a user message of tool_result blocks). */
  | { kind: 'tool_results'; results: { toolUseId: string; isError: boolean; text: string }[] }
  /** One model call's usage as it grows (Claude's partial-message events; Codex's rollout file, where
   * `total` is the thread's running total after it). `transient`: not worth keeping in the transcript. */
  | { kind: 'usage'; callId: string; model?: string; usage: TokenUsage; total?: TokenUsage; transient?: boolean }
  /** A shell command of the child ended, and whether it ran at all (Codex's rollout file, src/launch/codex/commands.ts). */
  | { kind: 'command'; callId: string; started: boolean; exitCode: number | null; reason?: string }
  /** The child took a user message we wrote to its stdin (Claude's replay of it). */
  | { kind: 'consumed'; text: string }
  | {
      kind: 'result';
      isError: boolean;
      /** Money spent by this invocation; null when it cannot be known (unpriced model); undefined when not reported. */
      costUsd: number | null | undefined;
      numTurns?: number;
      sessionId?: string;
      text?: string;
      /** Tokens of this invocation, when the provider reports them. */
      tokens?: TokenUsage;
      /** The thread's running total after this turn (Codex reports cumulative usage). */
      threadUsage?: TokenUsage;
      /** The structured result of a run with a JSON schema. */
      structured?: unknown;
      /** A Claude-shaped result object for the failure classifier. */
      raw: unknown;
    }
  /** `transient`: a partial-message event, not kept in the transcript. */
  | { kind: 'noise'; transient?: boolean };

export interface ParserOptions {
  /** The thread's usage before this invocation (resumed Codex threads report running totals). */
  priorUsage?: TokenUsage;
  /** The model, for pricing. */
  model?: string;
  /** The run asked for structured output. */
  structured?: boolean;
}

export interface StreamParser {
  /** Parse one line of the child's stdout. Never throws. */
  line(line: string): AgentSignal | { kind: 'unparsed'; reason: string };
}

export interface LaunchSpec {
  jobId: string;
  /** First user message (fresh start) or the continuation message (resume). */
  message: string;
  cwd: string;
  model?: string;
  maxTurns?: number;
  budgetUsd?: number;
  sessionId: string;
  resume: boolean;
  mcpUrl: string;
  token: string;
  appendSystemPrompt: string;
  env: NodeJS.ProcessEnv;
  /** Per-server MCP tool timeout (ms) for the child: above the hub's longest wait. */
  mcpTimeoutMs: number;
  /** `--settings` JSON (hooks), when a hook is installed. */
  settings?: string;
  /** Structured output schema (workflows). */
  jsonSchema?: string;
  /** The thread's usage before this invocation (for resumed Codex threads). */
  priorUsage?: TokenUsage;
  /** What the agent's role allows (src/roles), as the CLI can be told it: `plan` = Claude Code's
   * plan mode; `readOnly` = Codex's read-only sandbox; `disallowedTools` = tools it never gets;
   * `tools` = the only built-in tools it has (Claude Code's --tools). */
  role?: { plan?: boolean; readOnly?: boolean; disallowedTools?: readonly string[]; tools?: readonly string[] };
}

export interface AgentLauncher {
  readonly provider: 'claude' | 'codex';
  /** The binary to run, or undefined when none can be found. */
  resolveBin(): string | undefined;
  /** How to tell the user to point at the binary. */
  readonly binHint: string;
  build(spec: LaunchSpec, bin: string): SpawnCmd;
  newParser(opts?: ParserOptions): StreamParser;
  /** Whether follow-up user messages can be written to stdin while it runs (Claude's stream-json);
   * otherwise stdin carries the prompt once and is closed, and messages wait for a resume. */
  readonly streamsInput: boolean;
  /** What goes on stdin for a user message. */
  userMessageLine(text: string): string;
  /** The first message of an attempt, when the provider needs more than spec.message (Codex has
   * no system-prompt flag, so a fresh thread gets the preamble in front of the task). */
  firstInput?(spec: LaunchSpec): string;
  /** The signal that ends the child gracefully (then SIGKILL after the grace period). */
  readonly stopSignal: NodeJS.Signals;
  /** Its tools can escape the process group (setsid): sweep by environment after every attempt. */
  readonly sweepsDescendants: boolean;
  /** The child stops itself at max_turns (Claude's --max-turns); otherwise the supervisor counts model calls and stops it. */
  readonly enforcesMaxTurns?: boolean;
  /** Price of one model call, for the live estimate (null: unknown price). */
  priceCall?(model: string | undefined, tokens: TokenUsage): number | null;
  /** Whether spending on this model can be priced, so a budget can be enforced. */
  canPrice?(model: string | undefined): boolean;
  /** Usage that arrives beside stdout (Codex's rollout file), read while the child runs and at its end. */
  usageChannel?(spec: LaunchSpec): UsageChannel;
}

export interface UsageChannel {
  /** The session / thread id, once the stream names it. */
  setSession(id: string): void;
  /** Model calls recorded since the last read. */
  read(): AgentSignal[];
}
