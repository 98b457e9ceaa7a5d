// A hub's stop has a deadline. Its children get their grace (SIGTERM, SIGKILL after
// killGraceMs) and the rest of the stop is closing handles, which takes milliseconds; a stop
// still running well past that is stuck on something, and a hub that cannot finish stopping
// must still go away (its state directory may be gone, which is why it is stopping).

/** How long past the children's kill grace a stop may take before it is cut short. */
export const STOP_MARGIN_MS = 10_000;

/** Run `stop`; when it has not settled within `ms`, call `late` (which ends the process). */
export function withDeadline(stop: () => Promise<void>, ms: number, late: () => void): Promise<void> {
  const timer = setTimeout(late, ms);
  timer.unref();
  return stop().finally(() => clearTimeout(timer));
}
