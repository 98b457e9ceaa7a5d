// In-process event bus: the hub's services publish state changes here, blocking tools
// subscribe. Events only wake waiters; the database stays the source of truth.
// With several hubs on one PostgreSQL database (docs/store-plan.md §3.1, §3.2) the relay
// (src/services/relay.ts) sends this hub's events to the others and hands theirs to `emitRemote`.
// A subscriber hears only its own hub's events unless it asks for the others' (`remote`), and
// then it says what to do on a resync: the listening connection came back, so whatever the other
// hubs sent meanwhile is lost and it must re-read the state (docs/decisions.md "Events across hubs").
import { EventEmitter } from 'node:events';

export interface BusEvents {
  /** A job's status changed (committed to the DB before emit). */
  job: { jobId: string; status: string };
  /** A request (approval, question) was opened or answered. */
  request: { jobId: string; requestId: string };
  /** A message was stored for a recipient. */
  message: { to: string };
  /** A note was written or deleted. */
  note: { key: string; version: number };
  /** Locks changed: acquired, released, expired, or a waiter was granted. */
  lock: { holder: string };
  /** A run (dispatch or script) ended: succeeded, failed, stopped, timed_out or cancelled. */
  run: { runId: string; status: string };
  /** A running job's counters moved (turns, cost, tokens, status line, last activity): floor views refresh. */
  progress: { jobId: string };
  /** A health warning was raised or cleared (src/floor/health). */
  warning: { jobId: string; kind: string; raised: boolean };
  /** Two live worktree branches were found changing the same files (src/branches/overlapGuard.ts). */
  overlap: { jobs: [string, string]; files: string[] };
  /** A workflow's status, phase or cycle changed (committed before emit). */
  workflow: { workflowId: string; status: string; phase?: string; cycle?: number };
  /** A debate's status changed (src/debate; committed before emit). */
  debate: { debateId: string; status: string };
  /** A provider limiter changed (opened, half open, probing, closed; src/limits; committed before emit). */
  limit: { provider: string; account: string; phase: string };
  /** The crew brief was set or cleared (src/brief; committed before emit): the floor shows it. */
  brief: { version: number };
}

/** Every event's name (what another hub may send: the relay passes on only these). */
export const BUS_EVENTS = ['job', 'request', 'message', 'note', 'lock', 'run', 'progress', 'warning', 'overlap', 'workflow', 'debate', 'limit', 'brief'] as const;
// Each name of BusEvents is listed: a new event without its name here fails to compile.
type Unlisted = Exclude<keyof BusEvents, (typeof BUS_EVENTS)[number]>;
true satisfies ([Unlisted] extends [never] ? true : { unlisted: Unlisted });

/**
 * How a subscriber hears other hubs (docs/store-plan.md §3.1). Default: this hub's events only
 * (the notifier, budgets, lock release, request cancel: done once, by the origin hub).
 * - `remote: true`: this hub's events and the other hubs' (waiters, the floor, the lock mounts);
 * - `remote: 'only'`: the other hubs' only (what this hub changed itself it already knows: the limiters).
 * `resync` runs when events may have been lost (the listening connection came back): re-read the
 * state. One function given for several subscriptions runs once per resync. `null` says, on
 * purpose, that there is nothing to re-read.
 */
export type Hearing = { remote?: false } | { remote: true | 'only'; resync: (() => unknown) | null };

/** Sees each event this hub emits, after its subscribers were told (the relay, src/services/relay.ts). */
export type Tap = <K extends keyof BusEvents>(name: K, ev: BusEvents[K]) => void;

export class Bus {
  private readonly ee = new EventEmitter();
  /** Subscribers to other hubs' events. */
  private readonly far = new EventEmitter();
  /** What each remote subscription runs on a resync. */
  private readonly resyncs = new Map<object, () => unknown>();
  private readonly taps = new Set<Tap>();
  constructor() {
    this.ee.setMaxListeners(0);
    this.far.setMaxListeners(0);
  }

  /** Tell every subscriber; a subscriber's asynchronous work (a returned Promise) runs on unawaited. */
  emit<K extends keyof BusEvents>(name: K, ev: BusEvents[K]): void {
    try {
      this.ee.emit(name, ev);
    } finally {
      this.tapped(name, ev);
    }
  }

  /**
   * Tell every subscriber and wait for the asynchronous work they return (the reactions that must
   * be done before the emitter goes on, e.g. a job's locks released before its end is reported:
   * docs/store-plan.md §1.3 C). A subscriber's failure is handed to `onError`, never thrown here.
   */
  async emitSettled<K extends keyof BusEvents>(name: K, ev: BusEvents[K], onError: (err: unknown) => void): Promise<void> {
    const pending = this.tell(this.ee, name, ev, onError);
    this.tapped(name, ev);
    await Promise.all(pending);
  }

  /** Another hub's event (the relay): only the subscribers that hear other hubs are told; a failure goes to `onError`. */
  emitRemote<K extends keyof BusEvents>(name: K, ev: BusEvents[K], onError: (err: unknown) => void): void {
    this.tell(this.far, name, ev, onError);
  }

  /** Other hubs' events may have been lost (the relay's listening connection came back): every remote subscriber re-reads, once. */
  resync(onError: (err: unknown) => void): void {
    for (const fn of new Set(this.resyncs.values())) {
      try {
        const r = fn();
        if (r instanceof Promise) r.catch(onError);
      } catch (err) {
        onError(err);
      }
    }
  }

  /** Subscribe; returns the unsubscribe function. A subscriber may return a Promise: `emitSettled` waits for it. */
  on<K extends keyof BusEvents>(name: K, fn: (ev: BusEvents[K]) => unknown, hearing: Hearing = {}): () => void {
    if (!hearing.remote) {
      this.ee.on(name, fn);
      return () => this.ee.off(name, fn);
    }
    const token = {};
    if (hearing.remote === true) this.ee.on(name, fn);
    this.far.on(name, fn);
    if (hearing.resync) this.resyncs.set(token, hearing.resync);
    return () => {
      this.ee.off(name, fn);
      this.far.off(name, fn);
      this.resyncs.delete(token);
    };
  }

  /** See every event this hub emits (one tap: the relay); returns the function that stops it. */
  tap(fn: Tap): () => void {
    this.taps.add(fn);
    return () => this.taps.delete(fn);
  }

  private tell<K extends keyof BusEvents>(ee: EventEmitter, name: K, ev: BusEvents[K], onError: (err: unknown) => void): Promise<unknown>[] {
    const pending: Promise<unknown>[] = [];
    for (const fn of ee.listeners(name) as ((e: BusEvents[K]) => unknown)[]) {
      try {
        const r = fn(ev);
        if (r instanceof Promise) pending.push(r.catch(onError));
      } catch (err) {
        onError(err);
      }
    }
    return pending;
  }

  private tapped<K extends keyof BusEvents>(name: K, ev: BusEvents[K]): void {
    for (const t of this.taps) t(name, ev);
  }
}
