// The hub's limiters (src/limits/service.ts) on a real database and bus, with the runner's side
// recorded: children that meet the limit while retrying are paused, the wait's end thaws the one
// paused longest as the probe (one at a time), a failed probe goes to the back and waits longer,
// a model answer lets everyone go, a probe that ends without a verdict lets the next one go, the
// lead is told once per limit, and a new service on the same database reopens what was open.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bus } from '../../src/services/bus.js';
import { openDb, type Db } from '../../src/store/db.js';
import { sqlOver } from '../../src/store/sql/open.js';
import { Limits, type LimitActions } from '../../src/limits/service.js';
import { accounts } from '../../src/limits/account.js';
import { silentLogger } from '../../src/log.js';
import { systemClock } from '../../src/clock.js';
import type { LimitHit } from '../../src/limits/breaker.js';

const dir = mkdtempSync(join(tmpdir(), 'ovs-limits-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const hit = (retryAfterMs: number): LimitHit => ({ kind: 'rate_limit', status: 429, retryAfterMs, message: 'API Error: Request rejected (429)' });

async function make(db: Db, bus: Bus): Promise<{ limits: Limits; calls: string[]; frozen: Set<string> }> {
  const calls: string[] = [];
  const frozen = new Set<string>();
  const actions: LimitActions = {
    pause: (id) => { calls.push(`pause ${id}`); frozen.add(id); return true; },
    unpause: (id) => { calls.push(`unpause ${id}`); return frozen.delete(id); },
    dispatch: () => { calls.push('dispatch'); },
  };
  const limits = new Limits({
    q: sqlOver(db).db, bus, clock: systemClock, log: silentLogger, settings: { backoffBaseMs: 100, backoffCapMs: 1000, probeLeaseMs: 60_000 },
    accounts: accounts({ ANTHROPIC_API_KEY: 'k', HOME: '/h' }), rand: () => 0,
  }, actions);
  await limits.ready();
  return { limits, calls, frozen };
}

/** Resolves at the first `limit` event after which `ok()` holds. (A breaker's changes are put on
 * the bus after they are written, so one wake-up's events may come after the test went on.) */
const when = (bus: Bus, ok: () => boolean, timeoutMs = 5000): Promise<void> => new Promise((resolve, reject) => {
  const t = setTimeout(() => { off(); reject(new Error(`not within ${timeoutMs} ms`)); }, timeoutMs);
  const off = bus.on('limit', () => { if (ok()) { clearTimeout(t); off(); resolve(); } });
});

/** Resolves at the next `limit` event of `provider` into `phase`. */
const next = (bus: Bus, phase: string, timeoutMs = 5000): Promise<void> => new Promise((resolve, reject) => {
  const t = setTimeout(() => { off(); reject(new Error(`no ${phase} within ${timeoutMs} ms`)); }, timeoutMs);
  const off = bus.on('limit', (e) => { if (e.phase === phase) { clearTimeout(t); off(); resolve(); } });
});

test('pause, one probe (the longest paused), a failed probe to the back, a success frees all; told once; reopened by a new service', async () => {
  const db = openDb(join(dir, 'a.db'));
  const bus = new Bus();
  const { limits, calls, frozen } = await make(db, bus);
  limits.start();
  assert.equal(limits.room('claude'), 'all');
  limits.limitSeen('claude', 'j1', hit(150), true);
  limits.limitSeen('claude', 'j2', hit(100), true);
  assert.deepEqual(calls, ['pause j1', 'pause j2']);
  assert.equal(limits.room('claude'), 'none');
  assert.equal(limits.room('codex'), 'all', 'another provider is not held');
  assert.equal(limits.admit('claude', 'q1'), 'wait');
  assert.deepEqual(limits.untoldToLead(['claude', 'codex']), ['claude']);
  limits.toldToLead(['claude']);
  assert.deepEqual(limits.untoldToLead(['claude']), [], 'the lead hears of it once');

  await next(bus, 'half_open');
  assert.deepEqual(calls.slice(2), ['unpause j1'], 'the child paused longest probes; nothing else goes');
  assert.equal(limits.admit('claude', 'q1'), 'wait', 'one probe at a time');
  // The probe met the limit again: paused again behind j2, the wait one step longer.
  limits.limitSeen('claude', 'j1', hit(100), true);
  assert.equal(limits.view('claude').failures, 2);
  assert.deepEqual(limits.pausedJobs('claude'), ['j2', 'j1']);
  await when(bus, () => calls.includes('unpause j2'));
  assert.deepEqual(calls.slice(-1), ['unpause j2']);
  limits.answered('claude', 'j2');
  assert.equal(limits.view('claude').phase, 'closed');
  assert.deepEqual(calls.slice(-1), ['unpause j1'], 'everyone paused goes on at once');
  await limits.settled();
  assert.deepEqual(calls.slice(-2), ['unpause j1', 'dispatch'], 'the queue starts once the change is written and announced');
  assert.equal(frozen.size, 0);
  assert.deepEqual(limits.untoldToLead(['claude']), []);

  // A new episode: told again. The hub "restarts" while it is open.
  limits.limitSeen('claude', 'j3', hit(300), false);
  assert.deepEqual(limits.untoldToLead(['claude']), ['claude']);
  limits.close();
  await limits.settled();
  const again = await make(db, bus);
  assert.equal(again.limits.view('claude').phase, 'open', 'reopened from the store');
  assert.equal(again.limits.room('claude'), 'none');
  assert.deepEqual(again.limits.pausedJobs('claude'), []);
  const half = next(bus, 'half_open');
  again.limits.start();
  await half;
  await again.limits.settled();
  assert.deepEqual(again.calls, ['dispatch'], 'nobody paused: a queued job will probe');
  assert.equal(again.limits.room('claude'), 'one');
  assert.equal(again.limits.admit('claude', 'q1'), 'probe');
  assert.equal(again.limits.room('claude'), 'none');
  // The probe ended without a verdict (it crashed): the next one may go.
  again.limits.attemptEnded('claude', 'q1');
  assert.equal(again.limits.room('claude'), 'one');
  assert.equal(again.limits.admit('claude', 'q2'), 'probe');
  // It ended on the limit: open again.
  again.limits.attemptEnded('claude', 'q2', hit(5000));
  assert.equal(again.limits.room('claude'), 'none');
  again.limits.close();
  db.close();
});
