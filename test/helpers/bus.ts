// Seeing from a test the moment a blocking tool (lock_files, watch_notes…) starts waiting:
// the waits subscribe to an event of the hub's bus.
import type { Bus, BusEvents } from '../../src/services/bus.js';

/** Resolves once something has subscribed to `event` on the hub's bus since this call (e.g. only
 * lock_files waits subscribe to 'lock', only watch_notes to 'note': a waiter is in place). */
export function subscribed(bus: Bus, event: keyof BusEvents, timeoutMs = 30_000): Promise<void> {
  const p = new Promise<void>((resolve, reject) => {
    const orig = bus.on;
    const call = orig.bind(bus);
    const restore = (): void => { bus.on = orig; clearTimeout(t); };
    const t = setTimeout(() => { restore(); reject(new Error(`nothing subscribed to bus event ${event} within ${timeoutMs} ms`)); }, timeoutMs);
    const wrapped: Bus['on'] = (name, fn) => {
      const off = call(name, fn);
      if (name === event) { restore(); resolve(); }
      return off;
    };
    bus.on = wrapped;
  });
  p.catch(() => undefined); // seen by whoever awaits it; never an unhandled rejection
  return p;
}
