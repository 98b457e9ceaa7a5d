// The `notify` configuration (config key `notify`, env OVERSEER_NOTIFY as JSON): where
// notifications go (sinks), which events each sink takes, and how often a sink may be sent to.
// Validated once at config load by src/config.ts; everything here is data, no behaviour
// (the notifier is src/floor/notify).
import { z } from 'zod';

/** Every event a sink can subscribe to (docs/notifications.md says what raises each). */
export const NOTIFY_EVENTS = [
  'needs_input', 'failed', 'succeeded', 'workflow_blocked', 'workflow_done', 'stalled', 'budget_high', 'warning', 'limited',
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** A sink with no `events` gets these: everything a person must act on or would want to know, but
 * not every success (noisy in a busy crew) and not the milder `warning`s (turns, time, long running). */
export const DEFAULT_EVENTS: readonly NotifyEvent[] = ['needs_input', 'failed', 'workflow_blocked', 'workflow_done', 'stalled', 'budget_high', 'limited'];

const SINK_TYPES = ['desktop', 'webhook', 'slack', 'command'] as const;

const events = z.array(z.enum(NOTIFY_EVENTS, {
  errorMap: () => ({ message: `events must be some of ${NOTIFY_EVENTS.join(', ')}` }),
})).min(1, 'list at least one event (or remove the sink)').max(NOTIFY_EVENTS.length)
  .refine((a) => new Set(a).size === a.length, 'an event is listed twice');

const name = z.string().min(1, 'name is empty').max(64);

/** An http(s) URL; anything else (file:, ftp:, a bare host) is refused with what to write instead. */
const httpUrl = z.string().refine((u) => {
  try {
    return /^https?:$/.test(new URL(u).protocol);
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL, e.g. https://hooks.slack.com/services/…');

const common = { name: name.optional(), events: events.optional() };
const keys = (...k: string[]): string => `unknown key: this sink takes only ${['type', ...k, 'name', 'events'].join(', ')}`;

export const SinkSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('desktop'), ...common }).strict(keys()),
  z.object({ type: z.literal('webhook'), url: httpUrl, ...common }).strict(keys('url')),
  z.object({ type: z.literal('slack'), url: httpUrl, ...common }).strict(keys('url')),
  z.object({
    type: z.literal('command'),
    /** Program and arguments, run without a shell; the payload is its stdin. */
    argv: z.array(z.string().min(1, 'an argv element is empty')).min(1, 'argv needs at least the program, e.g. ["/usr/local/bin/page-me"]').max(64),
    ...common,
  }).strict(keys('argv')),
], {
  errorMap: (issue, ctx) => (issue.code === 'invalid_union_discriminator'
    ? { message: `type must be one of ${SINK_TYPES.join(', ')}` }
    : { message: ctx.defaultError }),
});
export type SinkConfig = z.infer<typeof SinkSchema>;

export const RateSchema = z.object({
  /** At most this many notifications per sink in any 60 s; the rest are dropped and counted. */
  perMinute: z.number().int().min(1).max(600).default(6),
  /** The same event of the same job (or workflow, or request) is sent once in this many seconds (0: no such check). */
  repeatS: z.number().int().min(0).max(24 * 3600).default(300),
}).strict('unknown key: rate takes only perMinute, repeatS');

export const NotifySchema = z.object({
  sinks: z.array(SinkSchema).max(20).default([]).superRefine((sinks, ctx) => {
    const seen = new Set<string>();
    sinks.forEach((s, i) => {
      if (!s.name) return;
      if (seen.has(s.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `two sinks are named ${JSON.stringify(s.name)}: names must be unique` });
      seen.add(s.name);
    });
  }),
  rate: RateSchema.default({}),
}).strict('unknown key: notify takes only sinks, rate');
export type NotifyConfig = z.infer<typeof NotifySchema>;
