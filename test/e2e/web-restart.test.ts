// A dashboard left open across a hub restart (issue 11): while the hub is down the page says so
// (and keeps what it last showed); a new hub on the same state directory takes the same port
// and the same cookie key, and the page reconnects by itself — no reload — and shows the new
// state: the job that was running is now interrupted (the new hub reconciled it), a job spawned
// on the new hub appears, the open agent panel follows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { launchBrowser } from '../helpers/browser.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { loggedIn, originOf } from '../helpers/dashboard.js';
import { job } from '../helpers/state.js';

let browser: Browser;
const hubs: TestHub[] = [];
before(async () => { browser = await launchBrowser(); });
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); await browser?.close(); });

describe('the dashboard across a hub restart', () => {
  test('says the hub is down, reconnects by itself to the new hub on the same port, and shows its state without a reload', { timeout: 120_000 }, async () => {
    const hold = gate(60_000);
    const sleeper = async (ctx: { step: number }) => { if (ctx.step === 0) await hold.wait; return ctx.step <= 1 ? finishStep('woke') : { text: 'done' }; };
    const quick = (ctx: { step: number }) => (ctx.step === 0 ? finishStep('fresh') : { text: 'done' });
    const h1 = await startTestHub({ scripts: { sleeper, quick } });
    hubs.push(h1);
    const id = (await h1.call('spawn_agent', { prompt: '@script:sleeper', title: 'Long sleeper' })).job_id;
    await waitForJob(h1.hub, id, (j) => j.status === 'running', 60_000);
    const origin = originOf(h1);
    const page = await loggedIn(browser, h1, { hash: `#/crew/${id}` });
    await page.locator(`li.card[data-job="${id}"][data-status=running]`).waitFor({ timeout: 15_000 });
    await page.locator(`[data-testid=panel][data-job="${id}"]`).waitFor({ timeout: 10_000 });
    await page.evaluate(() => { (globalThis as unknown as { marker: number }).marker = 7; });

    // The hub goes away: the page says so at once and keeps what it showed.
    await h1.stop({ keep: true });
    hubs.splice(hubs.indexOf(h1), 1);
    hold.open();
    await page.locator('[data-testid=down]').waitFor({ timeout: 10_000 });
    assert.match(await page.textContent('[data-testid=connection]') ?? '', /hub down/);
    assert.match(await page.textContent('[data-testid=down]') ?? '', /not answering.*reconnects by itself/);
    assert.equal(await page.locator(`li.card[data-job="${id}"]`).count(), 1, 'the last floor stays on screen');

    // A new hub on the same state directory: same port, same cookie key.
    const h2 = await startTestHub({ dir: h1.dir, scripts: { sleeper, quick } });
    hubs.push(h2);
    assert.equal(originOf(h2), origin, 'the hub took its previous port again');
    await page.locator('[data-testid=connection]', { hasText: /^live$/ }).waitFor({ timeout: 20_000 });
    assert.equal(await page.locator('[data-testid=down]').count(), 0);
    await page.locator(`li.card[data-job="${id}"][data-status=interrupted]`).waitFor({ timeout: 10_000 });
    assert.equal((await job(h2.hub, id)).status, 'interrupted');
    await page.locator(`[data-testid=panel][data-job="${id}"] .meta`, { hasText: 'interrupted' }).waitFor({ timeout: 10_000 });

    const fresh = (await h2.call('spawn_agent', { prompt: '@script:quick', title: 'After the restart' })).job_id;
    await page.locator(`li.card[data-job="${fresh}"][data-status=succeeded]`).waitFor({ timeout: 60_000 });
    assert.equal(await page.evaluate(() => (globalThis as unknown as { marker: number }).marker), 7, 'never reloaded');
    assert.match(await page.textContent('[data-testid=totals]') ?? '', /1 done/);
    await page.context().close();
  });
});
