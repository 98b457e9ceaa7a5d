// The bus across hubs (docs/store-plan.md §3.1, §3.2; docs/decisions.md "Events across hubs"):
// two hubs' buses on one PostgreSQL database, each with its relay and its own notifier (the
// property is about the bus, so both live in this process; each listens on a connection of its
// own, as two hub processes would). An event crosses to the subscribers that asked for other hubs'
// events and to no other; a hub never hears its own; a listening connection killed by the server
// comes back with a resync that wakes a waiter whose condition changed meanwhile; progress crosses
// at most once per gap per job; the waiters the services use wake for a change made by another hub.
// And on SQLite the relay does nothing.
import { test, describe, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pino from 'pino';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { LocalNotifier, PgNotifier, type LayerEvents } from '../../src/store/sql/notify.js';
import { getNote, setNote } from '../../src/store/sql/notes.js';
import { Bus, type BusEvents } from '../../src/services/bus.js';
import { relayBus, type Relay } from '../../src/services/relay.js';
import { waitUntil } from '../../src/services/wait.js';
import { Limits } from '../../src/limits/service.js';
import { accounts } from '../../src/limits/account.js';
import { systemClock, type Clock } from '../../src/clock.js';
import { freshDatabase } from '../helpers/postgres.js';

type Events = BusEvents & LayerEvents;
const log = pino({ level: 'silent' });

interface Side {
  hubId: string;
  bus: Bus;
  relay: Relay;
  s: SqlDb;
}

/** Two hubs (buses with relays, started) on one fresh PostgreSQL database; all closed after the test. */
async function twoHubs(t: TestContext, progressGapMs?: number): Promise<{ a: Side; b: Side; url: string }> {
  const home = mkdtempSync(join(tmpdir(), 'overseer-bus-relay-'));
  const d = await freshDatabase();
  const sides: Side[] = [];
  t.after(async () => {
    for (const x of sides) await x.relay.stop();
    for (const x of sides) await x.s.close();
    await d.drop();
    rmSync(home, { recursive: true, force: true });
  });
  const side = async (name: string): Promise<Side> => {
    const hubId = `h-${name}-${randomBytes(4).toString('hex')}`;
    const s = await openSql({ home, databaseUrl: d.url });
    const bus = new Bus();
    const relay = relayBus({ bus, notifier: new PgNotifier<Events>({ url: d.url, hubId, log }), db: s.db, log, progressGapMs });
    const x = { hubId, bus, relay, s };
    sides.push(x);
    await relay.start();
    return x;
  };
  return { a: await side('a'), b: await side('b'), url: d.url };
}

/** Resolves with the first `event` on `bus` (heard as `remote` says) that `pred` accepts; rejects after `ms`. */
function heard<K extends keyof BusEvents>(bus: Bus, event: K, pred: (e: BusEvents[K]) => boolean, ms: number, what: string): Promise<BusEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`${what}: not heard within ${ms} ms`)); }, ms);
    const off = bus.on(event, (e) => {
      if (!pred(e)) return;
      clearTimeout(timer);
      off();
      resolve(e);
    }, { remote: 'only', resync: null });
  });
}

describe('the bus across hubs on PostgreSQL', () => {
  test('an event crosses to the remote subscribers of the other hub only; its origin hears it once', async (t) => {
    const { a, b } = await twoHubs(t);
    const onB = { remote: [] as string[], local: [] as string[], only: [] as string[] };
    const onA = { remote: [] as string[], local: [] as string[] };
    b.bus.on('job', (e) => void onB.remote.push(e.jobId), { remote: true, resync: null });
    b.bus.on('job', (e) => void onB.local.push(e.jobId));
    b.bus.on('job', (e) => void onB.only.push(e.jobId), { remote: 'only', resync: null });
    a.bus.on('job', (e) => void onA.remote.push(e.jobId), { remote: true, resync: null });
    a.bus.on('job', (e) => void onA.local.push(e.jobId));
    // B answers each of A's events with one of its own: when A hears B's answer, A's own event,
    // committed before it, would have reached A's listener already had it not been skipped.
    b.bus.on('job', (e) => { if (e.jobId === 'j-1') b.bus.emit('note', { key: 'answer', version: 1 }); }, { remote: 'only', resync: null });
    const answered = heard(a.bus, 'note', (e) => e.key === 'answer', 10_000, 'B\'s answer on A');
    a.bus.emit('job', { jobId: 'j-1', status: 'running' });
    await answered;
    assert.deepEqual(onB, { remote: ['j-1'], local: [], only: ['j-1'] }, 'B: the remote subscribers heard it, the local-only one did not');
    assert.deepEqual(onA, { remote: ['j-1'], local: ['j-1'] }, 'A: its own subscribers heard it once, locally, and not again from the database');
    assert.deepEqual([a.relay.counts().heard, b.relay.counts().heard], [1, 1], 'one event crossed each way');
  });

  test('B\'s listening connection killed by the server: B\'s remote subscribers get the resync and a waiter whose condition changed meanwhile returns', async (t) => {
    const { a, b } = await twoHubs(t);
    const key = 'gate';
    const resynced: number[] = [];
    b.bus.on('lock', () => undefined, { remote: true, resync: () => resynced.push(1) });
    const base = b.relay.counts().resyncs;
    // The real waiter, on B: waiting for a note that does not exist yet.
    const waiting = waitUntil({
      bus: b.bus, events: ['note'], timeoutMs: 20_000,
      check: async () => (await getNote(b.s.db, key))?.value,
    });
    // The change lands without any event at all (as if its notification was lost), then B's
    // listening connection is killed: only the resync after the reconnect can wake the waiter.
    await setNote(a.s.db, { key, value: 'open', author: 'a', now: Date.now() });
    const pid = (await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = ${`overseer-listen ${b.hubId}`} AND datname = current_database()`.execute(a.s.db)).rows[0]?.pid;
    assert.ok(pid, 'B listens on a connection named for its hub');
    const killedAt = performance.now();
    await sql`SELECT pg_terminate_backend(${pid})`.execute(a.s.db);
    const r = await waiting;
    assert.deepEqual(r, { ok: true, value: 'open' }, 'the waiter re-checked on the resync and returned');
    assert.equal(b.relay.counts().resyncs, base + 1, 'one resync after the reconnect');
    assert.deepEqual(resynced, [1], 'every remote subscriber of B got it, once');
    t.diagnostic(`waiter back ${(performance.now() - killedAt).toFixed(0)} ms after its hub's listening connection was terminated`);
    // And events cross again.
    const again = heard(b.bus, 'job', (e) => e.jobId === 'after', 10_000, 'an event after the reconnect');
    a.bus.emit('job', { jobId: 'after', status: 'queued' });
    await again;
  });

  test('progress crosses at most once per gap per job: a burst is its first and its last', async (t) => {
    const gap = 400;
    const { a, b } = await twoHubs(t, gap);
    const arrivals = new Map<string, number[]>();
    b.bus.on('progress', (e) => { const l = arrivals.get(e.jobId) ?? []; l.push(performance.now()); arrivals.set(e.jobId, l); }, { remote: true, resync: null });
    const local: string[] = [];
    a.bus.on('progress', (e) => void local.push(e.jobId));
    const trailing = heard(b.bus, 'progress', (e) => e.jobId === 'j-1' && (arrivals.get('j-1')?.length ?? 0) >= 2, 10_000, 'the burst\'s last progress');
    for (let i = 0; i < 50; i++) {
      a.bus.emit('progress', { jobId: 'j-1' });
      if (i % 10 === 0) a.bus.emit('progress', { jobId: 'j-2' });
    }
    await trailing;
    // A marker sent after the window closed arrives after anything the burst could still send.
    const marker = heard(b.bus, 'job', (e) => e.jobId === 'marker', 10_000, 'the marker');
    a.bus.emit('job', { jobId: 'marker', status: 'queued' });
    await marker;
    assert.equal(local.length, 55, 'A\'s own subscribers heard every progress event');
    const j1 = arrivals.get('j-1') ?? [];
    assert.equal(j1.length, 2, 'of 50 progress events of one job in a burst, two crossed: the first and the last');
    assert.ok(j1[1]! - j1[0]! >= gap * 0.9, `the second crossed a gap (${gap} ms) after the first (${(j1[1]! - j1[0]!).toFixed(0)} ms)`);
    assert.equal(arrivals.get('j-2')?.length, 2, 'each job has its own window');
    await a.relay.idle(); // B can hear a publish before A's statement has returned: count once A's sends are done
    assert.equal(a.relay.counts().sent, 5, 'what crossed: 2 + 2 progress, 1 job');
  });

  test('a waiter the services use, on hub B, wakes for a note written on hub A within a deadline', async (t) => {
    const { a, b } = await twoHubs(t);
    const waiting = waitUntil({
      bus: b.bus, events: ['note'], timeoutMs: 10_000,
      check: async () => (await getNote(b.s.db, 'plan/api'))?.value,
    });
    const started = performance.now();
    const version = await setNote(a.s.db, { key: 'plan/api', value: 'v1', author: 'a', now: Date.now() });
    a.bus.emit('note', { key: 'plan/api', version }); // as NoteService does after the write committed
    const r = await waiting;
    assert.deepEqual(r, { ok: true, value: 'v1' });
    t.diagnostic(`waiter on B woke ${(performance.now() - started).toFixed(1)} ms after A began its write`);
  });
});

describe('provider limits across hubs on PostgreSQL', () => {
  test('a limit opened on hub A holds on hub B (same account), and its passing on A lets B\'s paused child go and B dispatch', async (t) => {
    const { a, b } = await twoHubs(t);
    let aheadMs = 0; // A's clock, moved past the limit's wait to let A's next answer close it
    const make = (x: Side, calls: string[], clock: Clock): Limits => {
      const l = new Limits({
        q: x.s.db, bus: x.bus, clock, log, settings: { backoffBaseMs: 60_000, backoffCapMs: 60_000, probeLeaseMs: 60_000 },
        accounts: accounts({ ANTHROPIC_API_KEY: 'same-key', HOME: '/h' }), rand: () => 0,
      }, { pause: (id) => { calls.push(`pause ${id}`); return true; }, unpause: (id) => { calls.push(`unpause ${id}`); return true; }, dispatch: () => void calls.push('dispatch') });
      t.after(() => l.close());
      return l;
    };
    const onA: string[] = [];
    const onB: string[] = [];
    const la = make(a, onA, { now: () => Date.now() + aheadMs });
    const lb = make(b, onB, systemClock);
    await Promise.all([la.ready(), lb.ready()]);
    la.start();
    lb.start();
    /** B has heard A's change into `phase` and read the row again (its rereads run in order with its writes). */
    const bRead = async (phase: string): Promise<void> => {
      await heard(b.bus, 'limit', (e) => e.phase === phase, 10_000, `A's limit ${phase} on B`);
      await lb.settled();
    };
    assert.equal(lb.room('claude'), 'all');
    let read = bRead('open');
    la.limitSeen('claude', 'j-a', { kind: 'rate_limit', status: 429, retryAfterMs: 60_000, message: '429' }, false);
    await read;
    assert.equal(lb.room('claude'), 'none', 'B starts nothing of that account while A\'s limit holds');
    assert.equal(lb.admit('claude', 'q-b'), 'wait');
    lb.limitSeen('claude', 'j-b', { kind: 'rate_limit', status: 429, retryAfterMs: 60_000, message: '429' }, true);
    assert.deepEqual(onB, ['pause j-b'], 'B pauses its own child that meets the limit');
    await lb.settled();
    read = bRead('closed');
    aheadMs = 61_000;
    la.answered('claude', 'j-a');
    await read;
    assert.equal(lb.room('claude'), 'all', 'passed on A: passed on B');
    assert.deepEqual(onB.slice(1), ['unpause j-b', 'dispatch'], 'B\'s paused child goes on, its queue starts');
  });
});

describe('on SQLite the relay does nothing', () => {
  test('no tap on the bus, nothing sent, starting and stopping cost no connection', async (t) => {
    const home = mkdtempSync(join(tmpdir(), 'overseer-bus-relay-'));
    const s = await openSql({ home });
    t.after(async () => { await s.close(); rmSync(home, { recursive: true, force: true }); });
    const bus = new Bus();
    const relay = relayBus({ bus, notifier: new LocalNotifier<Events>('h-local'), db: s.db, log });
    await relay.start();
    const taps = (bus as unknown as { taps: Set<unknown> }).taps;
    assert.equal(taps.size, 0, 'the bus is not tapped');
    const got: string[] = [];
    bus.on('job', (e) => void got.push(e.jobId), { remote: true, resync: null });
    bus.emit('job', { jobId: 'j', status: 'queued' });
    assert.deepEqual(got, ['j']);
    await relay.stop();
    assert.deepEqual(relay.counts(), { sent: 0, heard: 0, resyncs: 0 });
  });
});
