// Supervises one attempt of one job: launches the provider's process, tees its stdout to
// the raw transcript, turns the event stream into job state (session, turns, cost, status),
// delivers follow-up messages through stdin, enforces timeout and budget, and reports one
// outcome when the process is gone. The first termination reason wins.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../log.js';
import type { Clock } from '../clock.js';
import type { AgentLauncher, AgentSignal, ChildHandle, CommandTally, ExitInfo, LaunchSpec, ProcessLauncher, StreamParser, TokenUsage, UsageChannel } from '../launch/types.js';
import { sweepAgentProcesses } from '../launch/sweep.js';
import { LineSplitter } from '../launch/lineSplitter.js';
import { classifyAttempt, type AttemptFacts, type Classification, type StopReason } from '../domain/failure.js';
import { StderrLog } from '../launch/stderrLog.js';
import { UsageMeter } from '../money/meter.js';
import type { ToolOutcome } from '../confine/hookLedger.js';
import { Throttle } from '../money/throttle.js';
import type { StartGate, StartTicket } from '../launch/startGate.js';
import { limitOfLine, type LineLimit } from '../limits/signals.js';

export interface AttemptOutcome extends Classification {
  exit: ExitInfo;
  costUsd: number;
  /** Some invocation's cost could not be known (unpriced model): costUsd is a lower bound. */
  costUnknown: boolean;
  tokens: Required<TokenUsage>;
  /** The thread's running usage after this attempt (Codex), for the next resume. */
  threadUsage?: TokenUsage;
  turns: number;
  sessionId?: string;
  sessionStarted: boolean;
  resultText?: string;
  stopReason?: StopReason;
  /** Any `result` event had is_error (for the no_error_in_output check). */
  sawErrorResult: boolean;
  /** The last result's `structured_output` (runs with --json-schema). */
  structured?: unknown;
  durationMs: number;
}

export interface Progress {
  turns: number;
  costUsd: number;
  costUnknown: boolean;
  tokens: Required<TokenUsage>;
  lastText?: string;
}

export interface SupervisorHooks {
  onStarted(pid: number | undefined): void;
  onSession(sessionId: string): void;
  /** Spending and turns so far: on each new model call (at most every PROGRESS_MS), and once more before `done`. */
  onProgress(p: Progress): void;
  /** Called once every delivered message has been answered with a result: the job's work is done. */
  onIdle?(): void;
  /** The model asked for tool calls (their ids; they run now). */
  onToolUses?(ids: string[]): void;
  /** Tool calls came back (with the tool's name when the call was seen). */
  onToolResults?(results: ToolOutcome[]): void;
  /** A shell command of this attempt ended (Codex): the attempt's commands so far. */
  onCommands?(tally: CommandTally): void;
  /** The child printed an event line; `what` says what it did when the line tells (a tool call, text). */
  onActivity?(what?: string): void;
  /** A line was written to the transcript (the search index hears it here); must not throw. */
  onTranscriptLine?(line: string): void;
  /** The start waits for a slot of the start gate, `ahead` starts before it. */
  onStartWait?(ahead: number): void;
  /** The start got its slot after waiting `waitedMs` (only called when it had to wait). */
  onStartSlot?(waitedMs: number): void;
  /** The child met a provider limit (a 429, 529 or usage limit it retries, or one that ends its turn: src/limits). */
  onLimit?(l: LineLimit): void;
  /** A model answered the child (a real answer, not the CLI's own error message): a limit has passed. */
  onModelAnswer?(): void;
}

export interface SupervisorOptions {
  launcher: AgentLauncher;
  processes: ProcessLauncher;
  clock: Clock;
  log: Logger;
  transcriptPath: string;
  /** The child's stderr (bounded) is kept here. */
  stderrPath?: string;
  timeoutMs: number;
  budgetUsd?: number;
  killGraceMs: number;
  reportedOutcome: () => 'success' | 'failure' | undefined | Promise<'success' | 'failure' | undefined>;
  /** Paces CPU-heavy starts (src/launch/startGate.ts): the process launches once it has a slot. */
  startGate?: StartGate;
}

/** One kind of signal of the child's stream. */
type Signal<K extends AgentSignal['kind']> = Extract<AgentSignal, { kind: K }>;
/** What the parser makes of a line: a signal, or why it is none. */
type Parsed = ReturnType<StreamParser['line']>;

const STDERR_TAIL = 8192;
/** Progress (a DB write) at most this often; the last one is never dropped. */
export const PROGRESS_MS = 250;
/** How often a usage side channel (Codex's rollout file) is read while the child runs. */
const CHANNEL_MS = 250;

/** One line for the floor's "last activity": the tool calls of a turn, else its text's first line. */
function activityLine(s: Signal<'turn'>): string | undefined {
  if (s.toolUses?.length) return `→ ${s.toolUses.map((t) => (t.detail ? `${t.name} ${t.detail}` : t.name)).join(', ')}`;
  const line = s.text?.split('\n').find((l) => l.trim());
  return line ? line.trim().slice(0, 200) : undefined;
}

export class Supervisor {
  private child?: ChildHandle;
  private stopReason?: StopReason;
  private meter!: UsageMeter;
  private channel?: UsageChannel;
  private channelTimer?: NodeJS.Timeout;
  private readonly throttle: Throttle;
  private threadUsage?: TokenUsage;
  private structured?: unknown;
  private launchSpec?: LaunchSpec;
  private turns = 0;
  private readonly messageIds = new Set<string>();
  /** Tool calls seen in the stream and not yet answered: id → tool name. */
  private readonly toolNames = new Map<string, string>();
  private readonly commands: CommandTally = { run: 0, failedToStart: 0 };
  private sessionId?: string;
  private sessionStarted = false;
  private lastResult?: AttemptFacts['lastResult'];
  private sawErrorResult = false;
  private lastText?: string;
  private stderr?: StderrLog;
  private stderrTail = '';
  /** Messages written to stdin that Claude has not replayed yet (see docs/claude-stream-input.md). */
  private readonly unconsumed: string[] = [];
  private transcript?: WriteStream;
  private timer?: NodeJS.Timeout;
  private killTimer?: NodeJS.Timeout;
  private deadline = 0;
  private frozenAt?: number;
  private frozenTotal = 0;
  private settled = false;
  private startedAt = 0;
  /** The start gate's ticket, while the start waits for or holds a slot. */
  private ticket?: StartTicket;
  readonly done: Promise<AttemptOutcome>;
  private resolveDone!: (o: AttemptOutcome) => void;

  constructor(private readonly o: SupervisorOptions, private readonly hooks: SupervisorHooks) {
    this.done = new Promise((r) => { this.resolveDone = r; });
    this.throttle = new Throttle(PROGRESS_MS, () => this.hooks.onProgress(this.progress()), () => this.o.clock.now());
  }

  get pid(): number | undefined { return this.child?.pid; }

  /** The process is gone and the outcome decided: stopping it now changes nothing. */
  get ended(): boolean { return this.settled; }

  /**
   * Launch the process (once the start gate, if any, gives it a slot). Outcome arrives through
   * `done`, also for a binary that is missing and for a start stopped while it waited.
   */
  start(spec: LaunchSpec): void {
    this.startedAt = this.o.clock.now();
    this.launchSpec = spec;
    this.meter = new UsageMeter((m, t) => this.o.launcher.priceCall?.(m, t) ?? null, spec.model);
    const bin = this.o.launcher.resolveBin();
    if (!bin) {
      this.finish({ code: null, signal: null, spawnError: { code: 'ENOENT', message: `no ${this.o.launcher.provider} binary found. ${this.o.launcher.binHint}` } });
      return;
    }
    this.deadline = this.startedAt + this.o.timeoutMs;
    this.armTimer();
    const gate = this.o.startGate;
    if (!gate) {
      this.launch(spec, bin);
      return;
    }
    let waited = false;
    this.ticket = gate.acquire(() => {
      if (this.settled) return;
      if (waited) this.hooks.onStartSlot?.(this.o.clock.now() - this.startedAt);
      this.launch(spec, bin);
    });
    if (!this.ticket.granted) {
      waited = true;
      const ahead = this.ticket.position();
      this.o.log.debug({ ahead }, 'waiting for a start slot');
      this.hooks.onStartWait?.(ahead);
    }
  }

  /**
   * The child connected to the hub's MCP server: its CPU-heavy start (loading the CLI) is over,
   * what is left before its first model request is mostly waiting on the handshake.
   */
  startReleased(): void {
    if (this.ticket?.granted) this.releaseSlot();
  }

  /** Free the start gate's slot (the child connected, printed its first event, or is gone); idempotent. */
  private releaseSlot(): void {
    this.ticket?.release();
    this.ticket = undefined;
  }

  private launch(spec: LaunchSpec, bin: string): void {
    mkdirSync(dirname(this.o.transcriptPath), { recursive: true });
    this.transcript = createWriteStream(this.o.transcriptPath, { flags: 'a' });
    const cmd = this.o.launcher.build(spec, bin);
    const child = this.o.processes.launch(cmd);
    this.child = child;
    if (this.o.launcher.usageChannel) {
      this.channel = this.o.launcher.usageChannel(spec);
      this.channelTimer = setInterval(() => this.drainChannel(), CHANNEL_MS);
      this.channelTimer.unref();
    }
    if (this.o.stderrPath) this.stderr = new StderrLog(this.o.stderrPath);
    const parser = this.o.launcher.newParser({ priorUsage: spec.priorUsage, model: spec.model, structured: !!spec.jsonSchema });
    const splitter = new LineSplitter((line) => {
      try {
        this.onLine(line, parser);
      } catch (err) {
        // One line's handling failing (a bug, a file system refusing) must not take the hub and
        // every other child down with it: it is logged and the stream goes on.
        this.o.log.error({ err }, 'handling a line of the child stream failed');
      }
    }, {
      onOverflow: (n) => this.o.log.warn({ bytes: n }, 'dropped an over-long line from the child stream'),
    });
    child.onStdout((c) => splitter.push(c));
    child.onStderr((c) => {
      if (this.stderr) this.stderr.write(c);
      else this.stderrTail = (this.stderrTail + c.toString('utf8')).slice(-STDERR_TAIL);
    });
    if (cmd.stdin === 'pipe') {
      const first = this.o.launcher.firstInput?.(spec) ?? spec.message;
      if (this.o.launcher.streamsInput) this.deliver(first);
      else {
        // The prompt goes on stdin once (no argv size limit), then stdin closes.
        child.write(this.o.launcher.userMessageLine(first));
        child.closeStdin();
      }
    }
    this.hooks.onStarted(child.pid);
    void child.exited.then((exit) => {
      splitter.end();
      if (exit.spawnError && exit.spawnError.code !== 'ECONFINE') exit.spawnError.message = `${exit.spawnError.message}. ${this.o.launcher.binHint}`;
      this.finish(exit);
    });
  }

  /** Time spent frozen so far (the health monitor's time_high leaves it out). */
  frozenMs(): number {
    return this.frozenTotal + (this.frozenAt === undefined ? 0 : this.o.clock.now() - this.frozenAt);
  }

  get attemptStartedAt(): number { return this.startedAt; }

  /**
   * The watchdog found the process gone while its exit never arrived (a descendant holds its
   * pipes): kill what is left of its group and its strays, and settle now if the exit still
   * does not come.
   */
  settleLost(graceMs = 1000): void {
    if (this.settled) return;
    this.child?.signalGroup('SIGKILL');
    if (this.launchSpec) sweepAgentProcesses(this.launchSpec.jobId, this.o.log);
    setTimeout(() => { if (!this.settled) this.finish({ code: null, signal: null }); }, graceMs).unref();
  }

  /** Write a user message into the running conversation; false if stdin is closed. */
  deliver(text: string): boolean {
    if (!this.child || !this.o.launcher.streamsInput || this.frozenAt !== undefined) return false;
    const ok = this.child.write(this.o.launcher.userMessageLine(text));
    if (ok) this.unconsumed.push(text);
    return ok;
  }

  /** Can a message be written into the conversation right now? */
  acceptsInput(): boolean {
    return !!this.child && this.o.launcher.streamsInput && this.child.stdinOpen() && this.frozenAt === undefined;
  }

  /** End the process group: SIGTERM, then SIGKILL after the grace period. */
  stop(reason: StopReason): void {
    this.stopReason ??= reason;
    if (!this.child) {
      // Still waiting for a start slot: leave the queue, the attempt ends without a process.
      if (this.ticket && !this.ticket.granted) this.finish({ code: null, signal: null });
      return;
    }
    if (this.frozenAt !== undefined) this.child.signalGroup('SIGCONT');
    this.child.closeStdin();
    this.child.signalGroup(this.o.launcher.stopSignal);
    this.killTimer ??= setTimeout(() => this.child?.signalGroup('SIGKILL'), this.o.killGraceMs);
  }

  /** SIGSTOP the group; the timeout clock stops with it. */
  freeze(): boolean {
    if (!this.child || this.frozenAt !== undefined) return false;
    if (!this.child.signalGroup('SIGSTOP')) return false;
    this.frozenAt = this.o.clock.now();
    if (this.timer) clearTimeout(this.timer);
    return true;
  }

  /** SIGCONT the group and restart the timeout clock where it stopped. */
  thaw(): boolean {
    if (!this.child || this.frozenAt === undefined) return false;
    this.deadline += this.o.clock.now() - this.frozenAt;
    this.frozenTotal += this.o.clock.now() - this.frozenAt;
    this.frozenAt = undefined;
    this.child.signalGroup('SIGCONT');
    this.armTimer();
    return true;
  }

  private armTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    const ms = Math.max(0, this.deadline - this.o.clock.now());
    this.timer = setTimeout(() => this.stop('timeout'), Math.min(ms, 2 ** 31 - 1));
    this.timer.unref();
  }

  /** One line of the child's stdout: what every line does, then what its kind does. */
  private onLine(line: string, parser: StreamParser): void {
    // Each stream event is a moment the side channel may have grown (Codex writes a response's
    // usage before it reports the response's items): read it now, limits act at once.
    this.drainChannel(false);
    // Its first event: the CPU-heavy start is over, the next start may go.
    if (this.ticket) this.releaseSlot();
    const s = parser.line(line);
    this.observe(line, s);
    switch (s.kind) {
      case 'unparsed': return this.o.log.debug({ reason: s.reason, line: line.slice(0, 200) }, 'non-event line from child');
      case 'init': return this.onInit(s);
      case 'consumed': return this.onConsumed(s);
      case 'turn': return this.onTurn(s);
      case 'tool_results': return this.onToolResults(s);
      case 'usage': return this.onUsage(s);
      case 'result': return this.onResult(s);
      default: return;
    }
  }

  /** Whatever its kind: the transcript (unless transient), activity, a provider limit, a model's answer. */
  private observe(line: string, s: Parsed): void {
    if (!('transient' in s && s.transient)) {
      this.transcript?.write(`${line}\n`);
      this.hooks.onTranscriptLine?.(line);
    }
    // A turn reports its own activity, with what it did.
    if (s.kind !== 'turn') this.hooks.onActivity?.();
    const limit = this.hooks.onLimit ? limitOfLine(this.o.launcher.provider, line, this.o.clock.now()) : undefined;
    if (limit) this.hooks.onLimit!(limit);
    // Claude Code reports a request it gave up on as an assistant message of model "<synthetic>".
    if ((s.kind === 'turn' && s.messageId && s.model !== '<synthetic>') || s.kind === 'usage') this.hooks.onModelAnswer?.();
  }

  /** The session starts; without the overseer MCP server the child cannot do its job. */
  private onInit(s: Signal<'init'>): void {
    if (s.sessionId) {
      this.channel?.setSession(s.sessionId);
      this.sessionId = s.sessionId;
      this.sessionStarted = true;
      this.hooks.onSession(s.sessionId);
    }
    if (!s.mcpConnected) {
      this.o.log.warn({ status: s.mcpStatus }, 'overseer MCP server not connected in child');
      this.stop('mcp_unavailable');
    }
  }

  /** The child took messages we wrote: Claude merges messages queued together into one replay, so drop every one it contains. */
  private onConsumed(s: Signal<'consumed'>): void {
    for (let i = this.unconsumed.length - 1; i >= 0; i--) if (s.text.includes(this.unconsumed[i]!)) this.unconsumed.splice(i, 1);
  }

  /** A model message (again, for each of its content blocks): a new turn, its usage, its text and tool calls. */
  private onTurn(s: Signal<'turn'>): void {
    let changed = false;
    if (s.messageId && !this.messageIds.has(s.messageId)) {
      this.messageIds.add(s.messageId);
      this.turns++;
      changed = true;
    }
    if (s.messageId && s.usage) changed = this.meter.observe(s.messageId, s.model, s.usage) || changed;
    if (s.text) this.lastText = s.text;
    this.hooks.onActivity?.(activityLine(s));
    for (const t of s.toolUses ?? []) this.toolNames.set(t.id, t.name);
    if (s.toolUses?.length) this.hooks.onToolUses?.(s.toolUses.map((t) => t.id));
    if (s.ended?.length) this.hooks.onToolResults?.(s.ended.map((e) => ({ toolUseId: e.toolUseId, name: e.name, isError: false, text: e.text ?? '' })));
    if (changed) this.updated();
  }

  /** Tool calls came back: named after the calls seen in the stream, which are then forgotten. */
  private onToolResults(s: Signal<'tool_results'>): void {
    this.hooks.onToolResults?.(s.results.map((r) => ({ ...r, name: this.toolNames.get(r.toolUseId) })));
    for (const r of s.results) this.toolNames.delete(r.toolUseId);
  }

  /** The end of an invocation: its figures settle the estimate; then over budget, or idle when every message was answered. */
  private onResult(s: Signal<'result'>): void {
    // (The side channel was read just before this line: its calls are what the result settles.)
    this.meter.settle({ costUsd: s.costUsd, tokens: s.tokens });
    if (s.threadUsage) this.threadUsage = s.threadUsage;
    if (s.structured !== undefined) this.structured = s.structured;
    this.lastResult = s.raw as NonNullable<AttemptFacts['lastResult']>;
    if (s.isError) this.sawErrorResult = true;
    if (s.text) this.lastText = s.text;
    this.throttle.flush();
    if (this.overBudget()) {
      this.stop('budget');
      return;
    }
    // Every message we wrote was taken before this result: the work is done, close stdin
    // so the child exits. A message still unconsumed will run as a turn of its own.
    if (this.unconsumed.length === 0) {
      this.child?.closeStdin();
      this.hooks.onIdle?.();
    }
  }

  /** A model call's usage (Claude's partial messages; Codex's side channel: one per response, with the thread's total after it). */
  private onUsage(s: Signal<'usage'>): void {
    // Already covered by a turn.completed read before it: not a new call.
    if (s.total) {
      if (this.threadUsage && s.total.input + s.total.output <= this.threadUsage.input + this.threadUsage.output) return;
      this.threadUsage = s.total;
    }
    if (this.meter.observe(s.callId, s.model, s.usage)) this.updated();
  }

  private drainChannel(live = true): void {
    if (!this.channel) return;
    for (const s of this.channel.read()) this.onChannel(s);
    if (live) this.throttle.flush();
  }

  /** A model call or a shell command's end, from the side channel. */
  private onChannel(s: AgentSignal): void {
    if (s.kind === 'usage') this.onUsage(s);
    else if (s.kind === 'command') {
      this.commands.run++;
      if (!s.started) {
        this.commands.failedToStart++;
        this.commands.reason = s.reason;
      }
      this.hooks.onCommands?.({ ...this.commands });
    }
  }

  /** Spending or turns changed: report (throttled) and enforce the limits the child does not enforce itself. */
  private updated(): void {
    this.throttle.poke();
    if (this.stopReason) return;
    if (this.overBudget()) this.stop('budget');
    else if (!this.o.launcher.enforcesMaxTurns && this.launchSpec?.maxTurns !== undefined && this.meter.snapshot().calls > this.launchSpec.maxTurns) this.stop('max_turns');
  }

  private overBudget(): boolean {
    return this.o.budgetUsd !== undefined && this.meter.snapshot().costUsd > this.o.budgetUsd;
  }

  private progress(): Progress {
    const u = this.meter.snapshot();
    return { turns: Math.max(this.turns, this.channel ? u.calls : 0), costUsd: u.costUsd, costUnknown: u.costUnknown, tokens: u.tokens, lastText: this.lastText };
  }

  private finish(exit: ExitInfo): void {
    if (this.settled) return;
    this.settled = true;
    this.releaseSlot();
    if (this.timer) clearTimeout(this.timer);
    if (this.killTimer) clearTimeout(this.killTimer);
    if (this.channelTimer) clearInterval(this.channelTimer);
    // What the last calls cost is never lost: read the side channel once more, report once more.
    if (this.channel) for (const s of this.channel.read()) this.onChannel(s);
    this.stderr?.close();
    // Sweep whatever the child left in its group (its own MCP servers, tool processes), and
    // descendants that escaped the group with setsid (Codex runs tools in their own session):
    // they still carry the agent's OVERSEER_AGENT_ID.
    this.child?.signalGroup('SIGKILL');
    // Only where it can matter (it reads /proc: ~ms), and before the outcome is reported, so a
    // retry's new processes are never mistaken for leftovers.
    if (this.launchSpec && (this.o.launcher.sweepsDescendants || this.stopReason)) sweepAgentProcesses(this.launchSpec.jobId, this.o.log);
    // The outcome is reported once the transcript is on disk: whoever reads it after the job
    // ended (`overseer logs`, the search index) sees its last line.
    const transcript = this.transcript;
    const flushed = transcript ? new Promise<void>((r) => transcript.end(() => r())) : Promise.resolve();
    const facts = {
      stopReason: this.stopReason,
      spawnError: exit.spawnError,
      exitCode: exit.code,
      signal: exit.signal,
      lastResult: this.lastResult,
      stderrTail: this.stderr ? this.stderr.text(STDERR_TAIL) : this.stderrTail,
    };
    // What the agent reported with finish() is read from the job's row (awaited): that write was
    // done before the finish call answered, so it is there once the process has exited.
    const reported = Promise.resolve().then(() => this.o.reportedOutcome()).catch((err: unknown) => {
      this.o.log.warn({ err }, 'could not read the outcome the agent reported; classifying without it');
      return undefined;
    });
    const p = this.progress();
    this.throttle.cancel();
    if (this.meter) this.hooks.onProgress(p);
    const outcome: Omit<AttemptOutcome, keyof ReturnType<typeof classifyAttempt>> = {
      exit,
      costUsd: p.costUsd,
      costUnknown: p.costUnknown,
      tokens: p.tokens,
      threadUsage: this.threadUsage,
      turns: p.turns,
      sessionId: this.sessionId,
      sessionStarted: this.sessionStarted,
      resultText: typeof this.lastResult?.result === 'string' ? this.lastResult.result : this.lastText,
      stopReason: this.stopReason,
      sawErrorResult: this.sawErrorResult,
      structured: this.structured,
      durationMs: this.o.clock.now() - this.startedAt,
    };
    void Promise.all([flushed, reported]).then(([, reportedOutcome]) => this.resolveDone({ ...classifyAttempt({ ...facts, reportedOutcome }), ...outcome } as AttemptOutcome));
  }
}
