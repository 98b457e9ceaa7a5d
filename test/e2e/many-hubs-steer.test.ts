// End-to-end, steering another hub's job (issue 29 point 3, "the others see and steer it"): two real
// `overseer serve` processes on one fresh PostgreSQL database, each with its own state directory and
// lead; a real claude child (confined when bubblewrap is there, as in CI) on hub 1 against the fake
// model, looping on a short Bash call. Lead 2 (hub 2) messages it — queued there, pushed into the
// conversation by hub 1 (its next model request carries it) —, freezes it (status frozen seen from
// both hubs, every thread of the process stopped: /proc state T), thaws it (running again, the
// process runs), and cancels it (cancelled once, hub 1 ran the commands and recorded the end, the
// child's process group is gone). Without the owner's command loop (src/services/commands.ts) the
// freeze times out with the hub named; without the push the message never reaches the child.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startFakeAnthropic, type FakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { buildCli } from '../helpers/cli.js';
import { crewGround, serveCrewHub, type ServedHub } from '../helpers/serveHub.js';
import { agentProcess, alive, eventually, procStopped } from '../helpers/wait.js';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c().catch(() => undefined); });

const serve = (name: string, o: { dir: string; project: string; url: string; fake: FakeAnthropic }): Promise<ServedHub> => serveCrewHub(name, o, cleanups);

/** Whether the process group `pgid` has any process left. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

test('lead 2 steers hub 1\'s running child: a message reaches its conversation, freeze and thaw stop and continue its process, cancel ends it once', { timeout: 300_000 }, async () => {
  buildCli();
  const { url: dbUrl, dir, project } = await crewGround('ovs-many-hubs-steer', cleanups);
  const scripts: Record<string, Script> = {
    // Works on (a short Bash call per turn) until it is stopped; says when it heard the word.
    busy: (ctx) => ({ text: ctx.userTexts.some((t) => t.includes('PAPAYA')) ? 'heard PAPAYA' : 'working', tools: [{ name: 'Bash', input: { command: 'sleep 0.5' } }] }),
  };
  const fake = await startFakeAnthropic({ scripts });
  cleanups.push(() => fake.close());

  const one = await serve('hub1', { dir, project, url: dbUrl, fake });
  const two = await serve('hub2', { dir, project, url: dbUrl, fake });
  let pg: SqlDb | undefined = await openSql({ home: join(dir, 'reader'), databaseUrl: dbUrl });
  cleanups.push(async () => pg?.close());
  const row = async (id: string): Promise<{ status: string; pid: number | null; hub_id: string | null }> =>
    (await sql<{ status: string; pid: number | null; hub_id: string | null }>`SELECT status, pid, hub_id FROM jobs WHERE id = ${id}`.execute(pg!.db)).rows[0]!;

  const spawned = await one.call('spawn_agent', { prompt: '@script:busy work until stopped', title: 'busy' });
  const id = spawned.job_id as string;
  await fake.waitForRequest((r) => r.script === 'busy' && r.step === 1, 120_000);
  const running = await row(id);
  assert.equal(running.status, 'running');
  assert.ok(running.pid, 'the child has a process');
  const hub1 = (await sql<{ id: string }>`SELECT id FROM hubs WHERE state_dir = ${one.home} AND stopped_at IS NULL`.execute(pg.db)).rows[0]!.id;
  assert.equal(running.hub_id, hub1, 'the child runs on hub 1');
  const pid = agentProcess(running.pid);

  // 1. A message from lead 2: queued on hub 2, pushed by hub 1 into the running conversation.
  const m = await two.call('message_agent', { job_id: id, text: 'the word is PAPAYA' });
  assert.deepEqual([m.delivered, m.queued], [false, true], JSON.stringify(m));
  const carried = await fake.waitForRequest((r) => r.script === 'busy' && JSON.stringify(r.body.messages).includes('PAPAYA'), 60_000);
  assert.ok(carried, 'the child\'s next model request carries the message');
  const delivered = (await sql<{ delivered_at: number | null }>`SELECT delivered_at FROM messages WHERE id = ${m.message_id}`.execute(pg.db)).rows[0]!;
  assert.ok(delivered.delivered_at !== null, 'hub 1 marked the message delivered');

  // 2. Freeze from hub 2: hub 1 stops the process in place.
  const frozen = await two.call('pause_agent', { job_id: id, mode: 'freeze' });
  assert.equal(frozen.status, 'frozen', JSON.stringify(frozen));
  assert.equal((await one.call('get_agent', { job_id: id })).status, 'frozen', 'hub 1 sees it frozen');
  await eventually('every thread of the child stopped (state T)', () => procStopped(pid), 10_000);
  const requestsWhileFrozen = fake.requests.filter((r) => r.script === 'busy').length;

  // 3. Thaw from hub 2: running again, seen from both hubs, and it makes model requests again.
  const thawed = await two.call('resume_agent', { job_id: id });
  assert.equal(thawed.status, 'running', JSON.stringify(thawed));
  assert.equal((await one.call('get_agent', { job_id: id })).status, 'running', 'hub 1 sees it running');
  await eventually('the child runs again', () => !procStopped(pid), 10_000);
  await fake.waitForRequest((r) => r.script === 'busy' && fake.requests.filter((x) => x.script === 'busy').length > requestsWhileFrozen, 60_000);

  // 4. Cancel from hub 2: hub 1 ends the child; cancelled once.
  const cancelled = await two.call('cancel_agent', { job_id: id, reason: 'steered from hub 2' });
  assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));
  assert.equal((await one.call('get_agent', { job_id: id })).status, 'cancelled', 'hub 1 sees it cancelled');
  await eventually('the child\'s process group is gone', () => !groupAlive(running.pid!) && !alive(pid), 10_000);
  const ended = (await sql<{ n: string }>`SELECT count(*) AS n FROM events WHERE job_id = ${id} AND kind = 'ended'`.execute(pg.db)).rows[0]!;
  assert.equal(Number(ended.n), 1, 'the job ended once');
  const attempt = (await sql<{ status: string }>`SELECT status FROM attempts WHERE job_id = ${id} ORDER BY n DESC LIMIT 1`.execute(pg.db)).rows[0]!;
  assert.equal(attempt.status, 'cancelled', 'hub 1 recorded the attempt\'s end');
  const commands = (await sql<{ kind: string; outcome: string | null }>`SELECT kind, outcome FROM job_commands WHERE job_id = ${id} ORDER BY id`.execute(pg.db)).rows;
  assert.deepEqual(commands.map((c) => [c.kind, c.outcome]), [['freeze', 'done'], ['thaw', 'done'], ['cancel', 'done']], 'hub 1 ran each command once');
  const error = (await sql<{ error: string | null }>`SELECT error FROM jobs WHERE id = ${id}`.execute(pg.db)).rows[0]!;
  assert.equal(error.error, 'cancelled: steered from hub 2');

  await pg.close();
  pg = undefined;
  await Promise.all([one.stop(), two.stop()]);
  assert.deepEqual(await Promise.all([one.exited, two.exited]), [0, 0], `${one.stderr()}\n${two.stderr()}`);
});
