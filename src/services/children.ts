// The live children: one Supervisor per running attempt, by job id. The Runner adds and removes
// them; everything else that must reach a running child goes through here instead of through the
// Runner, so the services that only talk to children (messages, budgets, the limiter's pauses, the
// health monitor's watchdog) are built before the Runner and need nothing of it.
import type { HubContext } from './context.js';
import type { Supervisor } from './supervisor.js';
import type { Provider } from '../limits/account.js';
import { updateWithEvent } from '../store/sql/jobs.js';
import { isActive } from '../domain/job.js';
import { frameMessage } from './messages.js';
import { markDelivered, undelivered } from '../store/sql/messages.js';

type ChildrenContext = Pick<HubContext, 'sql' | 'bus' | 'clock' | 'log'>;

export class LiveChildren {
  private readonly sups = new Map<string, Supervisor>();
  /** Why a running job was stopped for a budget other than its own (src/money/budgets.ts): its error. */
  private readonly budgetStops = new Map<string, string>();
  /** The limiter's pause and thaw writes, one after another in the order they were made. */
  private writes: Promise<void> = Promise.resolve();
  /**
   * The status of each active job as its `job` events said (every status write emits one), for
   * the limiter's pause and thaw, which are synchronous decisions of its own (src/limits/service.ts
   * keeps its paused lists in memory between awaits, so its actions answer at once). On one hub this
   * is the row's status as soon as its event is out: the status of a job whose child runs here is
   * written by this hub. With many hubs (docs/store-plan.md step 9), a status another hub writes
   * (the lead's pause through it) must reach this map through that hub's `job` events.
   */
  private readonly statuses = new Map<string, string>();

  constructor(private readonly ctx: ChildrenContext) {
    ctx.bus.on('job', (e) => {
      if (isActive(e.status as never)) this.statuses.set(e.jobId, e.status);
      else this.statuses.delete(e.jobId);
      return undefined;
    });
  }

  get(jobId: string): Supervisor | undefined {
    return this.sups.get(jobId);
  }

  has(jobId: string): boolean {
    return this.sups.has(jobId);
  }

  all(): Supervisor[] {
    return [...this.sups.values()];
  }

  /** The Runner: an attempt's child started (add) or its attempt is over (remove). */
  add(jobId: string, sup: Supervisor): void {
    this.sups.set(jobId, sup);
  }

  remove(jobId: string): void {
    this.sups.delete(jobId);
  }

  /** Push text into the running conversation of a job; false when it has none that takes input now (src/services/messages.ts). */
  push(jobId: string, text: string): boolean {
    const sup = this.sups.get(jobId);
    return !!sup && sup.acceptsInput() && sup.deliver(text);
  }

  /** Messages stored for a job while it could not take them: into its conversation now. */
  async flushQueued(jobId: string): Promise<void> {
    if (!this.sups.has(jobId)) return;
    const q = this.ctx.sql.db;
    const queued = await undelivered(q, jobId);
    // The child is looked up after the read: one that ended meanwhile takes nothing, and its
    // messages stay undelivered for its next launch.
    const sup = this.sups.get(jobId);
    if (!sup) return;
    const sent = queued.filter((m) => sup.acceptsInput() && sup.deliver(frameMessage(m.from_id, m.text)));
    await markDelivered(q, sent.map((m) => m.id), this.ctx.clock.now());
  }

  /** The job's child opened its MCP session to the hub: its start slot goes to the next start. */
  startReleased(jobId: string): void {
    this.sups.get(jobId)?.startReleased();
  }

  /** The supervised child of a job, for the health monitor: pid, time frozen, attempt start. */
  live(jobId: string): { pid?: number; frozenMs: number; startedAt: number } | undefined {
    const sup = this.sups.get(jobId);
    return sup ? { pid: sup.pid, frozenMs: sup.frozenMs(), startedAt: sup.attemptStartedAt } : undefined;
  }

  /** The watchdog saw the job's process vanish without an exit event: settle the attempt. */
  settleLost(jobId: string): void {
    this.sups.get(jobId)?.settleLost();
  }

  /** Stop a running job because a budget it counts against is spent: failure_class `budget`, `error` as its error. False without a process to stop. */
  stopForBudget(jobId: string, error: string): boolean {
    const sup = this.sups.get(jobId);
    if (!sup || sup.ended) return false;
    this.budgetStops.set(jobId, error);
    sup.stop('budget');
    return true;
  }

  /** The error a budget stop gave the job's attempt (once: the Runner takes it when the attempt ends). */
  takeBudgetStop(jobId: string): string | undefined {
    const e = this.budgetStops.get(jobId);
    this.budgetStops.delete(jobId);
    return e;
  }

  /**
   * The limiter pauses a running child that met the provider's limit, during the wait its CLI
   * makes before asking again: frozen (SIGSTOP), so its next model call goes out only when the
   * limiter thaws it (as the probe, or when the limit has passed). Its work so far stays as it is.
   */
  pauseAtLimit(jobId: string, provider: Provider): boolean {
    const { ctx } = this;
    const sup = this.sups.get(jobId);
    if (!sup || this.statuses.get(jobId) !== 'running' || !sup.freeze()) return false;
    const now = ctx.clock.now();
    this.write(jobId, async () => {
      await updateWithEvent(ctx.sql.db, jobId, { status: 'frozen', status_message: `paused at ${provider}'s limit: goes on when it has passed` }, now, 'limit_paused', { provider });
      ctx.bus.emit('job', { jobId, status: 'frozen' });
    });
    return true;
  }

  /** Thaw a child the limiter paused; false when it is not frozen any more (the lead resumed it, it ended). */
  unpauseAtLimit(jobId: string): boolean {
    const { ctx } = this;
    const sup = this.sups.get(jobId);
    if (!sup || this.statuses.get(jobId) !== 'frozen' || !sup.thaw()) return false;
    const now = ctx.clock.now();
    this.write(jobId, async () => {
      await updateWithEvent(ctx.sql.db, jobId, { status: 'running', status_message: null }, now, 'limit_resumed');
      // Messages that came while it was frozen go into the conversation now.
      await this.flushQueued(jobId);
      ctx.bus.emit('job', { jobId, status: 'running' });
    });
    return true;
  }

  /** The child changed already (frozen or thawed); its row follows, in order. */
  private write(jobId: string, fn: () => Promise<void>): void {
    this.writes = this.writes.then(fn).catch((err: unknown) => this.ctx.log.error({ err, jobId }, 'writing a limit pause failed'));
  }
}
