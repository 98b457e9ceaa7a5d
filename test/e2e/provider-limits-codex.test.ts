// End-to-end: a Codex child that meets a 429 (the real codex CLI on the fake Responses API). Codex
// ends its turn "exceeded retry limit, last status: 429 Too Many Requests" (it does not pass the
// retry-after on), so the limiter opens on its own backoff; the job waits and resumes its thread,
// a second Codex job stays queued meanwhile, and both succeed once the window is over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codexHubs } from '../helpers/codexHub.js';
import type { CodexStep, CodexStepContext } from '../../src/fakemodel/fakeOpenAI.js';
import { codexRateLimited } from '../helpers/fakeLimits.js';
import { countsAgainstRetries } from '../../src/domain/failure.js';
import type { LimitRow } from '../../src/limits/store.js';
import { waitAll } from '../helpers/waitAll.js';
import type { TestHub } from '../helpers/hub.js';
import { attempts as attemptRows, events, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const { codexHub } = codexHubs();
/** The limiter rows as the hub wrote them. */
const limitRows = (h: TestHub): Promise<LimitRow[]> => rows(h.hub, sql<LimitRow>`SELECT * FROM provider_limits ORDER BY provider, account`);


test('codex: a 429 window opens the limiter, the limited job resumes its thread, the queued one waits, both succeed, no retry spent', { timeout: 240_000 }, async () => {
  let from = Infinity;
  let to = Infinity;
  const lim = (ctx: CodexStepContext): CodexStep => {
    if (/first/.test(ctx.prompt) && from === Infinity) {
      from = Date.now();
      to = from + 3000;
    }
    const now = Date.now();
    return now >= from && now < to ? codexRateLimited(1) : { text: 'done' };
  };
  const { h, openai } = await codexHub({ lim }, { config: { maxAgents: 1 } });
  const seen: string[] = [];
  // Read in the order of the events, one after the other, each after the write its event reports.
  let reads = Promise.resolve();
  h.hub.ctx.bus.on('limit', () => { reads = reads.then(async () => { const r = (await limitRows(h)).find((x) => x.provider === 'codex'); if (r) seen.push(`${r.phase}:${r.kind ?? ''}`); }); });
  const first = (await h.call('spawn_agent', { prompt: '@script:lim first job', provider: 'codex' })).job_id as string;
  const second = (await h.call('spawn_agent', { prompt: '@script:lim second job', provider: 'codex' })).job_id as string;
  const w = await waitAll(h, [first, second], 200);
  assert.deepEqual(w.attention.map((x) => [x.kind, x.provider]), [['provider_limit', 'codex']], JSON.stringify(w.attention));
  assert.deepEqual(w.done.map((d: { status: string }) => d.status), ['succeeded', 'succeeded'], JSON.stringify(w.done.map((d: any) => [d.status, d.failure_class, d.error])));

  const attempts = await attemptRows(h.hub, first);
  assert.ok(attempts.length >= 2, 'the first job met the limit at least once');
  assert.equal(attempts.filter(countsAgainstRetries).length, 1, JSON.stringify(attempts.map((a) => [a.kind, a.status, a.failure_class, a.error])));
  assert.match(attempts[0]!.error ?? '', /429 Too Many Requests/);
  assert.ok(attempts.slice(1).every((a) => a.kind === 'resume'), 'later attempts resume the thread');
  assert.equal(new Set(attempts.map((a) => a.session_id)).size, 1, 'one Codex thread throughout');
  await reads;
  assert.ok(seen.includes('open:rate_limit'), JSON.stringify(seen));
  assert.equal(seen.at(-1), 'closed:');
  // The second job sent nothing while the limit held (it was queued), and the requests in the
  // window were the first job's, one at a time: its first one and one per probe.
  const inWindow = openai.requests.filter((r) => r.script === 'lim' && r.at >= from && r.at < to);
  assert.equal(inWindow.filter((r) => /second job/.test(r.prompt)).length, 0);
  const probes = (await events(h.hub, first)).filter((e) => e.kind === 'limit_probe' && e.at >= from && e.at < to).length;
  assert.ok(inWindow.length <= 1 + probes, `${inWindow.length} requests in the window, ${probes} probes`);
});
