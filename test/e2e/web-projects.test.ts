// The dashboard and projects in a real browser (Chromium from npm): the crew panel's project
// filter keeps one project's cards, and the usage panel groups by project and template.
// Children start no process here (ScriptedLauncher, hanging): the page is what is tested.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { eventually } from '../helpers/wait.js';
import { job } from '../helpers/state.js';

let browser: Browser;
let h: TestHub | undefined;
before(async () => { browser = await launchBrowser(); });
after(async () => { await h?.stop(); await browser?.close(); });

describe('dashboard projects', () => {
  test('the crew filters by project; usage has project and template groups', { timeout: 120_000 }, async () => {
    h = await startTestHub({ processes: new ScriptedLauncher(() => ({ hang: true })) });
    const a1 = (await h.call('spawn_agent', { prompt: 'a1', title: 'Alpha one', project: 'alpha' })).job_id as string;
    const a2 = (await h.call('spawn_agent', { prompt: 'a2', title: 'Alpha two', project: 'alpha' })).job_id as string;
    const b1 = (await h.call('spawn_agent', { prompt: 'b1', title: 'Beta one', project: 'beta' })).job_id as string;
    await eventually('all three run', async () => (await Promise.all([a1, a2, b1].map((id) => job(h!.hub, id)))).every((j) => j.status === 'running'), 30_000);

    const page = await loggedIn(browser, h);
    const running = page.locator('section[data-section=running] li.card');
    const shown = async (): Promise<string[]> => (await Promise.all((await running.all()).map((c) => c.getAttribute('data-job')))).map(String).sort();
    const cards = async (n: number): Promise<void> => {
      const until = Date.now() + 15_000;
      while ((await running.count()) !== n) {
        assert.ok(Date.now() < until, `expected ${n} running cards, see ${await running.count()}`);
        await page.waitForTimeout(50);
      }
    };
    await cards(3);
    const select = page.locator('[data-testid=project-filter]');
    assert.deepEqual(await select.locator('option').allInnerTexts(), ['all', 'alpha', 'beta']);
    await select.selectOption('beta');
    await cards(1);
    assert.deepEqual(await shown(), [b1]);
    await select.selectOption('alpha');
    await cards(2);
    assert.deepEqual(await shown(), [a1, a2].sort());

    await page.goto(`${new URL(h.hub.http!.url).origin}/#/usage`);
    const alpha = page.locator('table[data-dim=Project] tr[data-key=alpha] td');
    await alpha.first().waitFor({ timeout: 15_000 });
    assert.deepEqual((await alpha.allInnerTexts()).slice(-2), ['2', '2'], 'alpha: two runs of two jobs');
    assert.deepEqual((await page.locator('table[data-dim=Project] tr[data-key=beta] td').allInnerTexts()).slice(-2), ['1', '1']);
    assert.deepEqual((await page.locator('table[data-dim=Template] tr[data-key="(no template)"] td').allInnerTexts()).slice(-2), ['3', '3']);
  });
});
