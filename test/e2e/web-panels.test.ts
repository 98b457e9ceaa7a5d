// The dashboard's panels in a real browser (Chromium from npm) against a hub with real claude
// children on the fake model (issue 11): a workflow's milestones, worklogs and phases; a lock a
// child holds with another child waiting; a note a child writes appearing live; every request
// with its answer, answered in the page; the knowledge base added to, edited and deleted in the
// page (checked in the database); usage totals equal to the database's sums (a retry diagnosis
// included); a timeline bar per attempt; a graph edge per dependency.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep, holderScript } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { launchBrowser } from '../helpers/browser.js';
import { initRepo } from '../helpers/git.js';
import { settled } from '../helpers/workflow.js';
import { loggedIn } from '../helpers/dashboard.js';
import type { Step, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { sql, type RawBuilder } from 'kysely';
import { row } from '../helpers/state.js';

const { hubWith } = scriptedHubs();
let browser: Browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const structured = (input: Record<string, unknown>): Step => ({ tools: [{ name: 'StructuredOutput', input }] });
const phaseOf = (ctx: StepContext): string => /# Workflow \S+ — (assess|review|implement)/.exec(ctx.prompt)?.[1] ?? '?';
const workDirOf = (ctx: StepContext): string => /working directory is `([^`]+)`/.exec(ctx.system)?.[1] ?? '.';

/** A workflow crew: a two-milestone plan; each implement phase writes a file, commits it and checks its milestone off. */
function crew(ctx: StepContext): Step {
  const phase = phaseOf(ctx);
  if (phase === 'assess') return structured({ plan: '# Plan\n- [ ] add alpha.txt\n- [ ] add beta.txt\n', contract: 'alpha.txt and beta.txt exist' });
  if (phase === 'review') return structured({ verdict: 'approve', notes: `REVIEW-NOTE cycle ${/cycle (\d+)/.exec(ctx.prompt)?.[1]}` });
  const milestone = /## Your milestone\n- \[ \] (.+)/.exec(ctx.prompt)?.[1] ?? '';
  const file = /add (\S+)/.exec(milestone)?.[1] ?? 'x.txt';
  if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(workDirOf(ctx), file), content: `${file}\n` } }] };
  if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: `git add -A && git -c user.name=t -c user.email=t@t commit -qm "add ${file}"` } }] };
  return structured({ milestone, completed: true, summary: `added ${file}` });
}

describe('dashboard panels', () => {
  test('workflows, locks with a waiter, a note appearing live, requests answered in the page', { timeout: 150_000 }, async () => {
    const release = gate(90_000);
    const h = await hubWith({
      wf: crew,
      holder: holderScript(release, 'shared.txt'),
      waiter: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['shared.txt'], reason: 'B wants it' } }] } : ctx.step === 1 ? finishStep('B got it') : { text: 'done' }),
      writer: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__write_note', input: { key: 'findings/live', value: 'LIVE-NOTE-7: the cache is cold' } }] } : ctx.step === 1 ? finishStep('noted') : { text: 'done' }),
      asker: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'rotate the signing key', timeout_s: 120 } }] } : ctx.step === 1 ? finishStep('rotated') : { text: 'done' }),
    });
    const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
    const wf = await h.call('start_workflow', { task: '@script:wf add two files', cwd: repo, title: 'Two files' });
    const page = await loggedIn(browser, h, { hash: '#/workflows' });

    // Workflows: the checklist from the hub's record, the worklogs, the phases — live as it runs.
    const w = await settled(h.hub, wf.workflow_id, 120_000);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    const detail = page.locator(`[data-testid=workflow][data-workflow="${wf.workflow_id}"][data-status=succeeded]`);
    await detail.waitFor({ timeout: 15_000 });
    const boxes = detail.locator('[data-testid=milestones] li');
    assert.deepEqual(await boxes.allInnerTexts().then((t) => t.map((x) => x.split(' cycle')[0]!.trim())), ['add alpha.txt', 'add beta.txt']);
    assert.equal(await detail.locator('[data-testid=milestones] input:checked').count(), 2, 'both milestones checked off');
    assert.match(await detail.textContent() ?? '', /2\/2 milestones/);
    assert.equal(await detail.locator('.phases li').count(), w.jobs.length, 'a row per phase job');
    await detail.locator('.worklog summary', { hasText: 'cycle 2 · review' }).click();
    await detail.getByText('REVIEW-NOTE cycle 2').waitFor({ timeout: 5_000 });
    assert.match(await detail.textContent() ?? '', /alpha\.txt and beta\.txt exist/, 'the contract');

    // Locks: a child holds shared.txt, another waits for it.
    const holder = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'holder' && r.step === 1, 60_000);
    const waiter = (await h.call('spawn_agent', { prompt: '@script:waiter', title: 'Waiter B' })).job_id;
    await page.getByRole('link', { name: /^Locks/ }).click();
    const row = page.locator(`[data-testid=locks] tr[data-holder="${holder}"]`);
    await row.filter({ hasText: 'Waiter B' }).waitFor({ timeout: 30_000 });
    assert.match(await row.textContent() ?? '', /shared\.txt.*Holder A.*A owns it/);
    await page.locator(`li[data-waiter="${waiter}"]`, { hasText: 'held by Holder A' }).waitFor({ timeout: 5_000 });
    release.open();
    await waitForJob(h.hub, waiter, (j) => j.status === 'succeeded', 60_000);
    await page.locator(`[data-testid=locks] tr[data-holder="${holder}"]`).waitFor({ state: 'detached', timeout: 15_000 });

    // Notes: a child's note shows up without a reload.
    await page.getByRole('link', { name: /^Notes/ }).click();
    await page.locator('[data-testid=notes]').waitFor({ timeout: 10_000 });
    await page.evaluate(() => { (globalThis as unknown as { marker: number }).marker = 42; });
    await h.call('spawn_agent', { prompt: '@script:writer', title: 'Writer' });
    const note = page.locator('[data-testid=notes] li[data-key="findings/live"]');
    await note.waitFor({ timeout: 30_000 });
    assert.match(await note.textContent() ?? '', /v1.*Writer.*LIVE-NOTE-7/);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { marker: number }).marker), 42, 'no reload');
    await note.locator('button.item').click();
    await note.locator('.note-value', { hasText: 'the cache is cold' }).waitFor({ timeout: 5_000 });

    // Requests: pending first; answered in the page, shown with who answered.
    await page.getByRole('link', { name: /^Requests/ }).click();
    const asker = (await h.call('spawn_agent', { prompt: '@script:asker', title: 'Asker' })).job_id;
    const pending = page.locator('li.request[data-status=pending]', { hasText: 'rotate the signing key' });
    await pending.waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('li.request').first().getAttribute('data-status'), 'pending', 'pending first');
    page.once('dialog', (d) => void d.accept());
    await pending.getByRole('button', { name: 'Approve' }).click();
    await waitForJob(h.hub, asker, (j) => j.status === 'succeeded', 60_000);
    await page.locator('li.request[data-status=answered]', { hasText: 'rotate the signing key' }).filter({ hasText: 'by person (web)' }).waitFor({ timeout: 15_000 });
    await page.context().close();
  });

  test('the knowledge base: add, edit, delete in the page, each checked in the database; a rejected learning says why', { timeout: 60_000 }, async () => {
    const h = await hubWith({});
    const page = await loggedIn(browser, h, { hash: '#/kb' });
    await page.getByText('The knowledge base is empty').waitFor({ timeout: 10_000 });
    const add = async (title: string, content: string, tags: string): Promise<void> => {
      await page.getByRole('button', { name: 'Add an entry' }).click();
      const form = page.getByRole('form', { name: 'Add an entry' });
      await form.getByLabel('Title').fill(title);
      await form.getByLabel('What was learned').fill(content);
      await form.getByLabel('Tags').fill(tags);
      await form.getByRole('button', { name: 'Add' }).click();
    };
    await add('Tests need TZ=UTC', 'The date tests assume UTC; run them with TZ=UTC or they fail near midnight.', 'tests, tz');
    const entry = page.locator('[data-testid=kb] li[data-entry="p-1"]');
    await entry.waitFor({ timeout: 10_000 });
    const stored = (await h.hub.kb.get('p-1'))!;
    assert.deepEqual({ ...stored, created_at: 0, updated_at: 0 }, {
      ...stored, created_at: 0, updated_at: 0, title: 'Tests need TZ=UTC', tags: ['tests', 'tz'], source_job: null,
    });

    await entry.locator('summary').click();
    await entry.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit p-1' });
    await form.getByLabel('Title').fill('Date tests need TZ=UTC');
    await form.getByLabel('Tags').fill('tests, tz, dates');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.locator('[data-testid=kb] li[data-entry="p-1"] summary', { hasText: 'Date tests need TZ=UTC' }).waitFor({ timeout: 10_000 });
    const edited = (await h.hub.kb.get('p-1'))!;
    assert.equal(edited.title, 'Date tests need TZ=UTC');
    assert.deepEqual(edited.tags, ['tests', 'tz', 'dates']);
    assert.match(edited.content, /run them with TZ=UTC/, 'content kept');

    await add('Too short', 'tiny', '');
    await page.locator('.note.bad', { hasText: /content is too short/ }).waitFor({ timeout: 10_000 });
    assert.equal((await h.hub.kb.list()).entries.length, 1, 'nothing stored');

    page.once('dialog', (d) => void d.accept());
    await page.locator('[data-testid=kb] li[data-entry="p-1"]').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('The knowledge base is empty').waitFor({ timeout: 10_000 });
    assert.equal(await h.hub.kb.get('p-1'), undefined, 'deleted in the database');
    await page.context().close();
  });

  test('usage equals the database\'s sums (a diagnosis run included); a timeline bar per attempt; a graph edge per dependency', { timeout: 120_000 }, async () => {
    const h = await hubWith({
      flaky: (ctx) => {
        if (ctx.prompt.includes('Diagnose why')) return { text: 'Diagnosis: try again', usage: { input_tokens: 500, output_tokens: 60 } };
        if (ctx.prompt.includes('Previous attempt')) return ctx.step === 0 ? finishStep('fixed') : { text: 'done' };
        return { error: { status: 400, message: 'scripted failure' } };
      },
      plain: (ctx) => (ctx.step === 0 ? finishStep('ok') : { text: 'done' }),
    });
    const flaky = (await h.call('spawn_agent', { prompt: '@script:flaky do it', title: 'Flaky', retry: 'analyze', labels: ['infra'] })).job_id;
    const after = (await h.call('spawn_agent', { prompt: '@script:plain', title: 'After flaky', depends_on: [flaky], labels: ['infra', 'docs'] })).job_id;
    await waitForJob(h.hub, after, (j) => j.status === 'succeeded', 90_000);
    type Sums = { c: number; i: number; o: number; n: number };
    const sums = async (q: RawBuilder<Record<keyof Sums, number | string | null>>): Promise<Sums> => {
      const r = (await row(h.hub, q))!;
      return { c: Number(r.c), i: Number(r.i), o: Number(r.o), n: Number(r.n) };
    };
    const a = await sums(sql`SELECT SUM(cost_usd) AS c, SUM(input_tokens) AS i, SUM(output_tokens) AS o, COUNT(*) AS n FROM attempts`);
    const u = await sums(sql`SELECT SUM(cost_usd) AS c, SUM(input_tokens) AS i, SUM(output_tokens) AS o, COUNT(*) AS n FROM usage WHERE kind = 'diagnosis'`);
    assert.equal(u.n, 1, 'the diagnosis run was recorded');
    assert.equal(a.n, 3, 'two attempts of Flaky, one of After');

    const page = await loggedIn(browser, h, { hash: '#/usage' });
    const cost = page.locator('[data-testid=usage-cost]');
    await cost.waitFor({ timeout: 10_000 });
    assert.ok(Math.abs(Number(await cost.getAttribute('data-value')) - (a.c + u.c)) < 1e-6, `${await cost.getAttribute('data-value')} vs ${a.c + u.c}`);
    assert.equal(await cost.textContent(), `$${(a.c + u.c).toFixed(4)}`);
    assert.equal(Number(await page.locator('[data-testid=usage-input]').getAttribute('data-value')), a.i + u.i);
    assert.equal(Number(await page.locator('[data-testid=usage-output]').getAttribute('data-value')), a.o + u.o);
    const kind = page.locator('table[data-dim="Kind of run"] tr[data-key=diagnosis]');
    assert.match(await kind.textContent() ?? '', new RegExp(`\\$${u.c.toFixed(4).replace('.', '\\.')}`));
    assert.deepEqual((await page.locator('table[data-dim=Label] tr[data-key=docs] td').allInnerTexts()).slice(-2), ['1', '1'], 'docs: one run of one job');
    assert.deepEqual((await page.locator('table[data-dim=Label] tr[data-key=infra] td').allInnerTexts()).slice(-2), ['4', '2'], 'infra: three attempts and the diagnosis, of two jobs');

    await page.getByRole('link', { name: /^Timeline/ }).click();
    for (const [id, n] of [[flaky, 2], [after, 1]] as const) {
      const bars = page.locator(`.tl-row[data-job="${id}"] .tl-bar`);
      await bars.first().waitFor({ timeout: 10_000 });
      assert.equal(await bars.count(), n, `${id}: a bar per attempt`);
    }
    assert.deepEqual(await page.locator(`.tl-row[data-job="${flaky}"] .tl-bar`).evaluateAll((els) => els.map((e) => (e as unknown as { dataset: Record<string, string> }).dataset.status)), ['failed', 'succeeded']);
    await page.locator(`.tl-row[data-job="${flaky}"] .tl-bar[data-attempt="1"]`).click();
    await page.locator('[data-testid=panel][data-job="' + flaky + '"]').waitFor({ timeout: 10_000 });
    assert.match(page.url(), new RegExp(`#/timeline/${flaky}/1$`), 'the panel opened at attempt 1');
    await page.keyboard.press('Escape');

    await page.getByRole('link', { name: /^Graph/ }).click();
    await page.locator(`[data-testid=graph] path.edge.dep[data-from="${flaky}"][data-to="${after}"]`).waitFor({ state: 'attached', timeout: 10_000 });
    assert.equal(await page.locator('[data-testid=graph] path.edge.dep').count(), 1);
    assert.equal(await page.locator(`[data-testid=graph] g.node[data-job="${after}"]`).getAttribute('data-status'), 'succeeded');
    await page.context().close();
  });
});
