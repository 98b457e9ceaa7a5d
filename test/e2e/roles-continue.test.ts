// End to end (a real confined claude reviewer on the fake model, the dashboard in real Chromium):
// the dashboard's Continue on an ended reviewer (resume_agent with a message) resumes its own conversation. The
// test hub's HOME lies inside the project, as in every test hub: the reviewer's read-only tree
// covered Claude's session file, the first attempt could not write it, and the resume failed with
// "No conversation found with session ID". The reviewer still writes nothing in the project.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { startTestHub } from '../helpers/hub.js';
import { finishStep } from '../helpers/holder.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { lastResult } from '../helpers/steps.js';
import { attempts } from '../helpers/state.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';

const CONTINUE = 'CONTINUE-R7: now look at the tests too';

test('Continue on an ended reviewer whose HOME lies inside its read-only tree: the resumed run sees the first conversation and succeeds; the project stays unwritten', { timeout: 240_000 }, async () => {
  let writeRefused: boolean | undefined;
  let tree = '';
  const h = await startTestHub({
    scripts: {
      review: (ctx: StepContext) => {
        if (ctx.userTexts.some((t) => t.includes(CONTINUE))) {
          return JSON.stringify(ctx.body.messages.at(-2) ?? {}).includes('second review') ? { text: 'done' } : finishStep('second review');
        }
        if (ctx.step === 0) return { tools: [{ name: 'Bash', input: { command: `echo x > ${join(tree, 'written.txt')}` } }] };
        if (ctx.step === 1) { writeRefused = lastResult(ctx).is_error; return finishStep('first review'); }
        return { text: 'done' };
      },
    },
  });
  try {
    tree = realpathSync(h.project);
    assert.ok(join(realpathSync(h.dir), 'home').startsWith(`${tree}/`), 'the test hub\'s HOME lies inside the project');
    const spawned = await h.call('spawn_agent', { prompt: '@script:review look at the code', title: 'Review', role: 'reviewer' });
    assert.equal(spawned.warning, undefined, 'the reviewer runs confined');
    const first = await waitForJob(h.hub, spawned.job_id, (j) => j.status === 'succeeded' || j.status === 'failed', 120_000);
    assert.equal(first.status, 'succeeded', first.status_message ?? '');
    assert.equal(writeRefused, true, 'the reviewer\'s write was refused');

    // The dashboard's Continue, in real Chromium (POST /api/web/jobs/<id>/resume, as resume_agent).
    const browser = await launchBrowser();
    try {
      const page = await loggedIn(browser, h, { hash: `#/crew/${spawned.job_id}` });
      const cont = page.getByTestId('continue');
      await cont.locator('input').fill(CONTINUE);
      await cont.getByRole('button', { name: 'Continue' }).click();
      await eventually('the resume to start', async () => ((await attempts(h.hub, spawned.job_id)).length === 2 ? true : undefined), 30_000);
    } finally {
      await browser.close();
    }
    const tries = await eventually('the resumed attempt to end', async () => {
      const a = await attempts(h.hub, spawned.job_id);
      return a.length === 2 && a[1]!.status !== 'running' ? a : undefined;
    }, 120_000);
    assert.equal(tries[1]!.status, 'succeeded', `${tries[1]!.error ?? ''}`);
    const resumedReq = h.fake.requests.find((r) => r.script === 'review' && JSON.stringify(r.body?.messages ?? []).includes(CONTINUE));
    assert.ok(resumedReq, 'the resumed run asked the model');
    const convo = JSON.stringify(resumedReq.body.messages);
    assert.match(convo, /@script:review look at the code/, 'the first prompt is in the resumed conversation');
    assert.match(convo, /first review/, 'the first attempt\'s finish is in the resumed conversation');
    const done = await waitForJob(h.hub, spawned.job_id, (j) => j.status === 'succeeded' && j.result === 'second review', 30_000);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(tries.map((a) => [a.kind, a.status]), [['initial', 'succeeded'], ['resume', 'succeeded']]);
    assert.equal(tries[1]!.session_id, tries[0]!.session_id, 'the same session');
    assert.equal(existsSync(join(tree, 'written.txt')), false, 'nothing written in the project');
    assert.deepEqual(readdirSync(tree).filter((f) => f === 'written.txt'), []);
  } finally {
    await h.stop();
  }
});
