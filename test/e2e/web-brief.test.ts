// The crew brief in the dashboard, in real Chromium (issue 31 point 6): the page shows the brief
// the lead set, the person edits it there (set as "person", the running agent told once), an
// empty brief is refused with the hub's message and nothing changes, and Clear removes it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { buildCli, overseer } from '../helpers/cli.js';
import { launchBrowser } from '../helpers/browser.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { job, rows } from '../helpers/state.js';
import { sql } from 'kysely';

let browser: Browser;
let h: TestHub | undefined;
before(async () => { buildCli(); browser = await launchBrowser(); });
after(async () => { await h?.stop(); await browser?.close(); });

describe('the dashboard: crew brief', () => {
  test('shows the lead\'s brief, the person edits and clears it; an empty one is refused', { timeout: 120_000 }, async () => {
    h = await startTestHub({ processes: new ScriptedLauncher(() => ({ hang: true })) });
    const A = (await h.call('spawn_agent', { prompt: 'task A', title: 'A' })).job_id as string;
    await eventually('A runs', async () => (await job(h!.hub, A)).status === 'running', 30_000);
    await h.call('set_brief', { text: 'LEAD-BRIEF-1: small commits.' });

    const r = await overseer(h.project, ['dashboard', '--json'], { OVERSEER_HOME: h.home });
    assert.equal(r.code, 0, r.stderr);
    const page = await browser.newPage();
    page.on('dialog', (d) => void d.accept());
    await page.goto((JSON.parse(r.stdout) as { url: string }).url);
    const shown = page.locator('[data-testid=brief-text]');
    await shown.waitFor({ timeout: 15_000 });
    assert.equal(await shown.textContent(), 'LEAD-BRIEF-1: small commits.');
    assert.match(await page.textContent('[data-testid=brief]') ?? '', /set by lead/);

    // Edited in the page: set by the person, A told.
    await page.getByRole('button', { name: 'Edit brief' }).click();
    await page.getByLabel('Brief text').fill('PAGE-BRIEF-2: run the tests first.');
    await page.getByRole('button', { name: 'Save brief' }).click();
    await page.locator('[data-testid=brief-text]', { hasText: 'PAGE-BRIEF-2' }).waitFor({ timeout: 15_000 });
    const v = await h.call('get_brief', {});
    assert.equal(v.text, 'PAGE-BRIEF-2: run the tests first.');
    assert.equal(v.set_by, 'person');
    await eventually('A was sent it', async () => (await rows(h!.hub, sql<{ text: string }>`SELECT text FROM messages WHERE to_id = ${A}`)).filter((m) => m.text.includes('PAGE-BRIEF-2')).length === 1, 10_000);

    // Empty: refused with the hub's message, nothing changed.
    await page.getByRole('button', { name: 'Edit brief' }).click();
    await page.getByLabel('Brief text').fill('   ');
    await page.getByRole('button', { name: 'Save brief' }).click();
    await page.locator('[role=alert].bad', { hasText: 'the brief is empty' }).waitFor({ timeout: 15_000 });
    assert.equal((await h.call('get_brief', {})).version, 2);
    await page.getByRole('button', { name: 'Cancel' }).click();

    // Cleared in the page.
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('button', { name: 'Write a brief' }).waitFor({ timeout: 15_000 });
    assert.equal((await h.call('get_brief', {})).text, null);
  });
});
