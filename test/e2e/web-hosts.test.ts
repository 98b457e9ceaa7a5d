// The dashboard in a real browser (Chromium from npm) and the worker hosts (issue 30 step 5): with
// one machine and no worker a card has no host; once a worker is registered each card says where
// its agent runs (`on box-4` for a job a worker claimed), the Details tab always; a worker whose
// heartbeat is made old appears in NEEDS YOU (nothing else changing: the stream notices by itself)
// and leaves it when its row is live again. Children start no process (ScriptedLauncher, hanging).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { Browser } from 'playwright-core';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { eventually } from '../helpers/wait.js';
import { job } from '../helpers/state.js';
import { registerWorker } from '../../src/store/sql/workers.js';

let browser: Browser;
let h: TestHub | undefined;
before(async () => { browser = await launchBrowser(); });
after(async () => { await h?.stop(); await browser?.close(); });

test('cards show the host once the crew has workers, Details always; a lost worker comes and goes in NEEDS YOU', { timeout: 120_000 }, async () => {
  h = await startTestHub({ processes: new ScriptedLauncher(() => ({ hang: true })) });
  const a = (await h.call('spawn_agent', { prompt: 'a', title: 'Worker job' })).job_id as string;
  const b = (await h.call('spawn_agent', { prompt: 'b', title: 'Hub job' })).job_id as string;
  await eventually('both run', async () => (await Promise.all([a, b].map((id) => job(h!.hub, id)))).every((j) => j.status === 'running'), 30_000);

  const page = await loggedIn(browser, h);
  const card = (id: string) => page.locator(`section[data-section=running] li.card[data-job="${id}"] > button`);
  await card(b).waitFor({ timeout: 15_000 });
  assert.equal(await card(b).locator('[data-testid=host]').count(), 0, 'one machine, no worker: no host on the card');

  const q = h.hub.ctx.sql;
  await sql`UPDATE jobs SET worker = 'box-4', worker_epoch = 1 WHERE id = ${a}`.execute(q.db);
  assert.deepEqual(await registerWorker(q.db, q.dialect, { name: 'box-4', host: 'box-4.lan', pid: 1, capacity: 2, labels: [], clis: { claude: 'test' }, version: 'test', leaseMs: 30_000 }), { ok: true, epoch: 1 });
  await card(a).locator('[data-testid=host]', { hasText: 'on box-4' }).waitFor({ timeout: 20_000 });
  assert.equal(await card(b).locator('[data-testid=host]').innerText(), `on ${hostname()}`);

  // The lease runs out (the database's clock sees 40 s of silence): the warning, with what to do.
  const item = page.locator('li.need-item[data-key="worker:box-4"]');
  await sql`UPDATE workers SET heartbeat_at = heartbeat_at - 40000 WHERE name = 'box-4'`.execute(q.db);
  await item.waitFor({ timeout: 20_000 });
  assert.match(await item.innerText(), /worker lost · worker box-4 on box-4\.lan[\s\S]*lost: no heartbeat since .*overseer worker --name box-4[\s\S]*overseer hosts/);
  await sql`UPDATE workers SET heartbeat_at = heartbeat_at + 40000 WHERE name = 'box-4'`.execute(q.db);
  await item.waitFor({ state: 'detached', timeout: 20_000 });

  // Details: the host from get_agent.
  await card(a).click();
  await page.getByRole('tab', { name: 'Details' }).click();
  assert.equal(await page.locator('[data-testid=details] [data-testid=host]').innerText(), 'box-4');
});
