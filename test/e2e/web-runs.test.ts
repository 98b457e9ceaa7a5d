// The dashboard's Runs panel in a real browser (docs/dispatch.md): a run whose first task failed
// shows its tasks (the failed one with why, the skipped one with its dependency), and its Resume
// button resumes the run until every task succeeded. Children are scripted in process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { getRun, runTasks } from '../../src/store/sql/runs.js';
import { attempts } from '../helpers/state.js';

let browser: Browser;
const hubs: TestHub[] = [];
before(async () => { browser = await launchBrowser(); });
after(async () => {
  await browser?.close();
  for (const h of hubs) await h.stop().catch(() => undefined);
});

describe('the Runs panel', () => {
  test('a failed run shows its tasks and why; Resume in the page runs it to success', { timeout: 120_000 }, async () => {
    // Fails "first" until it is told its previous attempt did not succeed ("second" hears of "first" only under its dependencies' results).
    const fake = new ScriptedLauncher((prompt) => (prompt.includes('first task') && !prompt.includes('Results of your dependencies') && !prompt.includes('did not succeed') ? { isError: true, resultText: 'the build broke' } : { resultText: 'done' }));
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const r = await h.call('dispatch', { format: 'yaml', content: 'title: panel run\ntasks:\n  - id: first\n    prompt: the first task\n  - id: second\n    prompt: the second task\n    depends_on: [first]\n' });
    await eventually('the run failed', async () => (await getRun(h.hub.ctx.sql.db, r.run_id))?.status === 'failed', 15_000);
    const page = await loggedIn(browser, h, { hash: '#/runs' });
    await page.locator(`button[data-run="${r.run_id}"]`, { hasText: 'panel run' }).waitFor({ timeout: 15_000 });
    const first = page.locator('[data-testid=run-tasks] tr[data-task=first]');
    await first.waitFor({ timeout: 15_000 });
    assert.match(await first.innerText(), /failed[\s\S]*the build broke/);
    assert.match(await page.locator('[data-testid=run-tasks] tr[data-task=second]').innerText(), /skipped[\s\S]*first[\s\S]*dependency first did not succeed/);
    await page.getByRole('button', { name: 'Resume what did not succeed' }).click();
    await eventually('the run succeeded', async () => (await getRun(h.hub.ctx.sql.db, r.run_id))?.status === 'succeeded', 15_000);
    const firstJob = (await runTasks(h.hub.ctx.sql.db, r.run_id))[0]!.job_id!;
    assert.equal((await attempts(h.hub, firstJob)).length, 2, 'the failed job was continued, not replaced');
    await page.locator('[data-testid=run-tasks] tr[data-task=second]', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
  });
});
