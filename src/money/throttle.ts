// Rate limit for progress reports: the first poke reports at once, later pokes within `ms` are
// merged into one trailing report; flush() reports now if a report is owed. Nothing is dropped:
// the last state is always reported.
export class Throttle {
  private last = -Infinity;
  private timer?: NodeJS.Timeout;
  private owed = false;

  constructor(private readonly ms: number, private readonly report: () => void, private readonly now: () => number = Date.now) {}

  poke(): void {
    this.owed = true;
    const wait = this.last + this.ms - this.now();
    if (wait <= 0) this.fire();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.fire(), wait);
      this.timer.unref();
    }
  }

  /** Report now if something changed since the last report. */
  flush(): void {
    if (this.owed) this.fire();
  }

  /** Drop a pending trailing report (the caller reports the final state itself). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.owed = false;
  }

  private fire(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.owed = false;
    this.last = this.now();
    this.report();
  }
}
