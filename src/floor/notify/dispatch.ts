// Hands each notice to every sink that takes it, through that sink's rate limit, without ever
// blocking the caller or throwing: a send starts on a later turn of the event loop, and its
// failure is logged (warn) and counted, never raised. `drain` waits for sends under way (tests,
// hub stop); each is bounded by its sink's own time limit (5 s HTTP, 10 s programs).
import type { Logger } from '../../log.js';
import { wants } from './filter.js';
import { repeatKey, type NotifyPayload } from './payload.js';
import { SinkRate, type RateOptions } from './rate.js';
import type { SinkConfig } from '../../config/notify.js';
import type { Sink } from './sinks/index.js';

/** What one sink did since the hub started. */
export interface SinkStats {
  name: string;
  type: string;
  delivered: number;
  failed: number;
  /** Dropped by its rate limit or as a repeat. */
  dropped: number;
  last_error?: string;
}

interface Entry { sink: Sink; config: SinkConfig; rate: SinkRate; stats: SinkStats }

export class Dispatcher {
  private readonly entries: Entry[];
  private readonly inflight = new Set<Promise<void>>();

  constructor(sinks: { sink: Sink; config: SinkConfig }[], rate: RateOptions, private readonly deps: { now(): number; log: Logger }) {
    this.entries = sinks.map(({ sink, config }) => ({
      sink, config, rate: new SinkRate(rate), stats: { name: sink.name, type: sink.type, delivered: 0, failed: 0, dropped: 0 },
    }));
  }

  /** Send `p` to every sink that takes it and whose rate limit lets it through. Returns at once. */
  notify(p: NotifyPayload): void {
    const key = repeatKey(p);
    for (const e of this.entries) {
      if (!wants(e.config, p.event)) continue;
      const a = e.rate.admit(key, this.deps.now());
      if (!a.ok) {
        e.stats.dropped++;
        this.deps.log.debug({ sink: e.sink.name, event: p.event, job_id: p.job_id, why: a.why }, 'notification dropped');
        continue;
      }
      const payload = a.suppressed ? { ...p, suppressed: a.suppressed } : p;
      const run = new Promise<void>((r) => setImmediate(r))
        .then(() => e.sink.send(payload))
        .then(() => {
          e.stats.delivered++;
          this.deps.log.debug({ sink: e.sink.name, event: p.event, job_id: p.job_id }, 'notification sent');
        }, (err: unknown) => {
          e.stats.failed++;
          e.stats.last_error = err instanceof Error ? err.message : String(err);
          this.deps.log.warn({ sink: e.sink.name, type: e.sink.type, event: p.event, job_id: p.job_id, error: e.stats.last_error }, `notification sink ${e.sink.name} failed: ${e.stats.last_error}`);
        })
        .finally(() => this.inflight.delete(run));
      this.inflight.add(run);
    }
  }

  /** Resolves once every send under way (and any it was waiting behind) has finished. */
  async drain(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  stats(): SinkStats[] {
    return this.entries.map((e) => ({ ...e.stats }));
  }
}
