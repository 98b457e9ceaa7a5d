// What the bus across hubs costs a tool call (issue 29 step 9; docs/decisions.md "Events across
// hubs"). The call is write_note's store work: the note's CAS write (its own transaction) then the
// bus's emit, as NoteService does. Three ways, interleaved in rounds so load moves them alike:
//   none    — no relay (a hub alone);
//   relay   — the relay taps the bus and publishes after commit, one statement on the pool, off
//             the caller's path (what is built): back to back (a publish runs on beside the next
//             call) and spaced (each call starts after the last one's publish: one call alone);
//   in-tx   — `SELECT pg_notify(…)` as the writer transaction's last statement (§3.2's first idea).
// On PostgreSQL (a fresh database on the test server) and on SQLite (none against the relay with
// the SQLite notifier, which does nothing). Also: how long an event takes from hub A's emit to a
// remote subscriber on hub B. Median and p90 of N calls each, µs.
// Run alone: node --import tsx bench/bus-relay.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { openSql, type SqlDb } from '../src/store/sql/open.js';
import { setNote } from '../src/store/sql/notes.js';
import { LocalNotifier, PgNotifier, type LayerEvents } from '../src/store/sql/notify.js';
import { Bus, type BusEvents } from '../src/services/bus.js';
import { relayBus } from '../src/services/relay.js';
import { freshDatabase } from '../test/helpers/postgres.js';
import { out, runAlone, stats, type Stats } from './common.js';

type Events = BusEvents & LayerEvents;
const N = Number(process.env.N ?? 300);
const log = pino({ level: 'silent' });

export interface BusRelayResult { calls: number; postgres: { none: Stats; relay: Stats; spaced: Stats; inTx: Stats; crossUs: Stats }; sqlite: { none: Stats; relay: Stats } }

const fmt = (s: Stats): string => `median ${s.p50.toFixed(0)} µs, p90 ${s.p90.toFixed(0)} µs`;

export async function benchBusRelay(): Promise<BusRelayResult> {
  const home = mkdtempSync(join(tmpdir(), 'overseer-bench-relay-'));
  const d = await freshDatabase();
  const opened: SqlDb[] = [];
  const open = async (url?: string): Promise<SqlDb> => {
    const s = await openSql({ home: url ? home : mkdtempSync(join(home, 'lite-')), databaseUrl: url });
    opened.push(s);
    return s;
  };
  try {
    // PostgreSQL: hub A (the caller) and hub B (a listener, so the notifications have a reader).
    const a = await open(d.url);
    const b = await open(d.url);
    const busA = new Bus();
    const busB = new Bus();
    const nA = new PgNotifier<Events>({ url: d.url, hubId: 'h-a', log });
    const relayB = relayBus({ bus: busB, notifier: new PgNotifier<Events>({ url: d.url, hubId: 'h-b', log }), db: b.db, log });
    await relayB.start();
    let v = 0;
    const write = async (s: SqlDb, bus: Bus): Promise<void> => {
      const version = await setNote(s.db, { key: 'bench', value: `v${++v}`, author: 'a', now: Date.now() });
      bus.emit('note', { key: 'bench', version });
    };
    const busPlain = new Bus(); // hub A's bus with no relay: "none" and "in-tx"
    const inTx = async (): Promise<void> => {
      const version = await a.db.transaction().execute(async (trx) => {
        const ver = await setNote(trx, { key: 'bench', value: `v${++v}`, author: 'a', now: Date.now() });
        await nA.send(trx, 'note', { key: 'bench', version: ver });
        return ver;
      });
      busPlain.emit('note', { key: 'bench', version });
    };
    const relayA = relayBus({ bus: busA, notifier: nA, db: a.db, log });
    await relayA.start();
    const pg = { none: [] as number[], relay: [] as number[], inTx: [] as number[], spaced: [] as number[] };
    const time = async (into: number[], fn: () => Promise<void>): Promise<void> => {
      const t = performance.now();
      await fn();
      into.push((performance.now() - t) * 1000);
    };
    for (let i = 0; i < 20; i++) await write(a, busA); // warm the pool and the statement paths
    const ways = [
      () => time(pg.none, () => write(a, busPlain)),
      () => time(pg.inTx, inTx),
      () => time(pg.relay, () => write(a, busA)),
      async () => { await time(pg.spaced, () => write(a, busA)); await relayA.idle(); }, // the next call after the publish
    ];
    // In blocks of 10 calls of one way, the blocks' order rotating: a relay's publish, which runs
    // on after its call returned, weighs on the calls of its own block, not on another way's.
    for (let i = 0; i < N / 10; i++) for (let k = 0; k < 4; k++) for (let j = 0; j < 10; j++) await ways[(i + k) % 4]!();
    // Emit on A → heard by a remote subscriber on B.
    const cross: number[] = [];
    for (let i = 0; i < N; i++) {
      const heard = new Promise<void>((resolve) => {
        const off = busB.on('job', (e) => { if (e.jobId === `j-${i}`) { off(); resolve(); } }, { remote: 'only', resync: null });
      });
      const t = performance.now();
      busA.emit('job', { jobId: `j-${i}`, status: 'running' });
      await heard;
      cross.push((performance.now() - t) * 1000);
    }
    await relayA.stop();
    await relayB.stop();

    // SQLite: the relay with the SQLite notifier does nothing.
    const lite = await open();
    const busL = new Bus();
    const busLR = new Bus();
    const relayL = relayBus({ bus: busLR, notifier: new LocalNotifier<Events>('h-l'), db: lite.db, log });
    await relayL.start();
    const sq = { none: [] as number[], relay: [] as number[] };
    for (let i = 0; i < 50; i++) await write(lite, busL);
    for (let i = 0; i < N / 2; i++) {
      for (let j = 0; j < 10; j++) await time(i % 2 ? sq.none : sq.relay, () => write(lite, i % 2 ? busL : busLR));
      for (let j = 0; j < 10; j++) await time(i % 2 ? sq.relay : sq.none, () => write(lite, i % 2 ? busLR : busL));
    }
    await relayL.stop();
    const r: BusRelayResult = {
      calls: N,
      postgres: { none: stats(pg.none), relay: stats(pg.relay), spaced: stats(pg.spaced), inTx: stats(pg.inTx), crossUs: stats(cross) },
      sqlite: { none: stats(sq.none), relay: stats(sq.relay) },
    };
    out(`bus relay, ${N} calls each (write_note's store work: CAS write + emit)\n`);
    out(`  PostgreSQL  none:  ${fmt(r.postgres.none)}\n`);
    out(`  PostgreSQL  relay: ${fmt(r.postgres.relay)}   (publish after commit, off the caller's path)\n`);
    out(`  PostgreSQL  relay, each call after the last one's publish: ${fmt(r.postgres.spaced)}\n`);
    out(`  PostgreSQL  in-tx: ${fmt(r.postgres.inTx)}   (pg_notify in the writer's transaction)\n`);
    out(`  PostgreSQL  emit on A → heard on B: ${fmt(r.postgres.crossUs)}\n`);
    out(`  SQLite      none:  ${fmt(r.sqlite.none)} (${N * 5} calls)\n`);
    out(`  SQLite      relay: ${fmt(r.sqlite.relay)}\n`);
    return r;
  } finally {
    for (const s of opened.reverse()) await s.close();
    await d.drop();
    rmSync(home, { recursive: true, force: true });
  }
}

runAlone(import.meta.url, benchBusRelay);
