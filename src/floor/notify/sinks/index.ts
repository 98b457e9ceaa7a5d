// Builds the configured sinks (the one place that knows every sink type).
import { sinkName } from '../filter.js';
import type { SinkConfig } from '../../../config/notify.js';
import { commandSink } from './command.js';
import { desktopSink } from './desktop.js';
import { slackSink, webhookSink } from './http.js';
import type { Sink, SinkDeps } from './types.js';

export type { Sink, SinkDeps } from './types.js';

/** A sink for `config`, or why it cannot work here (a desktop sink without notify-send). */
export function makeSink(config: SinkConfig, index: number, deps: SinkDeps): Sink | { unavailable: string } {
  const name = sinkName(config, index);
  switch (config.type) {
    case 'desktop': return desktopSink(name, deps);
    case 'webhook': return webhookSink(name, config.url, deps);
    case 'slack': return slackSink(name, config.url, deps);
    case 'command': return commandSink(name, config.argv, deps);
  }
}
