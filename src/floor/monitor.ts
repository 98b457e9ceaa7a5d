// The hub's health monitor and watchdog. It hears every line a child prints (activity) and every
// Overseer tool call a child is inside (not idleness), and on a timer:
//  - raises and clears warnings (src/floor/health.ts decides which), records them in
//    job_warnings with an event, puts them on the bus (wait_for_agents' attention, the floor,
//    notifications), and applies the configured reaction once per warning;
//  - persists each job's last activity (jobs.last_event_at / last_activity) for views without a hub;
//  - settles a child whose process vanished without an exit event (the watchdog).
import type { HubContext } from '../services/context.js';
import type { HealthConfig } from '../config.js';
import { WARNING_KINDS, type WarningKind, type WarningRow } from '../store/warnings.js';
import { clearWarning, openWarnings, raiseWarning, setWarningReaction } from '../store/sql/warnings.js';
import { assessHealth, commandsFailed, lostProcess, OUTCOME_WARNINGS, type HealthFacts } from './health.js';
import type { CommandTally } from '../launch/types.js';
import { pidAlive } from '../launch/process.js';
import { batch } from '../store/sql/tx.js';
import { addEvent, jobsByStatus, lastAttempt } from '../store/sql/jobs.js';

/** What the monitor needs of the job engine (the live children, the messages and JobService; src/hub.ts passes them). */
export interface MonitorActions {
  /** pid, frozen time and attempt start of a supervised child, if one runs for the job. */
  live(jobId: string): { pid?: number; frozenMs: number; startedAt: number } | undefined;
  /** Settle a supervised child whose process is gone (the watchdog). */
  settleLost(jobId: string, why: string): void;
  message(jobId: string, text: string): void;
  freeze(jobId: string): Promise<void>;
  cancel(jobId: string, reason: string): Promise<void>;
}

/** The kinds the timer raises and clears for running jobs. */
const LIVE_KINDS = WARNING_KINDS.filter((k) => !OUTCOME_WARNINGS.has(k));

/** A lost process is settled this long after it was first seen gone. */
export const LOST_GRACE_MS = 1500;

export class HealthMonitor {
  /** The commands_failed writes, one after another in the order the results came. */
  private commandWrites: Promise<void> = Promise.resolve();
  private readonly lastEvent = new Map<string, number>();
  private readonly lastLine = new Map<string, string>();
  private readonly persisted = new Map<string, number>();
  private readonly calls = new Map<string, number>();
  private readonly callEnded = new Map<string, number>();
  private readonly goneSince = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private ticking = false;

  constructor(private readonly ctx: HubContext, private readonly actions: MonitorActions) {
  }

  private get cfg(): HealthConfig { return this.ctx.config.health; }

  start(): void {
    this.timer ??= setInterval(() => { void this.tick(); }, this.cfg.checkMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The child printed something (`line`: what it did, when it says). */
  activity(jobId: string, line?: string): void {
    this.lastEvent.set(jobId, this.ctx.clock.now());
    if (line) this.lastLine.set(jobId, line.slice(0, 300));
  }

  /** A child entered one of Overseer's tools; call the result when the call ends. */
  callStarted(jobId: string): () => void {
    this.calls.set(jobId, (this.calls.get(jobId) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      // A count of 0 stays until the job is forgotten: a Map emptied by delete reallocates its
      // table, on every call of a child that calls one tool at a time.
      this.calls.set(jobId, Math.max(0, (this.calls.get(jobId) ?? 1) - 1));
      this.callEnded.set(jobId, this.ctx.clock.now());
    };
  }

  /**
   * A shell command of the job's current attempt ended (`t`: the attempt's commands so far):
   * commands_failed is raised or cleared at once, not at the next tick, since the job may end first.
   */
  commands(jobId: string, t: CommandTally): void {
    const now = this.ctx.clock.now();
    const detail = commandsFailed(t);
    this.commandWrites = this.commandWrites.then(async () => {
      if (detail === undefined) {
        if (await clearWarning(this.ctx.sql.db, jobId, 'commands_failed', now)) this.ctx.bus.emit('warning', { jobId, kind: 'commands_failed', raised: false });
        return;
      }
      const row = await raiseWarning(this.ctx.sql.db, jobId, 'commands_failed', detail, now);
      // Its reaction (a message, a freeze, a cancel) runs on its own: the next result's write does not wait for it.
      if (row) this.onRaised(row).catch((err: unknown) => this.ctx.log.warn({ err, jobId }, 'health reaction failed'));
    }).catch((err: unknown) => this.ctx.log.warn({ err, jobId }, 'commands_failed warning not written'));
  }

  /** One pass: persist activity, settle lost processes, raise and clear warnings. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.ctx.clock.now();
      const q = this.ctx.sql.db;
      const live = await jobsByStatus(q, 'running', 'needs_input');
      const liveIds = new Set(live.map((j) => j.id));
      await this.persistActivity(live.map((j) => j.id));
      for (const j of live) await this.watchdog(j.id, now);
      // The open warnings, read once: the pass raises only what is not open and clears only what is
      // (one statement a tick, not one per kind per live job: each is a round trip on PostgreSQL).
      // Only a pass raises and clears the live kinds (one at a time per hub); one that another hub's
      // pass opened after this read is cleared, if it should be, at the next tick.
      const open = await openWarnings(q);
      const isOpen = new Set(open.map((w) => `${w.job_id}\n${w.kind}`));
      const raised: WarningRow[] = [];
      for (const j of live) {
        const sup = this.actions.live(j.id);
        // The supervisor knows its attempt's start; the attempts table only for a job it does not run.
        const attemptStart = sup?.startedAt ?? (await lastAttempt(q, j.id))?.started_at ?? null;
        const facts: HealthFacts = {
          status: j.status, turns: j.turns, maxTurns: j.max_turns, costUsd: j.cost_usd, budgetUsd: j.budget_usd,
          startedAt: j.started_at, attemptStartedAt: attemptStart,
          timeoutS: j.timeout_s ?? this.ctx.config.defaultTimeoutS, frozenMs: sup?.frozenMs ?? 0,
          lastEventAt: this.lastEvent.get(j.id) ?? j.last_event_at, inOverseerCall: (this.calls.get(j.id) ?? 0) > 0,
          lastCallEndedAt: this.callEnded.get(j.id) ?? null,
        };
        const want = assessHealth(facts, this.cfg, now);
        for (const kind of LIVE_KINDS) {
          const detail = want[kind];
          const wasOpen = isOpen.has(`${j.id}\n${kind}`);
          if (detail !== undefined) {
            if (wasOpen) continue; // raising an open warning again is a no-op
            const row = await raiseWarning(q, j.id, kind, detail, now);
            if (row) raised.push(row);
          } else if (wasOpen && await clearWarning(q, j.id, kind, now)) {
            this.ctx.bus.emit('warning', { jobId: j.id, kind, raised: false });
          }
        }
      }
      // Jobs that left running (ended, frozen, queued for a retry) keep no warnings about how they
      // run; those about the work they did (commands_failed) stay.
      for (const w of open) {
        if (liveIds.has(w.job_id) || OUTCOME_WARNINGS.has(w.kind)) continue;
        if (await clearWarning(q, w.job_id, w.kind, now)) this.ctx.bus.emit('warning', { jobId: w.job_id, kind: w.kind, raised: false });
      }
      for (const id of new Set([...this.lastEvent.keys(), ...this.calls.keys()])) if (!liveIds.has(id) && !this.actions.live(id)) this.forget(id);
      for (const w of raised) await this.onRaised(w);
    } catch (err) {
      this.ctx.log.warn({ err }, 'health monitor pass failed');
    } finally {
      this.ticking = false;
    }
  }

  private forget(id: string): void {
    this.lastEvent.delete(id);
    this.lastLine.delete(id);
    this.persisted.delete(id);
    this.callEnded.delete(id);
    this.goneSince.delete(id);
    if (!this.calls.get(id)) this.calls.delete(id); // a call still running keeps its count
  }

  /** The children's last activity, batched in one transaction per tick. */
  private async persistActivity(ids: string[]): Promise<void> {
    const due = ids.filter((id) => { const at = this.lastEvent.get(id); return at !== undefined && this.persisted.get(id) !== at; });
    if (!due.length) return;
    const q = this.ctx.sql.db;
    const at = new Map(due.map((id) => [id, this.lastEvent.get(id)!]));
    await batch(q, due.map((id) => {
      const line = this.lastLine.get(id);
      return q.updateTable('jobs').set((eb) => ({ last_event_at: at.get(id)!, last_activity: line === undefined ? eb.ref('last_activity') : line })).where('id', '=', id);
    }));
    const changed: string[] = [];
    for (const id of due) {
      this.persisted.set(id, at.get(id)!);
      changed.push(id);
    }
    for (const id of changed) this.ctx.bus.emit('progress', { jobId: id });
  }

  /** A supervised child whose pid is gone while its exit never arrived (e.g. a descendant holds the pipe). */
  private async watchdog(jobId: string, now: number): Promise<void> {
    const sup = this.actions.live(jobId);
    if (!sup?.pid) return;
    const verdict = lostProcess({ pidAlive: pidAlive(sup.pid), settled: false, goneSince: this.goneSince.get(jobId) ?? null, now, graceMs: LOST_GRACE_MS });
    if (verdict === 'ok') { this.goneSince.delete(jobId); return; }
    if (verdict === 'watch') { if (!this.goneSince.has(jobId)) this.goneSince.set(jobId, now); return; }
    this.goneSince.delete(jobId);
    this.ctx.log.warn({ jobId, pid: sup.pid }, 'watchdog: the child process is gone but its exit never arrived; settling it');
    await addEvent(this.ctx.sql.db, jobId, now, 'process_lost', { pid: sup.pid });
    this.actions.settleLost(jobId, `process ${sup.pid} vanished without an exit event`);
  }

  private async onRaised(w: WarningRow): Promise<void> {
    const now = this.ctx.clock.now();
    const reaction = this.cfg.reactions[w.kind] ?? 'notify';
    await addEvent(this.ctx.sql.db, w.job_id, now, 'warning', { kind: w.kind, detail: w.detail, reaction });
    await setWarningReaction(this.ctx.sql.db, w.id, reaction);
    this.ctx.log.info({ jobId: w.job_id, kind: w.kind, detail: w.detail, reaction }, 'health warning');
    this.ctx.bus.emit('warning', { jobId: w.job_id, kind: w.kind, raised: true });
    try {
      if (reaction === 'message') this.actions.message(w.job_id, nudgeText(this.cfg.nudge, w.kind, w.detail));
      else if (reaction === 'freeze') await this.actions.freeze(w.job_id);
      else if (reaction === 'cancel') await this.actions.cancel(w.job_id, `health warning ${w.kind}: ${w.detail}`);
    } catch (err) {
      this.ctx.log.warn({ err, jobId: w.job_id, reaction }, 'health reaction failed');
      await addEvent(this.ctx.sql.db, w.job_id, now, 'warning_reaction_failed', { kind: w.kind, reaction, error: (err as Error).message });
    }
  }
}

export function nudgeText(template: string, kind: WarningKind, detail: string): string {
  return template.replaceAll('{warning}', kind).replaceAll('{detail}', detail);
}
