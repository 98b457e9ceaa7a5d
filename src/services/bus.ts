// In-process event bus: the hub's services publish state changes here, blocking tools
// subscribe. Events only wake waiters; the database stays the source of truth.
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
}

export class Bus {
  private readonly ee = new EventEmitter();
  constructor() {
    this.ee.setMaxListeners(0);
  }

  /** Tell every subscriber; a subscriber's asynchronous work (a returned Promise) runs on unawaited. */
  emit<K extends keyof BusEvents>(name: K, ev: BusEvents[K]): void {
    this.ee.emit(name, ev);
  }

  /**
   * Tell every subscriber and wait for the asynchronous work they return (the reactions that must
   * be done before the emitter goes on, e.g. a job's locks released before its end is reported:
   * docs/store-plan.md §1.3 C). A subscriber's failure is handed to `onError`, never thrown here.
   */
  async emitSettled<K extends keyof BusEvents>(name: K, ev: BusEvents[K], onError: (err: unknown) => void): Promise<void> {
    const pending: Promise<unknown>[] = [];
    for (const fn of this.ee.listeners(name) as ((e: BusEvents[K]) => unknown)[]) {
      try {
        const r = fn(ev);
        if (r instanceof Promise) pending.push(r.catch(onError));
      } catch (err) {
        onError(err);
      }
    }
    await Promise.all(pending);
  }

  /** Subscribe; returns the unsubscribe function. A subscriber may return a Promise: `emitSettled` waits for it. */
  on<K extends keyof BusEvents>(name: K, fn: (ev: BusEvents[K]) => unknown): () => void {
    this.ee.on(name, fn);
    return () => this.ee.off(name, fn);
  }
}
