// The worker hosts' store (src/store/sql/workers.ts, issue 30) on both databases: a name is taken
// only when nobody holds its lease, each registration takes the next lease epoch, a beat renews
// only the lease it holds (an older epoch, a stopped row, or a lease that ran out: fenced), and two
// connections registering one name at once: one wins.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { beatWorker, listWorkers, registerWorker, stopWorker, type WorkerIdentity } from '../../src/store/sql/workers.js';
import { dialectSuite, type Dialect } from '../helpers/sqlDialect.js';

const w = (name: string, o: Partial<WorkerIdentity> = {}): WorkerIdentity => ({
  name, host: 'box-1', pid: 4242, capacity: 4, labels: ['gpu'], clis: { claude: '2.0.0 (Claude Code)' }, version: 'test', leaseMs: 60_000, ...o,
});

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe(`worker hosts on ${dialect}`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-workers-', other: true });

    test('a live name is refused; a stopped one is taken at the next epoch, and the old epoch is fenced', async () => {
      const { s } = layer;
      const first = await registerWorker(s.db, s.dialect, w('alpha'));
      assert.deepEqual(first, { ok: true, epoch: 1 });
      const again = await registerWorker(s.db, s.dialect, w('alpha', { host: 'box-2', pid: 1 }));
      assert.equal(again.ok, false);
      assert.equal(!again.ok && again.holder.host, 'box-1', 'the answer names the live holder');
      assert.equal(await beatWorker(s.db, s.dialect, 'alpha', 1), true);
      assert.equal(await stopWorker(s.db, s.dialect, 'alpha', 1), true);
      assert.equal(await beatWorker(s.db, s.dialect, 'alpha', 1), false, 'a stopped worker does not beat');
      assert.equal(await stopWorker(s.db, s.dialect, 'alpha', 1), false, 'stopped once');
      const second = await registerWorker(s.db, s.dialect, w('alpha', { host: 'box-2', pid: 7, capacity: 2, labels: [] }));
      assert.deepEqual(second, { ok: true, epoch: 2 });
      assert.equal(await beatWorker(s.db, s.dialect, 'alpha', 1), false, 'the older epoch is fenced');
      assert.equal(await beatWorker(s.db, s.dialect, 'alpha', 2), true);
      const [v] = (await listWorkers(s.db, s.dialect)).filter((h) => h.row.name === 'alpha');
      assert.equal(v!.state, 'live');
      assert.deepEqual([v!.row.host, Number(v!.row.capacity), v!.row.labels_json, v!.row.stopped_at], ['box-2', 2, '[]', null]);
    });

    test('a lease that ran out: listed lost, its beat fails, and the name is free for the next epoch', async () => {
      const { s } = layer;
      assert.deepEqual(await registerWorker(s.db, s.dialect, w('beta', { leaseMs: 1000 })), { ok: true, epoch: 1 });
      // The heartbeat as it would be 5 s of silence later (the database's clock decides, not ours).
      await sql`UPDATE workers SET heartbeat_at = heartbeat_at - 5000 WHERE name = 'beta'`.execute(s.db);
      const [v] = (await listWorkers(s.db, s.dialect)).filter((h) => h.row.name === 'beta');
      assert.equal(v!.state, 'lost');
      assert.ok(v!.ageMs >= 5000, `age ${v!.ageMs} ms`);
      assert.equal(await beatWorker(s.db, s.dialect, 'beta', 1), false, 'a lease that ran out is not renewed: the worker is fenced');
      assert.deepEqual(await registerWorker(s.db, s.dialect, w('beta')), { ok: true, epoch: 2 });
    });

    test('two connections register one name at once: one wins, the other is told who holds it', async () => {
      const { s, other } = layer;
      for (let round = 0; round < 10; round++) {
        const name = `gamma-${round}`;
        const [a, b] = await Promise.all([registerWorker(s.db, s.dialect, w(name, { pid: 1 })), registerWorker(other.db, other.dialect, w(name, { pid: 2 }))]);
        const wins = [a, b].filter((r) => r.ok);
        assert.equal(wins.length, 1, `round ${round}: ${JSON.stringify([a, b])}`);
        const lost = [a, b].find((r) => !r.ok)!;
        assert.equal(!lost.ok && Number(lost.holder.pid), a.ok ? 1 : 2, 'the loser is told the winner');
      }
    });
  });
}
