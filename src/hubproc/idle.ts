// Idle exit of a background hub: after `idleMs` during which it had nothing to do (no live
// job, no connected lead) it stops. Pure decision over an injected clock; the caller polls.
export class IdleTimer {
  private since?: number;

  constructor(private readonly o: { idleMs: number; now: () => number }) {}

  /** Feed the current state; true once the hub has been idle for the whole grace period. */
  check(idle: boolean): boolean {
    if (!idle || this.o.idleMs <= 0) {
      this.since = undefined;
      return false;
    }
    this.since ??= this.o.now();
    return this.o.now() - this.since >= this.o.idleMs;
  }
}
