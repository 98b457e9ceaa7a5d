// Notifications for a person who is not looking (docs/notifications.md): the hub attaches a
// notifier at start; it listens on the bus and sends what matters to the configured sinks
// (desktop, webhook, Slack, a command). The public surface of src/floor/notify.
import type { HubContext } from '../../services/context.js';
import { Dispatcher, type SinkStats } from './dispatch.js';
import { listen } from './listen.js';
import { makeSink, type Sink, type SinkDeps } from './sinks/index.js';
import { sinkName } from './filter.js';
import type { SinkConfig } from '../../config/notify.js';

export { NotifySchema, NOTIFY_EVENTS, DEFAULT_EVENTS, type NotifyConfig, type NotifyEvent, type SinkConfig } from '../../config/notify.js';
export type { NotifyPayload } from './payload.js';
export type { SinkStats } from './dispatch.js';

export interface Notifier {
  /** Waits for the notifications under way (each is bounded by its sink's time limit). */
  drain(): Promise<void>;
  /** Stops listening, then drains. */
  close(): Promise<void>;
  /** Per sink: delivered, failed, dropped, the last error. */
  stats(): SinkStats[];
}

/** Starts notifying for the hub of `ctx` with `ctx.config.notify`; `deps` replaces parts of the machine (tests). */
export function attachNotifier(ctx: HubContext, deps: Partial<SinkDeps> = {}): Notifier {
  const cfg = ctx.config.notify;
  const log = ctx.log.child({ component: 'notify' });
  const world: SinkDeps = { env: deps.env ?? process.env, platform: deps.platform ?? process.platform, cwd: deps.cwd ?? ctx.projectDir, fetch: deps.fetch ?? globalThis.fetch };
  const sinks: { sink: Sink; config: SinkConfig }[] = [];
  cfg.sinks.forEach((config, i) => {
    const s = makeSink(config, i, world);
    if ('unavailable' in s) log.warn({ sink: sinkName(config, i) }, `notification sink ${sinkName(config, i)} is off: ${s.unavailable}`);
    else sinks.push({ sink: s, config });
  });
  const dispatcher = new Dispatcher(sinks, { perMinute: cfg.rate.perMinute, repeatMs: cfg.rate.repeatS * 1000 }, { now: () => ctx.clock.now(), log });
  const off = sinks.length ? listen(ctx, log, (p) => dispatcher.notify(p)) : () => undefined;
  if (sinks.length) log.info({ sinks: sinks.map((s) => s.sink.name) }, 'notifications on');
  return {
    drain: () => dispatcher.drain(),
    close: async () => {
      off();
      await dispatcher.drain();
    },
    stats: () => dispatcher.stats(),
  };
}
