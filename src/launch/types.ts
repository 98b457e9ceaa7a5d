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

/** What a provider's event stream means to the supervisor. */
export type AgentSignal =
  | { kind: 'init'; sessionId?: string; mcpConnected: boolean; mcpStatus: string }
  | { kind: 'turn'; messageId?: string; text?: string }
  /** The child took a user message we wrote to its stdin (Claude's replay of it). */
  | { kind: 'consumed'; text: string }
  | { kind: 'result'; isError: boolean; costUsd: number; numTurns?: number; sessionId?: string; text?: string; raw: unknown }
  | { kind: 'noise' };

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
}

export interface AgentLauncher {
  readonly provider: 'claude' | 'codex';
  /** The binary to run, or undefined when none can be found. */
  resolveBin(): string | undefined;
  /** How to tell the user to point at the binary. */
  readonly binHint: string;
  build(spec: LaunchSpec, bin: string): SpawnCmd;
  newParser(): StreamParser;
  /** Whether follow-up user messages can be written to stdin while it runs. */
  readonly streamsInput: boolean;
  /** One stdin line carrying a user message. */
  userMessageLine(text: string): string;
}
