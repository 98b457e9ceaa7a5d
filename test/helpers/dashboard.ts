// Helpers for the dashboard's browser tests and its screenshot script: a login link from the
// hub itself (what `overseer dashboard` asks for, without spawning the CLI), a logged-in page,
// and waiting on page content with a deadline.
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { TestHub } from './hub.js';

export const originOf = (h: TestHub): string => new URL(h.hub.http!.url).origin;

/** A one-time login link, minted through the hub's API with the lead token (as the CLI does). */
export async function mintLink(h: TestHub): Promise<string> {
  const r = await fetch(`${originOf(h)}/api/web/login-code`, { method: 'POST', headers: { authorization: `Bearer ${h.hub.leadToken}` } });
  assert.equal(r.status, 200, await r.clone().text());
  return ((await r.json()) as { url: string }).url;
}

/** A new page (its own browser context: own cookies, own connection pool) logged in to the hub, on `hash`. */
export async function loggedIn(browser: Browser, h: TestHub, o: { hash?: string; viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {}): Promise<Page> {
  const ctx = await browser.newContext({ viewport: o.viewport ?? { width: 1280, height: 800 }, colorScheme: o.colorScheme ?? 'light' });
  const page = await ctx.newPage();
  await page.goto(await mintLink(h));
  if (o.hash) await page.goto(`${originOf(h)}/${o.hash}`);
  await page.locator('[data-testid=connection]', { hasText: 'live' }).waitFor({ timeout: 15_000 });
  return page;
}

/** The session's CSRF token, as the page holds it. */
export async function csrfOf(page: Page): Promise<string> {
  return page.evaluate(async () => ((await (await fetch('/api/web/session')).json()) as { csrf: string }).csrf);
}
