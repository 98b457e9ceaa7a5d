// JobService built directly (test/helpers/engine.ts): a real SQLite store in a temp directory,
// the Runner with a manual clock, and scripted children through the process launcher seam.
// What spawn refuses changes nothing; the queue holds to max agents; an attempt's exit settles
// its job; cancel; retry and resume; a job a person took over is not resumed headless.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startEngine, type Engine } from '../helpers/engine.js';
import { SpawnInput } from '../../src/contract/agents.js';
import { attemptsOf, countByStatus } from '../../src/store/sql/jobs.js';
import { sql } from 'kysely';
import { BudgetExceededError, ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../../src/errors.js';
import { eventually } from '../helpers/wait.js';

let e: Engine | undefined;
afterEach(async () => { await e?.close(); e = undefined; });

const count = async (en: Engine, table: 'jobs' | 'events' | 'budget_reservations'): Promise<number> =>
  Number((await sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${sql.table(table)}`.execute(en.ctx.sql.db)).rows[0]!.n);
const attempts = (en: Engine, id: string) => attemptsOf(en.ctx.sql.db, id);

test('a spawn refused for bad input writes nothing and starts nothing, and says what was wrong', async () => {
  e = await startEngine({ config: { budgetUsd: 0.000001, modelTiers: { claude: null } } });
  const cases: [Record<string, unknown>, new (...a: never[]) => Error, RegExp][] = [
    [{ prompt: 'x', cwd: '/no/such/dir' }, InvalidInputError, /does not exist or is not a directory/],
    [{ prompt: 'x', branch: 'feature/a' }, InvalidInputError, /branch is only used with worktree: true/],
    [{ prompt: 'x', provider: 'codex' }, InvalidInputError, /provider "codex" is not available in this hub/],
    [{ prompt: 'x', model: 'auto' }, InvalidInputError, /model "auto" needs model tiers/],
    [{ prompt: 'x', depends_on: ['j-nope'] }, NotFoundError, /No agent job "j-nope"/],
    // Checked inside the transaction that would write the job: over the house budget, nothing is written.
    [{ prompt: 'x' }, BudgetExceededError, /budget/i],
  ];
  for (const [input, cls, msg] of cases) {
    await assert.rejects(e.spawn(input), (err: Error) => err instanceof cls && msg.test(err.message), `spawn ${JSON.stringify(input)}`);
  }
  assert.equal(await count(e, 'jobs'), 0);
  assert.equal(await count(e, 'events'), 0);
  assert.equal(await count(e, 'budget_reservations'), 0);
  assert.equal(e.launcher.spawned.length, 0);
});

test('an agent cannot spawn deeper than maxDepth, and its refused spawn writes nothing', async () => {
  e = await startEngine({ config: { maxDepth: 1 }, script: () => ({ hang: true }) });
  const { job_id } = await e.spawn({ prompt: 'parent' });
  await e.until(job_id, (j) => j.status === 'running');
  const before = await count(e, 'jobs');
  await assert.rejects(e.jobs.spawn(SpawnInput.parse({ prompt: 'child' }), { role: 'agent', jobId: job_id }), (err: Error) => err instanceof ForbiddenError && /nest 1 level/.test(err.message));
  assert.equal(await count(e, 'jobs'), before);
});

test('the queue holds to max agents: the next job starts when one ends', async () => {
  e = await startEngine({ config: { maxAgents: 2 }, script: () => ({ hang: true }) });
  const ids = [];
  for (const p of ['one', 'two', 'three']) ids.push((await e.spawn({ prompt: p })).job_id);
  await e.until(ids[0]!, (j) => j.status === 'running');
  await e.until(ids[1]!, (j) => j.status === 'running');
  assert.equal((await e.job(ids[2]!)).status, 'queued');
  assert.equal(e.launcher.spawned.length, 2, 'two children, not three');
  await e.jobs.cancel({ job_id: ids[0]!, cascade: false }, { role: 'lead' });
  await e.until(ids[2]!, (j) => j.status === 'running');
  // The claim marks the job running in the database; its child starts right after (the launch's facts are read in between).
  await eventually('the third child started', () => e!.launcher.spawned.length === 3 || undefined, 5000);
  assert.equal(e.launcher.spawned.length, 3);
  assert.equal(await countByStatus(e.ctx.sql.db, 'running'), 2);
});

test("an attempt's exit settles its job: result, attempt row and times from the injected clock", async () => {
  e = await startEngine({ script: () => ({ resultText: 'all done' }) });
  const startedAt = e.clock.now();
  const { job_id, status } = await e.spawn({ prompt: 'say done' });
  assert.ok(status === 'queued' || status === 'running');
  e.clock.advance(5_000); // the attempt ends "five seconds later" on the hub's clock
  const j = await e.until(job_id, (x) => x.status === 'succeeded');
  assert.equal(j.result, 'all done');
  assert.equal(j.started_at, startedAt);
  assert.equal(j.ended_at, startedAt + 5_000);
  const [a] = (await attempts(e, job_id));
  assert.equal(a!.status, 'succeeded');
  assert.equal(a!.exit_code, 0);
  assert.equal(a!.kind, 'initial');
  assert.deepEqual(e.heard.ended, [{ jobId: job_id, attempt: 1 }], 'the transcript index heard the end of the attempt');
  assert.ok(e.heard.lines.some((l) => l.jobId === job_id && l.line.includes('"result"')), 'and its lines');
  assert.equal(e.children.has(job_id), false, 'no live child is left');
});

test('cancel stops the running child: cancelled, with the reason, the attempt cancelled', async () => {
  e = await startEngine({ script: () => ({ hang: true }) });
  const { job_id } = await e.spawn({ prompt: 'run forever' });
  await e.until(job_id, (j) => j.status === 'running');
  const child = await e.launcher.launched();
  const s = await e.jobs.cancel({ job_id, reason: 'no longer needed', cascade: true }, { role: 'lead' });
  assert.equal(s.status, 'cancelled');
  const j = await e.job(job_id);
  assert.equal(j.error, 'cancelled: no longer needed');
  assert.equal(j.failure_class, 'cancelled');
  assert.equal((await attempts(e, job_id))[0]!.status, 'cancelled');
  assert.ok(child.exitInfo?.signal, `the child was signalled (${JSON.stringify(child.exitInfo)})`);
  // Cancelling what has ended changes nothing.
  const again = await e.jobs.cancel({ job_id, reason: 'twice', cascade: true }, { role: 'lead' });
  assert.equal(again.status, 'cancelled');
  assert.equal((await e.job(job_id)).error, 'cancelled: no longer needed');
});

test('retry "same": a retryable failure runs the task again as a retry attempt', async () => {
  let n = 0;
  e = await startEngine({ script: () => (++n === 1 ? { apiErrorStatus: 500 } : { resultText: 'second time lucky' }) });
  const { job_id } = await e.spawn({ prompt: 'flaky', retry: 'same' });
  const j = await e.until(job_id, (x) => x.status === 'succeeded' || x.status === 'failed');
  assert.equal(j.status, 'succeeded');
  assert.equal(j.result, 'second time lucky');
  const tries = await attempts(e, job_id);
  assert.deepEqual(tries.map((a) => [a.kind, a.status, a.failure_class]), [['initial', 'failed', 'api_error'], ['retry', 'succeeded', null]]);
});

test('retry "none": the same failure ends the job failed after one attempt', async () => {
  e = await startEngine({ script: () => ({ apiErrorStatus: 500 }) });
  const { job_id } = await e.spawn({ prompt: 'flaky' });
  const j = await e.until(job_id, (x) => x.status === 'failed');
  assert.equal(j.failure_class, 'api_error');
  assert.equal((await attempts(e, job_id)).length, 1);
});

test('resume continues an ended job in its session with the message; a job a person took over is refused and left as it is', async () => {
  const attached = new Set<string>();
  e = await startEngine({ script: (prompt) => ({ resultText: `answered: ${prompt.slice(-40)}` }), takeover: { isAttached: (id) => attached.has(id) } });
  const { job_id } = await e.spawn({ prompt: 'first task' });
  await e.until(job_id, (j) => j.status === 'succeeded');
  await e.jobs.resume({ job_id, message: 'now also the second part' }, { role: 'lead' });
  const j = await e.until(job_id, async (x) => x.status === 'succeeded' && (await attempts(e!, job_id)).length === 2);
  assert.match(j.result ?? '', /now also the second part/);
  const second = (await attempts(e, job_id))[1]!;
  assert.equal(second.kind, 'resume');
  assert.ok(e.launcher.spawned[1]!.args.includes('--resume'), 'the second attempt resumes the session');

  attached.add(job_id);
  await assert.rejects(e.jobs.resume({ job_id, message: 'again' }, { role: 'lead' }), (err: Error) => err instanceof InvalidStateError && /taken over by a person/.test(err.message));
  assert.equal((await e.job(job_id)).status, 'succeeded');
  assert.equal((await attempts(e, job_id)).length, 2);
  // An unknown job: NotFoundError.
  await assert.rejects(e.jobs.resume({ job_id: 'j-none' }, { role: 'lead' }), NotFoundError);
});
