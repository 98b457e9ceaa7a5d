// The Runner built directly (test/helpers/engine.ts) with a manual clock, a real SQLite store and
// scripted children through the process launcher seam; jobs are written to the store by hand and
// dispatched, so only the Runner decides what happens to them.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startEngine, type Engine } from '../helpers/engine.js';
import { newJob } from '../helpers/budgetDb.js';
import type { NewJob } from '../../src/store/jobs.js';
import { attemptsOf, insertJob } from '../../src/store/sql/jobs.js';
import { latestEvents } from '../../src/store/sql/events.js';

let e: Engine | undefined;
afterEach(async () => { await e?.close(); e = undefined; });

/** A job row written straight to the store (queued unless said otherwise). */
async function put(en: Engine, id: string, over: Partial<NewJob> = {}): Promise<string> {
  await insertJob(en.ctx.sql.db, newJob(id, { cwd: en.dir, session_id: en.ctx.ids.uuid(), ...over }), en.clock.now());
  return id;
}

test("the injected clock drives the attempt's timeout: an hour on the hub's clock stops a child that ran for milliseconds", async () => {
  e = await startEngine({ script: () => ({ hang: true }) });
  const id = await put(e, 'j-clock1', { timeout_s: 3600 });
  e.runner.dispatch();
  await e.until(id, (j) => j.status === 'running');
  await e.launcher.launched();
  const sup = e.children.get(id)!;
  // Frozen for two hours of hub time: frozen time does not count against the timeout.
  assert.equal(sup.freeze(), true);
  e.clock.advance(2 * 3600_000);
  assert.equal(sup.thaw(), true);
  assert.equal(e.children.live(id)!.frozenMs, 2 * 3600_000);
  assert.equal((await e.job(id)).status, 'running', 'still within its hour');
  // 3599.9 s of running time on the hub's clock: the timer is re-armed from the clock (thaw), 100 ms left.
  e.clock.advance(3_599_900);
  sup.freeze();
  sup.thaw();
  const j = await e.until(id, (x) => x.status === 'failed', 10_000);
  assert.equal(j.failure_class, 'timeout');
  assert.match(j.error ?? '', /timeout_s/);
  assert.equal(j.ended_at, e.clock.now(), 'its end is written at the hub clock\'s time');
});

test('dispatch starts the best queued jobs up to max agents, the rest when a place frees', async () => {
  e = await startEngine({ config: { maxAgents: 1 }, script: (p) => (p.includes('hold') ? { hang: true } : { resultText: 'ok' }) });
  await put(e, 'j-low', { priority: 0, prompt: 'low: hold' });
  await put(e, 'j-high', { priority: 5, prompt: 'high' });
  await put(e, 'j-mid', { priority: 1, prompt: 'mid' });
  e.runner.dispatch();
  await e.until('j-high', (j) => j.status === 'succeeded');
  await e.until('j-mid', (j) => j.status === 'succeeded');
  await e.until('j-low', (j) => j.status === 'running');
  assert.deepEqual(e.launcher.children.map((c) => c.prompt?.includes('high') ? 'high' : c.prompt?.includes('mid') ? 'mid' : 'low'), ['high', 'mid', 'low']);
});

test('a waiting job starts once its dependency succeeds, and fails when it fails', async () => {
  e = await startEngine({ script: (p) => (p.includes('break') ? { apiErrorStatus: 500 } : { resultText: 'ok' }) });
  await put(e, 'j-a', { prompt: 'build' });
  await put(e, 'j-b', { status: 'waiting', depends_on_json: '["j-a"]' });
  await put(e, 'j-c', { prompt: 'break it' });
  await put(e, 'j-d', { status: 'waiting', depends_on_json: '["j-c"]' });
  e.runner.dispatch();
  await e.until('j-b', (j) => j.status === 'succeeded');
  const d = await e.until('j-d', (j) => j.status === 'failed');
  assert.equal(d.failure_class, 'dependency_failed');
  assert.match(d.error ?? '', /dependency j-c failed/);
  assert.equal((await attemptsOf(e.ctx.sql.db, 'j-d')).length, 0, 'it never ran');
});

test('a budget stop through the live children ends the attempt with failure_class budget and the budget\'s error', async () => {
  e = await startEngine({ script: () => ({ hang: true }) });
  const id = await put(e, 'j-spend');
  e.runner.dispatch();
  await e.until(id, (j) => j.status === 'running');
  await e.launcher.launched();
  assert.equal(e.children.stopForBudget(id, 'the house budget of $1 is spent'), true);
  const j = await e.until(id, (x) => x.status === 'failed');
  assert.equal(j.failure_class, 'budget');
  assert.equal(j.error, 'the house budget of $1 is spent');
  assert.equal(e.children.stopForBudget(id, 'again'), false, 'no process left to stop');
});

test('the runner hands each line to its transcript sink and activity sink, and shutdown interrupts what runs', async () => {
  e = await startEngine({ script: (p) => (p.includes('long') ? { hang: true } : { resultText: 'short' }) });
  await put(e, 'j-short', { prompt: 'short one' });
  await put(e, 'j-long', { prompt: 'long one' });
  e.runner.dispatch();
  await e.until('j-short', (j) => j.status === 'succeeded');
  await e.until('j-long', (j) => j.status === 'running');
  assert.ok(e.heard.lines.filter((l) => l.jobId === 'j-short').length >= 3, 'init, the replayed message, the result');
  assert.ok(e.heard.active.includes('j-short'));
  await e.runner.shutdown();
  const j = await e.job('j-long');
  assert.equal(j.status, 'interrupted');
  assert.deepEqual(e.heard.ended.map((x) => x.jobId).sort(), ['j-long', 'j-short']);
  // Stopped: nothing new starts.
  await put(e, 'j-late');
  e.runner.dispatch();
  assert.equal((await e.job('j-late')).status, 'queued');
});

test('the injected limiter holds starts while a provider limit lasts on the hub clock; then one attempt probes', async () => {
  e = await startEngine({ script: () => ({ resultText: 'ok' }) });
  e.runner.limits.limitSeen('claude', 'j-elsewhere', { kind: 'rate_limit', status: 429, retryAfterMs: 60_000, message: '429 scripted' }, false);
  const id = await put(e, 'j-held');
  e.runner.dispatch();
  assert.equal((await e.job(id)).status, 'queued', 'no start while the limit holds');
  assert.equal(e.launcher.spawned.length, 0);
  e.clock.advance(61_000); // the wait is over on the hub's clock (the limiter's own timer would take a real minute)
  e.runner.dispatch();
  await e.until(id, (j) => j.status === 'succeeded');
  assert.ok((await latestEvents(e.ctx.sql.db, { jobId: id, limit: 50 })).some((ev) => ev.kind === 'limit_probe'), 'it went as the probe');
});
