// The limiter of one provider account, as a circuit breaker: closed (attempts start freely),
// open (a limit answer came: nothing new starts until `until`), half_open (`until` passed: ONE
// attempt may go as the probe; its first model answer closes the breaker, another limit answer
// opens it again for longer). Pure: time, randomness and the settings come in as arguments and
// every function returns a new state, so a fake clock drives it in tests (docs/limits.md).

import type { LimitKind } from '../domain/limitKind.js';

/** What kind of answer opened the breaker (src/domain/limitKind.ts). */
export type { LimitKind };

/** How `until` was decided: the server's retry-after, its stated reset time, or our backoff. */
export type WaitBasis = 'retry_after' | 'reset' | 'backoff';

export type Phase = 'closed' | 'open' | 'half_open';

/** One limit answer, as far as the child's events showed it. */
export interface LimitHit {
  kind: LimitKind;
  /** HTTP status, when shown (429, 529). */
  status?: number;
  /** The wait the server (or the CLI reading its retry-after) asked for, from now. */
  retryAfterMs?: number;
  /** When the server said the limit resets (ms since the epoch). */
  resetAt?: number;
  /** The provider's words, for the floor. */
  message: string;
}

export interface BreakerState {
  phase: Phase;
  /** Openings in a row without a success between them (1 at the first; +1 per failed probe): the backoff's exponent. */
  failures: number;
  kind: LimitKind | null;
  status: number | null;
  reason: string | null;
  /** When this episode began (kept across failed probes), null when closed. */
  openedAt: number | null;
  /** open: when the probe may go. */
  until: number | null;
  basis: WaitBasis | null;
  /** half_open: the one attempt probing, and since when. Not persisted: a restarted hub has none in flight. */
  probe: { id: string; since: number } | null;
  /** Limit answers seen in this episode. */
  hits: number;
}

export interface BreakerSettings {
  /** First backoff (no retry-after, no reset time); doubles per failed probe. */
  backoffBaseMs: number;
  /** Longest backoff, jitter included. */
  backoffCapMs: number;
  /** A probe that gave no verdict for this long lets another one go. */
  probeLeaseMs: number;
}

export const DEFAULT_SETTINGS: BreakerSettings = { backoffBaseMs: 1000, backoffCapMs: 300_000, probeLeaseMs: 120_000 };

export const CLOSED: BreakerState = Object.freeze({
  phase: 'closed', failures: 0, kind: null, status: null, reason: null, openedAt: null, until: null, basis: null, probe: null, hits: 0,
}) as BreakerState;

/**
 * Exponential backoff with jitter, capped: the n-th opening in a row waits between half and all
 * of min(cap, base·2^(n-1)) ("equal jitter": never zero, never past the cap). `rand` in [0, 1).
 */
export function backoffMs(failures: number, s: BreakerSettings, rand: number): number {
  const full = Math.min(s.backoffCapMs, s.backoffBaseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  return Math.round(full / 2 + (full / 2) * Math.min(Math.max(rand, 0), 1));
}

/** The wait a hit asks for: its reset time, else its retry-after, else our backoff for the n-th opening. */
export function waitFor(hit: LimitHit, failures: number, now: number, s: BreakerSettings, rand: number): { until: number; basis: WaitBasis } {
  if (hit.resetAt !== undefined && hit.resetAt > now) return { until: hit.resetAt, basis: 'reset' };
  if (hit.retryAfterMs !== undefined && hit.retryAfterMs > 0) return { until: now + hit.retryAfterMs, basis: 'retry_after' };
  return { until: now + backoffMs(failures, s, rand), basis: 'backoff' };
}

/** The phase at `now`: an open breaker whose time has come is half_open. */
export function phaseAt(b: BreakerState, now: number): Phase {
  return b.phase === 'open' && b.until !== null && b.until <= now ? 'half_open' : b.phase;
}

/** `b` with its phase brought to `now` (open → half_open once `until` passed). */
export function settle(b: BreakerState, now: number): BreakerState {
  return phaseAt(b, now) === b.phase ? b : { ...b, phase: 'half_open', probe: null };
}

const REASON_MAX = 300;

/**
 * A limit answer came. Closed: open for the hit's wait. Open: a straggler (a child that ran into
 * the same wall): the wait only ever grows, the backoff does not (six children hitting at once
 * are one opening). Half open: the probe failed: open again, the backoff one step longer.
 */
export function onLimit(b0: BreakerState, hit: LimitHit, now: number, s: BreakerSettings, rand: number): BreakerState {
  const b = settle(b0, now);
  const reason = hit.message.replace(/\s+/g, ' ').trim().slice(0, REASON_MAX) || null;
  const said = { kind: hit.kind, status: hit.status ?? null, reason };
  if (b.phase === 'open') {
    const w = waitFor(hit, b.failures, now, s, rand);
    const later = b.until === null || w.until > b.until;
    return { ...b, ...(later ? { ...said, until: w.until, basis: w.basis } : {}), hits: b.hits + 1 };
  }
  const failures = b.phase === 'closed' ? 1 : b.failures + 1;
  const w = waitFor(hit, failures, now, s, rand);
  return { ...b, ...said, phase: 'open', failures, openedAt: b.openedAt ?? now, until: w.until, basis: w.basis, probe: null, hits: b.hits + 1 };
}

export type Admission = 'go' | 'probe' | 'wait';

/**
 * May attempt `id` start now? Closed: go. Open: wait. Half open: the first asker becomes the
 * probe; everyone else waits until it answers (or its lease runs out, or it ends without a verdict).
 */
export function admit(b0: BreakerState, id: string, now: number, s: BreakerSettings): { state: BreakerState; admission: Admission } {
  const b = settle(b0, now);
  if (b.phase === 'closed') return { state: b, admission: 'go' };
  if (b.phase === 'open') return { state: b, admission: 'wait' };
  if (b.probe && b.probe.id !== id && now - b.probe.since < s.probeLeaseMs) return { state: b, admission: 'wait' };
  return { state: { ...b, probe: { id, since: now } }, admission: 'probe' };
}

/** How many attempts may start now: all, one (the probe's place is free), or none. */
export function room(b0: BreakerState, now: number, s: BreakerSettings): 'all' | 'one' | 'none' {
  const b = settle(b0, now);
  if (b.phase === 'closed') return 'all';
  if (b.phase === 'open') return 'none';
  return b.probe && now - b.probe.since < s.probeLeaseMs ? 'none' : 'one';
}

/** A model answered (any attempt of this account): in half_open the limit has passed, close. */
export function onSuccess(b0: BreakerState, now: number): BreakerState {
  const b = settle(b0, now);
  return b.phase === 'half_open' ? CLOSED : b;
}

/** Attempt `id` ended or stopped without a verdict: if it was the probe, another may go. */
export function onProbeGone(b: BreakerState, id: string): BreakerState {
  return b.probe?.id === id ? { ...b, probe: null } : b;
}

/** When the breaker next changes by itself (open → half_open; a probe's lease running out), or null. */
export function nextWake(b: BreakerState, s: BreakerSettings): number | null {
  if (b.phase === 'open') return b.until;
  if (b.phase === 'half_open' && b.probe) return b.probe.since + s.probeLeaseMs;
  return null;
}
