// The timing of schedules (docs/schedules.md), pure: no I/O, `now` passed in. Checks
// spawn_agent's at / every_s / cron / max_runs / until before anything is created, and computes
// when the next occurrence of a series runs. Cron expressions are standard 5-field ones
// (minute hour day-of-month month day-of-week), evaluated by croner in the hub's local time zone
// (TZ) unless a zone is passed.
import { Cron } from 'croner';
import { InvalidInputError } from '../errors.js';
import { MAX_EVERY_S, MAX_RUNS, MIN_EVERY_S } from '../contract/agents.js';

// The limits are part of spawn_agent's contract (src/contract/agents.ts).
export { MAX_EVERY_S, MAX_RUNS, MIN_EVERY_S };

/** spawn_agent's schedule fields, as they come in (validated for shape by zod). */
export interface ScheduleFields {
  at?: string;
  every_s?: number;
  cron?: string;
  max_runs?: number;
  until?: string;
}

export type Repeat = { kind: 'once' } | { kind: 'every'; everyS: number } | { kind: 'cron'; cron: string };

/** A checked schedule: when its first occurrence runs, how it repeats and when it stops. */
export interface SchedulePlan {
  repeat: Repeat;
  /** When the first occurrence may start (ms). */
  firstAt: number;
  /** No occurrence starts after this (ms, inclusive); null: no end. */
  untilAt: number | null;
  /** How many occurrences in all; null: no cap. */
  maxRuns: number | null;
}

/** What comes after an occurrence that succeeded: the next run, or why the series is over. */
export type NextStep = { at: number } | { end: string };

const ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** An ISO 8601 time with a zone (`Z` or an offset), as ms; undefined when it is not one. */
export function parseZonedTime(s: string): number | undefined {
  if (!ZONED.test(s.trim())) return undefined;
  const ms = Date.parse(s.trim());
  return Number.isFinite(ms) ? ms : undefined;
}

/** Does the input ask for a schedule at all? */
export function hasSchedule(f: ScheduleFields): boolean {
  return f.at !== undefined || f.every_s !== undefined || f.cron !== undefined || f.max_runs !== undefined || f.until !== undefined;
}

function cronOf(expr: string, tz?: string): Cron {
  return new Cron(expr, { paused: true, mode: '5-part', ...(tz ? { timezone: tz } : {}) });
}

/** Why a cron expression cannot be used (does not parse, or never fires), or undefined. */
export function cronProblem(expr: string, now: number, tz?: string): string | undefined {
  let c: Cron;
  try {
    c = cronOf(expr, tz);
  } catch (err) {
    return `cron ${JSON.stringify(expr)} is not a 5-field cron expression (minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5" = 09:00 on weekdays, "*/30 * * * *" = every 30 minutes): ${(err as Error).message.replace(/^CronPattern:\s*/, '')}`;
  }
  if (c.nextRun(new Date(now)) === null) {
    return `cron ${JSON.stringify(expr)} never fires: no date matches it (e.g. the 30th of February). Fix its day-of-month and month fields.`;
  }
  return undefined;
}

/** The first time strictly after `after` that the cron expression fires (ms), or null if it never does again. */
export function nextCronRun(expr: string, after: number, tz?: string): number | null {
  const d = cronOf(expr, tz).nextRun(new Date(after));
  return d ? d.getTime() : null;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Check the schedule fields against each other and the clock, and plan the series; undefined
 * when none is given. Throws InvalidInputError saying what is wrong and how to fix it.
 * Without `at` the first run is now (every_s) or the cron expression's next time (cron).
 */
export function planSchedule(f: ScheduleFields, now: number, tz?: string): SchedulePlan | undefined {
  if (!hasSchedule(f)) return undefined;
  if (f.every_s !== undefined && f.cron !== undefined) {
    throw new InvalidInputError('every_s and cron were both given: a schedule repeats either every N seconds or on a cron expression. Pass one of them.');
  }
  const repeats = f.every_s !== undefined || f.cron !== undefined;
  if (!repeats && f.max_runs !== undefined) {
    throw new InvalidInputError('max_runs caps how often a repeating schedule runs, and nothing repeats here: add every_s or cron, or omit max_runs.');
  }
  if (!repeats && f.until !== undefined) {
    throw new InvalidInputError('until ends a repeating schedule, and nothing repeats here: add every_s or cron, or omit until (at alone runs the job once).');
  }
  if (f.every_s !== undefined && (!Number.isInteger(f.every_s) || f.every_s < MIN_EVERY_S || f.every_s > MAX_EVERY_S)) {
    throw new InvalidInputError(`every_s ${f.every_s} is out of range: a whole number of seconds from ${MIN_EVERY_S} to ${MAX_EVERY_S} (a year). For rarer runs use cron.`);
  }
  let at: number | undefined;
  if (f.at !== undefined) {
    at = parseZonedTime(f.at);
    if (at === undefined) throw new InvalidInputError(`at ${JSON.stringify(f.at)} is not an ISO 8601 time with a zone: write it like "2030-01-31T09:00:00Z" or "2030-01-31T10:00:00+01:00".`);
    if (at <= now) throw new InvalidInputError(`at ${f.at} is in the past (it is ${iso(now)} now): pass a future time, or omit at to start now.`);
  }
  let untilAt: number | null = null;
  if (f.until !== undefined) {
    const u = parseZonedTime(f.until);
    if (u === undefined) throw new InvalidInputError(`until ${JSON.stringify(f.until)} is not an ISO 8601 time with a zone: write it like "2030-01-31T18:00:00Z".`);
    untilAt = u;
  }
  let repeat: Repeat;
  let firstAt: number;
  if (f.cron !== undefined) {
    const problem = cronProblem(f.cron, now, tz);
    if (problem) throw new InvalidInputError(problem);
    repeat = { kind: 'cron', cron: f.cron };
    firstAt = at ?? nextCronRun(f.cron, now, tz)!;
  } else if (f.every_s !== undefined) {
    repeat = { kind: 'every', everyS: f.every_s };
    firstAt = at ?? now;
  } else {
    repeat = { kind: 'once' };
    firstAt = at!;
  }
  if (untilAt !== null && untilAt <= firstAt) {
    throw new InvalidInputError(`until ${f.until} is not after the first run (${iso(firstAt)}): nothing would run. Pass a later until, or an earlier at.`);
  }
  if (f.max_runs !== undefined && (!Number.isInteger(f.max_runs) || f.max_runs < 1 || f.max_runs > MAX_RUNS)) {
    throw new InvalidInputError(`max_runs ${f.max_runs} is out of range: a whole number from 1 to ${MAX_RUNS}.`);
  }
  return { repeat, firstAt, untilAt, maxRuns: f.max_runs ?? null };
}

/**
 * After occurrence number `runs` succeeded at `now`: when the next one runs, or why the series
 * ends. Missed times are not made up: an every_s series runs next at the first time of its grid
 * (firstAt + k·every_s) after now, a cron series at the expression's first time after now, so a
 * run that took longer than the interval, or a hub that was down, yields one run, not a burst.
 */
export function nextOccurrence(p: SchedulePlan, runs: number, now: number, tz?: string): NextStep {
  if (p.repeat.kind === 'once') return { end: 'it runs once (at without every_s or cron)' };
  if (p.maxRuns !== null && runs >= p.maxRuns) return { end: `max_runs reached (${p.maxRuns} run${p.maxRuns === 1 ? '' : 's'})` };
  let at: number;
  if (p.repeat.kind === 'every') {
    const every = p.repeat.everyS * 1000;
    const k = now < p.firstAt ? 0 : Math.floor((now - p.firstAt) / every) + 1;
    at = p.firstAt + k * every;
  } else {
    const next = nextCronRun(p.repeat.cron, now, tz);
    if (next === null) return { end: `the cron expression ${JSON.stringify(p.repeat.cron)} fires no more` };
    at = next;
  }
  if (p.untilAt !== null && at > p.untilAt) return { end: `until reached (${iso(p.untilAt)}); the next run would have been ${iso(at)}` };
  return { at };
}

/** One line describing how a series repeats, e.g. "every 3600 s", "cron 0 9 * * 1-5", "once". */
export function describeRepeat(r: Repeat): string {
  return r.kind === 'once' ? 'once' : r.kind === 'every' ? `every ${r.everyS} s` : `cron ${r.cron}`;
}
