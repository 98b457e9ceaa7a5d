// The dashboard's Schedules panel in a real browser (docs/schedules.md): a repeating schedule
// (every_s, on the hub's injected clock) shows its next run and its first occurrence (which opens
// the agent panel); Cancel in the page cancels it through cancel_schedule's service call (the
// schedule row says cancelled, the occurrence waiting for its time is cancelled, the page shows
// why), and the API answers a second cancel and an unknown id as the tool does; without the
// CSRF token a cancel is refused; at phone width nothing scrolls sideways. Children are
// scripted in process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { csrfOf, loggedIn } from '../helpers/dashboard.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import type { Clock } from '../../src/clock.js';
import { job } from '../helpers/state.js';

const HOUR = 3_600_000;
let browser: Browser;
const hubs: TestHub[] = [];
before(async () => { browser = await launchBrowser(); });
after(async () => {
  await browser?.close();
  for (const h of hubs) await h.stop().catch(() => undefined);
});

describe('the Schedules panel', () => {
  test('a repeating schedule shows its next run and first occurrence; Cancel in the page cancels it', { timeout: 120_000 }, async () => {
    // The hub's clock runs a day ahead of the system's: the times the page shows are the hub's.
    const clock: Clock = { now: () => Date.now() + 24 * HOUR };
    const h = await startTestHub({ processes: new ScriptedLauncher(() => ({ resultText: 'checked' })), clock });
    hubs.push(h);
    const first = await h.call('spawn_agent', { prompt: 'check the deploy', title: 'hourly check', every_s: 3600, max_runs: 3 });
    const id: string = first.schedule_id;
    await eventually('the second occurrence waits for its time', async () => (await h.hub.schedules.get(id)).runs === 2, 15_000);
    await h.hub.schedules.tick(); // not due yet: it stays waiting
    const s = await h.hub.schedules.get(id);
    const second = s.current_job!;
    assert.equal((await job(h.hub, second)).status, 'waiting');
    const nextAt = new Date(Date.parse(first.run_at) + HOUR).toISOString();

    const page = await loggedIn(browser, h, { hash: '#/schedules' });
    const item = page.locator(`button[data-schedule="${id}"]`);
    await item.waitFor({ timeout: 15_000 });
    assert.match(await item.innerText(), /hourly check[\s\S]*active · every 3600 s · 2 \/ 3 runs · next/);
    const detail = page.locator(`[data-testid=schedule][data-schedule="${id}"]`);
    await detail.locator(`[data-testid=schedule-next] time[datetime="${nextAt}"]`).waitFor({ timeout: 15_000 });
    assert.match(await detail.locator('[data-testid=schedule-next]').innerText(), new RegExp(`job ${second} \\(waiting\\)`));
    const occ1 = detail.locator('[data-testid=schedule-occurrences] tr[data-occurrence="1"]');
    assert.match(await occ1.innerText(), new RegExp(`${first.job_id}[\\s\\S]*succeeded`));
    assert.equal(await detail.locator('[data-testid=schedule-occurrences] tr[data-occurrence="2"]').getAttribute('data-status'), 'waiting');
    await occ1.locator(`button[data-job="${first.job_id}"]`).click();
    await page.waitForURL((u) => u.hash === `#/schedules/${first.job_id}`, { timeout: 5_000 });

    // The status filter asks the hub for that status only.
    await page.getByTestId('schedule-filter').selectOption('cancelled');
    await page.getByText('No cancelled schedules.').waitFor({ timeout: 5_000 });
    await page.getByTestId('schedule-filter').selectOption('active');
    await item.waitFor({ timeout: 5_000 });

    // Without the session's CSRF token the cancel is refused and changes nothing.
    const noCsrf = await page.evaluate(async (p) => (await fetch(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, `/api/web/schedules/${id}/cancel`);
    assert.equal(noCsrf, 403);
    assert.equal((await h.hub.schedules.get(id)).status, 'active');

    page.once('dialog', (d) => void d.accept());
    await detail.getByLabel('Reason').fill('not needed');
    await detail.getByRole('button', { name: 'Cancel schedule' }).click();
    await eventually('the schedule is cancelled', async () => (await h.hub.schedules.get(id)).status === 'cancelled', 10_000);
    assert.equal((await h.hub.schedules.get(id)).stop_reason, 'cancelled: not needed');
    assert.equal((await job(h.hub, second)).status, 'cancelled', 'the occurrence waiting for its time is cancelled');
    assert.equal((await job(h.hub, first.job_id)).status, 'succeeded');
    await page.locator('[role=alert]', { hasText: `its next run ${second} was cancelled` }).waitFor({ timeout: 5_000 });
    // The active filter no longer lists it; all does, with why it ended.
    await page.getByText('No active schedules.').waitFor({ timeout: 5_000 });
    await page.getByTestId('schedule-filter').selectOption('');
    await detail.locator('[data-testid=schedule-stop]', { hasText: 'cancelled: cancelled: not needed' }).waitFor({ timeout: 5_000 });
    assert.equal(await detail.locator('[data-testid=schedule-occurrences] tr[data-occurrence="2"]').getAttribute('data-status'), 'cancelled');
    assert.equal(await detail.getByRole('button', { name: 'Cancel schedule' }).count(), 0, 'an ended schedule has no Cancel');

    // The API says what the tool says: a second cancel changes nothing, an unknown id is a 404.
    const csrf = await csrfOf(page);
    const api = (path: string, body: unknown) => page.evaluate(async ([p, b, c]) => {
      const r = await fetch(p as string, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': c as string }, body: JSON.stringify(b) });
      return { status: r.status, body: (await r.json()) as any };
    }, [path, body, csrf] as const);
    const again = await api(`/api/web/schedules/${id}/cancel`, {});
    assert.equal(again.status, 200);
    assert.match(again.body.schedule.note, /had already ended \(cancelled\): nothing to cancel/);
    const unknown = await api('/api/web/schedules/s-nope/cancel', {});
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.error.message, /No schedule "s-nope"\. Recent schedules: /);
    const bad = await api(`/api/web/schedules/${id}/cancel`, { why: 'x' });
    assert.equal(bad.status, 400);

    // Phone width: the tab does not scroll sideways.
    const phone = await loggedIn(browser, h, { hash: '#/schedules', viewport: { width: 390, height: 844 } });
    await phone.locator('[data-testid=schedule-occurrences]').waitFor({ timeout: 10_000 });
    const [sw, w] = await phone.evaluate(() => { const g = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number }; return [g.document.documentElement.scrollWidth, g.innerWidth]; });
    assert.ok(sw <= w, `the page is ${sw} px wide in a ${w} px screen`);
  });
});
