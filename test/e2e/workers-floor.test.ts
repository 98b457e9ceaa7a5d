// Where agents run and lost workers, through a running hub (issue 30 step 5): get_agent and
// list_agents give each job its host (a job the test marks as run by a worker: that worker; the
// others: the hub's host); `overseer status --watch` (a person's view, on the hub's floor stream)
// shows a lost worker's warning once its heartbeat is old — nothing writes when a lease runs out,
// so the stream itself must notice — and drops it when the worker's row is live again.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import { buildCli } from '../helpers/cli.js';
import { watch } from '../helpers/cliWatch.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import { testDatabaseUrl, type TestHub } from '../helpers/hub.js';
import { registerWorker } from '../../src/store/sql/workers.js';

const { hubWith } = scriptedHubs();
before(buildCli);

describe('hosts and worker warnings on a hub', () => {
  let h: TestHub;
  before(async () => {
    h = await hubWith({ quick: (ctx) => (ctx.step === 0 ? finishStep('done here') : { text: 'done' }) });
  });

  test('get_agent and list_agents: the worker that ran a job, else the hub\'s host', { timeout: 120_000 }, async () => {
    const a = (await h.call('spawn_agent', { prompt: '@script:quick', title: 'On a worker' })).job_id as string;
    const b = (await h.call('spawn_agent', { prompt: '@script:quick', title: 'On the hub' })).job_id as string;
    const w = await h.call('wait_for_agents', { job_ids: [a, b], mode: 'all', timeout_s: 90 });
    assert.equal(w.done.length, 2, JSON.stringify(w));
    assert.deepEqual(w.done.map((d: { host: string }) => d.host), [hostname(), hostname()]);
    // As a worker's claim records it (jobs.worker); the hub's own job keeps the hub's host.
    await sql`UPDATE jobs SET worker = 'box-3', worker_epoch = 1 WHERE id = ${a}`.execute(h.hub.ctx.sql.db);
    assert.equal((await h.call('get_agent', { job_id: a })).host, 'box-3');
    assert.equal((await h.call('get_agent', { job_id: b })).host, hostname());
    const listed = (await h.call('list_agents', {})).agents as { job_id: string; host: string }[];
    assert.deepEqual(Object.fromEntries(listed.map((x) => [x.job_id, x.host])), { [a]: 'box-3', [b]: hostname() });
  });

  test('status --watch on the hub\'s stream: a worker whose lease ran out needs the person; live again, the line goes', { timeout: 120_000 }, async () => {
    const q = h.hub.ctx.sql;
    assert.deepEqual(await registerWorker(q.db, q.dialect, { name: 'box-5', host: 'box-5.lan', pid: 1, capacity: 2, labels: [], clis: { claude: 'test' }, version: 'test', leaseMs: 30_000 }), { ok: true, epoch: 1 });
    const url = testDatabaseUrl(h.home);
    const v = watch(h.home, ['status', '--watch'], url ? { OVERSEER_DATABASE_URL: url } : {});
    try {
      await v.until((t) => t.includes('overseer status --watch'), 'the first render');
      assert.doesNotMatch(v.out(), /worker box-5/);
      // 40 s of silence as the database's clock sees it: no event on the bus, no job changes.
      let mark = v.out().length;
      await sql`UPDATE workers SET heartbeat_at = heartbeat_at - 40000 WHERE name = 'box-5'`.execute(q.db);
      const lost = await v.until((t) => t.includes('! worker box-5 on box-5.lan lost: no heartbeat since'), 'the lost worker in a render', 20_000, mark);
      assert.match(lost.text, /lost: no heartbeat since \d\d:\d\d:\d\d UTC \(its lease is 30s\) — its machine stopped or its network is cut; .* — overseer hosts\n/);
      mark = v.out().length;
      await sql`UPDATE workers SET heartbeat_at = heartbeat_at + 40000 WHERE name = 'box-5'`.execute(q.db);
      const back = await v.until((t) => t.includes('overseer status --watch'), 'a render after the worker is live again', 20_000, mark);
      assert.doesNotMatch(back.text.slice(back.text.lastIndexOf('overseer status --watch')), /worker box-5/);
    } finally {
      const bye = await v.interrupt();
      assert.equal(bye.code, 0, bye.stderr);
    }
  });
});
