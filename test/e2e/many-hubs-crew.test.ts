// End-to-end, many hubs on one PostgreSQL database (issue 29 point 3): two real `overseer serve`
// processes, each with its own state directory (OVERSEER_HOME) and its own lead, the state in one
// fresh database; real claude children (confined when bubblewrap is there, as in CI) against the
// fake model. Lead 1's child waits for a note; lead 2 sees that child in list_agents, writes the
// note, and its wait_for_agents (blocked before the child ends) returns the child succeeded: the
// child's end on hub 1 woke hub 2's waiter. Then two children of the two hubs contend for one file:
// B (hub 2) is seen waiting in lock_waits while A (hub 1) holds it, and A's release on hub 1 wakes
// B's lock_files on hub 2. Without the relay (src/services/relay.ts) the test fails: hub 2's wait
// times out. Ordering comes from the fake model's requests and the database, never a sleep.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startFakeAnthropic, type FakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { buildCli } from '../helpers/cli.js';
import { crewGround, serveCrewHub, type ServedHub } from '../helpers/serveHub.js';
import { eventually } from '../helpers/wait.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { lastResult } from '../helpers/steps.js';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c().catch(() => undefined); });

/** `overseer serve` for its own state directory on the shared database, serving `project`, its lead connected over HTTP. */
const serve = (name: string, o: { dir: string; project: string; url: string; fake: FakeAnthropic }): Promise<ServedHub> => serveCrewHub(name, o, cleanups);

test('two hubs on one PostgreSQL database serve one crew: a note and a wait cross hubs, two hubs\' children take turns on one lock', { timeout: 300_000 }, async () => {
  buildCli();
  const { url: dbUrl, dir, project } = await crewGround('ovs-many-hubs', cleanups);
  const releaseA = gate();
  let fake!: FakeAnthropic;
  const scripts: Record<string, Script> = {
    // Waits on hub 1 for a note lead 2 writes on hub 2.
    waiter: (ctx) => ctx.step === 0
      ? { tools: [{ name: 'mcp__overseer__watch_notes', input: { keys: ['crew/go'], until_value: 'go', timeout_s: 120 } }] }
      : ctx.step === 1 ? finishStep(`heard: ${lastResult(ctx)?.text ?? ''}`) : { text: 'done' },
    // Hub 1's child holds shared.txt until the test lets it go.
    holdA: async (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['shared.txt'], reason: 'A first' } }] };
      if (ctx.step === 1) { await releaseA.wait; return { tools: [{ name: 'mcp__overseer__release_files', input: {} }] }; }
      if (ctx.step === 2) return finishStep('A released');
      return { text: 'done' };
    },
    // Hub 2's child asks for the same file once A holds it, and waits its turn.
    takeB: async (ctx) => {
      if (ctx.step === 0) {
        await fake.waitForRequest((r) => r.script === 'holdA' && r.step === 1, 120_000);
        return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['shared.txt'], reason: 'B next', timeout_s: 120 } }] };
      }
      if (ctx.step === 1) { const r = lastResult(ctx); return finishStep(r.is_error ? `B refused: ${r.text}` : `B got it: ${r.text}`); }
      return { text: 'done' };
    },
  };
  fake = await startFakeAnthropic({ scripts });
  cleanups.push(() => fake.close());

  const one = await serve('hub1', { dir, project, url: dbUrl, fake });
  const two = await serve('hub2', { dir, project, url: dbUrl, fake });
  let pg: SqlDb | undefined = await openSql({ home: join(dir, 'reader'), databaseUrl: dbUrl });
  cleanups.push(async () => pg?.close());
  const resultOf = async (id: string): Promise<string> => (await sql<{ result: string | null }>`SELECT result FROM jobs WHERE id = ${id}`.execute(pg!.db)).rows[0]?.result ?? '';

  // 1. A wait and a note across hubs.
  const w = await one.call('spawn_agent', { prompt: '@script:waiter wait for the go note', title: 'waiter' });
  await fake.waitForRequest((r) => r.script === 'waiter' && r.step === 0, 120_000);
  const listed = await two.call('list_agents', {});
  assert.ok(listed.agents.some((a: { job_id: string }) => a.job_id === w.job_id), `lead 2 sees lead 1's child: ${JSON.stringify(listed)}`);
  const waited = two.call('wait_for_agents', { job_ids: [w.job_id], timeout_s: 120 });
  await two.call('write_note', { key: 'crew/go', value: 'go' });
  const done = await waited;
  assert.equal(done.timed_out, false, JSON.stringify(done));
  assert.deepEqual(done.done.map((d: { job_id: string; status: string }) => [d.job_id, d.status]), [[w.job_id, 'succeeded']], JSON.stringify(done));
  assert.match(await resultOf(w.job_id), /heard: .*go/s, 'the child on hub 1 heard the note written on hub 2');

  // 2. Two hubs' children take turns on one file.
  const a = await one.call('spawn_agent', { prompt: '@script:holdA hold shared.txt', title: 'A' });
  const b = await two.call('spawn_agent', { prompt: '@script:takeB then take shared.txt', title: 'B' });
  await eventually('B waiting for shared.txt', async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM lock_waits WHERE holder = ${b.job_id}`.execute(pg!.db)).rows[0]!.n) > 0, 120_000);
  const holder = (await sql<{ holder: string }>`SELECT holder FROM locks WHERE path LIKE ${'%/shared.txt'}`.execute(pg!.db)).rows.map((r) => r.holder);
  assert.deepEqual(holder, [a.job_id], 'A (hub 1) holds the file while B (hub 2) waits');
  const releasedAt = Date.now();
  releaseA.open();
  const turns = await two.call('wait_for_agents', { job_ids: [a.job_id, b.job_id], timeout_s: 120 });
  assert.equal(turns.timed_out, false, JSON.stringify(turns));
  assert.deepEqual(turns.done.map((d: { status: string }) => d.status), ['succeeded', 'succeeded'], JSON.stringify(turns));
  const bResult = await resultOf(b.job_id);
  assert.match(bResult, /^B got it/, `B's lock_files was granted: ${bResult}`);
  const bGranted = fake.requests.find((r) => r.script === 'takeB' && r.step === 1);
  assert.ok(bGranted && bGranted.at >= releasedAt, 'B was granted only after A was let go to release');

  await pg.close();
  pg = undefined;
  await Promise.all([one.stop(), two.stop()]);
  assert.deepEqual(await Promise.all([one.exited, two.exited]), [0, 0], `${one.stderr()}\n${two.stderr()}`);
});
