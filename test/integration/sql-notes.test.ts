// Note compare-and-set over the Kysely layer (src/store/sql/notes.ts), on SQLite and PostgreSQL:
// the same semantics as NoteService.write over the synchronous store, and with real concurrent
// writers (two processes; on PostgreSQL also a transaction holding the row) exactly one of two
// writers expecting one version wins, the other gets a conflict that says where the note is.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { noteVersion, setNote, type NoteWrite } from '../../src/store/sql/notes.js';
import { ConflictError } from '../../src/errors.js';
import { all } from '../helpers/sqlRacers.js';
import { dialectSuite } from '../helpers/sqlDialect.js';

const w = (key: string, value: string, expected_version?: number): NoteWrite => ({ key, value, author: 'lead', now: 1_764_000_000_000, expected_version });

async function conflict(p: Promise<unknown>): Promise<string> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ConflictError, `expected a ConflictError, got ${String(caught)}`);
  return caught.message;
}

/** Resolves when `n` other sessions of the database wait for a lock (deadline 10 s). */
async function lockWaiters(s: SqlDb, n: number): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const r = await sql<{ c: number }>`SELECT count(*)::int AS c FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(s.db);
    if (r.rows[0]!.c >= n) return;
    if (Date.now() > until) throw new Error(`no session waited for a lock within 10 s (${r.rows[0]!.c} do)`);
    await new Promise((res) => setImmediate(res));
  }
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`note compare-and-set on ${dialect}`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-notes-', racers: { n: 2 } });
    const { racers } = layer;

    test('same rules as NoteService.write: 0 creates, a stale or missing version is refused with where the note is and changes nothing, none bumps', async () => {
      assert.equal(await setNote(layer.s.db, w('a', 'one', 0)), 1);
      assert.equal(await conflict(setNote(layer.s.db, w('a', 'two', 0))), 'note "a" is at version 1, not 0: read it again and retry with expected_version 1');
      assert.equal(await setNote(layer.s.db, w('a', 'two', 1)), 2);
      assert.equal(await conflict(setNote(layer.s.db, w('a', 'three', 1))), 'note "a" is at version 2, not 1: read it again and retry with expected_version 2');
      assert.equal(await conflict(setNote(layer.s.db, w('nope', 'x', 5))), 'note "nope" does not exist (expected version 5): use expected_version 0 to create it');
      assert.equal(await setNote(layer.s.db, w('a', 'four')), 3);
      assert.equal(await setNote(layer.s.db, w('b', 'first')), 1);
      const rows = await layer.s.db.selectFrom('notes').selectAll().where('key', 'in', ['a', 'b', 'nope']).orderBy('key').execute();
      assert.deepEqual(rows, [
        { key: 'a', value: 'four', version: 3, author: 'lead', updated_at: 1_764_000_000_000 },
        { key: 'b', value: 'first', version: 1, author: 'lead', updated_at: 1_764_000_000_000 },
      ]);
    });

    test('two processes, each expecting the version they both read, 12 rounds: exactly one wins each round, the other is told the new version', async () => {
      for (let v = 0; v < 12; v++) {
        const answers = await all(racers, { op: 'set', key: 'race', value: `round ${v}`, expected: v });
        const won = answers.filter((a) => a.ok);
        assert.equal(won.length, 1, `round ${v}: ${JSON.stringify(answers)}`);
        assert.equal(won[0]!.version, v + 1);
        const lost = answers.find((a) => !a.ok)!;
        assert.equal(lost.conflict, `note "race" is at version ${v + 1}, not ${v}: read it again and retry with expected_version ${v + 1}`);
      }
      assert.equal(await noteVersion(layer.s.db, 'race'), 12);
    });

    test('two processes writing without a version, 25 each at once: every write gets its own version, none is lost', async () => {
      const versions: number[] = [];
      for (let i = 0; i < 25; i++) {
        for (const a of await all(racers, { op: 'set', key: 'counter', value: `w${i}` })) versions.push(a.version as number);
      }
      assert.deepEqual(versions.sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1));
      assert.equal(await noteVersion(layer.s.db, 'counter'), 50);
    });

    if (dialect === 'postgres') {
      test('a writer that holds the row (its transaction open) makes the other wait on the row lock; after its commit the other gets the conflict', async () => {
        await setNote(layer.s.db, w('held', 'v1', 0));
        const other = await openSql({ home: layer.home, databaseUrl: layer.url });
        try {
          let release!: () => void;
          const gate = new Promise<void>((res) => (release = res));
          let otherResult: Promise<unknown> | undefined;
          const holder = layer.s.db.transaction().execute(async (trx) => {
            assert.equal(await setNote(trx, w('held', 'by holder', 1)), 2);
            otherResult = setNote(other.db, w('held', 'by other', 1)).catch((e: unknown) => e);
            await gate;
          });
          await lockWaiters(layer.s, 1);
          release();
          await holder;
          const err = await otherResult!;
          assert.ok(err instanceof ConflictError, String(err));
          assert.equal(err.message, 'note "held" is at version 2, not 1: read it again and retry with expected_version 2');
          assert.equal((await layer.s.db.selectFrom('notes').select('value').where('key', '=', 'held').executeTakeFirst())?.value, 'by holder');
        } finally {
          await other.close();
        }
      });

      test('two creators (expected 0) of an absent note: the second waits for the first\'s insert, then is refused; a rolled-back first lets it through', async () => {
        const other = await openSql({ home: layer.home, databaseUrl: layer.url });
        try {
          for (const outcome of ['commit', 'rollback'] as const) {
            const key = `created-${outcome}`;
            let release!: () => void;
            const gate = new Promise<void>((res) => (release = res));
            let second: Promise<unknown> | undefined;
            const first = layer.s.db.transaction().execute(async (trx) => {
              await setNote(trx, w(key, 'first', 0));
              second = setNote(other.db, w(key, 'second', 0)).catch((e: unknown) => e);
              await gate;
              if (outcome === 'rollback') throw new Error('rolled back');
            }).catch((e: unknown) => e);
            await lockWaiters(layer.s, 1);
            release();
            await first;
            const r = await second!;
            if (outcome === 'commit') {
              assert.ok(r instanceof ConflictError, String(r));
              assert.match(r.message, /is at version 1, not 0/);
            } else {
              assert.equal(r, 1);
            }
            assert.equal((await layer.s.db.selectFrom('notes').select('value').where('key', '=', key).executeTakeFirst())?.value, outcome === 'commit' ? 'first' : 'second');
          }
        } finally {
          await other.close();
        }
      });
    }
  });
}
