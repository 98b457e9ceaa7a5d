// The layer's SQLite dialect: Kysely's own, with two changes. Transactions begin IMMEDIATE (the
// write lock is taken before the first read, so a read-decide-write is as strict as the
// synchronous store's tx(); Kysely begins a deferred one), and they are marked on the connection
// so the synchronous store refuses a write that would slip into one (src/store/db.ts, the mixed
// period). Statements go through the store's memoised prepare. The connection belongs to whoever
// opened it: destroying this Kysely leaves it open unless `owned`.
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver } from 'kysely';
import { layerPrepare, markLayerTransaction, type Db } from '../db.js';

class ImmediateDriver extends SqliteDriver {
  constructor(private readonly raw: Db, private readonly owned: boolean) {
    super({ database: { prepare: layerPrepare(raw), close: () => undefined } as never });
  }

  override async beginTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw('begin immediate'));
    markLayerTransaction(this.raw, true);
  }

  override async commitTransaction(c: DatabaseConnection): Promise<void> {
    try {
      await c.executeQuery(CompiledQuery.raw('commit'));
    } finally {
      markLayerTransaction(this.raw, false);
    }
  }

  override async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    try {
      await c.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      markLayerTransaction(this.raw, false);
    }
  }

  override async destroy(): Promise<void> {
    if (this.owned) this.raw.close();
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly raw: Db, private readonly owned: boolean) {
    super({ database: raw });
  }

  override createDriver(): Driver {
    return new ImmediateDriver(this.raw, this.owned);
  }
}
