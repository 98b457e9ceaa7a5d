// The layer over the hub's own SQLite connection (src/store/sql/sqlite.ts, sqlOver) during the
// move from the synchronous store: its transactions begin IMMEDIATE (a second process cannot
// write between its read and its write), a synchronous write that would slip into one of its
// transactions is refused with a message that says what happened, reads are not, and once the
// transaction ends the synchronous store writes again; closing the layer leaves the hub's
// connection open.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDb, tx } from '../../src/store/db.js';
import { sqlOver } from '../../src/store/sql/open.js';
import { transact } from '../../src/store/sql/tx.js';
import { getNote, setNote } from '../../src/store/sql/notes.js';

const dir = mkdtempSync(join(tmpdir(), 'overseer-sql-shared-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const w = (key: string, value: string) => ({ key, value, author: 'lead', now: 1 });

test('a synchronous write inside the layer\'s open transaction is refused; reads pass; after it ends, writes pass again', async () => {
  const db = openDb(join(dir, 'a.db'));
  const s = sqlOver(db);
  const insert = (k: string) => db.prepare('INSERT INTO notes (key, value, version, author, updated_at) VALUES (?, ?, 1, ?, 1)').run(k, 'v', 'lead');
  let inside: unknown;
  let read: unknown;
  let txInside: unknown;
  await transact(s.db, async (trx) => {
    await setNote(trx, w('a', '1'));
    try { insert('sync'); } catch (err) { inside = err; }
    try { tx(db, () => insert('sync-tx')); } catch (err) { txInside = err; }
    read = db.prepare('SELECT value FROM notes WHERE key = ?').get('a');
  });
  assert.match(String(inside), /synchronous write ran while an asynchronous transaction was open/);
  assert.match(String(txInside), /BEGIN IMMEDIATE/);
  assert.deepEqual(read, { value: '1' }, 'a read sees the transaction\'s own write');
  insert('after-commit');
  await assert.rejects(transact(s.db, async (trx) => { await setNote(trx, w('b', '1')); throw new Error('abandon'); }), /abandon/);
  insert('after-rollback');
  assert.equal(await getNote(s.db, 'b'), undefined, 'the rolled back write is gone');
  assert.deepEqual((db.prepare('SELECT key FROM notes ORDER BY key').all() as { key: string }[]).map((r) => r.key), ['a', 'after-commit', 'after-rollback']);
  await s.close();
  assert.equal(db.open, true, 'closing the layer leaves the hub\'s connection open');
  db.close();
});

test('the layer\'s transactions take the write lock first: another connection cannot write between its read and its write', async () => {
  const file = join(dir, 'b.db');
  const db = openDb(file);
  const s = sqlOver(db);
  const other = new Database(file);
  other.pragma('busy_timeout = 0');
  let otherWrite: unknown;
  await transact(s.db, async (trx) => {
    await getNote(trx, 'x'); // a read first: a deferred BEGIN would hold no write lock yet
    try { other.prepare("INSERT INTO notes (key, value, version, author, updated_at) VALUES ('x', 'other', 1, 'j', 1)").run(); } catch (err) { otherWrite = err; }
    await setNote(trx, w('x', 'mine'));
  });
  assert.equal((otherWrite as { code?: string } | undefined)?.code, 'SQLITE_BUSY', 'the other connection was kept out during the transaction');
  assert.equal((await getNote(s.db, 'x'))?.value, 'mine');
  other.close();
  db.close();
});
