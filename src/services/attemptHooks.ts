// What one attempt's supervisor tells the hub, and what the hub does with it: the job's row and
// events, spending, the start gate's status line, the search index, the health monitor, the
// provider limiter, the lock guard and the hook_bypassed backstop. The Runner builds one per
// attempt (Runner.launch); the Supervisor calls it (src/services/supervisor.ts, SupervisorHooks).
// The supervisor's calls are synchronous; their writes go through the asynchronous layer one after
// another in the order they came (`write`), and the Runner waits for them (`written`) before it
// ends the attempt, so the end is always the last thing written.
import type { HubContext } from './context.js';
import type { JobRow } from '../store/jobs.js';
import { addEvent, attemptUpdate, jobUpdate, updateWithEvent } from '../store/sql/jobs.js';
import { batch } from '../store/sql/tx.js';
import { frameMessage } from './messages.js';
import { markDelivered, takeUndelivered, untake } from '../store/sql/messages.js';
import { recordAttemptSpend } from '../money/record.js';
import type { Progress, SupervisorHooks } from './supervisor.js';
import type { ToolOutcome } from '../confine/hookLedger.js';
import type { CommandTally } from '../launch/types.js';
import type { LineLimit } from '../limits/signals.js';
import type { MessageRow } from '../store/jobs.js';
import type { LockGuard } from '../confine/lockGuard.js';
import type { HookLedger } from '../confine/hookLedger.js';
import type { Limits } from '../limits/service.js';

/** What an attempt's hooks need of its supervisor (it is built with them, so it comes later). */
export interface AttemptChild {
  deliver(text: string): boolean;
  stop(reason: 'hook_bypassed'): void;
}

export interface AttemptFacts {
  job: JobRow;
  attempt: number;
  sessionId: string;
  /** Messages framed into the first message: delivered once the child runs. */
  pending: MessageRow[];
  codex: boolean;
}

/** Hears every transcript line as it is written, and each attempt's end (the search index, src/search). */
export interface TranscriptSink {
  line(jobId: string, attempt: number, line: string): void;
  /** Resolves when the attempt's last lines are written (the end is reported after); never rejects. */
  attemptEnded(jobId: string, attempt: number): void | Promise<void>;
}

/** Hears the children's activity and shell commands (the health monitor, src/floor/monitor.ts). */
export interface ActivitySink {
  activity(jobId: string, line?: string): void;
  commands(jobId: string, tally: CommandTally): void;
}

export interface AttemptDeps {
  transcripts: TranscriptSink;
  activity: ActivitySink;
  lockGuard: Pick<LockGuard, 'toolsStarted' | 'toolsEnded'>;
  hookLedger: Pick<HookLedger, 'unguarded'>;
  limits: Limits;
}

export class AttemptHooks implements SupervisorHooks {
  /** Between the start gate's "wait" and its slot (a stop while waiting clears the status line). */
  waitingSlot = false;
  private child?: AttemptChild;
  /** The writes asked for so far, one after another. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: HubContext, private readonly a: AttemptFacts, private readonly d: AttemptDeps) {}

  /** The supervisor these hooks serve; set by the Runner right after building it. */
  attach(child: AttemptChild): void {
    this.child = child;
  }

  private get jobId(): string {
    return this.a.job.id;
  }

  /** Queue a write after the ones before it; a failure is logged (the attempt goes on). */
  private write(what: string, fn: () => Promise<void>): void {
    this.chain = this.chain.then(fn).catch((err: unknown) => this.ctx.log.error({ err, jobId: this.jobId, attempt: this.a.attempt }, `writing an attempt's ${what} failed`));
  }

  /** Every write asked for so far is done. */
  written(): Promise<void> {
    return this.chain;
  }

  onStarted(pid: number | undefined): void {
    const { ctx, a } = this;
    const now = ctx.clock.now();
    const q = ctx.sql.db;
    this.write('start', () => batch(q, [jobUpdate(q, a.job.id, { pid: pid ?? null, resume_message: null, session_id: a.sessionId }, now), attemptUpdate(q, a.job.id, a.attempt, { pid: pid ?? null })]));
    // The first message carried `pending`; messages stored since the launch read them (while the
    // start waited for its slot, or in the moment between that read and the child's start) go into
    // the conversation now, taken by a conditional update: a `deliver` that finds the child running
    // meanwhile takes the same way (MessageService.pushPending), and each message goes in once.
    this.write('messages', async () => {
      await markDelivered(q, a.pending.map((m) => m.id), now);
      const taken = await takeUndelivered(q, a.job.id, now);
      await untake(q, taken.filter((m) => !this.child!.deliver(frameMessage(m.from_id, m.text))).map((m) => m.id));
    });
  }

  onSession(sid: string): void {
    const now = this.ctx.clock.now();
    const q = this.ctx.sql.db;
    this.write('session', () => batch(q, [attemptUpdate(q, this.jobId, this.a.attempt, { session_id: sid }), jobUpdate(q, this.jobId, { session_id: sid }, now)]));
  }

  onProgress(p: Progress): void {
    const now = this.ctx.clock.now();
    this.write('spending', async () => {
      await recordAttemptSpend(this.ctx.sql.db, this.jobId, this.a.attempt, p, now);
      this.ctx.bus.emit('progress', { jobId: this.jobId });
    });
  }

  onActivity(what?: string): void {
    this.d.activity.activity(this.jobId, what);
  }

  onCommands(tally: CommandTally): void {
    this.d.activity.commands(this.jobId, tally);
  }

  onStartWait(ahead: number): void {
    this.waitingSlot = true;
    this.startEvent(`waiting for a start slot (${ahead} start${ahead === 1 ? '' : 's'} ahead)`, 'start_wait', { attempt: this.a.attempt, ahead });
  }

  onStartSlot(waitedMs: number): void {
    this.waitingSlot = false;
    this.startEvent(null, 'start_slot', { attempt: this.a.attempt, waited_ms: waitedMs });
  }

  private startEvent(statusMessage: string | null, kind: 'start_wait' | 'start_slot', data: Record<string, unknown>): void {
    const { ctx } = this;
    const now = ctx.clock.now();
    this.write(kind, async () => {
      await updateWithEvent(ctx.sql.db, this.jobId, { status_message: statusMessage }, now, kind, data);
      ctx.bus.emit('progress', { jobId: this.jobId });
    });
  }

  onTranscriptLine(line: string): void {
    this.d.transcripts.line(this.jobId, this.a.attempt, line);
  }

  onLimit(l: LineLimit): void {
    this.d.limits.limitSeen(this.a.job.provider, this.jobId, l.hit, l.retrying);
  }

  onModelAnswer(): void {
    this.d.limits.answered(this.a.job.provider, this.jobId);
  }

  onToolUses(ids: string[]): void {
    this.d.lockGuard.toolsStarted(this.jobId, ids);
  }

  onToolResults(results: ToolOutcome[]): void {
    const { ctx } = this;
    this.d.lockGuard.toolsEnded(this.jobId, results.map((r) => ({ tool: r.name, toolUseId: r.toolUseId, text: r.text })), this.a.codex);
    const bad = this.d.hookLedger.unguarded(this.jobId, results);
    if (bad.length === 0) return;
    const now = ctx.clock.now();
    this.write('hook_bypassed event', () => addEvent(ctx.sql.db, this.jobId, now, 'hook_bypassed', { calls: bad.map((b) => ({ tool: b.name, tool_use_id: b.toolUseId })) }));
    ctx.log.warn({ jobId: this.jobId, calls: bad.map((b) => b.name) }, 'a tool call ran without a hook decision: stopping the agent');
    this.child!.stop('hook_bypassed');
  }
}
