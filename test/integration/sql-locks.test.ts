// The lock decisions (src/store/sql/lockDecisions.ts) on SQLite and PostgreSQL, raced by real
// processes on connections of their own (test/helpers/lockRacer.ts): a grant is all-or-nothing
// and never shares a path, the hook's auto lock goes to one caller, waiters are served in arrival
// order by exactly one of several concurrent servers, and of two crossing requests that would
// deadlock exactly one is refused. On PostgreSQL (READ COMMITTED) these hold only because every
// decision first takes the lock tables' advisory lock; on SQLite because it is BEGIN IMMEDIATE.
import { test, describe, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSql } from '../../src/store/sql/open.js';
import { acquireOrWait, endWait } from '../../src/store/sql/lockDecisions.js';
import { allLocks, lockTx, release, waiting } from '../../src/store/sql/locks.js';
import { lockItems, UNSHARED, type LockScope } from '../../src/domain/lockKeys.js';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { migrate } from '../../src/store/db.js';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/sql/migrate.js';
import { freshDatabase } from '../helpers/postgres.js';
import { all } from '../helpers/sqlRacers.js';
import { dialectSuite } from '../helpers/sqlDialect.js';

const LOCK_RACER = join(import.meta.dirname, '..', 'helpers', 'lockRacer.ts');
const RACERS = 4;
const ROUNDS = 20;

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const P = (name: string): string => `/work/tree/${name}`;

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`lock decisions on ${dialect}, ${RACERS} connections`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-locks-', racers: { n: RACERS, script: LOCK_RACER } });
    const { racers } = layer;
    beforeEach(async () => {
      await layer.s.db.deleteFrom('locks').execute();
      await layer.s.db.deleteFrom('lock_waits').execute();
    });

    const holders = async (): Promise<Record<string, string>> => Object.fromEntries((await allLocks(layer.s.db)).map((l) => [l.path, l.holder]));

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
        for (const i of won) await lockTx(layer.s.db, (trx) => release(trx, `r${i}`));
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
      assert.equal((await acquireOrWait(layer.s.db, { holder: 'first', items: lockItems(UNSHARED, [x]), reason: null, ttlS: 600, now: Date.now(), wait: false })).kind, 'granted');
      const asks = await Promise.all(racers.map((r, i) => r.send({ op: 'acquire', holder: `w${i}`, paths: [x], wait: true })));
      assert.deepEqual(asks.map((a) => a.kind), Array(RACERS).fill('waiting'));
      const order = asks.map((a, i) => ({ id: a.waitId as number, holder: `w${i}` })).sort((a, b) => a.id - b.id);
      assert.deepEqual((await waiting(layer.s.db)).map((w) => w.holder), order.map((o) => o.holder), 'the wait rows are in arrival (id) order');
      let current = 'first';
      for (const next of order) {
        await lockTx(layer.s.db, (trx) => release(trx, current));
        const served = await all(racers, { op: 'grant' });
        assert.deepEqual(served.flatMap((r) => r.granted as string[]), [next.holder], `after ${current} released, only the oldest waiter is granted, once: ${JSON.stringify(served)}`);
        assert.deepEqual(await holders(), { [x]: next.holder });
        assert.equal(await endWait(layer.s.db, next.id, next.holder, true), 'granted');
        current = next.holder;
      }
      assert.deepEqual(await waiting(layer.s.db), []);
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
      assert.deepEqual((await waiting(layer.s.db)).map((w) => w.holder), ['A'], 'the refused request left no wait');
    });

    test('two clones of one repository on one branch, at the same moment: one key, one holder (lock_files and the hook); another branch is another key', async () => {
      const scope = (clone: string, branch = 'main'): LockScope => ({ repo: `github.com/o/r@${branch}`, top: `/clones/${clone}` });
      const clones = racers.map((_, i) => `c${i}`);
      for (let round = 0; round < ROUNDS; round++) {
        const rel = `/src/f-${round}.ts`;
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'acquire', holder: `r${i}`, scope: scope(clones[i]!), paths: [`/clones/${clones[i]}${rel}`], wait: false })));
        const won = answers.flatMap((a, i) => (a.kind === 'granted' ? [i] : []));
        assert.equal(won.length, 1, `round ${round}: ${JSON.stringify(answers)}`);
        assert.deepEqual(answers[won[0]!]!.heldBy, { [`github.com/o/r@main:${rel}`]: `r${won[0]}` });
        assert.deepEqual(answers.filter((a) => a.kind !== 'granted').map((a) => a.kind), Array(RACERS - 1).fill('held'));
        const rows = await allLocks(layer.s.db);
        assert.deepEqual(rows.map((l) => [l.repo, l.rel_path, l.path, l.holder]), [['github.com/o/r@main', rel, `/clones/${clones[won[0]!]}${rel}`, `r${won[0]}`]]);
        // The hook from every clone on the next file: one takes it.
        const hrel = `/src/h-${round}.ts`;
        const hooks = await Promise.all(racers.map((r, i) => r.send({ op: 'hook', holder: `r${i}`, scope: scope(clones[i]!), targets: [`/clones/${clones[i]}${hrel}`] })));
        assert.equal(hooks.filter((a) => a.kind === 'took').length, 1, `round ${round}: ${JSON.stringify(hooks)}`);
        // Another branch: its own key, granted beside the first.
        const other = await racers[0]!.send({ op: 'acquire', holder: 'branch', scope: scope('z', 'other'), paths: [`/clones/z${rel}`], wait: false });
        assert.equal(other.kind, 'granted', JSON.stringify(other));
        await layer.s.db.deleteFrom('locks').execute();
      }
    });

    test('a wait across clones is served by key: B in clone b waits for A of clone a, and is granted its own path', async () => {
      const [a, b] = racers;
      const sa: LockScope = { repo: 'file:/srv/r@main', top: '/x/a' };
      const sb: LockScope = { repo: 'file:/srv/r@main', top: '/x/b' };
      assert.equal((await a!.send({ op: 'acquire', holder: 'A', scope: sa, paths: ['/x/a/f'], wait: false })).kind, 'granted');
      const w = await b!.send({ op: 'acquire', holder: 'B', scope: sb, paths: ['/x/b/f'], wait: true });
      assert.equal(w.kind, 'waiting');
      assert.deepEqual((await all(racers, { op: 'grant' })).flatMap((r) => r.granted as string[]), [], 'nothing to grant while A holds it');
      await lockTx(layer.s.db, (trx) => release(trx, 'A'));
      assert.deepEqual((await all(racers, { op: 'grant' })).flatMap((r) => r.granted as string[]), ['B']);
      assert.deepEqual((await allLocks(layer.s.db)).map((l) => [l.repo, l.rel_path, l.path, l.holder]), [['file:/srv/r@main', '/f', '/x/b/f', 'B']]);
      assert.equal(await endWait(layer.s.db, w.waitId as number, 'B', false), 'released', 'a grant nobody takes is released again, by its key');
      assert.deepEqual(await allLocks(layer.s.db), []);
    });

    test('crossing requests made at the same moment: exactly one of the two is refused, the other waits', async () => {
      const [a, b] = racers;
      for (let round = 0; round < ROUNDS; round++) {
        await layer.s.db.deleteFrom('locks').execute();
        await layer.s.db.deleteFrom('lock_waits').execute();
        const [x, y] = [P(`cx-${round}`), P(`cy-${round}`)];
        assert.equal((await a!.send({ op: 'acquire', holder: 'A', paths: [x], wait: false })).kind, 'granted');
        assert.equal((await b!.send({ op: 'acquire', holder: 'B', paths: [y], wait: false })).kind, 'granted');
        const both = await Promise.all([a!.send({ op: 'acquire', holder: 'A', paths: [y], wait: true }), b!.send({ op: 'acquire', holder: 'B', paths: [x], wait: true })]);
        assert.deepEqual(both.map((r) => r.kind).sort(), ['deadlock', 'waiting'], `round ${round}: ${JSON.stringify(both)}`);
        assert.equal((await waiting(layer.s.db)).length, 1);
      }
    });
  });
}

describe('migration 29 keeps held locks', () => {
  const before29 = <T extends { version: number }>(ms: readonly T[]): T[] => ms.filter((m) => m.version < 29);
  const check = async (q: Kysely<any>): Promise<void> => {
    const rows = await q.selectFrom('locks').select(['repo', 'rel_path', 'path', 'holder']).execute();
    assert.deepEqual(rows, [{ repo: '', rel_path: '/w/held.ts', path: '/w/held.ts', holder: 'j-1' }], 'the lock is there, keyed by its absolute path');
    const waits = await q.selectFrom('lock_waits').select(['paths_json', 'keys_json']).execute();
    assert.deepEqual(waits, [{ paths_json: '["/w/held.ts"]', keys_json: null }], 'a wait from before keeps its paths, keyed by them');
    // The key is (repo, rel_path): one path under two repos is two locks, twice under one is refused.
    await q.insertInto('locks').values({ repo: 'r@main', rel_path: '/w/held.ts', path: '/c/w/held.ts', holder: 'j-2', reason: null, ttl_s: 60, acquired_at: 1, expires_at: 2 }).execute();
    await assert.rejects(q.insertInto('locks').values({ repo: 'r@main', rel_path: '/w/held.ts', path: '/d/w/held.ts', holder: 'j-3', reason: null, ttl_s: 60, acquired_at: 1, expires_at: 2 }).execute());
  };
  const plant = `INSERT INTO locks (path, holder, reason, ttl_s, acquired_at, expires_at) VALUES ('/w/held.ts', 'j-1', 'r', 600, 1, 2);
    INSERT INTO lock_waits (holder, paths_json, reason, ttl_s, created_at) VALUES ('j-2', '["/w/held.ts"]', NULL, 600, 1);`;

  test('on SQLite', async () => {
    const home = mkdtempSync(join(tmpdir(), 'overseer-sql-locks-mig-'));
    dirs.push(home);
    const file = join(home, 'state.db');
    const db = new Database(file);
    migrate(db, before29(MIGRATIONS));
    db.exec(plant);
    migrate(db, MIGRATIONS);
    db.close();
    const s = await openSql({ home });
    try {
      await check(s.db as Kysely<any>);
    } finally {
      await s.close();
    }
  });

  test('on PostgreSQL', async () => {
    const fresh = await freshDatabase();
    const q = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: fresh.url, max: 1 }) }) });
    try {
      const older = Object.fromEntries(Object.entries(PG_MIGRATIONS).filter(([name]) => Number(name.slice(0, 4)) < 29));
      await migratePostgres(q, older);
      await sql.raw(plant).execute(q);
      const ran = await migratePostgres(q);
      assert.equal(ran[0], '0029-repo-locks', `29 runs first, then the later ones: ${ran.join(', ')}`);
      await check(q);
    } finally {
      await q.destroy();
      await fresh.drop();
    }
  });
});
