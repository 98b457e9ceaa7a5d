// The dashboard starts what the lead can (issue 31 point 5), in a real browser (Chromium from npm)
// against a hub with real claude children on the fake model: the "New agent" form spawns a job
// with its options (a bad value shows the hub's refusal and starts nothing); on an ended job,
// Re-run makes a new job with the same prompt and options, and Continue resumes its session with
// the person's message.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn, originOf } from '../helpers/dashboard.js';
import { job } from '../helpers/state.js';

const { hubWith } = scriptedHubs();
let browser: Browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

describe('dashboard: new agent, re-run, continue', () => {
  test('the New agent form spawns a job with its options; Re-run repeats an ended job; Continue resumes it with a message', { timeout: 180_000 }, async () => {
    const h = await hubWith({ quick: (ctx) => (ctx.step === 0 ? finishStep('quick done') : { text: 'continued' }) });
    const page = await loggedIn(browser, h, { hash: '#/crew' });
    const agents = async (): Promise<any[]> => (await h.call('list_agents', {})).agents;

    await page.getByTestId('new-agent').click();
    const form = page.getByTestId('new-agent-form');
    await form.locator('[name=prompt]').fill('@script:quick tidy the README');
    await form.locator('[name=title]').fill('From the form');
    await form.locator('[name=labels]').fill('ui, form');
    await form.locator('[name=model]').fill('sonnet');
    // A bad value: the hub's own refusal is shown, nothing starts.
    await form.locator('[name=priority]').fill('42');
    await form.getByRole('button', { name: 'Spawn' }).click();
    await page.getByTestId('new-agent-error').filter({ hasText: /priority must be between -10 and 10/ }).waitFor({ timeout: 15_000 });
    assert.equal((await agents()).length, 0);

    await form.locator('[name=priority]').fill('4');
    await form.getByRole('button', { name: 'Spawn' }).click();
    await page.locator('[data-testid=panel]').waitFor({ timeout: 15_000 });
    const first = (await agents())[0];
    assert.ok(first, 'the form spawned nothing');
    assert.equal(first.title, 'From the form');
    assert.deepEqual(first.labels, ['ui', 'form']);
    assert.equal(first.priority, 4);
    assert.equal(first.model, 'sonnet');
    await waitForJob(h.hub, first.job_id, (r) => r.status === 'succeeded', 60_000);
    assert.equal(await page.locator('[data-testid=panel]').getAttribute('data-job'), first.job_id);

    // Re-run: a new job with the same spec.
    await page.getByTestId('rerun').click();
    const second = await eventually('the re-run job', async () => (await agents()).find((a) => a.job_id !== first.job_id), 15_000);
    const [a, b] = [await job(h.hub, first.job_id), await job(h.hub, second.job_id)];
    assert.equal(b.prompt, a.prompt);
    assert.equal(b.title, a.title);
    assert.equal(b.priority, 4);
    assert.equal(b.labels_json, a.labels_json);
    assert.equal(b.model, 'sonnet');
    await page.locator(`[data-testid=panel][data-job="${second.job_id}"]`).waitFor({ timeout: 15_000 });
    await waitForJob(h.hub, second.job_id, (r) => r.status === 'succeeded', 60_000);

    // Continue: the first job's session resumed with the person's message.
    await page.goto(`${originOf(h)}/#/crew/${first.job_id}`);
    const cont = page.getByTestId('continue');
    await cont.locator('input').fill('CONTINUE-7: also fix the typo in the title');
    await cont.getByRole('button', { name: 'Continue' }).click();
        await h.fake.waitForRequest((r) => r.script === 'quick' && JSON.stringify(r.body).includes('CONTINUE-7: also fix the typo'), 60_000);
    const again = await waitForJob(h.hub, first.job_id, (r) => r.ended_at !== null && r.status !== 'running', 60_000);
    assert.ok((await h.call('get_agent', { job_id: first.job_id })).attempts.length >= 2, JSON.stringify(again.status));
  });
});
