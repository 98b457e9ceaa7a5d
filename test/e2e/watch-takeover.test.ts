// Issue 31's gaps on the floor, end to end in a real terminal: the built `overseer watch` in tmux
// against a hub whose real claude children run on the fake model.
// - `t` on a READY TO SHIP row takes over the agent here: watch leaves its screen, the job's session
//   opens in the interactive claude (the person types and reads the fake's answer), the person
//   exits it and leaves the job, and watch is back with its view and selection. A takeover the hub
//   refuses is a line on watch's screen, which stays.
// - The crew brief set and cleared with `overseer brief` shows and goes in watch's header without a
//   restart; `i` shows it whole.
// Every wait is on the screen or the hub's state, with a deadline; nothing sleeps.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildCli, cliEnv, MAIN, overseer } from '../helpers/cli.js';
import { claudeEnv, skipFirstRun } from '../helpers/claude.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import { cwdOf } from '../helpers/steps.js';
import { initRepo } from '../helpers/git.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { startTerminal, type Terminal } from '../helpers/tmux.js';
import { events, job } from '../helpers/state.js';
import type { TestHub } from '../helpers/hub.js';
import type { StepContext } from '../../src/fakemodel/fakeAnthropic.js';

const { hubWith } = scriptedHubs();
const terminals: Terminal[] = [];
before(buildCli);
after(() => { for (const t of terminals) t.kill(); });

const PERSON = 'hello from the person in watch';
const REPLY = 'WATCH-REPLY-7';

/** Writes `file` in its work tree and finishes; in the person's session, answers the person. */
const worker = (file: string) => (ctx: StepContext) => {
  if (ctx.userTexts.join('\n').includes(PERSON)) return { text: REPLY };
  if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), file), content: `${file}\n` } }] };
  if (ctx.step === 1) return finishStep(`wrote ${file}`);
  return { text: 'done' };
};

/** A worktree job of `h` that finished in a repository of its own (READY TO SHIP lists it). */
async function finishedJob(h: TestHub, script: string, title: string): Promise<{ id: string; workDir: string }> {
  const repo = await initRepo(join(h.dir, `repo-${script}`));
  const id = (await h.call('spawn_agent', { prompt: `@script:${script}`, title, cwd: repo, worktree: true, retry: 'none' })).job_id as string;
  const j = await waitForJob(h.hub, id, (x) => x.status === 'succeeded' && !!x.diff_stat, 90_000);
  return { id, workDir: j.work_dir! };
}

const selectedLine = (screen: string): string => screen.split('\n').find((l) => l.startsWith('▶')) ?? '';

describe('watch: the floor complete', () => {
  test('t takes over a READY TO SHIP agent on this terminal and watch comes back with its selection; a refused takeover is a line', { timeout: 300_000 }, async () => {
    const h = await hubWith({ alpha: worker('alpha.txt'), beta: worker('beta.txt') });
    const a = await finishedJob(h, 'alpha', 'Alpha work');
    const b = await finishedJob(h, 'beta', 'Beta work');
    const home = join(h.dir, 'home');
    skipFirstRun(home, b.workDir);
    const env: NodeJS.ProcessEnv = { ...claudeEnv({ home, baseUrl: h.fake.url }), OVERSEER_HOME: h.home, TERM: 'xterm-256color' };
    for (const k of Object.keys(env)) if (k.startsWith('OVERSEER_') && k !== 'OVERSEER_HOME') delete env[k];
    const t = startTerminal([process.execPath, MAIN, 'watch'], { cwd: h.project, env, width: 120, height: 40 });
    terminals.push(t);
    await t.waitFor('both jobs in READY TO SHIP, the first selected', (s) => /READY TO SHIP \(2\)/.test(s) && /Alpha work/.test(selectedLine(s)));

    // Refused: the hub says why, on watch's screen, and watch stays.
    await h.call('attach_agent', { job_id: a.id });
    t.keys(['t']);
    const refused = await t.waitFor('the refusal', (s) => /not taken over/.test(s), 30_000);
    assert.match(refused, new RegExp(`not taken over: .*Job ${a.id} is already taken over by a person`));
    assert.match(refused, /READY TO SHIP \(2\)/, 'watch stays');
    await h.call('detach_agent', { job_id: a.id, then: 'leave' });

    // The second row, taken over: the interactive claude on the job's session, on this terminal.
    t.keys(['j']);
    await t.waitFor('the second row selected', (s) => /Beta work/.test(selectedLine(s)));
    t.keys(['t']);
    await t.waitFor('the interactive claude prompt', (s) => /❯/.test(s) && /Claude Code/.test(s), 60_000);
    assert.doesNotMatch(t.screen().join('\n'), /READY TO SHIP/, 'watch left the screen');
    t.keys([PERSON], { literal: true });
    t.keys(['Enter']);
    await t.waitFor("the fake's answer on screen", (s) => s.includes(REPLY), 60_000);
    t.keys(['C-c']);
    await t.waitFor('the exit hint', (s) => /again to exit/i.test(s), 10_000).catch(() => undefined);
    t.keys(['C-c']);
    await t.waitFor('the choice', (s) => new RegExp(`What now for ${b.id}`).test(s), 30_000);
    t.keys(['l', 'Enter']);

    // Watch again: the same lane, the same row selected, and how the takeover ended.
    const back = await t.waitFor('watch back', (s) => /READY TO SHIP \(2\)/.test(s) && new RegExp(`${b.id} left stopped`).test(s), 30_000);
    assert.match(selectedLine(back), /Beta work/, 'the selection it had');
    const kinds = (await events(h.hub, b.id)).map((e) => e.kind);
    assert.ok(kinds.includes('attached') && kinds.indexOf('attached') < kinds.lastIndexOf('detached'), kinds.join(','));
    assert.equal((await job(h.hub, b.id)).status, 'succeeded', 'left as it was: still ready to ship');
    t.keys(['k']);
    await t.waitFor('its keys work again', (s) => /Alpha work/.test(selectedLine(s)), 10_000);
    t.keys(['q']);
    await eventually('watch to exit', () => (t.exited().dead ? t.exited() : undefined), 10_000);
    assert.equal(t.exited().status, 0);
  });

  test('the crew brief set and cleared with overseer brief shows and goes in the header; i shows it whole', { timeout: 120_000 }, async () => {
    const h = await hubWith({});
    const t = startTerminal([process.execPath, MAIN, 'watch'], { cwd: h.project, env: cliEnv({ OVERSEER_HOME: h.home, TERM: 'xterm-256color' }), width: 100, height: 30 });
    terminals.push(t);
    await t.waitFor('the watch header from the hub', (s) => /overseer watch · hub pid/.test(s));
    assert.doesNotMatch(t.screen().join('\n'), /crew brief/);
    const text = `Use pnpm, never npm. Keep commits small. ${'Every module gets its test. '.repeat(5)}The end.`;
    const set = await overseer(h.project, ['brief', 'set', text], { OVERSEER_HOME: h.home });
    assert.equal(set.code, 0, set.stderr);
    const shown = await t.waitFor('the brief in the header', (s) => /crew brief v1 \(the person, i shows all\): Use pnpm, never npm\./.test(s), 10_000);
    assert.ok(shown.split('\n').some((l) => l.startsWith('crew brief v1') && l.trimEnd().endsWith('…')), 'one line, cut to the width');
    t.keys(['i']);
    await t.waitFor('the brief whole', (s) => /crew brief v1 · set by the person/.test(s) && /The end\./.test(s));
    t.keys(['q']);
    await t.waitFor('the list again', (s) => /overseer watch · hub pid/.test(s));
    const clear = await overseer(h.project, ['brief', 'clear'], { OVERSEER_HOME: h.home });
    assert.equal(clear.code, 0, clear.stderr);
    await t.waitFor('the brief gone', (s) => /overseer watch · hub pid/.test(s) && !/crew brief/.test(s), 10_000);
    t.keys(['q']);
    await eventually('watch to exit', () => (t.exited().dead ? true : undefined), 10_000);
  });
});
