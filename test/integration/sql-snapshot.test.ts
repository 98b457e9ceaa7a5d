// snapshot() (src/store/sql/tx.ts), the read of views that must agree with themselves (the
// floor), on SQLite and PostgreSQL: a commit by another connection after the snapshot's first
// read is not seen by its later reads and is seen after it; the snapshot writes nothing (refused
// on PostgreSQL), works on a read-only SQLite connection, and leaves the connection usable when
// its function throws.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSql, sqlOver, type SqlDb } from '../../src/store/sql/open.js';
import { snapshot, type Q } from '../../src/store/sql/tx.js';
import { setNote } from '../../src/store/sql/notes.js';
import { freshDatabase } from '../helpers/postgres.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'overseer-sql-snapshot-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const count = async (q: Q): Promise<number> => Number((await q.selectFrom('notes').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const note = (key: string) => ({ key, value: 'v', author: 'lead', now: 1_764_000_000_000 });

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`snapshot on ${dialect}`, () => {
    const config = { home: '', databaseUrl: undefined as string | undefined };
    let drop = async (): Promise<void> => undefined;
    let reader: SqlDb;
    let writer: SqlDb;
    before(async () => {
      config.home = tmp();
      if (dialect === 'postgres') {
        const fresh = await freshDatabase();
        config.databaseUrl = fresh.url;
        drop = fresh.drop;
      }
      reader = await openSql(config);
      writer = await openSql(config);
    });
    after(async () => {
      await reader.close();
      await writer.close();
      await drop();
    });

    test('a commit by another connection after the first read is not seen inside, and is seen after', async () => {
      await setNote(writer.db, note('before'));
      const seen = await snapshot(reader.db, async (r) => {
        const first = await count(r);
        await setNote(writer.db, note('during'));
        assert.equal(await count(writer.db), first + 1, 'the writer committed');
        return { first, second: await count(r), keys: (await r.selectFrom('notes').select('key').orderBy('key').execute()).map((n) => n.key) };
      });
      assert.equal(seen.second, seen.first);
      assert.deepEqual(seen.keys, ['before']);
      assert.equal(await count(reader.db), seen.first + 1);
    });

    test('a throwing function ends the snapshot: the connection reads and writes afterwards', async () => {
      await assert.rejects(snapshot(reader.db, async (r) => {
        await count(r);
        throw new Error('boom');
      }), /boom/);
      await setNote(reader.db, note('after-throw'));
      assert.equal((await reader.db.selectFrom('notes').select('key').where('key', '=', 'after-throw').execute()).length, 1);
    });

    if (dialect === 'postgres') {
      test('it is read only: a write inside is refused and nothing lands', async () => {
        await assert.rejects(snapshot(reader.db, (r) => setNote(r, note('inside'))), /read-only transaction/);
        assert.equal((await writer.db.selectFrom('notes').select('key').where('key', '=', 'inside').execute()).length, 0);
      });
    } else {
      test('it works on a read-only connection (the CLI reading a hub\'s database)', async () => {
        const raw = new Database(join(config.home, 'state.db'), { readonly: true, fileMustExist: true });
        const ro = sqlOver(raw);
        try {
          const n = await snapshot(ro.db, async (r) => {
            const first = await count(r);
            await setNote(writer.db, note('during-ro'));
            return [first, await count(r)];
          });
          assert.equal(n[1], n[0]);
          assert.equal(await count(ro.db), n[0]! + 1);
        } finally {
          await ro.close();
          raw.close();
        }
      });
    }
  });
}
