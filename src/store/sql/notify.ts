// Events across hubs on one database (docs/store-plan.md §3.2). A hub sends an event inside the
// transaction that made the change (`SELECT pg_notify('overseer', payload)`): PostgreSQL delivers
// it only when that transaction commits, never when it rolls back — the bus's "committed before
// emit" across processes. Every hub listens on a connection of its own (not from the pool: a
// pooled connection is handed to other queries and LISTEN is per session), skips what it sent
// itself (its local subscribers heard the local emit), and after each (re)connect hears one
// `resync`: whatever was sent while it was not listening is lost, so its subscribers re-read
// the state. The payload is `{"h": origin hub, "e": event, "d": data}`; data carries ids, the
// receiver reads the database. On SQLite nothing crosses (one hub per state file): a notifier that
// checks what it is given and sends nothing.
//
// The events are a type parameter: the bus's BusEvents live in src/services, above this layer, so
// the hub names them (`Notifier<BusEvents & LayerEvents>`); LayerEvents are this layer's own.
import pg from 'pg';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from '../../log.js';
import type { Schema } from './schema.js';
import { scrub } from './url.js';
import { destroyClient, endClient } from './pgClient.js';

export const NOTIFY_CHANNEL = 'overseer';
/** PostgreSQL refuses payloads of 8000 bytes and more. */
export const NOTIFY_MAX_BYTES = 7999;

/** Events this layer sends itself. */
export interface LayerEvents {
  /** Another hub left a command for the job's owner (job_commands, src/store/sql/commands.ts). */
  command: { jobId: string; commandId: number };
}

/** What a listener hears: another hub's event, or "everything may have changed" after a (re)connect. */
export type Heard<E> =
  | { [K in keyof E & string]: { kind: 'event'; event: K; data: E[K]; hub: string } }[keyof E & string]
  | { kind: 'resync'; reconnected: boolean };

export interface Listening {
  /** Stop listening and close the connection. */
  close(): Promise<void>;
}

export interface Notifier<E extends object> {
  /** This hub's id: the origin of what it sends, skipped by its own listeners. */
  readonly hubId: string;
  /** Whether anything can cross at all (false on SQLite: one hub per database, so the relay does nothing). */
  readonly crosses: boolean;
  /** Send `event` when `trx` commits (never if it rolls back). */
  send<K extends keyof E & string>(trx: Transaction<Schema>, event: K, data: E[K]): Promise<void>;
  /**
   * Send events whose changes have committed already, in order, in one statement on `q` (the
   * relay of the hub's bus: src/services/relay.ts; docs/decisions.md "Events across hubs").
   */
  publish(q: Kysely<Schema>, events: readonly Sent<E>[]): Promise<void>;
  /** Hear the other hubs' events; resolves once listening (PostgreSQL: rejects if the first connect fails). */
  listen(fn: (heard: Heard<E>) => void): Promise<Listening>;
}

/** An event to publish. */
export type Sent<E> = { [K in keyof E & string]: { event: K; data: E[K] } }[keyof E & string];

/** The payload of an event, checked: a transaction that is one, and a payload PostgreSQL takes. */
function payload(hubId: string, trx: Transaction<Schema>, event: string, data: unknown): string {
  if (!trx.isTransaction) throw new Error(`notify ${event}: send it inside the transaction that made the change (got a plain connection)`);
  return encode(hubId, event, data);
}

/** The payload of an event, checked: one PostgreSQL takes. */
function encode(hubId: string, event: string, data: unknown): string {
  const text = JSON.stringify({ h: hubId, e: event, d: data });
  const bytes = Buffer.byteLength(text);
  if (bytes > NOTIFY_MAX_BYTES) throw new Error(`notify ${event}: payload of ${bytes} bytes is over PostgreSQL's ${NOTIFY_MAX_BYTES}; send ids and let the receiver read the rows`);
  return text;
}

/** SQLite: one hub per state file, nothing to cross. Checks what it is given as the PostgreSQL one does. */
export class LocalNotifier<E extends object> implements Notifier<E> {
  readonly crosses = false;
  constructor(readonly hubId: string) {}

  async send<K extends keyof E & string>(trx: Transaction<Schema>, event: K, data: E[K]): Promise<void> {
    payload(this.hubId, trx, event, data);
  }

  async publish(_q: Kysely<Schema>, events: readonly Sent<E>[]): Promise<void> {
    for (const e of events) encode(this.hubId, e.event, e.data);
  }

  async listen(): Promise<Listening> {
    return { close: async () => undefined };
  }
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
const CONNECT_TIMEOUT_MS = 10_000;

export interface PgNotifierOptions {
  url: string;
  hubId: string;
  log: Logger;
  channel?: string;
  /** Every this many ms the listening connection is asked `SELECT 1`; one that does not answer within as long is replaced. */
  pingMs?: number;
}

export class PgNotifier<E extends object> implements Notifier<E> {
  readonly hubId: string;
  readonly crosses = true;
  private readonly channel: string;
  constructor(private readonly o: PgNotifierOptions) {
    this.hubId = o.hubId;
    this.channel = o.channel ?? NOTIFY_CHANNEL;
  }

  async send<K extends keyof E & string>(trx: Transaction<Schema>, event: K, data: E[K]): Promise<void> {
    await sql`SELECT pg_notify(${this.channel}, ${payload(this.hubId, trx, event, data)})`.execute(trx);
  }

  async publish(q: Kysely<Schema>, events: readonly Sent<E>[]): Promise<void> {
    if (events.length === 0) return;
    const texts = events.map((e) => encode(this.hubId, e.event, e.data));
    // One statement, one commit: delivered together, in this order (unnest yields in order).
    await sql`SELECT pg_notify(${this.channel}, t.p) FROM unnest(${texts}::text[]) AS t(p)`.execute(q);
  }

  async listen(fn: (heard: Heard<E>) => void): Promise<Listening> {
    const l = new PgListener<E>(this.o, this.channel, fn);
    await l.connect();
    return l;
  }
}

/** One LISTEN connection, replaced when it breaks (backoff 0.1 s doubling to 5 s). */
class PgListener<E extends object> implements Listening {
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private timer: NodeJS.Timeout | undefined;
  private connects = 0;

  constructor(private readonly o: PgNotifierOptions, private readonly channel: string, private readonly fn: (heard: Heard<E>) => void) {}

  async connect(): Promise<void> {
    const c = new pg.Client({
      connectionString: this.o.url, application_name: `overseer-listen ${this.o.hubId}`,
      keepAlive: true, keepAliveInitialDelayMillis: 10_000, connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    let gone = false;
    let ping: NodeJS.Timeout | undefined;
    const lost = (err?: Error): void => {
      if (gone) return;
      gone = true;
      clearInterval(ping);
      if (this.client !== c) return;
      this.client = undefined;
      void endClient(c);
      if (this.closed) return;
      this.o.log.warn({ err: err ? scrub(err.message, this.o.url) : 'connection ended' }, 'the LISTEN connection to the database was lost: reconnecting; subscribers re-read the state then');
      this.retry();
    };
    c.on('error', lost);
    c.on('end', () => lost());
    c.on('notification', (m) => {
      if (!gone && !this.closed) this.heard(m);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${c.escapeIdentifier(this.channel)}`);
    } catch (err) {
      gone = true;
      await endClient(c);
      throw new Error(`cannot listen for other hubs' events: ${scrub((err as Error).message, this.o.url)}`, { cause: err });
    }
    if (gone) throw new Error('cannot listen for other hubs\' events: the connection closed as it began listening');
    if (this.closed) {
      gone = true;
      await endClient(c);
      return;
    }
    this.client = c;
    this.retryMs = RETRY_MIN_MS;
    const pingMs = this.o.pingMs;
    if (pingMs) {
      // A connection cut without a word (a network that drops packets) answers nothing, ever.
      ping = setInterval(() => {
        const late = setTimeout(() => {
          lost(new Error(`no answer to a ping within ${pingMs} ms`));
          destroyClient(c); // end() would wait for an answer that will not come
        }, pingMs);
        c.query('SELECT 1').then(() => clearTimeout(late), (err: Error) => {
          clearTimeout(late);
          lost(err);
        });
      }, pingMs);
      ping.unref();
    }
    this.tell({ kind: 'resync', reconnected: this.connects++ > 0 });
  }

  private retry(): void {
    const attempt = (): void => {
      this.timer = undefined;
      if (this.closed) return;
      this.connect().catch((err: Error) => {
        this.o.log.warn({ err: err.message, retryMs: this.retryMs }, 'reconnecting the LISTEN connection failed: trying again');
        this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
        if (!this.closed) this.timer = setTimeout(attempt, this.retryMs);
      });
    };
    this.timer = setTimeout(attempt, this.retryMs);
  }

  private heard(m: pg.Notification): void {
    if (m.channel !== this.channel) return;
    let p: { h?: unknown; e?: unknown; d?: unknown };
    try {
      p = JSON.parse(m.payload ?? '') as typeof p;
    } catch {
      this.o.log.warn({ payload: m.payload?.slice(0, 200) }, `a notification on "${this.channel}" is not JSON: ignored`);
      return;
    }
    if (typeof p?.h !== 'string' || typeof p.e !== 'string') {
      this.o.log.warn({ payload: m.payload?.slice(0, 200) }, `a notification on "${this.channel}" has no origin hub (h) or event (e): ignored`);
      return;
    }
    if (p.h === this.o.hubId) return;
    this.tell({ kind: 'event', event: p.e, data: p.d, hub: p.h } as Heard<E>);
  }

  private tell(h: Heard<E>): void {
    try {
      this.fn(h);
    } catch (err) {
      this.o.log.error({ err }, 'a listener of other hubs\' events threw');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    if (c) await endClient(c);
  }
}

/** The notifier for a database: PostgreSQL sends and listens, SQLite has nothing to cross. */
export function notifierFor<E extends object>(target: { dialect: 'sqlite' } | { dialect: 'postgres'; url: string }, hubId: string, log: Logger): Notifier<E> {
  return target.dialect === 'postgres' ? new PgNotifier<E>({ url: target.url, hubId, log, pingMs: 15_000 }) : new LocalNotifier<E>(hubId);
}
