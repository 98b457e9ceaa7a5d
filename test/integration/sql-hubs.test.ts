// The building blocks of many hubs on one database (docs/store-plan.md §3.2–3.6), with real
// processes where the property is about processes: hubs register and beat on the database's clock;
// a hub killed with -9 is found dead by the others and reconciled exactly once however many race;
// a hub paused past the timeout finds itself fenced when it continues; two hubs racing over queued
// jobs claim each once; and on PostgreSQL events cross between hubs only when committed, skip
// their origin, and survive the listening connection being killed.
import { test, describe, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { sql, type Kysely } from 'kysely';
import pino from 'pino';
import { openSql, type SqlDb, type SqlDialect } from '../../src/store/sql/open.js';
import { HubRegistry, dbNow, type HubRow } from '../../src/store/sql/hubs.js';
import { adopt, releaseOwned } from '../../src/store/sql/claims.js';
import { claimJob } from '../../src/store/sql/jobs.js';
import { postCommand, pendingCommands, finishCommand, closeCommandsOf } from '../../src/store/sql/commands.js';
import { LocalNotifier, PgNotifier, type Heard, type LayerEvents, type Listening, type Notifier } from '../../src/store/sql/notify.js';
import type { Schema } from '../../src/store/sql/schema.js';
import type { BusEvents } from '../../src/services/bus.js';
import { freshDatabase } from '../helpers/postgres.js';
import { startHubProc, type HubProc } from '../helpers/hubProcs.js';

type Events = BusEvents & LayerEvents;
const log = pino({ level: 'silent' });
const dirs: string[] = [];
const procs: HubProc[] = [];
after(() => {
  procs.forEach((p) => p.signal('SIGKILL'));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

interface Db {
  s: SqlDb;
  home: string;
  url: string | undefined;
  /** Another connection (pool) to the database, closed after the test. */
  open(): Promise<SqlDb>;
  /** Run `fn` after the test, before the connections close (last deferred first). */
  defer(fn: () => Promise<unknown>): void;
}

/** A fresh database of `dialect` (migrated), dropped after the test. */
async function database(t: TestContext, dialect: SqlDialect): Promise<Db> {
  const home = mkdtempSync(join(tmpdir(), 'overseer-sql-hubs-'));
  dirs.push(home);
  let url: string | undefined;
  let drop = async (): Promise<void> => undefined;
  if (dialect === 'postgres') {
    const fresh = await freshDatabase();
    url = fresh.url;
    drop = fresh.drop;
  }
  const opened: SqlDb[] = [];
  const deferred: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const fn of deferred.reverse()) await fn();
    for (const s of opened.reverse()) await s.close();
    await drop();
  });
  const open = async (): Promise<SqlDb> => {
    const s = await openSql({ home, databaseUrl: url });
    opened.push(s);
    return s;
  };
  const s = await open();
  await sql`CREATE TABLE reconciled (hub_id TEXT NOT NULL, by_pid INTEGER NOT NULL)`.execute(s.db);
  return { s, home, url, open, defer: (fn) => void deferred.push(fn) };
}

let seq = 0;
async function addJob(db: Kysely<Schema>, id: string, status: string, hub: string | null): Promise<void> {
  await sql`INSERT INTO jobs (id, seq, depth, title, prompt, provider, cwd, status, created_at, updated_at, hub_id)
    VALUES (${id}, ${++seq}, 0, ${id}, 'p', 'claude', '/tmp', ${status}, 1, 1, ${hub})`.execute(db);
}
async function addRun(db: Kysely<Schema>, id: string, hub: string | null): Promise<void> {
  await sql`INSERT INTO runs (id, title, content, format, rules_json, status, created_at, updated_at, kind, hub_id)
    VALUES (${id}, ${id}, 'x', 'script', '{}', 'running', 1, 1, 'script', ${hub})`.execute(db);
}

/** A hub process on the database, registered with the given beat and timeout. */
async function hubProc(d: Db, beatMs: number, timeoutMs: number, holdMs = 0): Promise<{ p: HubProc; id: string }> {
  const p = await startHubProc();
  procs.push(p);
  await p.send({ op: 'open', home: d.home, url: d.url });
  const { id } = await p.send({ op: 'register', beatMs, timeoutMs, holdMs });
  return { p, id: id as string };
}

async function register(s: SqlDb, url: string | undefined, o: { beatMs: number; timeoutMs: number; reconciled?: HubRow[]; fenced?: (HubRow | undefined)[] }): Promise<HubRegistry> {
  return HubRegistry.start({
    db: s.db, dialect: s.dialect, url, log,
    identity: { host: 'test', pid: process.pid, url: 'http://127.0.0.1:1', stateDir: '/tmp/state', version: '0.0.0' },
    beatMs: o.beatMs, timeoutMs: o.timeoutMs,
    async reconcile(trx, dead) {
      await sql`INSERT INTO reconciled (hub_id, by_pid) VALUES (${dead.id}, ${process.pid})`.execute(trx);
      o.reconciled?.push(dead);
    },
    onReconciled: () => undefined,
    onFenced: (row) => o.fenced?.push(row),
  });
}

/**
 * A TCP relay to the database whose open connections can be silenced: from then on they carry
 * nothing either way and stay open, as behind a network that drops packets. New connections relay.
 */
async function silentProxy(url: string): Promise<{ url: string; silence(): void; close(): Promise<void> }> {
  const target = new URL(url);
  const pairs: [Socket, Socket][] = [];
  const all: Socket[] = [];
  const server = createServer((inbound) => {
    const outbound = connect(Number(target.port), target.hostname);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    const end = (): void => { inbound.destroy(); outbound.destroy(); };
    inbound.on('error', end);
    outbound.on('error', end);
    pairs.push([inbound, outbound]);
    all.push(inbound, outbound);
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const via = new URL(url);
  via.hostname = '127.0.0.1';
  via.port = String((server.address() as AddressInfo).port);
  return {
    url: via.toString(),
    silence() {
      for (const [i, o] of pairs.splice(0)) {
        i.unpipe(o);
        o.unpipe(i);
        i.pause();
        o.pause();
      }
    },
    close: () => new Promise<void>((res) => {
      all.forEach((x) => x.destroy());
      server.close(() => res());
    }),
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Collects what a listener hears; `next` waits for a matching item (already heard or later). */
function ear(): { heard: Heard<Events>[]; fn: (h: Heard<Events>) => void; next(pred: (h: Heard<Events>) => boolean, ms: number, what: string): Promise<Heard<Events>> } {
  const heard: Heard<Events>[] = [];
  const waiters = new Set<() => void>();
  return {
    heard,
    fn: (h) => { heard.push(h); waiters.forEach((w) => w()); },
    next: (pred, ms, what) => new Promise((resolve, reject) => {
      const check = (): boolean => {
        const h = heard.find(pred);
        if (!h) return false;
        waiters.delete(w);
        clearTimeout(t);
        resolve(h);
        return true;
      };
      const w = (): void => void check();
      const t = setTimeout(() => { waiters.delete(w); reject(new Error(`heard no ${what} within ${ms} ms; heard ${JSON.stringify(heard)}`)); }, ms);
      waiters.add(w);
      check();
    }),
  };
}
const isEvent = <K extends keyof Events>(e: K, pred: (d: Events[K]) => boolean = () => true) =>
  (h: Heard<Events>): boolean => h.kind === 'event' && h.event === e && pred(h.data as Events[K]);

describe('events across hubs on PostgreSQL (LISTEN/NOTIFY)', () => {
  async function twoHubs(t: TestContext): Promise<{ d: Db; a: { s: SqlDb; n: Notifier<Events>; ear: ReturnType<typeof ear> }; b: { s: SqlDb; n: Notifier<Events>; ear: ReturnType<typeof ear> } }> {
    const d = await database(t, 'postgres');
    const side = async (hubId: string) => {
      const s = await d.open();
      const n = new PgNotifier<Events>({ url: d.url!, hubId, log });
      const e = ear();
      const l: Listening = await n.listen(e.fn);
      d.defer(() => l.close());
      return { s, n, ear: e };
    };
    return { d, a: await side('h-a'), b: await side('h-b') };
  }

  test('a committed event reaches the other hub, with its origin; a hub never hears its own; both ways', async (t) => {
    const { a, b } = await twoHubs(t);
    assert.deepEqual(a.ear.heard, [{ kind: 'resync', reconnected: false }], 'listening starts with one resync');
    await a.s.db.transaction().execute((trx) => a.n.send(trx, 'job', { jobId: 'j-1', status: 'running' }));
    assert.deepEqual(await b.ear.next(isEvent('job'), 5000, 'job from a'), { kind: 'event', event: 'job', data: { jobId: 'j-1', status: 'running' }, hub: 'h-a' });
    await b.s.db.transaction().execute((trx) => b.n.send(trx, 'note', { key: 'k', version: 2 }));
    await a.ear.next(isEvent('note'), 5000, 'note from b');
    await a.s.db.transaction().execute((trx) => a.n.send(trx, 'lock', { holder: 'marker' }));
    await b.ear.next(isEvent('lock'), 5000, 'marker from a');
    // Notifications reach a listener in commit order: had a hub heard its own, it would be listed before the other's.
    assert.deepEqual(a.ear.heard.map((h) => h.kind === 'event' ? `${h.event}<${h.hub}` : h.kind), ['resync', 'note<h-b']);
    assert.deepEqual(b.ear.heard.map((h) => h.kind === 'event' ? `${h.event}<${h.hub}` : h.kind), ['resync', 'job<h-a', 'lock<h-a']);
  });

  test('an event sent in a transaction that rolls back never arrives; the change and its event go together', async (t) => {
    const { a, b } = await twoHubs(t);
    await assert.rejects(a.s.db.transaction().execute(async (trx) => {
      await a.n.send(trx, 'job', { jobId: 'rolled-back', status: 'running' });
      throw new Error('changed my mind');
    }), /changed my mind/);
    await a.s.db.transaction().execute((trx) => a.n.send(trx, 'job', { jobId: 'committed', status: 'running' }));
    await b.ear.next(isEvent('job', (d) => d.jobId === 'committed'), 5000, 'the committed job event');
    assert.deepEqual(b.ear.heard.filter((h) => h.kind === 'event').map((h) => (h.data as { jobId: string }).jobId), ['committed']);
  });

  test('the listening connection killed by the server (pg_terminate_backend): it reconnects, says resync, and hears again', async (t) => {
    const { a, b } = await twoHubs(t);
    const pid = async (): Promise<number | undefined> => (await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = 'overseer-listen h-b'`.execute(a.s.db)).rows[0]?.pid;
    const before = await pid();
    assert.ok(before, 'the listener runs on a connection named for its hub');
    const killedAt = performance.now();
    await sql`SELECT pg_terminate_backend(${before})`.execute(a.s.db);
    await b.ear.next((h) => h.kind === 'resync' && h.reconnected, 10_000, 'a resync after the reconnect');
    const reconnectMs = performance.now() - killedAt;
    assert.notEqual(await pid(), before, 'a new connection');
    await a.s.db.transaction().execute((trx) => a.n.send(trx, 'request', { jobId: 'j-2', requestId: 'r-1' }));
    await b.ear.next(isEvent('request'), 5000, 'an event after the reconnect');
    t.diagnostic(`listener back ${reconnectMs.toFixed(0)} ms after its connection was terminated`);
  });

  test('the listening connection cut without a word (packets dropped): the ping finds it, it reconnects, says resync, and hears again', async (t) => {
    const d = await database(t, 'postgres');
    const a = await d.open();
    const cut = await silentProxy(d.url!);
    d.defer(() => cut.close());
    const n = new PgNotifier<Events>({ url: cut.url, hubId: 'h-b', log, pingMs: 300 });
    const e = ear();
    const l = await n.listen(e.fn);
    d.defer(() => l.close());
    const cutAt = performance.now();
    cut.silence();
    await e.next((h) => h.kind === 'resync' && h.reconnected, 10_000, 'a resync after the silent cut');
    const backMs = performance.now() - cutAt;
    await a.db.transaction().execute((trx) => new PgNotifier<Events>({ url: d.url!, hubId: 'h-a', log }).send(trx, 'job', { jobId: 'after-cut', status: 'queued' }));
    await e.next(isEvent('job', (x) => x.jobId === 'after-cut'), 5000, 'an event after the reconnect');
    t.diagnostic(`silent cut found and the listener back after ${backMs.toFixed(0)} ms (ping every 300 ms)`);
  });

  test('latency: committed on one hub, heard on the other (median of 100)', async (t) => {
    const { a, b } = await twoHubs(t);
    const ms: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now();
      await a.s.db.transaction().execute((trx) => a.n.send(trx, 'progress', { jobId: `j-${i}` }));
      await b.ear.next(isEvent('progress', (d) => d.jobId === `j-${i}`), 5000, `progress ${i}`);
      ms.push(performance.now() - t0);
    }
    t.diagnostic(`notify latency (send in a transaction, commit, heard by the other hub): median ${median(ms).toFixed(2)} ms, max ${Math.max(...ms).toFixed(2)} ms over 100`);
  });
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`what a notifier refuses, on ${dialect}`, () => {
    test('outside a transaction, and a payload over PostgreSQL\'s limit: said what to do, nothing sent', async (t) => {
      const d = await database(t, dialect);
      const n: Notifier<Events> = dialect === 'postgres' ? new PgNotifier<Events>({ url: d.url!, hubId: 'h-x', log }) : new LocalNotifier<Events>('h-x');
      const ear2 = ear();
      const l = await n.listen(ear2.fn);
      d.defer(() => l.close());
      await assert.rejects(n.send(d.s.db as never, 'job', { jobId: 'j', status: 'x' }), /inside the transaction that made the change/);
      await assert.rejects(d.s.db.transaction().execute((trx) => n.send(trx, 'warning', { jobId: 'j', kind: 'x'.repeat(9000), raised: true })),
        /payload of \d+ bytes is over PostgreSQL's 7999; send ids and let the receiver read the rows/);
      await d.s.db.transaction().execute((trx) => n.send(trx, 'job', { jobId: 'j', status: 'queued' }));
      assert.deepEqual(ear2.heard, dialect === 'postgres' ? [{ kind: 'resync', reconnected: false }] : [], 'a hub hears nothing of its own; SQLite has nothing to hear');
    });
  });

  describe(`hubs on ${dialect}: registry, heartbeat, dead hubs, fencing`, () => {
    test('register, beat on the database\'s clock, stop cleanly; a stopped hub is never taken for dead, a silent one is, once', async (t) => {
      const d = await database(t, dialect);
      const reconciled: HubRow[] = [];
      const a = await register(d.s, d.url, { beatMs: 60_000, timeoutMs: 120_000 });
      const b = await register(d.s, d.url, { beatMs: 60_000, timeoutMs: 120_000, reconciled });
      d.defer(() => b.stop());
      const row = (await a.row())!;
      assert.match(row.id, /^h-[0-9a-f]{12}$/);
      assert.deepEqual({ ...row, started_at: 0, heartbeat_at: 0 }, { id: a.id, host: 'test', pid: process.pid, url: 'http://127.0.0.1:1', state_dir: '/tmp/state', version: '0.0.0', started_at: 0, heartbeat_at: 0, stopped_at: null, dead_at: null });
      const dbMs = (await sql<{ now: number }>`SELECT ${dbNow(dialect)} AS now`.execute(d.s.db)).rows[0]!.now;
      assert.ok(typeof row.heartbeat_at === 'number' && Math.abs(dbMs - row.heartbeat_at) < 5000, `heartbeat_at ${row.heartbeat_at} is the database's ms clock (${dbMs})`);
      // A row whose beat is a minute old: stopped cleanly it is left alone; not stopped it is dead.
      const age = async (id: string): Promise<void> => void await d.s.db.updateTable('hubs').set({ heartbeat_at: sql<number>`heartbeat_at - 600000` }).where('id', '=', id).execute();
      assert.equal(await a.stop(), true);
      await age(a.id);
      assert.deepEqual(await b.detect(), []);
      assert.equal((await a.row())!.dead_at, null);
      const c = await register(d.s, d.url, { beatMs: 60_000, timeoutMs: 120_000 });
      d.defer(() => c.stop());
      await age(c.id);
      const before = (await c.row())!.heartbeat_at;
      assert.deepEqual((await b.detect()).map((h) => h.id), [c.id]);
      assert.deepEqual(reconciled.map((h) => [h.id, h.heartbeat_at]), [[c.id, before]], 'the callback got the dead hub\'s row as marked');
      assert.ok((await c.row())!.dead_at! >= before + 120_000);
      assert.deepEqual(await b.detect(), [], 'found dead once');
      assert.equal(await c.stop(), false, 'a dead hub does not stop cleanly');
      assert.equal(await b.beat(), true);
      assert.deepEqual((await d.s.db.selectFrom('hubs').select('id').where('dead_at', 'is not', null).execute()).map((r) => r.id), [c.id]);
      assert.equal(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM reconciled`.execute(d.s.db)).rows[0]!.n), 1);
    });

    test('a reconcile that fails rolls the mark back: the next beat reconciles it', async (t) => {
      const d = await database(t, dialect);
      let fail = true;
      const b = await HubRegistry.start({
        db: d.s.db, dialect: d.s.dialect, url: d.url, log, beatMs: 60_000, timeoutMs: 120_000,
        identity: { host: 'test', pid: 1, url: null, stateDir: '/s', version: 'v' },
        async reconcile(trx, dead) {
          await sql`INSERT INTO reconciled (hub_id, by_pid) VALUES (${dead.id}, 1)`.execute(trx);
          if (fail) throw new Error('reconcile broke');
        },
        onReconciled: () => undefined,
        onFenced: () => undefined,
      });
      d.defer(() => b.stop());
      const c = await register(d.s, d.url, { beatMs: 60_000, timeoutMs: 120_000 });
      d.defer(() => c.stop());
      await d.s.db.updateTable('hubs').set({ heartbeat_at: sql<number>`heartbeat_at - 600000` }).where('id', '=', c.id).execute();
      await assert.rejects(b.detect(), /reconcile broke/);
      assert.equal((await c.row())!.dead_at, null);
      fail = false;
      assert.deepEqual((await b.detect()).map((h) => h.id), [c.id]);
      assert.equal(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM reconciled`.execute(d.s.db)).rows[0]!.n), 1);
    });

    test('kill -9 of a hub process: of three hubs racing, one reconciles it, once; what it owned is released', async (t) => {
      const d = await database(t, dialect);
      const beatMs = 200;
      const timeoutMs = 2000;
      const victim = await hubProc(d, beatMs, timeoutMs);
      await addJob(d.s.db, 'j-queued', 'queued', victim.id);
      await addJob(d.s.db, 'j-running', 'running', victim.id);
      await addRun(d.s.db, 'run-1', victim.id);
      await d.s.db.transaction().execute((trx) => postCommand(trx, new LocalNotifier('h-other'), { jobId: 'j-running', kind: 'cancel', by: 'lead', now: 1 }));
      // The reconcile callback holds its transaction 300 ms: the other two detect meanwhile and wait on the row.
      const detectors = await Promise.all([0, 1, 2].map(() => hubProc(d, beatMs, timeoutMs, 300)));
      const killedAt = performance.now();
      victim.p.signal('SIGKILL');
      await victim.p.exited;
      const first = await Promise.any(detectors.map((x) => x.p.event((e) => e.event === 'reconciled', timeoutMs + 15_000, 'reconciled')));
      const detectedMs = performance.now() - killedAt;
      await Promise.any(detectors.map((x) => x.p.event((e) => e.event === 'committed', 10_000, 'the reconciliation committed')));
      assert.equal(first.hub, victim.id);
      assert.deepEqual(first.released, { jobs: 1, runs: 1, workflows: 0, debates: 0 });
      assert.equal(first.commands, 1);
      // Every detector looks again, all at once, after the reconciliation committed: none finds it.
      const again = await Promise.all(detectors.map((x) => x.p.send({ op: 'detect' })));
      assert.deepEqual(again.map((a) => a.dead), [[], [], []]);
      const told = detectors.flatMap((x) => x.p.events.filter((e) => e.event === 'reconciled'));
      assert.equal(told.length, 1, `reconciled ${told.length} times: ${JSON.stringify(told)}`);
      const rows = await sql<{ hub_id: string }>`SELECT hub_id FROM reconciled`.execute(d.s.db);
      assert.deepEqual(rows.rows.map((r) => r.hub_id), [victim.id]);
      const dead = (await d.s.db.selectFrom('hubs').selectAll().where('id', '=', victim.id).executeTakeFirst())!;
      assert.ok(dead.dead_at !== null && dead.stopped_at === null);
      const jobs = await d.s.db.selectFrom('jobs').select(['id', 'hub_id']).orderBy('id').execute();
      assert.deepEqual(jobs, [{ id: 'j-queued', hub_id: null }, { id: 'j-running', hub_id: victim.id }], 'queued: unowned, for any hub; running: the caller\'s reconcile interrupts it');
      assert.equal((await d.s.db.selectFrom('runs').select('hub_id').executeTakeFirstOrThrow()).hub_id, null);
      assert.equal((await d.s.db.selectFrom('job_commands').select('outcome').executeTakeFirstOrThrow()).outcome, 'its owner hub died');
      t.diagnostic(`${dialect}: kill -9 → reconciled by another hub after ${detectedMs.toFixed(0)} ms (beat ${beatMs} ms, timeout ${timeoutMs} ms; the dead hub's last beat was ${dead.dead_at! - dead.heartbeat_at} ms before it was marked)`);
      await Promise.all(detectors.map((x) => x.p.send({ op: 'close' })));
    });

    test('a hub paused (SIGSTOP) past the timeout is reconciled by one of two others, once; continued (SIGCONT), it finds itself fenced', async (t) => {
      const d = await database(t, dialect);
      const beatMs = 200;
      const timeoutMs = 1500;
      const paused = await hubProc(d, beatMs, timeoutMs);
      // Its session lives on (PostgreSQL's lock stays held): the timeout decides, and the two others
      // race on the row; the winner holds its transaction 300 ms.
      const others = await Promise.all([0, 1].map(() => hubProc(d, beatMs, timeoutMs, 300)));
      paused.p.signal('SIGSTOP');
      d.defer(async () => paused.p.signal('SIGKILL'));
      const stoppedAt = performance.now();
      const winner = await Promise.any(others.map((o) => o.p.event((e) => e.event === 'committed' && e.hub === paused.id, timeoutMs + 15_000, 'the reconciliation committed').then(() => o)));
      const deadAfterMs = performance.now() - stoppedAt;
      assert.ok(deadAfterMs >= timeoutMs - beatMs, `found dead ${deadAfterMs.toFixed(0)} ms after the pause: not before the timeout (${timeoutMs} ms)`);
      assert.deepEqual((await Promise.all(others.map((o) => o.p.send({ op: 'detect' })))).map((a) => a.dead), [[], []]);
      assert.deepEqual(others.map((o) => o.p.events.filter((e) => e.event === 'reconciled').length), others.map((o) => (o === winner ? 1 : 0)));
      paused.p.signal('SIGCONT');
      const fenced = await paused.p.event((e) => e.event === 'fenced', 10_000, 'fenced');
      const row = (await d.s.db.selectFrom('hubs').selectAll().where('id', '=', paused.id).executeTakeFirst())!;
      assert.equal(fenced.deadAt, row.dead_at);
      assert.equal((await paused.p.send({ op: 'stop' })).clean, false, 'a fenced hub does not mark itself stopped');
      assert.equal((await d.s.db.selectFrom('hubs').select('stopped_at').where('id', '=', paused.id).executeTakeFirstOrThrow()).stopped_at, null);
      assert.equal(paused.p.events.filter((e) => e.event === 'fenced').length, 1, 'told once');
      assert.equal(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM reconciled`.execute(d.s.db)).rows[0]!.n), 1);
      t.diagnostic(`${dialect}: paused → found dead after ${deadAfterMs.toFixed(0)} ms (beat ${beatMs} ms, timeout ${timeoutMs} ms)`);
      await Promise.all([paused.p.send({ op: 'close' }), ...others.map((o) => o.p.send({ op: 'close' }))]);
    });
  });

  describe(`claims and commands on ${dialect}`, () => {
    test('two processes race to claim 50 queued jobs: each job is claimed exactly once and has exactly one attempt', async (t) => {
      const d = await database(t, dialect);
      const ids = Array.from({ length: 50 }, (_, i) => `j-${String(i).padStart(2, '0')}`);
      for (const [i, id] of ids.entries()) await addJob(d.s.db, id, 'queued', i % 5 === 0 ? 'h-one' : null);
      const pair = [await hubProc(d, 60_000, 120_000), await hubProc(d, 60_000, 120_000)];
      const answers = await Promise.all(pair.map((x, i) => x.p.send({ op: 'claim', jobs: ids, hub: i === 0 ? 'h-one' : 'h-two' })));
      const won = answers.map((a) => a.won as string[]);
      assert.equal(won[0]!.length + won[1]!.length, 50, `claims: ${won[0]!.length} + ${won[1]!.length}`);
      assert.deepEqual([...won[0]!, ...won[1]!].sort(), ids);
      assert.ok(ids.filter((_, i) => i % 5 === 0).every((id) => won[0]!.includes(id)), 'a job owned by h-one is never claimed by h-two');
      const attempts = await sql<{ job_id: string; n: number }>`SELECT job_id, count(*) AS n FROM attempts GROUP BY job_id ORDER BY job_id`.execute(d.s.db);
      assert.deepEqual(attempts.rows.map((r) => [r.job_id, Number(r.n)]), ids.map((id) => [id, 1]));
      const rows = await d.s.db.selectFrom('jobs').select(['id', 'status', 'hub_id']).orderBy('id').execute();
      assert.deepEqual(rows, ids.map((id) => ({ id, status: 'running', hub_id: won[0]!.includes(id) ? 'h-one' : 'h-two' })));
      t.diagnostic(`${dialect}: h-one claimed ${won[0]!.length}, h-two ${won[1]!.length}`);
      await Promise.all(pair.map((x) => x.p.send({ op: 'close' })));
    });

    test('claim rules: queued and own or unowned only; the claim writes what a start writes; adoption of a dead hub\'s run', async (t) => {
      const d = await database(t, dialect);
      await addJob(d.s.db, 'j-mine', 'queued', 'h-me');
      await addJob(d.s.db, 'j-free', 'queued', null);
      await addJob(d.s.db, 'j-theirs', 'queued', 'h-them');
      await addJob(d.s.db, 'j-run', 'running', 'h-me');
      const claim = (id: string) => claimJob(d.s.db, { jobId: id, hubId: 'h-me', now: 5000, tokenHash: `hash-${id}` }, async () => 'attempt');
      const mine = await claim('j-mine');
      const keys = ['id', 'status', 'hub_id', 'started_at', 'ended_at', 'token_hash', 'result', 'outcome', 'updated_at'] as const;
      assert.deepEqual(Object.fromEntries(keys.map((k) => [k, mine!.job[k]])), { id: 'j-mine', status: 'running', hub_id: 'h-me', started_at: 5000, ended_at: null, token_hash: 'hash-j-mine', result: null, outcome: null, updated_at: 5000 });
      assert.equal(mine!.then, 'attempt');
      assert.equal((await claim('j-free'))?.job.hub_id, 'h-me');
      assert.equal(await claim('j-theirs'), undefined, 'another hub\'s job is not claimed');
      assert.equal(await claim('j-run'), undefined, 'a running job is not claimed again');
      assert.equal(await claim('j-mine'), undefined);
      let ran = false;
      assert.equal(await claimJob(d.s.db, { jobId: 'j-theirs', hubId: 'h-me', now: 1, tokenHash: null }, async () => { ran = true; }), undefined);
      assert.equal(ran, false, 'within runs only for a won claim');
      // A within that throws rolls the claim back.
      await addJob(d.s.db, 'j-undo', 'queued', null);
      await assert.rejects(claimJob(d.s.db, { jobId: 'j-undo', hubId: 'h-me', now: 1, tokenHash: null }, async () => { throw new Error('attempt insert failed'); }), /attempt insert failed/);
      assert.deepEqual(await d.s.db.selectFrom('jobs').select(['status', 'hub_id']).where('id', '=', 'j-undo').executeTakeFirst(), { status: 'queued', hub_id: null });
      // Adoption: unowned, own, or the owner is dead.
      const live = await register(d.s, d.url, { beatMs: 60_000, timeoutMs: 120_000 });
      d.defer(() => live.stop());
      await addRun(d.s.db, 'run-live', live.id);
      await addRun(d.s.db, 'run-dead', 'h-dead');
      await addRun(d.s.db, 'run-free', null);
      await d.s.db.insertInto('hubs').values({ id: 'h-dead', host: 'x', pid: 1, url: null, state_dir: '/s', version: 'v', started_at: 1, heartbeat_at: 1, stopped_at: null, dead_at: 2 }).execute();
      assert.equal(await adopt(d.s.db, 'runs', 'run-live', 'h-me'), false, 'a live hub\'s run stays its own');
      assert.equal(await adopt(d.s.db, 'runs', 'run-dead', 'h-me'), true);
      assert.equal(await adopt(d.s.db, 'runs', 'run-free', 'h-me'), true);
      assert.equal(await adopt(d.s.db, 'runs', 'run-free', 'h-other'), false, 'adopted once');
      assert.equal(await adopt(d.s.db, 'runs', 'run-free', 'h-me'), true, 'its own');
      const released = await d.s.db.transaction().execute((trx) => releaseOwned(trx, 'h-me'));
      assert.deepEqual(released, { jobs: 0, runs: 2, workflows: 0, debates: 0 });
    });

    test('job commands: posted for the owner, told on commit (PostgreSQL), taken by the owner only, done once, closed when the owner dies', async (t) => {
      const d = await database(t, dialect);
      await addJob(d.s.db, 'j-1', 'running', 'h-owner');
      await addJob(d.s.db, 'j-2', 'running', 'h-elsewhere');
      const ears = ear();
      const owner: Notifier<Events> = dialect === 'postgres' ? new PgNotifier<Events>({ url: d.url!, hubId: 'h-owner', log }) : new LocalNotifier<Events>('h-owner');
      const l = await owner.listen(ears.fn);
      d.defer(() => l.close());
      const asker: Notifier<LayerEvents> = dialect === 'postgres' ? new PgNotifier<LayerEvents>({ url: d.url!, hubId: 'h-asker', log }) : new LocalNotifier<LayerEvents>('h-asker');
      const id = await d.s.db.transaction().execute((trx) => postCommand(trx, asker, { jobId: 'j-1', kind: 'freeze', reason: 'hold on', by: 'lead', now: 10 }));
      await d.s.db.transaction().execute((trx) => postCommand(trx, asker, { jobId: 'j-2', kind: 'cancel', by: 'j-9', now: 11 }));
      if (dialect === 'postgres') {
        assert.deepEqual(await ears.next(isEvent('command', (c) => c.jobId === 'j-1'), 5000, 'command'), { kind: 'event', event: 'command', data: { jobId: 'j-1', commandId: id }, hub: 'h-asker' });
      }
      await assert.rejects(d.s.db.transaction().execute((trx) => postCommand(trx, asker, { jobId: 'j-1', kind: 'explode' as never, by: 'lead', now: 1 })), /job command kind "explode" is not one of cancel, stop, freeze, thaw/);
      const pending = await pendingCommands(d.s.db, 'h-owner');
      assert.deepEqual(pending, [{ id, job_id: 'j-1', kind: 'freeze', reason: 'hold on', by: 'lead', created_at: 10, done_at: null, outcome: null }]);
      assert.equal(await finishCommand(d.s.db, id, 'frozen', 20), true);
      assert.equal(await finishCommand(d.s.db, id, 'frozen again', 21), false, 'done once');
      assert.deepEqual(await pendingCommands(d.s.db, 'h-owner'), []);
      assert.equal(await d.s.db.transaction().execute((trx) => closeCommandsOf(trx, 'h-elsewhere', 'its owner hub died', 30)), 1);
      const all = await d.s.db.selectFrom('job_commands').select(['job_id', 'done_at', 'outcome']).orderBy('id').execute();
      assert.deepEqual(all, [{ job_id: 'j-1', done_at: 20, outcome: 'frozen' }, { job_id: 'j-2', done_at: 30, outcome: 'its owner hub died' }]);
    });
  });
}

describe('faster detection on PostgreSQL: the hub\'s session lock', () => {
  test('the lock\'s connection killed by the server: the hub takes the lock again on a new one and, beating, is never taken for dead', async (t) => {
    const d = await database(t, 'postgres');
    const a = await register(d.s, d.url, { beatMs: 60_000, timeoutMs: 120_000 });
    d.defer(() => a.stop());
    // b's fast path takes a hub for dead whose beat is 200 ms old and whose lock is free.
    const b = await register(d.s, d.url, { beatMs: 100, timeoutMs: 60_000 });
    d.defer(() => b.stop());
    const holder = async (): Promise<number | undefined> => (await sql<{ pid: number }>`
      SELECT a.pid FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
      WHERE a.application_name = ${`overseer-hub ${a.id}`} AND l.locktype = 'advisory' AND l.classid = 5 AND l.granted`.execute(d.s.db)).rows[0]?.pid;
    const first = await holder();
    assert.ok(first, 'the hub holds its lock on a connection named for it');
    // a beats every 60 s, b's fast path looks every 100 ms: while a's lock is free (killed, not yet
    // taken again: long on a loaded machine) a's beat must be fresh, as a hub of b's own beat keeps
    // it — or b's own round takes a for dead in that window, which is not what this test is about.
    await d.s.db.updateTable('hubs').set({ heartbeat_at: Date.now() + 60_000 }).where('id', '=', a.id).execute();
    await sql`SELECT pg_terminate_backend(${first})`.execute(d.s.db);
    const until = Date.now() + 10_000;
    let again: number | undefined;
    while (!(again = await holder()) || again === first) {
      if (Date.now() > until) throw new Error('the lock was not taken again within 10 s');
    }
    // Its beat a second old (past b's two beats), but its lock held again: not dead.
    await d.s.db.updateTable('hubs').set({ heartbeat_at: Date.now() - 1000 }).where('id', '=', a.id).execute();
    assert.deepEqual(await b.detect(), []);
    assert.equal((await a.row())!.dead_at, null);
    // The control: with its lock gone for good, the same old beat is a dead hub.
    await sql`SELECT pg_terminate_backend(${again})`.execute(d.s.db);
    await a.stop();
    await d.s.db.updateTable('hubs').set({ stopped_at: null }).where('id', '=', a.id).execute();
    await b.detect(); // or b's own beat, which runs every 100 ms: a row lock waits for whichever holds it
    const marked = await d.s.db.transaction().execute((trx) => trx.selectFrom('hubs').select('dead_at').where('id', '=', a.id).forUpdate().executeTakeFirstOrThrow());
    assert.notEqual(marked.dead_at, null);
  });

  test('kill -9: the hub\'s session is gone, so it is found dead after two beats, long before the timeout', async (t) => {
    const d = await database(t, 'postgres');
    const beatMs = 200;
    const timeoutMs = 60_000;
    const victim = await hubProc(d, beatMs, timeoutMs);
    const other = await hubProc(d, beatMs, timeoutMs);
    // A live hub with the same settings is not taken for dead: its heartbeat is fresh and its lock held.
    const live = await hubProc(d, beatMs, timeoutMs);
    const killedAt = performance.now();
    victim.p.signal('SIGKILL');
    // Either of the two live hubs may find it first.
    await Promise.any([other, live].map((x) => x.p.event((e) => e.event === 'committed' && e.hub === victim.id, 15_000, 'the reconciliation committed')));
    const ms = performance.now() - killedAt;
    assert.ok(ms < timeoutMs / 2, `found dead after ${ms.toFixed(0)} ms`);
    assert.deepEqual((await Promise.all([other, live].map((x) => x.p.send({ op: 'detect' })))).map((a) => a.dead), [[], []]);
    assert.equal([other, live].flatMap((x) => x.p.events.filter((e) => e.event === 'reconciled')).length, 1);
    assert.deepEqual((await d.s.db.selectFrom('hubs').select('id').where('dead_at', 'is not', null).execute()).map((r) => r.id), [victim.id]);
    assert.equal(live.p.events.filter((e) => e.event === 'fenced').length, 0);
    t.diagnostic(`postgres, session lock: kill -9 → reconciled after ${ms.toFixed(0)} ms (beat ${beatMs} ms, timeout ${timeoutMs} ms)`);
    await Promise.all([other.p.send({ op: 'close' }), live.p.send({ op: 'close' })]);
  });
});
