// End-to-end: hubs own their jobs (docs/decisions.md "Hubs own their jobs", docs/store-plan.md
// §3.4, §3.6). Two `overseer serve` processes with their own state directories on one PostgreSQL
// database, real claude children on the fake model:
// - a second hub's start settles only what is its own: the first hub's running child goes on and
//   its calls still reach its hub;
// - kill -9 of a hub whose child holds a lock: the other hub marks that job interrupted within the
//   timeout and a beat, releases its lock, and a lead waiting on the job hears of it;
// - a hub paused past the timeout, then continued, ends its children and exits.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { claudeBin, claudeEnv, makeTempDir } from '../helpers/claude.js';
import { buildCli } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/postgres.js';
import { serveHub, type ServedHub } from '../helpers/serveHub.js';
import { alive, eventually } from '../helpers/wait.js';

const BEAT_MS = 200;
const TIMEOUT_MS = 2000;

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

/** A crew of hubs on one fresh database; `db` reads it as the tests check it. */
async function crew(scripts: Record<string, Script>): Promise<{ dir: string; db: SqlDb; hub(name: string): Promise<ServedHub> }> {
  buildCli();
  const pg = await freshDatabase();
  cleanups.push(() => pg.drop());
  const fake = await startFakeAnthropic({ scripts });
  cleanups.push(() => fake.close());
  const dir = await makeTempDir('ovs-hubs');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const db = await openSql({ home: join(dir, 'reader'), databaseUrl: pg.url });
  cleanups.push(() => db.close());
  const env = {
    ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), CLAUDE_BIN: claudeBin(),
    OVERSEER_DATABASE_URL: pg.url, OVERSEER_HUB_BEAT_MS: String(BEAT_MS), OVERSEER_HUB_TIMEOUT_MS: String(TIMEOUT_MS),
  } as Record<string, string>;
  return {
    dir, db,
    async hub(name) {
      const h = await serveHub({ dir, name, env });
      cleanups.push(() => h.stop());
      return h;
    },
  };
}

const job = async (db: SqlDb, id: string) => db.db.selectFrom('jobs').select(['status', 'hub_id', 'pid', 'token_hash']).where('id', '=', id).executeTakeFirstOrThrow();
const hubOf = async (db: SqlDb, pid: number) => db.db.selectFrom('hubs').selectAll().where('pid', '=', pid).executeTakeFirstOrThrow();

/** The HTTP status of an MCP initialize with `token`. */
async function initialize(url: string, token: string): Promise<number> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'token-check', version: '1' } } }),
  });
  await r.body?.cancel();
  return r.status;
}

/** Kill an orphaned child's process group at the end, whatever happened. */
function reap(pid: number | null): void {
  if (pid) cleanups.push(() => { try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ } });
}

describe('many hubs on one PostgreSQL database', { timeout: 240_000 }, () => {
  test('a second hub starting settles only its own: the first hub\'s running child goes on and its token still works', async () => {
    let gate!: () => void;
    const opened = new Promise<void>((r) => { gate = r; });
    const c = await crew({
      r: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'working' } }] };
        if (ctx.step === 1) {
          await opened;
          return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'still here after the second hub started' } }] };
        }
        return { delayMs: 120_000, text: 'never' };
      },
    });
    const h1 = await c.hub('one');
    const id = (await h1.call('spawn_agent', { prompt: '@script:r long task' })).job_id as string;
    const fake = await eventually('the child\'s first call answered', async () => (await job(c.db, id)).pid, 60_000);
    reap(fake);
    const before = await job(c.db, id);
    assert.equal(before.status, 'running');
    assert.equal(before.hub_id, (await hubOf(c.db, h1.pid)).id, 'the job is its spawning hub\'s');

    const h2 = await c.hub('two');
    const after2 = await job(c.db, id);
    assert.equal(after2.status, 'running', 'the second hub\'s start left the first hub\'s job running');
    assert.equal(after2.token_hash, before.token_hash, 'its token was not cleared');
    assert.ok(alive(before.pid!), 'its process was not ended');
    assert.equal((await hubOf(c.db, h1.pid)).dead_at, null, 'the first hub is not taken for dead');
    assert.notEqual((await hubOf(c.db, h2.pid)).id, before.hub_id);

    // Its token opens a session on its own hub only: an agent talks to the hub that runs it.
    const token = readFileSync(`/proc/${before.pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('OVERSEER_TOKEN='))!.slice('OVERSEER_TOKEN='.length);
    assert.equal(await initialize(h1.url, token), 200, 'the child\'s token on its hub');
    assert.equal(await initialize(h2.url, token), 401, 'the child\'s token on the other hub');
    // The child calls its hub again: its token still works there.
    gate();
    await eventually('the child\'s call after the second hub started', async () =>
      (await c.db.db.selectFrom('jobs').select('status_message').where('id', '=', id).executeTakeFirstOrThrow()).status_message === 'still here after the second hub started', 30_000);
    // The second hub lists it, but does not run it.
    const listed = await h2.call('get_agent', { job_id: id });
    assert.equal(listed.status, 'running');
  });

  test('kill -9 of a hub: another marks its running job interrupted within the timeout and a beat, releases its lock, and a waiting lead hears of it', async () => {
    const c = await crew({
      l: (ctx) => ctx.step === 0
        ? { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['held.txt'], reason: 'keeps it', timeout_s: 0 } }] }
        : { delayMs: 120_000, text: 'never' },
    });
    const h1 = await c.hub('one');
    const h2 = await c.hub('two');
    const id = (await h1.call('spawn_agent', { prompt: '@script:l hold a file' })).job_id as string;
    await eventually('the child holds its lock', async () => (await c.db.db.selectFrom('locks').select('holder').where('holder', '=', id).execute()).length > 0, 60_000);
    reap((await job(c.db, id)).pid);
    const waiting = h2.call('wait_for_agents', { job_ids: [id], timeout_s: 30 });

    const killedAt = Date.now();
    process.kill(h1.pid, 'SIGKILL');
    await eventually('hub one\'s job interrupted by hub two', async () => (await job(c.db, id)).status === 'interrupted', TIMEOUT_MS + BEAT_MS + 10_000, 20);
    const tookMs = Date.now() - killedAt;
    process.stdout.write(`# kill -9 → interrupted by the other hub in ${tookMs} ms (beat ${BEAT_MS} ms, timeout ${TIMEOUT_MS} ms)\n`);
    assert.ok(tookMs <= TIMEOUT_MS + BEAT_MS + 1500, `reconciled ${tookMs} ms after the kill: more than the timeout and a beat (and 1.5 s for a loaded machine)`);
    const j = await job(c.db, id);
    assert.equal(j.token_hash, null, 'its token is cleared');
    assert.deepEqual(await c.db.db.selectFrom('locks').select('path').where('holder', '=', id).execute(), [], 'its lock is released');
    const dead = await hubOf(c.db, h1.pid);
    assert.notEqual(dead.dead_at, null, 'hub one is marked dead');
    const w = await waiting;
    const wokeMs = Date.now() - killedAt;
    assert.equal(w.done[0]?.status, 'interrupted', JSON.stringify(w));
    assert.ok(wokeMs < 15_000, `the waiting lead returned ${wokeMs} ms after the kill: woken by the reconciliation's job event, not its own 30 s timeout`);
  });

  test('a hub paused past the timeout, then continued, ends its children and exits', async () => {
    const c = await crew({ r: (ctx) => ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'working' } }] } : { delayMs: 120_000, text: 'never' } });
    const h1 = await c.hub('one');
    await c.hub('two');
    const id = (await h1.call('spawn_agent', { prompt: '@script:r long task' })).job_id as string;
    const pid = await eventually('the child running', async () => (await job(c.db, id)).pid ?? undefined, 60_000);
    reap(pid);
    process.kill(h1.pid, 'SIGSTOP');
    cleanups.push(() => { try { process.kill(h1.pid, 'SIGCONT'); } catch { /* gone */ } });
    await eventually('hub one found dead', async () => (await hubOf(c.db, h1.pid)).dead_at !== null, TIMEOUT_MS + BEAT_MS + 10_000, 20);
    assert.equal((await job(c.db, id)).status, 'interrupted');
    assert.ok(alive(pid), 'the child of the paused hub still runs (nobody on its machine has ended it yet)');
    process.kill(h1.pid, 'SIGCONT');
    const code = await Promise.race([h1.exited, new Promise((r) => setTimeout(() => r('still running'), 15_000))]);
    assert.equal(code, 1, `the fenced hub exits (stderr: ${h1.stderr().slice(-500)})`);
    await eventually('its child ended', () => !alive(pid), 5000);
    assert.equal((await job(c.db, id)).status, 'interrupted', 'nothing recorded over the other hub\'s settlement');
  });
});
