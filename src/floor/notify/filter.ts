// Which events a sink takes: its own `events` list, else DEFAULT_EVENTS. Pure.
import { DEFAULT_EVENTS, type NotifyEvent, type SinkConfig } from '../../config/notify.js';

/** The events `sink` is sent. */
export function eventsOf(sink: Pick<SinkConfig, 'events'>): readonly NotifyEvent[] {
  return sink.events ?? DEFAULT_EVENTS;
}

/** Does `sink` take `event`? */
export function wants(sink: Pick<SinkConfig, 'events'>, event: NotifyEvent): boolean {
  return eventsOf(sink).includes(event);
}

/** A sink's name in logs and in `overseer doctor`: its `name`, else its type and place in the list. Never its URL (a webhook URL is a secret). */
export function sinkName(sink: Pick<SinkConfig, 'name' | 'type'>, index: number): string {
  return sink.name ?? `${sink.type}[${index}]`;
}
