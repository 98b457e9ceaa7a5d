// End-to-end: the crew brief with real confined claude children on the fake model (issue 31 point
// 6). Set mid-run by the person (`overseer brief set`), it reaches the running child as one
// message inside its conversation (its next model request carries it), and a child spawned
// afterwards reads it in its first prompt.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { runOverseer } from '../helpers/overseerCli.js';

const BRIEF = 'KIWI-BRIEF: every agent writes its notes in English.';
const count = (s: string, sub: string): number => s.split(sub).length - 1;

describe('the crew brief, real children', () => {
  let h: TestHub | undefined;
  after(async () => { await h?.stop(); });

  test('set mid-run: the running child gets it as one message, a new child in its prompt', { timeout: 240_000 }, async () => {
    h = await startTestHub({
      scripts: {
        // Thinks until the brief arrives, then finishes saying it heard it.
        running: (ctx) => {
          const said = ctx.userTexts.find((t) => t.includes('KIWI-BRIEF'));
          if (said) return { tools: ctx.step < 6 ? [{ name: 'mcp__overseer__finish', input: { result: `heard: ${said.slice(0, 200)}` } }] : [], text: 'got it' };
          return { delayMs: 1000, text: 'thinking' };
        },
        fresh: (ctx) => ({ tools: ctx.step === 0 ? [{ name: 'mcp__overseer__finish', input: { result: ctx.userTexts.some((t) => t.includes('KIWI-BRIEF')) ? 'brief in prompt' : 'no brief' } }] : [], text: 'done' }),
      },
    });
    const A = (await h.call('spawn_agent', { prompt: '@script:running wait for the brief', title: 'A' })).job_id as string;
    await waitForJob(h.hub, A, (j) => j.pid !== null, 60_000);
    await h.fake.waitForRequest((r) => r.script === 'running', 60_000);

    const set = await runOverseer(h.home, ['brief', 'set', BRIEF, '--json']);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout).sent_to, [A]);
    const req = await h.fake.waitForRequest((r) => r.script === 'running' && JSON.stringify(r.body.messages).includes('KIWI-BRIEF'), 60_000);
    assert.equal(count(JSON.stringify(req.body.messages), 'KIWI-BRIEF'), 1, 'the brief arrived once');
    assert.match(JSON.stringify(req.body.messages), /Message from the lead: The crew brief changed \(set by the person running the crew\)/);

    const B = (await h.call('spawn_agent', { prompt: '@script:fresh start', title: 'B' })).job_id as string;
    const first = await h.fake.waitForRequest((r) => r.script === 'fresh', 60_000);
    assert.match(JSON.stringify(first.body.messages), /## The crew brief[^"]*KIWI-BRIEF: every agent writes its notes in English\./);

    const w = await h.call('wait_for_agents', { job_ids: [A, B], mode: 'all', timeout_s: 120 });
    const byId = new Map((w.done as { job_id: string; status: string; result: string }[]).map((d) => [d.job_id, d]));
    assert.equal(byId.get(A)?.status, 'succeeded');
    assert.match(byId.get(A)!.result, /^heard: [^]*KIWI-BRIEF/);
    assert.equal(byId.get(B)?.status, 'succeeded');
    assert.equal(byId.get(B)!.result, 'brief in prompt');
  });
});
