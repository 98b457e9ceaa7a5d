// The lock decisions (src/store/sql/lockDecisions.ts) on SQLite and PostgreSQL, raced by real
// processes on connections of their own (test/helpers/lockRacer.ts): a grant is all-or-nothing
// and never shares a path, the hook's auto lock goes to one caller, waiters are served in arrival
// order by exactly one of several concurrent servers, and of two crossing requests that would
// deadlock exactly one is refused. On PostgreSQL (READ COMMITTED) these hold only because every
// decision first takes the lock tables' advisory lock; on SQLite because it is BEGIN IMMEDIATE.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { acquireOrWait, endWait } from '../../src/store/sql/lockDecisions.js';
import { allLocks, lockTx, release, waiting } from '../../src/store/sql/locks.js';
import { UNSHARED } from '../../src/domain/lockKeys.js';
import { freshDatabase } from '../helpers/postgres.js';
import { all, startRacer, type Racer } from '../helpers/sqlRacers.js';

const LOCK_RACER = join(import.meta.dirname, '..', 'helpers', 'lockRacer.ts');
const RACERS = 4;
const ROUNDS = 20;

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const P = (name: string): string => `/work/tree/${name}`;

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`lock decisions on ${dialect}, ${RACERS} connections`, () => {
    let drop = async (): Promise<void> => undefined;
    let s: SqlDb;
    const racers: Racer[] = [];
    before(async () => {
      const config = { home: mkdtempSync(join(tmpdir(), 'overseer-sql-locks-')), databaseUrl: undefined as string | undefined };
      dirs.push(config.home);
      if (dialect === 'postgres') {
        const fresh = await freshDatabase();
        config.databaseUrl = fresh.url;
        drop = fresh.drop;
      }
      s = await openSql(config); // migrates (SQLite: before the racers open the same file)
      for (let i = 0; i < RACERS; i++) racers.push(await startRacer(30_000, LOCK_RACER));
      await all(racers, { op: 'open', home: config.home, url: config.databaseUrl });
    });
    after(async () => {
      await all(racers, { op: 'close' }).catch(() => racers.forEach((r) => r.kill()));
      await s.close();
      await drop();
    });
    beforeEach(async () => {
      await s.db.deleteFrom('locks').execute();
      await s.db.deleteFrom('lock_waits').execute();
    });

    const holders = async (): Promise<Record<string, string>> => Object.fromEntries((await allLocks(s.db)).map((l) => [l.path, l.holder]));

    test('overlapping all-or-nothing requests at once: each grant holds every path it asked for, a refusal holds none', async () => {
      // Racer i asks for files i and i+1 of a ring of four (and racer 0 for a third one too): every
      // request overlaps two others.
      const ring = ['a', 'b', 'c', 'd'].map(P);
      const wants = racers.map((_, i) => [ring[i]!, ring[(i + 1) % ring.length]!, ...(i === 0 ? [ring[2]!] : [])].sort());
      let grants = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'acquire', holder: `r${i}`, paths: wants[i], wait: false })));
        const won = answers.flatMap((a, i) => (a.kind === 'granted' ? [i] : []));
        assert.ok(won.length >= 1, `round ${round}: someone must win on free files: ${JSON.stringify(answers)}`);
        for (const i of won) assert.deepEqual(answers[i]!.heldBy, Object.fromEntries(wants[i]!.map((p) => [p, `r${i}`])), `round ${round}: r${i} was granted all of ${wants[i]} but holds ${JSON.stringify(answers[i]!.heldBy)}`);
        for (const [i, a] of answers.entries()) if (a.kind !== 'granted') assert.equal(a.kind, 'held', JSON.stringify(a));
        const now = await holders();
        const expected = Object.fromEntries(won.flatMap((i) => wants[i]!.map((p) => [p, `r${i}`])));
        assert.deepEqual(now, expected, `round ${round}: exactly the winners' files are held, by them`);
        grants += won.length;
        for (const i of won) await lockTx(s.db, (trx) => release(trx, `r${i}`));
      }
      assert.ok(grants >= ROUNDS);
    });

    test('the hook on one free file from every connection at once: one takes it, the others are denied', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const f = P(`hook-${round}.ts`);
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'hook', holder: `r${i}`, targets: [f] })));
        const took = answers.flatMap((a, i) => (a.kind === 'took' ? [i] : []));
        assert.equal(took.length, 1, `round ${round}: ${JSON.stringify(answers)}`);
        assert.deepEqual(answers[took[0]!]!.took, [f]);
        assert.deepEqual(answers[took[0]!]!.heldBy, { [f]: `r${took[0]}` });
        assert.deepEqual(answers.filter((a) => a.kind !== 'took').map((a) => a.kind), Array(RACERS - 1).fill('held'));
      }
    });

    test('waiters are served in arrival order, each grant by exactly one of the servers racing to make it', async () => {
      const x = P('fifo.txt');
      assert.equal((await acquireOrWait(s.db, { holder: 'first', scope: UNSHARED, paths: [x], reason: null, ttlS: 600, now: Date.now(), wait: false })).kind, 'granted');
      const asks = await Promise.all(racers.map((r, i) => r.send({ op: 'acquire', holder: `w${i}`, paths: [x], wait: true })));
      assert.deepEqual(asks.map((a) => a.kind), Array(RACERS).fill('waiting'));
      const order = asks.map((a, i) => ({ id: a.waitId as number, holder: `w${i}` })).sort((a, b) => a.id - b.id);
      assert.deepEqual((await waiting(s.db)).map((w) => w.holder), order.map((o) => o.holder), 'the wait rows are in arrival (id) order');
      let current = 'first';
      for (const next of order) {
        await lockTx(s.db, (trx) => release(trx, current));
        const served = await all(racers, { op: 'grant' });
        assert.deepEqual(served.flatMap((r) => r.granted as string[]), [next.holder], `after ${current} released, only the oldest waiter is granted, once: ${JSON.stringify(served)}`);
        assert.deepEqual(await holders(), { [x]: next.holder });
        assert.equal(await endWait(s.db, next.id, next.holder, true), 'granted');
        current = next.holder;
      }
      assert.deepEqual(await waiting(s.db), []);
    });

    test('A holds x and waits for y; B holds y and asks for x: B is refused with the cycle', async () => {
      const [a, b] = racers;
      const [x, y] = [P('x.txt'), P('y.txt')];
      assert.equal((await a!.send({ op: 'acquire', holder: 'A', paths: [x], wait: false })).kind, 'granted');
      assert.equal((await b!.send({ op: 'acquire', holder: 'B', paths: [y], wait: false })).kind, 'granted');
      assert.equal((await a!.send({ op: 'acquire', holder: 'A', paths: [y], wait: true })).kind, 'waiting');
      const refused = await b!.send({ op: 'acquire', holder: 'B', paths: [x], wait: true });
      assert.equal(refused.kind, 'deadlock');
      assert.deepEqual((refused.cycle as { waiter: string; holder: string }[]).map((e) => [e.waiter, e.holder]).sort(), [['A', 'B'], ['B', 'A']]);
      assert.deepEqual((await waiting(s.db)).map((w) => w.holder), ['A'], 'the refused request left no wait');
    });

    test('crossing requests made at the same moment: exactly one of the two is refused, the other waits', async () => {
      const [a, b] = racers;
      for (let round = 0; round < ROUNDS; round++) {
        await s.db.deleteFrom('locks').execute();
        await s.db.deleteFrom('lock_waits').execute();
        const [x, y] = [P(`cx-${round}`), P(`cy-${round}`)];
        assert.equal((await a!.send({ op: 'acquire', holder: 'A', paths: [x], wait: false })).kind, 'granted');
        assert.equal((await b!.send({ op: 'acquire', holder: 'B', paths: [y], wait: false })).kind, 'granted');
        const both = await Promise.all([a!.send({ op: 'acquire', holder: 'A', paths: [y], wait: true }), b!.send({ op: 'acquire', holder: 'B', paths: [x], wait: true })]);
        assert.deepEqual(both.map((r) => r.kind).sort(), ['deadlock', 'waiting'], `round ${round}: ${JSON.stringify(both)}`);
        assert.equal((await waiting(s.db)).length, 1);
      }
    });
  });
}
