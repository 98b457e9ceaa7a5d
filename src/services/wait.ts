// One wait engine for every blocking tool: subscribe first, then check, so no wakeup is
// lost between the check and the subscription; re-check on each relevant event; a single
// AbortController owns the timeout, the progress ticker and the caller's cancellation.
// A check may be asynchronous (a read of the asynchronous store): one runs at a time, and an
// event during it runs one more after it (never N overlapping reads, never an older read
// settling after a newer one).
import type { Bus, BusEvents } from './bus.js';

export interface WaitOptions<T> {
  bus: Bus;
  events: (keyof BusEvents)[];
  /** Returns a value when the wait is satisfied, undefined to keep waiting. */
  check: () => T | undefined | Promise<T | undefined>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called every `progressEveryMs` while waiting (MCP progress notifications). */
  onProgress?: (elapsedMs: number) => void;
  progressEveryMs?: number;
}

export type WaitResult<T> = { ok: true; value: T } | { ok: false; reason: 'timeout' | 'aborted' };

export function waitUntil<T>(o: WaitOptions<T>): Promise<WaitResult<T>> {
  return new Promise((resolve) => {
    const ac = new AbortController();
    const unsubs: (() => void)[] = [];
    const started = Date.now();
    const settle = (r: WaitResult<T>): void => {
      if (ac.signal.aborted) return;
      ac.abort();
      for (const u of unsubs) u();
      resolve(r);
    };
    let running = false;
    let again = false;
    const done = (v: T | undefined): void => {
      if (v !== undefined) settle({ ok: true, value: v });
    };
    const runAsync = async (first: Promise<T | undefined>): Promise<void> => {
      running = true;
      let p: T | undefined | Promise<T | undefined> = first;
      for (;;) {
        again = false;
        let v: T | undefined;
        try {
          v = await p;
        } catch {
          v = undefined;
        }
        if (ac.signal.aborted) break;
        done(v);
        if (!again || ac.signal.aborted) break;
        try {
          p = o.check();
        } catch {
          p = undefined;
        }
      }
      running = false;
    };
    const recheck = (): void => {
      if (ac.signal.aborted) return;
      if (running) {
        again = true;
        return;
      }
      let v: T | undefined | Promise<T | undefined>;
      try {
        v = o.check();
      } catch {
        return;
      }
      if (v instanceof Promise) void runAsync(v);
      else done(v);
    };
    // Subscribe before the first check (see header).
    // Other hubs' changes wake the waiter too; after lost events (resync) it re-checks, once.
    for (const e of o.events) unsubs.push(o.bus.on(e, recheck, { remote: true, resync: recheck }));
    if (o.signal) {
      if (o.signal.aborted) return settle({ ok: false, reason: 'aborted' });
      const onAbort = (): void => settle({ ok: false, reason: 'aborted' });
      o.signal.addEventListener('abort', onAbort, { once: true });
      unsubs.push(() => o.signal?.removeEventListener('abort', onAbort));
    }
    recheck();
    if (ac.signal.aborted) return;
    const t = setTimeout(() => settle({ ok: false, reason: 'timeout' }), Math.min(o.timeoutMs, 2 ** 31 - 1));
    unsubs.push(() => clearTimeout(t));
    if (o.onProgress) {
      const every = o.progressEveryMs ?? 10_000;
      const p = setInterval(() => o.onProgress?.(Date.now() - started), every);
      unsubs.push(() => clearInterval(p));
    }
  });
}
