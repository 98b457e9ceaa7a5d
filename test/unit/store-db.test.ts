// openDb on temp files: WAL, recorded migrations, idempotent reopen, refusing newer schemas,
// rolling back a failing migration, and tx() turning SQLITE_BUSY into StoreBusyError.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDb, migrate, tx, type Db } from '../../src/store/db.js';
import { MIGRATIONS, type Migration } from '../../src/store/migrations.js';
import { StoreBusyError } from '../../src/errors.js';

let dir = '';
let n = 0;
const open: Db[] = [];
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'overseer-db-'));
});
after(() => {
  for (const db of open) if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(): string {
  return join(dir, `s${++n}`, 'state.db');
}

function track(db: Db): Db {
  open.push(db);
  return db;
}

function tables(db: Db): string[] {
  return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
}

function versions(db: Db): { version: number; name: string; applied_at: number }[] {
  return db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all() as { version: number; name: string; applied_at: number }[];
}

describe('openDb', () => {
  test('creates the parent directory and the file, in WAL mode with foreign keys on', () => {
    const f = file();
    const db = track(openDb(f));
    assert.ok(existsSync(f));
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    assert.equal(db.pragma('busy_timeout', { simple: true }), 5000);
    db.close();
  });

  test('applies and records every migration', () => {
    const db = track(openDb(file()));
    const v = versions(db);
    assert.deepEqual(v.map((r) => [r.version, r.name]), MIGRATIONS.map((m) => [m.version, m.name]));
    for (const t of ['jobs', 'job_deps', 'attempts', 'events', 'messages', 'requests', 'schema_migrations']) {
      assert.ok(tables(db).includes(t), `table ${t}`);
    }
    db.close();
  });

  test('migration versions are strictly increasing', () => {
    for (let i = 1; i < MIGRATIONS.length; i++) {
      assert.ok(MIGRATIONS[i]!.version > MIGRATIONS[i - 1]!.version);
    }
    assert.ok(MIGRATIONS.length > 0);
  });

  test('reopening applies nothing new', () => {
    const f = file();
    const first = track(openDb(f));
    const before = versions(first);
    first.close();
    const second = track(openDb(f));
    assert.deepEqual(versions(second), before, 'same rows, same applied_at');
    assert.equal(migrate(second, MIGRATIONS), MIGRATIONS.at(-1)!.version);
    assert.deepEqual(versions(second), before);
    second.close();
  });

  test('applies only the migrations newer than the recorded version', () => {
    const f = file();
    const v1: Migration[] = [{ version: 1, name: 'one', up: 'CREATE TABLE a (x INTEGER);' }];
    const v2: Migration[] = [...v1, { version: 2, name: 'two', up: 'CREATE TABLE b (y INTEGER); INSERT INTO a (x) VALUES (7);' }];
    const db1 = track(openDb(f, v1));
    db1.prepare('INSERT INTO a (x) VALUES (1)').run();
    db1.close();
    const db2 = track(openDb(f, v2));
    assert.deepEqual(versions(db2).map((r) => r.version), [1, 2]);
    assert.deepEqual(tables(db2), ['a', 'b', 'schema_migrations']);
    // Migration 1 was not re-run (it would fail on CREATE TABLE a), migration 2 ran once.
    assert.deepEqual((db2.prepare('SELECT x FROM a ORDER BY x').all() as { x: number }[]).map((r) => r.x), [1, 7]);
    db2.close();
  });

  test('a database newer than this code → throws asking to upgrade', () => {
    const f = file();
    const db = track(openDb(f));
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(999, 'from the future', Date.now());
    db.close();
    assert.throws(() => track(openDb(f)), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, /Upgrade/);
      assert.match(err.message, /999/);
      return true;
    });
  });

  test('a failing migration rolls back completely and leaves the earlier ones', () => {
    const f = file();
    const migrations: Migration[] = [
      { version: 1, name: 'good', up: 'CREATE TABLE good (x INTEGER);' },
      { version: 2, name: 'bad', up: 'CREATE TABLE partial_one (x INTEGER); CREATE TABLE partial_two (y INTEGER); INSERT INTO good (x) VALUES (1); CREATE TABLE broken (;' },
    ];
    assert.throws(() => track(openDb(f, migrations)), /syntax error/);
    // Look at the file with a plain connection (no migrations).
    const raw = new Database(f);
    try {
      assert.deepEqual(tables(raw), ['good', 'schema_migrations']);
      assert.deepEqual(versions(raw).map((r) => r.version), [1]);
      assert.equal((raw.prepare('SELECT COUNT(*) AS c FROM good').get() as { c: number }).c, 0);
    } finally {
      raw.close();
    }
    // Fixed code can then migrate the same file.
    const fixed: Migration[] = [migrations[0]!, { version: 2, name: 'fixed', up: 'CREATE TABLE fine (z INTEGER);' }];
    const db = track(openDb(f, fixed));
    assert.deepEqual(versions(db).map((r) => [r.version, r.name]), [[1, 'good'], [2, 'fixed']]);
    db.close();
  });

  test('an empty migration list on a fresh file only creates schema_migrations', () => {
    const db = track(openDb(file(), []));
    assert.deepEqual(tables(db), ['schema_migrations']);
    db.close();
  });
});

describe('tx', () => {
  test('returns the function value and commits', () => {
    const db = track(openDb(file()));
    db.exec('CREATE TABLE t (v INTEGER)');
    const r = tx(db, () => {
      db.prepare('INSERT INTO t (v) VALUES (1)').run();
      return 'done';
    });
    assert.equal(r, 'done');
    assert.equal((db.prepare('SELECT COUNT(*) AS c FROM t').get() as { c: number }).c, 1);
    db.close();
  });

  test('rolls back and rethrows the original error', () => {
    const db = track(openDb(file()));
    db.exec('CREATE TABLE t (v INTEGER)');
    const boom = new Error('boom');
    assert.throws(() => tx(db, () => {
      db.prepare('INSERT INTO t (v) VALUES (1)').run();
      throw boom;
    }), (err: unknown) => err === boom);
    assert.equal((db.prepare('SELECT COUNT(*) AS c FROM t').get() as { c: number }).c, 0);
    db.close();
  });

  test('SQLITE_BUSY while another connection holds a write lock → StoreBusyError; works again after', () => {
    const f = file();
    const holder = track(openDb(f));
    const other = track(openDb(f));
    holder.exec('CREATE TABLE t (v INTEGER)');
    other.pragma('busy_timeout = 50');
    holder.exec('BEGIN IMMEDIATE');
    let ran = false;
    try {
      assert.throws(
        () => tx(other, () => {
          ran = true;
          other.prepare('INSERT INTO t (v) VALUES (2)').run();
        }),
        (err: unknown) => {
          assert.ok(err instanceof StoreBusyError, `got ${String(err)}`);
          assert.equal(err.code, 'store_busy');
          assert.match(err.message, /[Rr]etry/);
          assert.equal((err.cause as { code?: string }).code, 'SQLITE_BUSY');
          return true;
        },
      );
      assert.equal(ran, false, 'the body does not run without the lock');
    } finally {
      holder.exec('ROLLBACK');
    }
    tx(other, () => other.prepare('INSERT INTO t (v) VALUES (3)').run());
    assert.deepEqual(holder.prepare('SELECT v FROM t').all(), [{ v: 3 }]);
    holder.close();
    other.close();
  });

  test('non-busy SQLite errors pass through unchanged', () => {
    const db = track(openDb(file()));
    assert.throws(() => tx(db, () => db.prepare('INSERT INTO no_such_table VALUES (1)').run()), (err: unknown) => {
      assert.ok(!(err instanceof StoreBusyError));
      assert.match((err as Error).message, /no such table/);
      return true;
    });
    db.close();
  });
});
