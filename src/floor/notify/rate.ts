// Per-sink rate limit: at most `perMinute` notifications in any 60 s (a sliding window), and the
// same notice (event + subject, see repeatKey) at most once per `repeatMs`. What is dropped is
// counted, and the count rides on the next notice that gets through (`suppressed`), so a person
// always learns that something was held back. Pure: time comes in as an argument.

export interface RateOptions {
  perMinute: number;
  /** 0: repeats are not checked. */
  repeatMs: number;
}

export type Admission = { ok: true; suppressed: number } | { ok: false; why: 'rate' | 'repeat' };

const WINDOW_MS = 60_000;

export class SinkRate {
  /** Send times within the last minute, oldest first (at most perMinute of them). */
  private sent: number[] = [];
  /** Last send per repeat key, oldest first (Map keeps insertion order; a re-send moves to the end). */
  private readonly lastByKey = new Map<string, number>();
  private dropped = 0;

  constructor(private readonly o: RateOptions) {}

  /** May a notice with this key go out at `now`? Counts it as sent when it may, dropped when not. */
  admit(key: string, now: number): Admission {
    this.sent = this.sent.filter((t) => t > now - WINDOW_MS && t <= now);
    for (const [k, t] of this.lastByKey) {
      if (t > now - this.o.repeatMs && t <= now) break;
      this.lastByKey.delete(k);
    }
    if (this.o.repeatMs > 0 && this.lastByKey.has(key)) {
      this.dropped++;
      return { ok: false, why: 'repeat' };
    }
    if (this.sent.length >= this.o.perMinute) {
      this.dropped++;
      return { ok: false, why: 'rate' };
    }
    this.sent.push(now);
    if (this.o.repeatMs > 0) {
      this.lastByKey.delete(key);
      this.lastByKey.set(key, now);
    }
    const suppressed = this.dropped;
    this.dropped = 0;
    return { ok: true, suppressed };
  }

  /** Dropped since the last notice that went out. */
  get pendingDrops(): number {
    return this.dropped;
  }
}
