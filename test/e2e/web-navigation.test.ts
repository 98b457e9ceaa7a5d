// The dashboard driven like a person would (issue 11): search what a child said and open its
// panel at that attempt; the keyboard alone (/ search, 1…0 tabs, arrows between cards, Enter
// opens, Esc closes and gives the focus back); every tab at phone width without horizontal
// scrolling; dark follows the system. And the new state-changing routes refused without the
// session's CSRF token or from another origin, with nothing changed; bad input named.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { launchBrowser } from '../helpers/browser.js';
import { startTestHub } from '../helpers/hub.js';
import { TokenRecorder } from '../helpers/tokens.js';
import { initRepo } from '../helpers/git.js';
import { csrfOf, loggedIn, originOf } from '../helpers/dashboard.js';

const { hubWith, cleanups } = scriptedHubs();
let browser: Browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const TABS = ['crew', 'workflows', 'requests', 'locks', 'notes', 'kb', 'usage', 'timeline', 'graph', 'search'];
const focused = (page: Page): Promise<string | null> => page.evaluate(() => {
  const el = (globalThis as unknown as { document: { activeElement: { closest(s: string): { getAttribute(n: string): string | null } | null } | null } }).document.activeElement;
  return el?.closest('[data-job]')?.getAttribute('data-job') ?? null;
});

describe('dashboard navigation', () => {
  test('search finds what a child said and opens its panel; the keyboard alone opens and closes an agent panel; phone width; dark', { timeout: 120_000 }, async () => {
    const talk = (line: string) => (ctx: { step: number }) => (ctx.step === 0 ? { text: line, tools: [{ name: 'mcp__overseer__write_note', input: { key: `said/${line.slice(0, 8)}`, value: line } }] } : ctx.step === 1 ? finishStep('said it') : { text: 'done' });
    const h = await hubWith({ one: talk('The MANGO-77 cache key is stale after a deploy.'), two: talk('Nothing to see here.'), three: talk('Still nothing.') });
    const ids: string[] = [];
    for (const [s, t] of [['one', 'First talker'], ['two', 'Second talker'], ['three', 'Third talker']]) ids.push((await h.call('spawn_agent', { prompt: `@script:${s}`, title: t })).job_id);
    for (const id of ids) await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 60_000);

    const page = await loggedIn(browser, h);
    await page.locator('li.card').nth(2).waitFor({ timeout: 15_000 });

    // "/" then a phrase then Enter: the Search tab, the hit, its panel at attempt 1 with the line marked.
    await page.keyboard.press('/');
    await page.keyboard.type('"MANGO-77 cache"');
    await page.keyboard.press('Enter');
    const hit = page.locator(`[data-testid=search-results] button[data-job="${ids[0]}"]`, { hasText: '· text ·' });
    await hit.waitFor({ timeout: 15_000 });
    assert.deepEqual([...new Set(await page.locator('[data-testid=search-results] button').evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { job: string } }).dataset.job)))], [ids[0]], 'only the job that said it');
    assert.match(await hit.locator('mark').first().textContent() ?? '', /MANGO/);
    await hit.click();
    await page.locator(`[data-testid=panel][data-job="${ids[0]}"] [data-testid=output] .hit.k-assistant`, { hasText: 'MANGO-77 cache key' }).waitFor({ timeout: 15_000 });
    assert.match(page.url(), new RegExp(`#/search/${ids[0]}/1\\?q=`));

    // Keyboard only: Esc closes, 1 goes to Crew, arrows move between cards, Enter opens, Esc closes and the focus goes back.
    await page.keyboard.press('Escape');
    await page.locator('[data-testid=panel]').waitFor({ state: 'detached', timeout: 5_000 });
    await page.keyboard.press('1');
    await page.locator('main.view-crew li.card').first().waitFor({ timeout: 5_000 });
    await page.keyboard.press('ArrowDown');
    const first = await focused(page);
    await page.keyboard.press('ArrowDown');
    const second = await focused(page);
    assert.ok(first && second && first !== second, `arrows moved the focus: ${first} → ${second}`);
    const ring = await page.evaluate(() => {
      const d = (globalThis as unknown as { document: { activeElement: object }; getComputedStyle(e: object): { outlineStyle: string; outlineWidth: string } });
      const s = d.getComputedStyle(d.document.activeElement);
      return `${s.outlineStyle} ${s.outlineWidth}`;
    });
    assert.match(ring, /^solid [1-9]/, `a visible focus ring (${ring})`);
    await page.keyboard.press('Enter');
    await page.locator(`[data-testid=panel][data-job="${second}"]`).waitFor({ timeout: 5_000 });
    await page.keyboard.press('Escape');
    await page.locator('[data-testid=panel]').waitFor({ state: 'detached', timeout: 5_000 });
    assert.equal(await focused(page), second, 'the focus is back on the card');
    await page.keyboard.press('7');
    await page.locator('main.view-usage [data-testid=usage-cost]').waitFor({ timeout: 10_000 });
    await page.context().close();

    // Phone width: no tab scrolls sideways; the panel covers the page.
    const phone = await loggedIn(browser, h, { viewport: { width: 390, height: 844 } });
    for (const tab of TABS) {
      await phone.goto(`${originOf(h)}/#/${tab}${tab === 'search' ? '?q=MANGO' : ''}`);
      await phone.locator(`main.view-${tab} > *`).first().waitFor({ timeout: 10_000 });
      await phone.locator('main .muted', { hasText: /^Loading…$/ }).waitFor({ state: 'detached', timeout: 10_000 });
      const [sw, w] = await phone.evaluate(() => { const g = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number }; return [g.document.documentElement.scrollWidth, g.innerWidth]; });
      assert.ok(sw <= w, `${tab}: page is ${sw} px wide in a ${w} px screen`);
    }
    await phone.goto(`${originOf(h)}/#/crew/${ids[1]}`);
    const box = await phone.locator('[data-testid=panel]').boundingBox();
    assert.ok(box && box.x === 0 && box.width === 390, `the panel covers the screen: ${JSON.stringify(box)}`);
    await phone.context().close();

    const dark = await loggedIn(browser, h, { colorScheme: 'dark' });
    assert.equal(await dark.evaluate(() => { const g = globalThis as unknown as { getComputedStyle(e: object): { backgroundColor: string }; document: { body: object } }; return g.getComputedStyle(g.document.body).backgroundColor; }), 'rgb(13, 17, 23)');
    await dark.context().close();
  });

  test('new state-changing routes: refused without the CSRF token or from another origin, nothing changed; bad input named; agents refused', { timeout: 90_000 }, async () => {
    const hold = gate(60_000);
    const rec = new TokenRecorder();
    const h = await startTestHub({ processes: rec, scripts: { wf: async () => { await hold.wait; return { text: 'never mind' }; }, idle: async (ctx) => { if (ctx.step === 0) await hold.wait; return ctx.step <= 1 ? finishStep('ok') : { text: 'done' }; } } });
    cleanups.push(() => h.stop());
    const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# r\n' });
    const wf = (await h.call('start_workflow', { task: '@script:wf slow', cwd: repo, title: 'Slow' })).workflow_id;
    const page = await loggedIn(browser, h);
    const base = originOf(h);
    const port = new URL(base).port;
    const cookie = (await page.context().cookies()).find((c) => c.name === `overseer_${port}`)!;
    const csrf = await csrfOf(page);
    const json = { 'content-type': 'application/json' };
    const kbBody = JSON.stringify({ title: 'A real learning here', content: 'Something worth keeping for the next agent.' });
    const routes: [string, string][] = [['/api/web/kb', kbBody], [`/api/web/workflows/${wf}/cancel`, '{}'], [`/api/web/workflows/${wf}/resume`, '{"force":true}']];
    for (const [path, body] of routes) {
      const noToken = await fetch(base + path, { method: 'POST', headers: { ...json, cookie: `${cookie.name}=${cookie.value}`, origin: base }, body });
      assert.equal(noToken.status, 403, `${path} without the CSRF token`);
      assert.match(((await noToken.json()) as { error: { message: string } }).error.message, /CSRF/);
      const foreign = await fetch(base + path, { method: 'POST', headers: { ...json, cookie: `${cookie.name}=${cookie.value}`, origin: 'http://evil.example', 'x-csrf-token': csrf }, body });
      assert.equal(foreign.status, 403, `${path} from another origin`);
      const noOrigin = await fetch(base + path, { method: 'POST', headers: { ...json, cookie: `${cookie.name}=${cookie.value}`, 'x-csrf-token': csrf }, body });
      assert.equal(noOrigin.status, 403, `${path} with neither Origin nor Sec-Fetch-Site`);
    }
    assert.equal((await h.hub.kb.list()).entries.length, 0, 'nothing stored');
    assert.equal((await h.hub.workflows.get(wf)).status, 'running', 'the workflow untouched');
    assert.equal((await h.hub.workflows.get(wf)).jobs.length, 1, 'no phase restarted');

    // From the page, with its token: bad input is named, good input works.
    const call = (path: string, body: string): Promise<[number, string]> => page.evaluate(async ([p, b, t]) => {
      const r = await fetch(p!, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': t! }, body: b });
      return [r.status, await r.text()] as [number, string];
    }, [path, body, csrf]);
    const bad = await call('/api/web/kb', JSON.stringify({ title: 'x', content: 'y', colour: 'red' }));
    assert.equal(bad[0], 400);
    assert.match(bad[1], /unrecognized_keys|Unrecognized key.*colour/i);
    const badResume = await call(`/api/web/workflows/${wf}/resume`, JSON.stringify({ phase: 'deploy' }));
    assert.equal(badResume[0], 400);
    assert.match(badResume[1], /phase/);
    const notRunning = await call('/api/web/kb/p-99/delete', '{}');
    assert.equal(notRunning[0], 404);
    assert.match(notRunning[1], /no project knowledge base entry p-99/);
    const q = await page.evaluate(async () => { const r = await fetch('/api/web/timeline?limit=0&colour=1'); return [r.status, await r.text()] as [number, string]; });
    assert.equal(q[0], 400);
    assert.match(q[1], /unknown parameter .{0,2}"colour/);
    const ok = await call(`/api/web/workflows/${wf}/cancel`, '{}');
    assert.equal(ok[0], 200, ok[1]);
    assert.equal((await h.hub.workflows.get(wf)).status, 'cancelled');

    // An agent's own token never reaches the dashboard's API, read or write.
    const agent = (await h.call('spawn_agent', { prompt: '@script:idle', title: 'Agent' })).job_id;
    const token = await rec.token(agent);
    await waitForJob(h.hub, agent, (j) => j.status === 'running', 60_000);
    for (const [method, path] of [['GET', '/api/web/usage'], ['GET', `/api/web/jobs/${agent}`], ['POST', '/api/web/kb']]) {
      const r = await fetch(base + path, { method, headers: { ...json, authorization: `Bearer ${token}` }, ...(method === 'POST' ? { body: kbBody } : {}) });
      assert.equal(r.status, 403, `${method} ${path} with an agent's token`);
    }
    assert.equal((await h.hub.kb.list()).entries.length, 0);
    hold.open();
    await waitForJob(h.hub, agent, (j) => j.status === 'succeeded', 60_000);
    await page.context().close();
  });
});
