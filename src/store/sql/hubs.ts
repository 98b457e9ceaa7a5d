// The hubs that serve one crew, and how they find out that one of them died (docs/store-plan.md
// §3.4, §3.6). Each hub registers a row under a random id and beats: `heartbeat_at` is set from
// the database's clock, so machines with skewed clocks agree. Every beat it also looks for hubs
// that stopped beating, neither stopped cleanly nor already found dead, and marks each dead with
// one conditional statement (compare-and-set) whose transaction then hands the dead hub to the
// reconcile callback: whichever of several hubs wins the row reconciles it, exactly once; the
// others' UPDATE waits for that commit, re-reads the row and matches nothing. A callback that
// throws rolls the mark back, so the next beat tries again.
//
// Fencing: a hub that was cut off longer than the timeout (paused, network) has been reconciled
// by the others; its next heartbeat matches no row (dead_at is set), and it hears onFenced: stop
// the children without recording anything for them, and exit.
//
// Faster detection on PostgreSQL: each hub holds the session advisory lock (5, hashtext(id)) on a
// connection of its own for its whole life. A hub killed with -9 loses its session at once, so a
// peer's `pg_try_advisory_xact_lock` on that key succeeds; such a hub is taken for dead as soon as
// its heartbeat is also two beats old (not at once: a live hub whose lock connection blipped keeps
// beating and re-takes the lock). Without that, the timeout decides, as on SQLite.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { Logger } from '../../log.js';
import type { HubsTable, Schema } from './schema.js';
import type { SqlDialect } from './open.js';
import { scrub } from './url.js';
import { ADVISORY } from './advisory.js';
import { endClient } from './pgClient.js';

export type HubRow = Selectable<HubsTable>;

/** Advisory lock class of hub liveness (./advisory.ts lists every class). */
const HUB_LOCK_CLASS = ADVISORY.hubLiveness;

/** ms since the epoch on the database's clock (PostgreSQL: the transaction's start). */
export function dbNow(dialect: SqlDialect): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`(extract(epoch from now()) * 1000)::bigint`
    : sql<number>`CAST(unixepoch('subsec') * 1000 AS INTEGER)`;
}

export interface HubIdentity {
  host: string;
  pid: number;
  /** Its HTTP endpoint, when it serves one. */
  url: string | null;
  stateDir: string;
  version: string;
}

/** A new hub id: random per process start. */
export function newHubId(): string {
  return `h-${randomBytes(6).toString('hex')}`;
}

export interface HubRegistryOptions {
  /** This hub's id when the services already carry it (src/compose.ts); else a random one. */
  id?: string;
  db: Kysely<Schema>;
  dialect: SqlDialect;
  /** PostgreSQL: the URL for the liveness lock's own connection (required there). */
  url?: string | undefined;
  identity: HubIdentity;
  /** Heartbeat period, ms (the plan's 5 s). */
  beatMs: number;
  /** A heartbeat older than this (ms) is a dead hub (the plan's 30 s). */
  timeoutMs: number;
  /** Reconcile one dead hub inside the transaction that marked it: its jobs, locks, requests, owned runs. */
  reconcile(trx: Transaction<Schema>, dead: HubRow): Promise<void>;
  /** After the reconciliation committed: emit the bus events of what it changed. */
  onReconciled(dead: HubRow): void;
  /** This hub was found dead by another (its row as it is now): stop the children, record nothing, exit. Told once. */
  onFenced(row: HubRow | undefined): void;
  log: Logger;
}

export class HubRegistry {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private stopped = false;
  private fenced = false;

  private constructor(readonly id: string, private readonly o: HubRegistryOptions, private readonly liveness: Liveness | undefined) {}

  /** Insert this hub's row (PostgreSQL: after taking its liveness lock) and start beating. */
  static async start(o: HubRegistryOptions): Promise<HubRegistry> {
    if (!(o.beatMs > 0) || !(o.timeoutMs > o.beatMs)) throw new Error(`hub heartbeat: the timeout (${o.timeoutMs} ms) must be longer than the beat (${o.beatMs} ms), both > 0`);
    if (o.dialect === 'postgres' && !o.url) throw new Error('hub heartbeat on PostgreSQL: give the database URL for the liveness lock\'s connection');
    let id = o.id ?? newHubId();
    let liveness: Liveness | undefined;
    // The lock key is a 32-bit hash of the id: a new id whose key a live hub holds takes another id
    // (a given id cannot: its services carry it; one chance in 2^32 per live hub).
    for (let tries = 1; o.dialect === 'postgres' && !liveness; tries++) {
      liveness = await Liveness.take(o.url!, id, o.log);
      if (!liveness && (tries >= 5 || o.id)) throw new Error(`hub heartbeat: the liveness lock of hub id ${id} is already held; is something else taking advisory locks of class 5? Start the hub again (a new id).`);
      if (!liveness) id = newHubId();
    }
    try {
      const now = dbNow(o.dialect);
      const i = o.identity;
      await o.db.insertInto('hubs').values({
        id, host: i.host, pid: i.pid, url: i.url, state_dir: i.stateDir, version: i.version,
        started_at: now, heartbeat_at: now, stopped_at: null, dead_at: null,
      }).execute();
    } catch (err) {
      await liveness?.close();
      throw err;
    }
    const r = new HubRegistry(id, o, liveness);
    r.schedule();
    return r;
  }

  private schedule(): void {
    if (this.stopped || this.fenced) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => this.schedule());
    }, this.o.beatMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      if (await this.beat()) await this.detect();
    } catch (err) {
      this.o.log.warn({ err: this.o.url ? scrub((err as Error).message, this.o.url) : err }, 'hub heartbeat failed: trying again next beat');
    }
  }

  /** One heartbeat; false when this hub is fenced (found dead) or stopped. */
  async beat(): Promise<boolean> {
    if (this.fenced || this.stopped) return false;
    const alive = await this.o.db.updateTable('hubs').set({ heartbeat_at: dbNow(this.o.dialect) })
      .where('id', '=', this.id).where('dead_at', 'is', null).where('stopped_at', 'is', null)
      .returning('id').executeTakeFirst();
    if (alive) return true;
    const row = await this.row();
    if (this.stopped || this.fenced) return false; // a beat that ran alongside told it already
    this.fenced = true;
    clearTimeout(this.timer);
    this.o.log.error({ hub: this.id, deadAt: row?.dead_at }, 'this hub was found dead by another (no heartbeat within the timeout) and its jobs were reconciled: fenced');
    await this.liveness?.close();
    this.o.onFenced(row);
    return false;
  }

  /** Mark and reconcile every hub whose heartbeat is too old; returns those this call reconciled. */
  async detect(): Promise<HubRow[]> {
    const { db, dialect } = this.o;
    const now = dbNow(dialect);
    const soonest = this.liveness ? this.fastMs() : this.o.timeoutMs;
    // A worker's hub is judged by the worker's own lease (workers.lease_ms, the "stated timeout" its
    // row carries), not this hub's timeout: every hub applies the same one (docs/workers-plan.md §1).
    const lease = sql<number>`(SELECT w.lease_ms FROM workers w WHERE w.hub_id = hubs.id AND w.state = 'live')`;
    const candidates = await db.selectFrom('hubs').select('id')
      .where('id', '!=', this.id).where('dead_at', 'is', null).where('stopped_at', 'is', null)
      .where((eb) => eb.or([eb('heartbeat_at', '<', sql<number>`${now} - ${soonest}`), eb('heartbeat_at', '<', sql<number>`${now} - ${lease}`)])).execute();
    const dead: HubRow[] = [];
    for (const { id } of candidates) {
      const row = await db.transaction().execute(async (trx) => {
        const marked = await trx.updateTable('hubs').set({ dead_at: now })
          .where('id', '=', id).where('dead_at', 'is', null).where('stopped_at', 'is', null)
          .where((eb) => this.liveness
            ? eb.or([
              eb('heartbeat_at', '<', sql<number>`${now} - ${this.o.timeoutMs}`),
              eb('heartbeat_at', '<', sql<number>`${now} - ${lease}`),
              eb.and([eb('heartbeat_at', '<', sql<number>`${now} - ${this.fastMs()}`), eb(sql<boolean>`pg_try_advisory_xact_lock(${HUB_LOCK_CLASS}, hashtext(id))`, '=', true)]),
            ])
            : eb.or([eb('heartbeat_at', '<', sql<number>`${now} - ${this.o.timeoutMs}`), eb('heartbeat_at', '<', sql<number>`${now} - ${lease}`)]))
          .returningAll().executeTakeFirst();
        if (marked) await this.o.reconcile(trx, marked);
        return marked;
      });
      if (row) {
        this.o.log.warn({ hub: row.id, host: row.host, pid: row.pid, heartbeatAt: row.heartbeat_at, deadAt: row.dead_at }, 'a hub stopped beating: marked dead and reconciled');
        dead.push(row);
        this.o.onReconciled(row);
      }
    }
    return dead;
  }

  /** A heartbeat this old, with the hub's session gone, is a dead hub (PostgreSQL's fast path). */
  private fastMs(): number {
    return Math.min(2 * this.o.beatMs, this.o.timeoutMs);
  }

  /** The hub's HTTP endpoint, once its listener has its port (it registers before: its start reconciles first). */
  async setUrl(url: string): Promise<void> {
    await this.o.db.updateTable('hubs').set({ url }).where('id', '=', this.id).execute();
  }

  /** This hub's row as it is now. */
  row(): Promise<HubRow | undefined> {
    return this.o.db.selectFrom('hubs').selectAll().where('id', '=', this.id).executeTakeFirst();
  }

  /** Stop beating; mark the row stopped (true) unless another hub found it dead first (false). */
  async stop(): Promise<boolean> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    try {
      const r = await this.o.db.updateTable('hubs').set({ stopped_at: dbNow(this.o.dialect) })
        .where('id', '=', this.id).where('dead_at', 'is', null).where('stopped_at', 'is', null)
        .returning('id').executeTakeFirst();
      return r !== undefined;
    } finally {
      await this.liveness?.close();
    }
  }
}

/** PostgreSQL: the session advisory lock (5, hashtext(hub id)) held on a connection of its own, re-taken after a break. */
class Liveness {
  private client: pg.Client | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly url: string, private readonly id: string, private readonly log: Logger) {}

  /** Undefined when another session holds this id's key (a hash collision): take another id. */
  static async take(url: string, id: string, log: Logger): Promise<Liveness | undefined> {
    const l = new Liveness(url, id, log);
    return (await l.lock(false)) ? l : undefined;
  }

  /** Take the lock on a new connection; `wait`: until it is free, else false when it is held. */
  private async lock(wait: boolean): Promise<boolean> {
    const c = new pg.Client({ connectionString: this.url, application_name: `overseer-hub ${this.id}`, keepAlive: true, connectionTimeoutMillis: 10_000 });
    let gone = false;
    const lost = (err?: Error): void => {
      if (gone) return;
      gone = true;
      if (this.client !== c) return;
      this.client = undefined;
      void endClient(c);
      if (this.closed) return;
      this.log.warn({ err: err ? scrub(err.message, this.url) : 'connection ended' }, 'the hub\'s liveness connection was lost: taking the lock again (the heartbeat still says it lives)');
      this.again();
    };
    c.on('error', lost);
    c.on('end', () => lost());
    try {
      await c.connect();
      if (wait) await c.query('SELECT pg_advisory_lock($1, hashtext($2))', [HUB_LOCK_CLASS, this.id]);
      else if (!(await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [HUB_LOCK_CLASS, this.id])).rows[0]!.ok) {
        gone = true;
        await endClient(c);
        return false;
      }
    } catch (err) {
      gone = true;
      await endClient(c);
      throw new Error(`cannot take the hub's liveness lock: ${scrub((err as Error).message, this.url)}`, { cause: err });
    }
    if (gone || this.closed) {
      await endClient(c);
      if (gone && !this.closed) throw new Error('cannot take the hub\'s liveness lock: the connection closed');
      return true;
    }
    this.client = c;
    return true;
  }

  private again(delayMs = 100): void {
    this.timer = setTimeout(() => {
      if (this.closed) return;
      this.lock(true).catch((err: Error) => {
        this.log.warn({ err: err.message }, 'taking the liveness lock again failed: retrying');
        this.again(Math.min(delayMs * 2, 5_000));
      });
    }, delayMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    if (c) await endClient(c);
  }
}

/** A hub that has neither stopped nor been found dead, and how old its last heartbeat is (on the database's clock). */
export type LiveHub = Pick<HubRow, 'id' | 'host' | 'pid' | 'url' | 'started_at'> & { heartbeat_age_ms: number };

/** The hubs serving the crew as the registry knows them, oldest first (`overseer status` on PostgreSQL). */
export async function liveHubs(q: Kysely<Schema>, dialect: SqlDialect): Promise<LiveHub[]> {
  const rows = await q.selectFrom('hubs')
    .select(['id', 'host', 'pid', 'url', 'started_at', sql<number>`${dbNow(dialect)} - heartbeat_at`.as('heartbeat_age_ms')])
    .where('dead_at', 'is', null).where('stopped_at', 'is', null)
    .orderBy('started_at').orderBy('id').execute();
  return rows.map((r) => ({ ...r, heartbeat_age_ms: Number(r.heartbeat_age_ms) }));
}
