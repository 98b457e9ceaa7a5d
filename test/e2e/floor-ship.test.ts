// READY TO SHIP and an approval's plan, end to end (issue 31 points 1 and 3): real claude children
// on the fake model work in real git worktrees and finish; `overseer watch` in tmux shows the
// finished job under READY TO SHIP and ships it with s + y; the dashboard in real Chromium shows
// an approval's four plan sections and ships a branch with its button. Afterwards the branch is
// merged in the real repository (the file on main, the merge recorded). Waits are on the screen,
// the page or the hub's state, with deadlines.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { sql } from 'kysely';
import { buildCli, cliEnv, MAIN } from '../helpers/cli.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import { cwdOf } from '../helpers/steps.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { waitForJob, eventually } from '../helpers/wait.js';
import { startTerminal, type Terminal } from '../helpers/tmux.js';
import { launchBrowser } from '../helpers/browser.js';
import { loggedIn } from '../helpers/dashboard.js';
import { events, row } from '../helpers/state.js';
import type { TestHub } from '../helpers/hub.js';
import type { StepContext } from '../../src/fakemodel/fakeAnthropic.js';

const { hubWith } = scriptedHubs();
const terminals: Terminal[] = [];
let browser: Browser | undefined;
before(buildCli);
after(async () => { for (const t of terminals) t.kill(); await browser?.close(); });

/** A script that writes `file` in its work tree and finishes. */
const writer = (file: string) => (ctx: StepContext) => {
  if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), file), content: `${file} content\n` } }] };
  if (ctx.step === 1) return finishStep(`wrote ${file}`);
  return { text: 'done' };
};

/** A finished worktree job of `h` in a fresh repository: its id, branch and the repository. */
async function finished(h: TestHub, script: string, title: string, checks?: string[]): Promise<{ id: string; branch: string; repo: string }> {
  const repo = await initRepo(join(h.dir, `repo-${script}-${title.replace(/\W/g, '')}`));
  const id = (await h.call('spawn_agent', { prompt: `@script:${script}`, title, cwd: repo, worktree: true, retry: 'none', ...(checks ? { checks } : {}) })).job_id as string;
  const j = await waitForJob(h.hub, id, (x) => (x.status === 'succeeded' || x.status === 'failed') && !!x.diff_stat, 90_000);
  assert.equal(j.status, checks ? 'failed' : 'succeeded', j.error ?? '');
  return { id, branch: j.branch!, repo };
}

/** Commit `file` on main in `repo` with other content than the job's: its branch now conflicts. */
async function conflictOnMain(repo: string, file: string): Promise<void> {
  writeFileSync(join(repo, file), 'main says otherwise\n');
  await gitOut(repo, ['add', file]);
  await gitOut(repo, ['commit', '-q', '-m', `main: ${file}`]);
}

const sentBack = async (h: TestHub, id: string) => (await events(h.hub, id)).find((e) => e.kind === 'sent_back');

const mergedRow = (h: TestHub, id: string) => row(h.hub, sql<{ branch: string; target: string }>`SELECT branch, target FROM job_merges WHERE job_id = ${id}`);

describe('READY TO SHIP end to end', () => {
  test('watch in tmux: the finished worktree job is under READY TO SHIP; s then y ships it (merged in the repository)', { timeout: 180_000 }, async () => {
    const h = await hubWith({ feature: writer('feature.txt') });
    const { id, branch, repo } = await finished(h, 'feature', 'Feature work');
    const t = startTerminal([process.execPath, MAIN, 'watch'], { cwd: h.project, env: cliEnv({ OVERSEER_HOME: h.home, TERM: 'xterm-256color' }), width: 120, height: 30 });
    terminals.push(t);
    await t.waitFor('READY TO SHIP with the job, its branch and its checks', (s) => /READY TO SHIP \(1\)/.test(s) && new RegExp(`⇪ Feature work +⎇ ${branch.replace(/\//g, '\\/')} +checks – not run`).test(s));
    const screen = t.screen().join('\n');
    assert.ok(screen.indexOf('READY TO SHIP') < screen.indexOf('DONE'), 'above DONE');
    // The cursor starts on the first selectable row: the lane's only row.
    await t.waitFor('the lane row selected', (s) => s.split('\n').some((l) => l.startsWith('▶') && /Feature work/.test(l)));
    t.keys(['s']);
    await t.waitFor('the y/n question', (s) => new RegExp(`ship "Feature work" \\(${id}\\) through the merge queue\\? y/n`).test(s));
    assert.equal(await mergedRow(h, id), undefined, 'nothing merged before the answer');
    t.keys(['y']);
    await t.waitFor('the ship confirmed', (s) => new RegExp(`shipped "Feature work" \\(${id}\\)`).test(s), 60_000);
    const m = await mergedRow(h, id);
    assert.equal(m?.branch, branch);
    assert.equal(m?.target, 'main');
    assert.ok(existsSync(join(repo, 'feature.txt')), 'the file is on main in the checkout');
    assert.match(await gitOut(repo, ['log', '--oneline', '-1']), new RegExp(`merge ${branch.replace(/\//g, '\\/')}`));
    await t.waitFor('the lane empty', (s) => !/READY TO SHIP/.test(s));
    t.keys(['q']);
    await eventually('watch to exit', () => (t.exited().dead ? true : undefined), 10_000);
  });

  test('dashboard in Chromium: an approval\'s four plan sections; Ship merges a branch, a failed-check branch cannot be shipped', { timeout: 180_000 }, async () => {
    const plan = { rationale: 'the old table slows every query', resources: ['table users_legacy', 'the nightly job'], risks: 'a report still reads it', rollback: 'restore from the 02:00 backup' };
    const h = await hubWith({
      asker: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'drop the legacy table', plan, timeout_s: 120 } }] } : ctx.step === 1 ? finishStep('answered') : { text: 'done' }),
      shipper: writer('shipped.txt'),
    });
    const { id, branch, repo } = await finished(h, 'shipper', 'Ship me');
    const asker = (await h.call('spawn_agent', { prompt: '@script:asker', title: 'Asker' })).job_id as string;
    await waitForJob(h.hub, asker, (j) => j.status === 'needs_input', 60_000);

    browser ??= await launchBrowser();
    const page = await loggedIn(browser, h);
    const need = page.locator('li.need-item', { hasText: 'drop the legacy table' });
    await need.waitFor({ timeout: 15_000 });
    assert.deepEqual(await need.locator('dl.plan dt').allTextContents(), ['Rationale', 'Resources', 'Risks', 'Rollback']);
    assert.equal(await need.locator('dd[data-plan-text=rationale]').textContent(), plan.rationale);
    assert.deepEqual(await need.locator('dd[data-plan-text=resources] li').allTextContents(), plan.resources);
    assert.equal(await need.locator('dd[data-plan-text=risks]').textContent(), plan.risks);
    assert.equal(await need.locator('dd[data-plan-text=rollback]').textContent(), plan.rollback);

    const ship = page.locator(`section[data-section=ready_to_ship] li[data-ship="${id}"]`);
    await ship.waitFor({ timeout: 15_000 });
    assert.match(await ship.textContent() ?? '', new RegExp(`${branch}.*no checks`));
    // Diff shows the job's changes inline.
    await ship.getByRole('button', { name: 'Diff' }).click();
    await ship.locator('[data-testid=changes] [data-path="shipped.txt"]').waitFor({ timeout: 15_000 });
    page.once('dialog', (d) => { assert.match(d.message(), /Ship .*Ship me/); void d.accept(); });
    await ship.getByRole('button', { name: 'Ship' }).click();
    await eventually('the branch merged', async () => (await mergedRow(h, id)) ?? undefined, 60_000);
    assert.ok(existsSync(join(repo, 'shipped.txt')), 'the file is on main in the checkout');
    await page.locator(`li[data-ship="${id}"]`).waitFor({ state: 'detached', timeout: 15_000 });

    // A branch whose checks failed (a real completion check that exits 1): its Ship button is disabled, and the API refuses it (nothing merged).
    const bad = await finished(h, 'shipper', 'Broken', ['command:test -f never-there.txt']);
    const badRow = page.locator(`li[data-ship="${bad.id}"]`);
    await badRow.waitFor({ timeout: 15_000 });
    assert.match(await badRow.locator('[data-testid=ship-checks]').textContent() ?? '', /checks failed/);
    assert.equal(await badRow.getByRole('button', { name: 'Ship' }).isDisabled(), true);
    const refused = await page.evaluate(async (jobId) => {
      const csrf = ((await (await fetch('/api/web/session')).json()) as { csrf: string }).csrf;
      const r = await fetch(`/api/floor/ready/${jobId}/ship`, { method: 'POST', headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: '{}' });
      return { status: r.status, body: await r.json() as { error: { message: string } } };
    }, bad.id);
    assert.equal(refused.status, 409);
    assert.match(refused.body.error.message, /its checks failed .*Nothing was merged/);
    assert.equal(await mergedRow(h, bad.id), undefined);
    await page.context().close();
  });
  test('watch in tmux: a ship that conflicts leaves the row with its failed merge; b then y sends it back to its agent (round 1 of 2)', { timeout: 180_000 }, async () => {
    const h = await hubWith({ back: writer('back.txt') });
    const { id, repo } = await finished(h, 'back', 'Back work');
    await conflictOnMain(repo, 'back.txt');
    const t = startTerminal([process.execPath, MAIN, 'watch'], { cwd: h.project, env: cliEnv({ OVERSEER_HOME: h.home, TERM: 'xterm-256color' }), width: 140, height: 30 });
    terminals.push(t);
    await t.waitFor('the lane row selected', (s) => s.split('\n').some((l) => l.startsWith('▶') && /Back work/.test(l)));
    t.keys(['b']);
    await t.waitFor('b refused before any failed merge', (s) => /not sent back: "Back work" .* has no failed merge to send back/.test(s));
    t.keys(['s']);
    await t.waitFor('the y/n question', (s) => /ship "Back work" .* y\/n/.test(s));
    t.keys(['y']);
    await t.waitFor('the conflict: not shipped, and the row offers b with its rounds', (s) => /not shipped/.test(s) && /merge conflicted · sent back 0\/2 · b sends it back/.test(s), 60_000);
    assert.equal(await mergedRow(h, id), undefined, 'nothing merged');
    t.keys(['b']);
    await t.waitFor('the send-back question', (s) => new RegExp(`send "Back work" \\(${id}\\) back to its agent with its failed merge\\? y/n`).test(s));
    t.keys(['y']);
    await t.waitFor('sent back, round 1 of 2', (s) => /sent back to its agent \(round 1 of 2\): the conflicts in back\.txt/.test(s), 60_000);
    const e = await eventually('the sent_back event', () => sentBack(h, id), 30_000);
    const data = JSON.parse(e.data_json ?? '{}') as { round: number; files: string[] };
    assert.deepEqual([data.round, data.files], [1, ['back.txt']]);
    t.keys(['q']);
    await eventually('watch to exit', () => (t.exited().dead ? true : undefined), 10_000);
  });

  test('dashboard in Chromium: a row whose merge conflicted shows its rounds and a Send back button that sends it back', { timeout: 180_000 }, async () => {
    const h = await hubWith({ backweb: writer('web.txt') });
    const { id, repo } = await finished(h, 'backweb', 'Web back');
    await conflictOnMain(repo, 'web.txt');
    browser ??= await launchBrowser();
    const page = await loggedIn(browser, h);
    const item = page.locator(`section[data-section=ready_to_ship] li[data-ship="${id}"]`);
    await item.waitFor({ timeout: 15_000 });
    assert.equal(await item.getByRole('button', { name: 'Send back' }).count(), 0, 'no Send back before a failed merge');
    const r = await h.call('merge_branch', { job_id: id });
    assert.equal(r.reason, 'conflict');
    await item.locator('[data-testid=ship-send-back]', { hasText: 'merge conflicted · sent back 0/2' }).waitFor({ timeout: 15_000 });
    page.once('dialog', (d) => { assert.match(d.message(), /Send Web back back to its agent .*round 1 of 2/); void d.accept(); });
    await item.getByRole('button', { name: 'Send back' }).click();
    const e = await eventually('the sent_back event', () => sentBack(h, id), 30_000);
    assert.equal((JSON.parse(e.data_json ?? '{}') as { round: number }).round, 1);
    assert.equal(await mergedRow(h, id), undefined, 'nothing merged');
    await page.context().close();
  });
});
