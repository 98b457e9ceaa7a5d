// The bus across hubs on one PostgreSQL database (docs/store-plan.md §3.1, §3.2; decided in
// docs/decisions.md "Events across hubs"). The relay taps this hub's bus and publishes each event
// once its change has committed (the bus emits after commit), from one place, one statement at a
// time, in order: a burst goes out as one statement. It listens for the other hubs' events and
// hands them to `bus.emitRemote` (only the subscribers that asked for them hear them); after each
// (re)connect of its listening connection, `bus.resync` makes every remote subscriber re-read.
// What crosses carries ids only (the receivers read the database); `progress` crosses at most once
// per `progressGapMs` per job (the last one of a window is sent at its end, never dropped).
// The layer's own `command` (another hub left a command for one of this hub's jobs: job_commands,
// src/services/commands.ts) is not a bus event: the relay hands it, and every resync, to `onCommand`.
// On SQLite nothing can cross (one hub per database): the relay does nothing, not even tap.
import type { Kysely } from 'kysely';
import type { Logger } from '../log.js';
import type { Schema } from '../store/sql/schema.js';
import type { LayerEvents, Listening, Notifier, Sent } from '../store/sql/notify.js';
import { BUS_EVENTS, type Bus, type BusEvents } from './bus.js';

export interface RelayOptions {
  bus: Bus;
  notifier: Notifier<BusEvents & LayerEvents>;
  /** Where the relay publishes from (the layer's pool: `ctx.sql.db`). */
  db: Kysely<Schema>;
  log: Logger;
  /** Least time between two `progress` events of one job sent to the other hubs (default 1000 ms). */
  progressGapMs?: number;
}

export interface Relay {
  /** Tap the bus and listen; resolves once listening (rejects if the database cannot be listened to). */
  start(): Promise<void>;
  /** Stop tapping, send what is queued, stop listening. */
  stop(): Promise<void>;
  /** Resolves when what was emitted so far has been published (or failed to be). */
  idle(): Promise<void>;
  /** What crossed so far, both ways (figures and tests). */
  counts(): { sent: number; heard: number; resyncs: number };
  /** Hear the commands other hubs leave for this hub's jobs, and each resync (lost ones are re-read); returns the unsubscribe. */
  onCommand(fn: (heard: LayerEvents['command'] | 'resync') => void): () => void;
}

/** At most this many events in one statement. */
const BATCH = 100;
const KNOWN = new Set<string>(BUS_EVENTS);

/** An event as it crosses: ids only. */
function idsOnly<K extends keyof BusEvents>(name: K, ev: BusEvents[K]): BusEvents[K] {
  // The files of an overlap can be many; the receivers read them from the overlaps table.
  if (name === 'overlap') return { ...(ev as BusEvents['overlap']), files: [] } as unknown as BusEvents[K];
  return ev;
}

export function relayBus(o: RelayOptions): Relay {
  const counts = { sent: 0, heard: 0, resyncs: 0 };
  const commandFns = new Set<(heard: LayerEvents['command'] | 'resync') => void>();
  const onCommand = (fn: (heard: LayerEvents['command'] | 'resync') => void): (() => void) => {
    commandFns.add(fn);
    return () => commandFns.delete(fn);
  };
  const toCommands = (heard: LayerEvents['command'] | 'resync'): void => {
    for (const fn of commandFns) {
      try {
        fn(heard);
      } catch (err) {
        o.log.error({ err }, 'a listener of another hub\'s command failed');
      }
    }
  };
  if (!o.notifier.crosses) return { start: async () => undefined, stop: async () => undefined, idle: async () => undefined, counts: () => ({ ...counts }), onCommand };
  const gap = o.progressGapMs ?? 1000;
  const queue: Sent<BusEvents>[] = [];
  /** Jobs whose progress crossed within the gap; `pending`: another came meanwhile. */
  const windows = new Map<string, { pending: boolean; timer: NodeJS.Timeout }>();
  let sending: Promise<void> | undefined;
  let untap: (() => void) | undefined;
  let listening: Listening | undefined;
  const onError = (err: unknown): void => o.log.error({ err }, 'a subscriber of another hub\'s event failed');

  const kick = (): void => {
    if (sending || queue.length === 0) return;
    sending = (async () => {
      await Promise.resolve(); // what the same synchronous run emits goes out in one statement
      while (queue.length > 0) {
        const batch = queue.splice(0, BATCH);
        try {
          await o.notifier.publish(o.db, batch);
          counts.sent += batch.length;
        } catch (err) {
          o.log.warn({ err, events: batch.length }, 'could not tell the other hubs of this hub\'s events: their waiters re-check at their deadline or next event');
        }
      }
    })().finally(() => {
      sending = undefined;
      kick();
    });
  };
  const send = <K extends keyof BusEvents>(name: K, ev: BusEvents[K]): void => {
    queue.push({ event: name, data: idsOnly(name, ev) } as Sent<BusEvents>);
    kick();
  };
  const open = (jobId: string): void => {
    const w = {
      pending: false,
      timer: setTimeout(() => {
        windows.delete(jobId);
        if (!w.pending) return;
        send('progress', { jobId });
        open(jobId);
      }, gap),
    };
    w.timer.unref();
    windows.set(jobId, w);
  };
  const tapped = <K extends keyof BusEvents>(name: K, ev: BusEvents[K]): void => {
    if (name !== 'progress') return send(name, ev);
    const { jobId } = ev as BusEvents['progress'];
    const w = windows.get(jobId);
    if (w) {
      w.pending = true;
      return;
    }
    send('progress', { jobId });
    open(jobId);
  };

  const idle = async (): Promise<void> => {
    while (sending) await sending;
  };
  return {
    idle,
    async start() {
      untap = o.bus.tap(tapped);
      try {
        listening = await o.notifier.listen((h) => {
          if (h.kind === 'resync') {
            counts.resyncs++;
            o.bus.resync(onError);
            toCommands('resync');
          } else if (h.event === 'command') {
            counts.heard++;
            toCommands(h.data as LayerEvents['command']);
          } else if (KNOWN.has(h.event)) {
            counts.heard++;
            o.bus.emitRemote(h.event as keyof BusEvents, h.data as never, onError);
          }
        });
      } catch (err) {
        untap();
        untap = undefined;
        throw err;
      }
    },
    async stop() {
      untap?.();
      untap = undefined;
      for (const w of windows.values()) clearTimeout(w.timer);
      windows.clear();
      await idle();
      await listening?.close();
      listening = undefined;
    },
    counts: () => ({ ...counts }),
    onCommand,
  };
}
