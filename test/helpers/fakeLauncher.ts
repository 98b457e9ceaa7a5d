// A ProcessLauncher that starts no process: each "child" reads its first stdin line (the
// stream-json user message), asks a script what to do with it, and answers on stdout the way
// `claude -p --input-format stream-json --output-format stream-json --replay-user-messages`
// does — system/init with the overseer MCP server connected, the replay of the message, then a
// `result` event (with `structured_output` for --json-schema runs). It can write files and
// commit them in the child's cwd first, hang until signalled, fail like an API error, or exit
// with a code. Engine tests run in milliseconds per phase; every SpawnCmd is recorded.
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { ChildHandle, ExitInfo, ProcessLauncher, SpawnCmd } from '../../src/launch/types.js';

const execFileP = promisify(execFile);

/** What one turn of a scripted child does. */
export interface ScriptedTurn {
  /** `structured_output` of the result (the --json-schema answer). */
  structured?: unknown;
  /** The result is an error (`is_error: true`). */
  isError?: boolean;
  /** `api_error_status` of the result (429 → rate_limited, 500 → api_error…). */
  apiErrorStatus?: number;
  /** `result` text; default "done" (or "API Error: <status>" for an API error). */
  resultText?: string;
  /** Files (relative to cmd.cwd, or absolute) written before the result. */
  writeFiles?: Record<string, string>;
  /** `git add -A && git commit --allow-empty -m <message>` in cmd.cwd before the result. */
  gitCommit?: string;
  /** `total_cost_usd` of the result (what the turn cost); default 0. */
  costUsd?: number;
  /** Exit code once the child ends; default 0 (1 after an error result). */
  exitCode?: number;
  /** Print no result and never exit by itself: only a signal ends it. */
  hang?: boolean;
  /** Exit right after the result, without waiting for stdin to close. */
  exitWithoutStdinClose?: boolean;
}

export type TurnScript = (prompt: string, cmd: SpawnCmd) => ScriptedTurn | Promise<ScriptedTurn>;

/** The value of `--flag value` in argv, if present. */
export function argValue(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

/** One launched child: its command, the messages it got, what it printed, how it ended. */
export class FakeChild implements ChildHandle {
  readonly pid = undefined;
  readonly messages: string[] = [];
  /** The first user message (the prompt), once it was written to stdin. */
  prompt?: string;
  readonly stdoutLines: string[] = [];
  readonly exited: Promise<ExitInfo>;
  exitInfo?: ExitInfo;
  private resolveExit!: (e: ExitInfo) => void;
  private readonly outCbs: ((c: Buffer) => void)[] = [];
  private readonly errCbs: ((c: Buffer) => void)[] = [];
  private stdinIsOpen: boolean;
  private inBuf = '';
  private readonly pending: string[] = [];
  private busy = false;
  private frozen?: { resume: Promise<void>; release: () => void };
  private stdinClosed: Promise<void>;
  private markStdinClosed!: () => void;
  private readonly sessionId: string;

  constructor(readonly cmd: SpawnCmd, private readonly script: TurnScript, private readonly onPrompt: (c: FakeChild) => void = () => undefined) {
    this.exited = new Promise((r) => { this.resolveExit = r; });
    this.stdinClosed = new Promise((r) => { this.markStdinClosed = r; });
    this.stdinIsOpen = cmd.stdin === 'pipe';
    if (!this.stdinIsOpen) this.markStdinClosed();
    this.sessionId = argValue(cmd.args, '--session-id') ?? argValue(cmd.args, '--resume') ?? 'fake-session';
  }

  get ended(): boolean { return this.exitInfo !== undefined; }

  onStdout(cb: (chunk: Buffer) => void): void { this.outCbs.push(cb); }
  onStderr(cb: (chunk: Buffer) => void): void { this.errCbs.push(cb); }

  write(data: string): boolean {
    if (!this.stdinIsOpen || this.ended) return false;
    this.inBuf += data;
    let nl: number;
    while ((nl = this.inBuf.indexOf('\n')) >= 0) {
      const line = this.inBuf.slice(0, nl);
      this.inBuf = this.inBuf.slice(nl + 1);
      if (!line.trim()) continue;
      this.pending.push(line);
      if (this.prompt === undefined) {
        this.prompt = messageText(line);
        this.onPrompt(this);
      }
    }
    this.pump();
    return true;
  }

  closeStdin(): void {
    if (!this.stdinIsOpen) return;
    this.stdinIsOpen = false;
    this.markStdinClosed();
  }

  stdinOpen(): boolean { return this.stdinIsOpen && !this.ended; }

  signalGroup(signal: NodeJS.Signals): boolean {
    if (this.ended) return false;
    if (signal === 'SIGSTOP') {
      if (!this.frozen) {
        let release!: () => void;
        const resume = new Promise<void>((r) => { release = r; });
        this.frozen = { resume, release };
      }
      return true;
    }
    if (signal === 'SIGCONT') {
      const f = this.frozen;
      this.frozen = undefined;
      f?.release();
      return true;
    }
    // SIGTERM, SIGKILL, SIGINT…: the process dies of the signal (asynchronously, like a real one).
    setImmediate(() => this.exit({ code: null, signal }));
    return true;
  }

  /** Turns are taken one at a time, in the order the lines arrived (first line: the prompt). */
  private pump(): void {
    if (this.busy || this.ended) return;
    const line = this.pending.shift();
    if (line === undefined) return;
    this.busy = true;
    // Asynchronous, as from a real process: the caller has registered its listeners by then.
    setImmediate(() => {
      void this.turn(line).catch((err: unknown) => {
        this.emitErr(`fake child failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
        this.exit({ code: 1, signal: null });
      }).finally(() => {
        this.busy = false;
        this.pump();
      });
    });
  }

  private async turn(line: string): Promise<void> {
    const text = messageText(line);
    const first = this.messages.length === 0;
    this.messages.push(text);
    if (first) {
      this.emit({
        type: 'system', subtype: 'init', session_id: this.sessionId, cwd: this.cmd.cwd, model: argValue(this.cmd.args, '--model') ?? 'fake-model',
        tools: ['Bash', 'Edit', 'Read', 'Write'], mcp_servers: [{ name: 'overseer', status: 'connected' }],
      });
    }
    this.emit({ type: 'user', message: { role: 'user', content: text }, session_id: this.sessionId, isReplay: true });
    const t = await this.script(text, this.cmd);
    await this.frozen?.resume;
    if (this.ended) return;
    if (t.hang) return; // never answers; busy stays true until a signal ends it
    for (const [rel, content] of Object.entries(t.writeFiles ?? {})) {
      const file = rel.startsWith('/') ? rel : join(this.cmd.cwd, rel);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
    }
    if (t.gitCommit !== undefined) {
      await execFileP('git', ['add', '-A'], { cwd: this.cmd.cwd });
      await execFileP('git', ['-c', 'user.name=Fake Child', '-c', 'user.email=fake@child', 'commit', '-q', '--no-verify', '--allow-empty', '-m', t.gitCommit], { cwd: this.cmd.cwd });
    }
    if (this.ended) return;
    const isError = t.isError === true || t.apiErrorStatus !== undefined;
    this.emit({
      type: 'result',
      subtype: isError && t.apiErrorStatus === undefined ? 'error_during_execution' : 'success',
      is_error: isError,
      result: t.resultText ?? (t.apiErrorStatus !== undefined ? `API Error: ${t.apiErrorStatus} scripted` : 'done'),
      ...(t.structured !== undefined ? { structured_output: t.structured } : {}),
      ...(t.apiErrorStatus !== undefined ? { api_error_status: t.apiErrorStatus, terminal_reason: 'api_error' } : { api_error_status: null }),
      session_id: this.sessionId,
      num_turns: 1,
      total_cost_usd: t.costUsd ?? 0,
      duration_ms: 1,
    });
    const code = t.exitCode ?? (isError ? 1 : 0);
    // Like claude in stream-json input mode: done when stdin closes and nothing is left to answer.
    if (!t.exitWithoutStdinClose) await this.stdinClosed;
    if (this.pending.length === 0 && !this.ended) setImmediate(() => this.exit({ code, signal: null }));
  }

  private emit(event: Record<string, unknown>): void {
    if (this.ended) return;
    const line = JSON.stringify(event);
    this.stdoutLines.push(line);
    const buf = Buffer.from(`${line}\n`);
    for (const cb of this.outCbs) cb(buf);
  }

  private emitErr(s: string): void {
    const buf = Buffer.from(s);
    for (const cb of this.errCbs) cb(buf);
  }

  private exit(e: ExitInfo): void {
    if (this.ended) return;
    this.exitInfo = e;
    this.stdinIsOpen = false;
    this.markStdinClosed();
    this.frozen?.release();
    this.resolveExit(e);
  }
}

function messageText(line: string): string {
  try {
    const m = JSON.parse(line) as { message?: { content?: unknown } };
    const c = m.message?.content;
    if (typeof c === 'string') return c;
    if (Array.isArray(c)) return c.map((b: { text?: unknown }) => (typeof b?.text === 'string' ? b.text : '')).join('\n');
    return '';
  } catch {
    return line;
  }
}

/** The launcher: `new ScriptedLauncher((prompt, cmd) => ({ structured: {…} }))`. */
export class ScriptedLauncher implements ProcessLauncher {
  /** Every command launched, in order. */
  readonly spawned: SpawnCmd[] = [];
  readonly children: FakeChild[] = [];
  private readonly waiters: { pred: (c: FakeChild) => boolean; resolve: (c: FakeChild) => void }[] = [];

  constructor(public script: TurnScript) {}

  launch(cmd: SpawnCmd): ChildHandle {
    this.spawned.push(cmd);
    const child = new FakeChild(cmd, (p, c) => this.script(p, c), (c) => this.notify(c));
    this.children.push(child);
    return child;
  }

  private notify(child: FakeChild): void {
    for (const w of [...this.waiters]) {
      if (w.pred(child)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(child);
      }
    }
  }

  /** Resolves with the first child (already started or started later) that matches; `prompt`
   * is set by the time `pred` sees a child. */
  launched(pred: (c: FakeChild) => boolean = () => true, timeoutMs = 30_000): Promise<FakeChild> {
    const have = this.children.find((c) => c.prompt !== undefined && pred(c));
    if (have) return Promise.resolve(have);
    return new Promise((resolve, reject) => {
      const w = {
        pred,
        resolve: (c: FakeChild) => { clearTimeout(t); resolve(c); },
      };
      const t = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`no matching child launched within ${timeoutMs} ms (${this.children.length} launched)`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }
}
