// End to end in a real browser: the dashboard says when a provider limit holds the crew — a
// banner with the floor's line as the limiter opens, "probing" once its wait is over, gone when a
// model answers again — live from the floor stream, without reloading (src/limits, docs/limits.md).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';

let browser: Browser;
const hubs: TestHub[] = [];
before(async () => { browser = await launchBrowser(); });
after(async () => { for (const h of hubs) await h.stop(); await browser?.close(); });

test('the limit banner: opened with its line, probing after the retry-after, gone once a model answered', { timeout: 120_000 }, async () => {
  const h = await startTestHub({ config: { maxAgents: 2 } });
  hubs.push(h);
  const page = await loggedIn(browser, h);
  const banner = page.locator('[data-testid=limit]');
  assert.equal(await banner.count(), 0, 'no banner while no limit holds');
  // A child's attempt ended on a rate limit with a 2 s retry-after (what the runner reports).
  const limits = h.hub.jobs.runner.limits;
  limits.limitSeen('claude', 'j-none', { kind: 'rate_limit', status: 429, retryAfterMs: 2000, message: 'API Error: Request rejected (429) · slow down' }, false);
  await banner.filter({ hasText: /claude: rate limited until \d\d:\d\d:\d\d — 0 agents waiting/ }).waitFor({ timeout: 15_000 });
  assert.match(await banner.innerText(), /new claude agents start when it has passed/);
  assert.equal(await banner.getAttribute('title'), 'API Error: Request rejected (429) · slow down');
  await banner.filter({ hasText: 'claude: rate limited — probing with one request' }).waitFor({ timeout: 15_000 });
  limits.answered('claude', 'j-none');
  await banner.waitFor({ state: 'detached', timeout: 15_000 });
});
