// Find the hub of a state directory, starting one when none answers. Starting is always safe:
// a started process that cannot take the claim exits, so several bridges racing here still
// end up with exactly one hub. Bounded: gives up with a clear error after `deadlineMs`.
import { liveHub, type HubInfo } from '../hubfiles/hubLock.js';

export interface LocateOptions {
  stateDir: string;
  /** Start a hub process (it exits by itself if another one holds the claim). */
  start: () => void;
  deadlineMs?: number;
  /** Do not start another hub more often than this while waiting for one. */
  restartEveryMs?: number;
}

export async function locateHub(o: LocateOptions): Promise<HubInfo> {
  const until = Date.now() + (o.deadlineMs ?? 30_000);
  let lastStart = 0;
  for (let delay = 10; ; delay = Math.min(delay * 2, 50)) {
    const info = await liveHub(o.stateDir);
    if (info) return info;
    if (Date.now() - lastStart >= (o.restartEveryMs ?? 3000)) {
      o.start();
      lastStart = Date.now();
    }
    if (Date.now() > until) {
      throw new Error(`no overseer hub answered for ${o.stateDir} within ${o.deadlineMs ?? 30_000} ms; see ${o.stateDir}/logs/hub.stderr and overseer.log, or run overseer doctor`);
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}
