// End-to-end (a real hub, real claude children on the fake model, real git): worktree bootstrap
// (docs/worktrees.md). A new worktree gets the configured untracked files (.env*) from the main
// checkout and its setup commands run before the child's first request; a setup command that
// fails or hangs fails the job with failure_class setup_failed and its output, and the child
// never starts; bootstrap: false skips it all. Setup is reported in get_agent, events and status.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { initRepo } from '../helpers/git.js';
import { waitForJob } from '../helpers/wait.js';
import { finishStep } from '../helpers/holder.js';
import type { StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { statusText } from '../../src/cli/status.js';
import { job, row } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith } = scriptedHubs();

/** The working directory Claude Code reports to the model (the worktree). */
const processCwd = (ctx: StepContext): string => [...JSON.stringify(ctx.body.messages).matchAll(/Primary working directory: ([^\\"\s]+)/g)].pop()?.[1] ?? '.';

describe('worktree bootstrap', () => {
  test('copies .env* into the new worktree and runs the setup command before the child\'s first request; bootstrap: false skips both', { timeout: 120_000 }, async () => {
    const seen: { dir: string; env?: string; local?: string; secret: boolean; setup?: string }[] = [];
    const h = await hubWith({
      look: (ctx) => {
        if (ctx.step === 0) {
          const dir = processCwd(ctx);
          const read = (f: string): string | undefined => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : undefined);
          seen.push({ dir, env: read('.env'), local: read('.env.local'), secret: existsSync(join(dir, 'notes.txt')), setup: read('setup-ran.txt') });
          return finishStep('looked');
        }
        return { text: 'done' };
      },
    }, { worktree: { copy: ['.env*'], setup: ['cat .env > setup-ran.txt', 'echo second >> setup-ran.txt'], setupTimeoutS: 60, detect: true } });
    const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# r\n', '.gitignore': '.env*\n' });
    writeFileSync(join(repo, '.env'), 'API_KEY=abc\n');
    writeFileSync(join(repo, '.env.local'), 'LOCAL=1\n');
    writeFileSync(join(repo, 'notes.txt'), 'untracked, not named by copy\n');

    const a = await h.call('spawn_agent', { prompt: '@script:look', title: 'bootstrapped', cwd: repo, worktree: true });
    const b = await h.call('spawn_agent', { prompt: '@script:look', title: 'bare', cwd: repo, worktree: true, bootstrap: false });
    for (const id of [a.job_id, b.job_id]) await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 90_000);

    const wa = await job(h.hub, a.job_id);
    const first = seen.find((s) => s.dir === wa.work_dir);
    assert.ok(first, `the child of ${a.job_id} made a request from its worktree ${wa.work_dir}: ${JSON.stringify(seen)}`);
    assert.equal(first.env, 'API_KEY=abc\n', '.env was in the worktree at the first request');
    assert.equal(first.local, 'LOCAL=1\n');
    assert.equal(first.secret, false, 'an untracked file no pattern names is not copied');
    assert.equal(first.setup, 'API_KEY=abc\nsecond\n', 'both setup commands ran, in order, after the copy, before the first request');
    const other = seen.find((s) => s.dir !== wa.work_dir)!;
    assert.deepEqual({ env: other.env, setup: other.setup }, { env: undefined, setup: undefined }, 'bootstrap: false copied and ran nothing');

    const ga = await h.call('get_agent', { job_id: a.job_id });
    assert.equal(ga.setup.status, 'ok');
    assert.equal(ga.setup.source, 'config');
    assert.deepEqual([...ga.setup.copied].sort(), ['.env', '.env.local']);
    assert.deepEqual(ga.setup.commands.map((c: { command: string; exit_code: number }) => [c.command, c.exit_code]), [['cat .env > setup-ran.txt', 0], ['echo second >> setup-ran.txt', 0]]);
    assert.ok(ga.setup.duration_ms >= 0);
    const gb = await h.call('get_agent', { job_id: b.job_id });
    assert.equal(gb.setup.status, 'skipped');
    const ev = (await row(h.hub, sql<{ data_json: string }>`SELECT data_json FROM events WHERE job_id = ${a.job_id} AND kind = 'setup'`))!;
    assert.equal(JSON.parse(ev.data_json).status, 'ok');
    const state = { sql: h.hub.ctx.sql, home: h.home, close: async () => undefined };
    assert.match(await statusText(state, {}), new RegExp(`${a.job_id}.*setup \\d+\\.\\ds`), 'status shows the setup time');
  });

  test('a failing setup command and a hanging one fail their jobs with setup_failed and the output; the child never starts', { timeout: 120_000 }, async () => {
    const h = await hubWith({ never: [{ text: 'should not run' }] }, { worktree: { copy: [], setup: ['echo preparing; echo "no such target" >&2; exit 3'], setupTimeoutS: 60, detect: true } });
    const repo = await initRepo(join(h.dir, 'repo'));
    const bad = await h.call('spawn_agent', { prompt: '@script:never', title: 'bad setup', cwd: repo, worktree: true });
    const j = await waitForJob(h.hub, bad.job_id, (x) => x.status === 'failed', 60_000);
    assert.equal(j.failure_class, 'setup_failed');
    assert.match(j.error!, /worktree setup command `echo preparing; echo "no such target" >&2; exit 3` exited 3:\npreparing\nno such target/);
    const g = await h.call('get_agent', { job_id: bad.job_id });
    assert.equal(g.setup.status, 'failed');
    assert.match(g.setup.commands[0].output, /no such target/);

    h.hub.ctx.config.worktree = { copy: [], setup: ['echo hanging; sleep 600'], setupTimeoutS: 1, detect: true };
    const t0 = Date.now();
    const hang = await h.call('spawn_agent', { prompt: '@script:never', title: 'hanging setup', cwd: repo, worktree: true });
    const jh = await waitForJob(h.hub, hang.job_id, (x) => x.status === 'failed', 60_000);
    assert.ok(Date.now() - t0 < 30_000, 'the hanging command was stopped at its timeout');
    assert.equal(jh.failure_class, 'setup_failed');
    assert.match(jh.error!, /`echo hanging; sleep 600` timed out after \d+ s:\nhanging/);
    assert.equal(h.fake.requests.filter((r) => r.script === 'never').length, 0, 'no child made a request');
  });
});
