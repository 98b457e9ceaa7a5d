// End to end in a real browser (Chromium from npm, playwright-core) against a hub with real
// claude children on the fake model: log in through the one-time link, watch a card go from
// running to succeeded without reloading, read the streamed output, approve a child's request in
// the page (the child gets the answer), see its diff; and the refusals: no cookie, a used code, a
// foreign Origin, a missing CSRF token (issue 11).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { buildCli, overseer } from '../helpers/cli.js';
import { cwdOf } from '../helpers/steps.js';
import { launchBrowser } from '../helpers/browser.js';
import { initRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/claude.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { job, row } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith, cleanups } = scriptedHubs();
let browser: Browser;
before(async () => { buildCli(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

async function loginLink(h: TestHub): Promise<string> {
  const r = await overseer(h.project, ['dashboard', '--json'], { OVERSEER_HOME: h.home });
  assert.equal(r.code, 0, r.stderr);
  const { url } = JSON.parse(r.stdout) as { url: string };
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/login\?code=[A-Za-z0-9_-]{32}$/);
  return url;
}

const origin = (h: TestHub): string => new URL(h.hub.http!.url).origin;

describe('the dashboard', () => {
  test('log in, live cards, streamed output, approve in the page, the diff', { timeout: 180_000 }, async () => {
    const go = gate(120_000);
    let approvedSeen = '';
    const repo = await initRepo(await makeTempDir('ovs-web-repo'));
    const h = await startTestHub({ project: repo, scripts: {
      builder: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'parser.txt'), content: 'the parser\n' } }] };
        if (ctx.step === 1) return { text: 'Writing the PAPAYA-42 parser now.', tools: [{ name: 'mcp__overseer__report_status', input: { message: 'parsing', progress: 0.5 } }] };
        if (ctx.step === 2) { await go.wait; return finishStep('parser done'); }
        return { text: 'done' };
      },
      asker: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'drop the legacy table', timeout_s: 120 } }] };
        if (ctx.step === 1) { approvedSeen = JSON.stringify(ctx.body.messages.at(-1)); return finishStep('dropped it'); }
        return { text: 'done' };
      },
    } });
    cleanups.push(() => h.stop());
    const builder = (await h.call('spawn_agent', { prompt: '@script:builder', title: 'Builder' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'builder' && r.step === 2, 60_000);

    const page: Page = await browser.newPage();
    const denied = await page.goto(`${origin(h)}/`);
    assert.equal(denied!.status(), 401, 'no cookie: the login page, not data');
    assert.match(await page.textContent('body') ?? '', /overseer dashboard/);
    const api = await page.request.get(`${origin(h)}/api/floor`);
    assert.equal(api.status(), 401, 'no cookie, no data');

    const link = await loginLink(h);
    await page.goto(link);
    assert.equal(new URL(page.url()).pathname, '/', 'redirected to the app');
    const card = page.locator(`li.card[data-job="${builder}"]`);
    await card.waitFor({ timeout: 15_000 });
    assert.equal(await card.getAttribute('data-status'), 'running');
    assert.match(await page.textContent('[data-testid=connection]') ?? '', /live/);

    // Reusing the link fails; the cookie is HttpOnly and SameSite=Strict.
    const reuse = await (await browser.newPage()).goto(link);
    assert.equal(reuse!.status(), 401);
    const cookies = await page.context().cookies();
    const c = cookies.find((x) => x.name.startsWith('overseer_'))!;
    assert.equal(c.httpOnly, true);
    assert.equal(c.sameSite, 'Strict');

    // The agent panel: streamed output says what the model said.
    await card.locator('button.card-main').click();
    await page.locator('[data-testid=output]').getByText('PAPAYA-42').first().waitFor({ timeout: 15_000 });

    // The diff of its work.
    await page.getByRole('tab', { name: 'Changes' }).click();
    await page.locator('[data-testid=changes]').getByText('parser.txt').first().waitFor({ timeout: 15_000 });
    assert.match(await page.textContent('[data-testid=changes]') ?? '', /\+the parser/);

    // Running → succeeded without a reload.
    const t0 = Date.now();
    go.open();
    await page.locator(`li.card[data-job="${builder}"][data-status="succeeded"]`).waitFor({ timeout: 30_000 });
    assert.ok(Date.now() - t0 < 30_000);

    // A request answered in the page reaches the child.
    const asker = (await h.call('spawn_agent', { prompt: '@script:asker', title: 'Asker' })).job_id;
    const need = page.locator('section[data-section=needs_you] li.need').filter({ hasText: 'drop the legacy table' });
    await need.waitFor({ timeout: 30_000 });
    page.once('dialog', (d) => void d.accept());
    await need.getByRole('button', { name: 'Approve' }).click();
    const done = await waitForJob(h.hub, asker, (j) => j.status === 'succeeded', 60_000);
    assert.equal(done.result, 'dropped it');
    assert.match(approvedSeen, /approved/);
    const answered = await row(h.hub, sql<{ decision: string; answered_by: string }>`SELECT decision, answered_by FROM requests WHERE job_id = ${asker}`);
    assert.deepEqual(answered, { decision: 'approved', answered_by: 'person (web)' });
    await page.close();
  });

  test('refusals: a forged cookie, a foreign Origin, a missing CSRF token, an agent token; nothing changes', { timeout: 120_000 }, async () => {
    const hold = gate(90_000);
    const h = await hubWith({ idle: async (ctx) => { if (ctx.step === 0) await hold.wait; return finishStep('ok'); } });
    const id = (await h.call('spawn_agent', { prompt: '@script:idle', title: 'Idle' })).job_id;
    await waitForJob(h.hub, id, (j) => j.status === 'running', 60_000);
    const page = await browser.newPage();
    await page.goto(await loginLink(h));
    const port = new URL(origin(h)).port;
    const cookie = (await page.context().cookies()).find((x) => x.name === `overseer_${port}`)!;
    const base = origin(h);
    const csrf = (await (await page.request.get(`${base}/api/web/session`)).json()).csrf as string;

    const forged = await fetch(`${base}/api/floor`, { headers: { cookie: `overseer_${port}=${cookie.value.slice(0, -3)}abc` } });
    assert.equal(forged.status, 401);
    const noCsrf = await fetch(`${base}/api/web/jobs/${id}/cancel`, { method: 'POST', headers: { cookie: `overseer_${port}=${cookie.value}`, origin: base, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(noCsrf.status, 403);
    assert.match(((await noCsrf.json()) as any).error.message, /CSRF/);
    const foreign = await fetch(`${base}/api/web/jobs/${id}/cancel`, { method: 'POST', headers: { cookie: `overseer_${port}=${cookie.value}`, origin: 'http://evil.example', 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(foreign.status, 403);
    const noOrigin = await fetch(`${base}/api/web/jobs/${id}/cancel`, { method: 'POST', headers: { cookie: `overseer_${port}=${cookie.value}`, 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(noOrigin.status, 403);
    const cookieOnMcp = await fetch(`${base}/mcp`, { method: 'POST', headers: { cookie: `overseer_${port}=${cookie.value}`, origin: base, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(cookieOnMcp.status, 401, 'a session cookie never opens /mcp');
    assert.equal((await job(h.hub, id)).status, 'running', 'nothing changed');

    // The page's own request, with its token, works; cancelling twice says it had ended.
    const ok = await page.evaluate(async ([jobId, token]) => { const r = await fetch(`/api/web/jobs/${jobId}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': token! }, body: '{"reason":"from the test"}' }); return [r.status, await r.text()]; }, [id, csrf]);
    assert.equal(ok[0], 200, JSON.stringify([ok, await page.context().cookies()]));
    assert.equal((await job(h.hub, id)).status, 'cancelled');
    const again = await page.evaluate(async ([jobId, token]) => { const r = await fetch(`/api/web/jobs/${jobId}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': token! }, body: '{}' }); return [r.status, ((await r.json()) as any).error.message]; }, [id, csrf]);
    assert.equal(again[0], 409);
    assert.match(String(again[1]), /had already ended \(cancelled\): nothing to cancel/);
    hold.open();
    await page.close();
  });
});
