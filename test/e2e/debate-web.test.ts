// The dashboard's Debates panel in a real browser (Chromium from npm) against a hub with real
// claude children on the fake model: a finished debate's rounds, verdicts and final note, and a
// running debate cancelled from the page (checked in the database).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { scriptedHubs } from '../helpers/scripted.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { debateSettled } from '../helpers/debate.js';
import { eventually } from '../helpers/wait.js';
import type { Step, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { job } from '../helpers/state.js';

const { hubWith } = scriptedHubs();
let browser: Browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const answer = (ctx: StepContext): Step => {
  const side = /— side ([AB]), round/.exec(ctx.prompt)?.[1] ?? '?';
  return { tools: [{ name: 'StructuredOutput', input: { position: `WEB-POS-${side}`, reasoning: 'r', open_points: [`WEB-OPEN-${side}`] } }] };
};

describe('dashboard debates panel', () => {
  test('a finished debate shown whole; a running one cancelled from the page', { timeout: 150_000 }, async () => {
    const h = await hubWith({ web: answer, slow: () => ({ delayMs: 60_000, text: 'never' }) });
    const done = await h.call('start_debate', { task: '@script:web Pick a queue', title: 'Queue choice', sides: [{ provider: 'claude' }, { provider: 'claude' }], max_rounds: 1 });
    await debateSettled(h.hub, done.debate_id);
    const page = await loggedIn(browser, h, { hash: '#/debates' });
    const art = page.locator(`[data-testid=debate][data-debate=${done.debate_id}][data-status=disagreement]`);
    await art.waitFor({ timeout: 15_000 });
    assert.match(await art.locator('.debate-round[data-round="1"]').innerText(), /Side A[\s\S]*WEB-POS-A[\s\S]*WEB-OPEN-A[\s\S]*Side B[\s\S]*WEB-POS-B/);
    assert.match(await art.locator('[data-testid=debate-final]').innerText(), /outcome: disagreement/);

    const running = await h.call('start_debate', { task: '@script:slow Pick a cache', title: 'Cache choice', sides: [{ provider: 'claude' }, { provider: 'claude' }] });
    const row = page.locator(`button[data-debate=${running.debate_id}]`);
    await row.waitFor({ timeout: 15_000 });
    await row.click();
    await page.locator(`[data-testid=debate][data-debate=${running.debate_id}][data-status=running]`).waitFor({ timeout: 15_000 });
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Cancel debate' }).click();
    await page.locator(`[data-testid=debate][data-debate=${running.debate_id}][data-status=cancelled]`).waitFor({ timeout: 30_000 });
    assert.equal((await h.hub.debates.get(running.debate_id)).status, 'cancelled');
    await eventually('its jobs cancelled', async () => (await Promise.all(running.job_ids.map((id: string) => job(h.hub, id)))).every((j) => j.status === 'cancelled'), 30_000);
    await page.context().close();
  });
});
