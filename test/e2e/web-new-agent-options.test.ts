// The dashboard's New agent form takes every option the CLI has (issue 31 point 5), in real
// Chromium against a hub with real claude children on the fake model: context (name/text pairs),
// retry, limits (max_turns, budget_usd, timeout_s) and a schedule (`at` in the future; every_s,
// max_runs, until) reach the job as spawn_agent's own input (the same route, the same schema); the
// job waits until its time. A bad cron and a number that is not one show the hub's refusal by the form and spawn
// nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { job } from '../helpers/state.js';
import { eventually } from '../helpers/wait.js';

const { hubWith } = scriptedHubs();
let browser: Browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

/** `datetime-local`'s value for `ms`: the local wall time, to the minute. */
function localInput(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

describe('dashboard: the New agent form has every spawn option', () => {
  test('context, retry, limits and a schedule `at` reach the waiting job; a bad cron or a bad number is refused by the form and nothing starts', { timeout: 180_000 }, async () => {
    const h = await hubWith({ later: () => finishStep('ran too early') });
    const page = await loggedIn(browser, h, { hash: '#/crew' });
    const agents = async (): Promise<{ job_id: string; status: string }[]> => (await h.call('list_agents', {})).agents;

    await page.getByTestId('new-agent').click();
    const form = page.getByTestId('new-agent-form');
    await form.locator('[name=prompt]').fill('@script:later rotate the logs');
    await form.locator('[name=title]').fill('Scheduled from the form');
    await form.getByTestId('add-context').click();
    await form.getByTestId('add-context').click();
    await form.locator('[name=context-name-0]').fill('ticket');
    await form.locator('[name=context-text-0]').fill('OPS-12: logs fill the disk');
    await form.locator('[name=context-name-1]').fill('host');
    await form.locator('[name=context-text-1]').fill('web-3');
    await form.locator('[name=retry]').selectOption('analyze');
    await form.locator('[name=budget_usd]').fill('0.75');
    await form.locator('[name=timeout_s]').fill('900');
    const atMs = Math.floor((Date.now() + 3 * 3600_000) / 60_000) * 60_000;
    await form.locator('[name=at]').fill(localInput(atMs));

    // A bad cron: the hub's own refusal next to the form, nothing spawned.
    await form.locator('[name=cron]').fill('every tuesday');
    await form.getByRole('button', { name: 'Spawn' }).click();
    await page.getByTestId('new-agent-error').filter({ hasText: /cron "every tuesday" is not a 5-field cron expression/ }).waitFor({ timeout: 15_000 });
    assert.equal((await agents()).length, 0, 'a refused form spawns nothing');
    await form.locator('[name=cron]').fill('');

    // A number that is not one: the schema names the field.
    await form.locator('[name=max_turns]').fill('twelve');
    await form.getByRole('button', { name: 'Spawn' }).click();
    await page.getByTestId('new-agent-error').filter({ hasText: /max_turns/ }).waitFor({ timeout: 15_000 });
    assert.equal((await agents()).length, 0, 'a refused form spawns nothing');
    await form.locator('[name=max_turns]').fill('12');

    await form.getByRole('button', { name: 'Spawn' }).click();
    await page.locator('[data-testid=panel]').waitFor({ timeout: 15_000 });
    const [spawned] = await agents();
    assert.ok(spawned, 'the form spawned nothing');
    const got = await h.call('get_agent', { job_id: spawned.job_id });
    assert.equal(got.title, 'Scheduled from the form');
    assert.equal(got.status, 'waiting', 'it waits until its time');
    const row = await job(h.hub, spawned.job_id);
    assert.deepEqual(JSON.parse(row.context_json ?? '{}'), { ticket: 'OPS-12: logs fill the disk', host: 'web-3' });
    assert.equal(row.retry, 'analyze');
    assert.equal(row.budget_usd, 0.75);
    assert.equal(row.max_turns, 12);
    assert.equal(row.timeout_s, 900);
    assert.equal(row.not_before, atMs, `not before ${new Date(atMs).toISOString()}`);
    assert.equal(h.fake.requests.filter((r) => r.script === 'later').length, 0, 'it has not run');
    await h.call('cancel_agent', { job_id: spawned.job_id });

    // A repeating schedule: every_s, max_runs and until, first run at a future time.
    await page.getByTestId('new-agent').click();
    await form.locator('[name=prompt]').fill('@script:later sweep the tmp dirs');
    await form.locator('[name=title]').fill('Repeating from the form');
    await form.locator('[name=at]').fill(localInput(atMs));
    await form.locator('[name=every_s]').fill('3600');
    await form.locator('[name=max_runs]').fill('3');
    const untilMs = atMs + 24 * 3600_000;
    await form.locator('[name=until]').fill(localInput(untilMs));
    await form.getByRole('button', { name: 'Spawn' }).click();
    const sched = await eventually('the schedule', async () => (await h.call('list_schedules', {})).schedules?.find((x: { title: string }) => x.title === 'Repeating from the form'), 15_000);
    assert.equal(sched.every_s, 3600);
    assert.equal(sched.max_runs, 3);
    assert.equal(sched.status, 'active');
    assert.equal(Date.parse(sched.first_run_at), atMs);
    assert.equal(Date.parse(sched.until), untilMs);
    assert.equal(h.fake.requests.filter((r) => r.script === 'later').length, 0, 'nothing has run');
    await h.call('cancel_schedule', { schedule_id: sched.schedule_id });
  });
});
