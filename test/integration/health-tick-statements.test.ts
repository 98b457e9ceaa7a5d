// The health monitor's tick sends no statement for a warning that is neither to raise nor open:
// on PostgreSQL each statement is a round trip, and the tick runs every second. Eight idle live
// jobs (supervised, quiet but not stalled) cost the tick its two reads (the live jobs, the open
// warnings), not one clearing UPDATE per job and kind (2 + 8 × 5 before). A warning that is open
// and still wanted is not raised again; one no longer wanted is cleared, on both databases.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { HealthMonitor, type MonitorActions } from '../../src/floor/monitor.js';
import { Bus } from '../../src/services/bus.js';
import { silentLogger } from '../../src/log.js';
import { loadConfigFrom } from '../../src/config.js';
import type { HubContext } from '../../src/services/context.js';
import { insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { openWarnings } from '../../src/store/sql/warnings.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect, type Dialect } from '../helpers/sqlDialect.js';

/** Statements sent through pg's Client.query while `fn` runs (every connection of this process). */
async function pgStatements(fn: () => Promise<void>): Promise<number> {
  const proto = pg.Client.prototype as { query: (...a: unknown[]) => unknown };
  const query = proto.query;
  let n = 0;
  proto.query = function counted(this: unknown, ...a: unknown[]): unknown { n++; return query.apply(this, a); };
  try { await fn(); } finally { proto.query = query; }
  return n;
}

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe(`health monitor tick, ${dialect}`, () => {
    it('sends only its reads for idle live jobs, raises once, clears what is open', async (t) => {
      const { s } = await openDialect(dialect, t);
      const t0 = 1_000_000;
      let now = t0;
      const bus = new Bus();
      const ctx = {
        config: loadConfigFrom({ home: '/nonexistent-overseer-test' }), sql: s, bus, clock: { now: () => now }, log: silentLogger,
      } as unknown as HubContext;
      const ids = Array.from({ length: 8 }, (_, i) => `j-idle${i}`);
      for (const id of ids) {
        await insertJob(s.db, newJob(id), t0);
        await updateJob(s.db, id, { status: 'running', started_at: t0 }, t0);
      }
      const actions: MonitorActions = {
        live: (id) => (ids.includes(id) ? { frozenMs: 0, startedAt: t0 } : undefined),
        settleLost: () => undefined, message: () => undefined, freeze: async () => undefined, cancel: async () => undefined,
      };
      const monitor = new HealthMonitor(ctx, actions);
      const events: string[] = [];
      bus.on('warning', (e) => { events.push(`${e.jobId} ${e.kind} ${e.raised ? 'raised' : 'cleared'}`); });
      const tick = async (): Promise<number> => (dialect === 'postgres' ? pgStatements(() => monitor.tick()) : monitor.tick().then(() => 0));

      // Idle and quiet for 1 s (stalled is 600 s): nothing to raise, nothing open.
      now = t0 + 1_000;
      const idle = await tick();
      if (dialect === 'postgres') assert.equal(idle, 2, `an idle tick over 8 live jobs sent ${idle} statements; want 2 (live jobs, open warnings)`);
      assert.deepEqual(events, []);

      // j-idle0 stays silent past the threshold, the others print: it alone stalls, raised once.
      now = t0 + 601_000;
      for (const id of ids.slice(1)) monitor.activity(id);
      await tick();
      assert.deepEqual(events, ['j-idle0 stalled raised']);
      assert.deepEqual((await openWarnings(s.db)).map((w) => `${w.job_id} ${w.kind}`), ['j-idle0 stalled']);

      // Still stalled a second later: the open warning is not raised again (no statement for it).
      now += 1_000;
      const steady = await tick();
      if (dialect === 'postgres') assert.equal(steady, 2, `a tick with one open warning still wanted sent ${steady} statements; want 2`);
      assert.deepEqual(events, ['j-idle0 stalled raised']);

      // It prints again: the warning is cleared, once.
      monitor.activity('j-idle0');
      now += 1_000;
      await tick();
      assert.deepEqual(events, ['j-idle0 stalled raised', 'j-idle0 stalled cleared']);
      assert.deepEqual(await openWarnings(s.db), []);
    });
  });
}
