// Which health warnings a running job deserves right now. Pure: the monitor (src/floor/monitor.ts)
// gathers the facts and raises or clears what this returns.
//   stalled       no output from the child for `stalledS`, not counting time the child spent
//                 inside Overseer's own blocking tools (waits, lock waits, approvals)
//   turns_high    turns ≥ highFraction × max_turns
//   budget_high   cost ≥ highFraction × budget_usd
//   time_high     this attempt's running time ≥ highFraction × its timeout
//   long_running  the job has run for `longRunningS` (0: never)
// and, judged on what the child did rather than on how it runs (commandsFailed):
//   commands_failed  it ran ≥ 1 shell command and not one of them started (the sandbox or the
//                    launcher failed first); kept after the job ends
import type { HealthConfig } from '../config.js';
import type { CommandTally } from '../launch/types.js';
import type { WarningKind } from '../store/warnings.js';

export interface HealthFacts {
  status: string;
  turns: number;
  maxTurns: number | null;
  costUsd: number;
  budgetUsd: number | null;
  /** The job's first start (long_running). */
  startedAt: number | null;
  /** The current attempt's start and its timeout (time_high). */
  attemptStartedAt: number | null;
  timeoutS: number;
  /** Time the attempt spent frozen (SIGSTOP): it does not count toward the timeout. */
  frozenMs?: number;
  /** The child's last output. */
  lastEventAt: number | null;
  /** Inside an Overseer tool call right now (it waits on us, it is not idle). */
  inOverseerCall: boolean;
  /** When its last Overseer tool call ended (the idle clock starts again there). */
  lastCallEndedAt: number | null;
}

export type Assessment = Partial<Record<WarningKind, string>>;

/** Only a running child can stall or run high; every other status has no warnings. */
const LIVE = new Set(['running', 'needs_input']);

const dur = (ms: number): string => {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${(s / 3600).toFixed(1)}h`;
};

/** Since when the child has been idle (null: not idle now). */
export function idleSince(f: HealthFacts): number | null {
  if (!LIVE.has(f.status) || f.status === 'needs_input' || f.inOverseerCall) return null;
  const marks = [f.lastEventAt, f.lastCallEndedAt, f.attemptStartedAt].filter((v): v is number => v !== null);
  return marks.length ? Math.max(...marks) : null;
}

export function assessHealth(f: HealthFacts, cfg: HealthConfig, now: number): Assessment {
  const out: Assessment = {};
  if (!LIVE.has(f.status)) return out;
  const idle = idleSince(f);
  if (idle !== null && now - idle >= cfg.stalledS * 1000) {
    out.stalled = `no output for ${dur(now - idle)} (threshold ${dur(cfg.stalledS * 1000)})`;
  }
  const k = cfg.highFraction;
  const pct = (a: number, b: number): string => `${Math.round((a / b) * 100)}%`;
  if (f.maxTurns && f.turns >= k * f.maxTurns) out.turns_high = `${f.turns} of max_turns ${f.maxTurns} (${pct(f.turns, f.maxTurns)})`;
  if (f.budgetUsd && f.costUsd >= k * f.budgetUsd) out.budget_high = `$${f.costUsd.toFixed(4)} of budget_usd $${f.budgetUsd} (${pct(f.costUsd, f.budgetUsd)})`;
  if (f.attemptStartedAt !== null && f.timeoutS > 0) {
    const ran = now - f.attemptStartedAt - (f.frozenMs ?? 0);
    if (ran >= k * f.timeoutS * 1000) out.time_high = `running ${dur(ran)} of timeout_s ${f.timeoutS} (${pct(ran, f.timeoutS * 1000)})`;
  }
  if (cfg.longRunningS > 0 && f.startedAt !== null && now - f.startedAt >= cfg.longRunningS * 1000) {
    out.long_running = `running for ${dur(now - f.startedAt)} (threshold ${dur(cfg.longRunningS * 1000)})`;
  }
  return out;
}

/** Kinds about the work a child did, not about how it runs now: raised and cleared as its
 * commands end (not by the timer), and kept when the job ends, since its result rests on them. */
export const OUTCOME_WARNINGS: ReadonlySet<WarningKind> = new Set(['commands_failed']);

/**
 * commands_failed: the attempt ran at least one shell command and none of them started — each
 * one's output is the sandbox's or the launcher's error (src/launch/codex/commands.ts), not the
 * command's. One command that ran (whatever its exit code) clears it: the rule is about commands
 * that cannot run here at all, not about commands that fail.
 */
export function commandsFailed(t: CommandTally): string | undefined {
  if (t.run === 0 || t.failedToStart < t.run) return undefined;
  return `none of its shell commands started, so none of them ran: ${t.reason ?? 'no reason given'} (overseer doctor, check "codex shell", says why)`;
}

/** Is a process that vanished without an exit event overdue for settling? (the watchdog) */
export function lostProcess(o: { pidAlive: boolean; settled: boolean; goneSince: number | null; now: number; graceMs: number }): 'ok' | 'watch' | 'settle' {
  if (o.settled || o.pidAlive) return 'ok';
  if (o.goneSince === null || o.now - o.goneSince < o.graceMs) return 'watch';
  return 'settle';
}
