// Not a benchmark: makes docs/screenshots/*.png, the pictures docs/dashboard.md shows. A real
// hub with real claude children on the fake model (the test harness), a crew that leaves
// something in every view (a workflow, a parent with sub-agents, a dependency, a retried job
// with its diagnosis, a lock with a waiter, a pending question, notes, knowledge), and the page
// in the real Chromium the tests use, at 1280×800 (plus a phone and the dark theme).
// Run once after changing the page: node --import tsx bench/screenshots.ts
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startTestHub } from '../test/helpers/hub.js';
import { launchBrowser } from '../test/helpers/browser.js';
import { loggedIn, originOf } from '../test/helpers/dashboard.js';
import { initRepo } from '../test/helpers/git.js';
import { makeTempDir } from '../test/helpers/claude.js';
import { gate } from '../test/helpers/gate.js';
import { finishStep, holderScript } from '../test/helpers/holder.js';
import { settled } from '../test/helpers/workflow.js';
import { waitForJob } from '../test/helpers/wait.js';
import { cwdOf } from '../test/helpers/steps.js';
import type { Step, StepContext } from '../src/fakemodel/fakeAnthropic.js';
import { REPO_ROOT, out } from './common.js';

const DIR = join(REPO_ROOT, 'docs', 'screenshots');
const structured = (input: Record<string, unknown>): Step => ({ tools: [{ name: 'StructuredOutput', input }] });
const phaseOf = (ctx: StepContext): string => /# Workflow \S+ — (assess|review|implement)/.exec(ctx.prompt)?.[1] ?? '?';
const workDirOf = (ctx: StepContext): string => /working directory is `([^`]+)`/.exec(ctx.system)?.[1] ?? '.';

const PARSER = `// A tiny tokenizer for the config language.
export interface Token { kind: 'word' | 'number' | 'string'; text: string }

/* Splits a line into tokens; quotes keep spaces. */
export function tokenize(line: string): Token[] {
  const out: Token[] = [];
  for (const m of line.matchAll(/"([^"]*)"|(\\d+(?:\\.\\d+)?)|(\\S+)/g)) {
    if (m[1] !== undefined) out.push({ kind: 'string', text: m[1] });
    else if (m[2] !== undefined) out.push({ kind: 'number', text: m[2] });
    else out.push({ kind: 'word', text: m[3]! });
  }
  return out;
}
`;

async function main(): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  const hold = gate(600_000);
  const repo = await initRepo(await makeTempDir('ovs-shots-repo'), { 'README.md': '# config\n\nA config language.\n' });
  let wfAssess = 0;
  const h = await startTestHub({
    project: repo,
    config: { maxAgents: 12 },
    scripts: {
      wf: (ctx) => {
        const phase = phaseOf(ctx);
        if (phase === 'assess') { wfAssess++; return structured({ plan: '# Plan\n- [ ] add lexer.txt\n- [ ] add grammar.txt\n- [ ] add docs.txt\n', contract: 'the three files exist and are committed' }); }
        if (phase === 'review') return structured({ verdict: 'approve', notes: `Reviewed cycle ${/cycle (\d+)/.exec(ctx.prompt)?.[1]}: the plan holds, go on with the next milestone.` });
        const milestone = /## Your milestone\n- \[ \] (.+)/.exec(ctx.prompt)?.[1] ?? '';
        const file = /add (\S+)/.exec(milestone)?.[1] ?? 'x.txt';
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(workDirOf(ctx), file), content: `${file}\n` } }] };
        if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: `git add -A && git -c user.name=t -c user.email=t@t commit -qm "add ${file}"` } }] };
        return structured({ milestone, completed: true, summary: `added ${file}` });
      },
      parser: async (ctx) => {
        if (ctx.step === 0) return { text: 'I will write the tokenizer first, then wire it into the loader.', tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'src', 'parser.ts'), content: PARSER } }] };
        if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: 'ls src && wc -l src/parser.ts' } }] };
        if (ctx.step === 2) return { tools: [{ name: 'Edit', input: { file_path: join(cwdOf(ctx), 'README.md'), old_string: 'A config language.', new_string: 'A config language, tokenized by src/parser.ts.' } }] };
        if (ctx.step === 3) return { text: 'The tokenizer handles quoted strings and numbers; next, error positions.', tools: [{ name: 'mcp__overseer__report_status', input: { message: 'tokenizer done, adding error positions', progress: 0.6 } }] };
        if (ctx.step === 4) { await hold.wait; return finishStep('tokenizer in src/parser.ts'); }
        return { text: 'done' };
      },
      planner: async (ctx) => {
        if (ctx.step === 0) return { text: 'Splitting the docs work in two.', tools: [
          { name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:sub reference pages', title: 'Docs: reference' } },
          { name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:sub tutorial', title: 'Docs: tutorial' } },
        ] };
        if (ctx.step === 1) { await hold.wait; return finishStep('docs planned'); }
        return { text: 'done' };
      },
      sub: async (ctx) => {
        if (ctx.step === 0) return { text: 'Drafting the pages.', tools: [{ name: 'mcp__overseer__report_status', input: { message: 'drafting', progress: 0.3 } }] };
        if (ctx.step === 1) { await hold.wait; return finishStep('drafted'); }
        return { text: 'done' };
      },
      flaky: (ctx) => {
        if (ctx.prompt.includes('Diagnose why')) return { text: 'The migration failed on a locked table: retry after the import finishes.', usage: { input_tokens: 900, output_tokens: 80 } };
        if (ctx.prompt.includes('Previous attempt')) return ctx.step === 0 ? finishStep('migrated on the second try') : { text: 'done' };
        return { error: { status: 400, message: 'scripted failure: table is locked' } };
      },
      after: (ctx) => (ctx.step === 0 ? { text: 'Release notes written.', tools: [{ name: 'mcp__overseer__write_note', input: { key: 'release/notes', value: 'v0.3: tokenizer, migration 14, docs split in two.' } }] } : ctx.step === 1 ? finishStep('notes written') : { text: 'done' }),
      holder: holderScript(hold, 'src/loader.ts'),
      waiter: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['src/loader.ts'], reason: 'wire the tokenizer in' } }] } : ctx.step === 1 ? finishStep('wired') : { text: 'done' }),
      asker: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__ask_lead', input: { question: 'Which error format should the loader use?', options: ['line:col message', 'JSON'], timeout_s: 600 } }] } : ctx.step === 1 ? finishStep('asked') : { text: 'done' }),
    },
  });
  const browser = await launchBrowser();
  try {
    const wf = await h.call('start_workflow', { task: '@script:wf three files', cwd: repo, title: 'Lexer, grammar and docs' });
    const flaky = (await h.call('spawn_agent', { prompt: '@script:flaky migrate', title: 'Migration 14', retry: 'analyze', labels: ['db'] })).job_id;
    await h.call('spawn_agent', { prompt: '@script:after', title: 'Release notes', depends_on: [flaky], labels: ['docs'] });
    await waitForJob(h.hub, flaky, (j) => j.status === 'succeeded', 90_000);
    await settled(h.hub, wf.workflow_id, 180_000);
    const parser = (await h.call('spawn_agent', { prompt: '@script:parser', title: 'Tokenizer', labels: ['parser'] })).job_id;
    await h.call('spawn_agent', { prompt: '@script:planner', title: 'Plan the docs', labels: ['docs'] });
    const holder = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Loader refactor' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'holder' && r.step === 1, 60_000);
    await h.call('spawn_agent', { prompt: '@script:waiter', title: 'Wire the tokenizer' });
    await h.call('spawn_agent', { prompt: '@script:parser', title: 'Loader errors', depends_on: [parser], labels: ['parser'] });
    await h.call('spawn_agent', { prompt: '@script:asker', title: 'Error format' });
    await h.hub.kb.report([
      { title: 'Integration tests need npm run build first', content: 'The e2e tests run dist/cli/main.js; run npm run build before them or they test stale code.', tags: ['tests', 'build'] },
      { title: 'SQLite busy_timeout must be set per connection', content: 'better-sqlite3 opens each connection with busy_timeout 0; set it on every open or concurrent writers fail with SQLITE_BUSY.', tags: ['sqlite'] },
    ], { jobId: null });
    await h.fake.waitForRequest((r) => r.script === 'parser' && r.step === 4, 60_000);
    out(`crew ready (${wfAssess} assess run)\n`);

    const page = await loggedIn(browser, h);
    const shot = async (p: Page, name: string, ready: string): Promise<void> => {
      await p.locator(ready).first().waitFor({ timeout: 20_000 });
      await p.waitForFunction(() => !(globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText.includes('Loading…'), undefined, { timeout: 10_000 });
      await p.screenshot({ path: join(DIR, `${name}.png`) });
      out(`docs/screenshots/${name}.png\n`);
    };
    const base = originOf(h);
    await shot(page, 'crew', 'section[data-section=needs_you] li.need');
    await page.goto(`${base}/#/crew/${parser}`);
    await shot(page, 'agent-output', '[data-testid=output] .k-assistant');
    await page.getByRole('tab', { name: 'Changes' }).click();
    await shot(page, 'agent-changes', '[data-testid=changes] .t-kw');
    await page.goto(`${base}/#/workflows`);
    await page.locator('.worklog summary').first().click();
    await shot(page, 'workflows', '[data-testid=milestones] li');
    await page.goto(`${base}/#/usage`);
    await shot(page, 'usage', '[data-testid=usage-cost]');
    await page.goto(`${base}/#/timeline`);
    await shot(page, 'timeline', '.tl-bar');
    await page.goto(`${base}/#/graph`);
    await shot(page, 'graph', '[data-testid=graph] path.edge.dep');
    await page.goto(`${base}/#/locks`);
    await shot(page, 'locks', `[data-testid=locks] tr[data-holder="${holder}"]`);
    await page.context().close();
    const phone = await loggedIn(browser, h, { viewport: { width: 390, height: 844 } });
    await shot(phone, 'phone', 'li.card');
    await phone.context().close();
    const dark = await loggedIn(browser, h, { colorScheme: 'dark' });
    await dark.goto(`${base}/#/crew/${parser}`);
    await dark.getByRole('tab', { name: 'Changes' }).click();
    await shot(dark, 'dark', '[data-testid=changes] .t-kw');
    await dark.context().close();
  } finally {
    hold.open();
    await browser.close();
    await h.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
