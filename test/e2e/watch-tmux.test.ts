// End to end, in a real terminal: the built `overseer watch` runs in tmux (100×30) against a
// hub whose real claude children run on the fake model. One child asks for approval, another
// is held mid-run. The test reads the screen, presses keys as a person would — approve the
// request, cancel the long job with its y/n — and checks the database and the processes.
// Every wait is on the screen or the hub's state, with a deadline; nothing sleeps.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, cliEnv, MAIN, overseer } from '../helpers/cli.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { lastResult } from '../helpers/steps.js';
import { alive, eventually, waitForJob } from '../helpers/wait.js';
import { startTerminal, type Terminal } from '../helpers/tmux.js';
import { job, row } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith } = scriptedHubs();
const terminals: Terminal[] = [];
before(buildCli);
after(() => { for (const t of terminals) t.kill(); });

/** The screen line the cursor is on (the one marked ▶). */
const selectedLine = (screen: string): string => screen.split('\n').find((l) => l.startsWith('▶')) ?? '';

const selectedAt = (screen: string): number => screen.split('\n').findIndex((l) => l.startsWith('▶'));

/** Presses `key` and waits (up to `ms`) for the cursor to move; false when it did not. */
async function step(t: Terminal, key: string, from: number, ms: number): Promise<boolean> {
  t.keys([key]);
  return t.waitFor('the cursor to move', (x) => selectedAt(x) !== from, ms).then(() => true, () => false);
}

/**
 * Selects the row matching `re` by hand, as a person would: j/k towards it, reading the screen
 * after each key. A row the cursor already rests on (it may have moved there by itself when
 * the row before it went away) is left and selected again, so the keys that act are not held
 * back by the watch's guard against acting on a row the person has not chosen.
 */
async function select(t: Terminal, re: RegExp, what: string): Promise<void> {
  let chosen = false;
  for (let i = 0; i < 30; i++) {
    const screen = await t.waitFor('a selected row', (x) => selectedAt(x) >= 0);
    const lines = screen.split('\n');
    const at = selectedAt(screen);
    if (re.test(lines[at]!)) {
      if (chosen) return;
      if (!(await step(t, 'k', at, 2000)) && !(await step(t, 'j', at, 2000))) return; // the only row
      chosen = true;
      continue;
    }
    const target = lines.findIndex((l) => re.test(l));
    if (target < 0) break;
    if (!(await step(t, target > at ? 'j' : 'k', at, 5000))) break;
    chosen = true;
  }
  throw new Error(`could not select ${what}; the screen shows:\n${t.screen().join('\n')}`);
}

describe('overseer watch in a terminal', () => {
  test('shows NEEDS YOU and RUNNING; a approves the request (the child goes on), c + y cancels the long job (its process ends)', { timeout: 120_000 }, async () => {
    const hold = gate(90_000);
    let seen = '';
    const h = await hubWith({
      asker: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'migrate the users table', timeout_s: 120 } }] };
        if (ctx.step === 1) { seen = lastResult(ctx).text; return finishStep(`decision: ${seen.slice(0, 200)}`); }
        return { text: 'done' };
      },
      long: async (ctx) => {
        if (ctx.step === 0) { await hold.wait; return finishStep('long done'); }
        return { text: 'done' };
      },
    });
    const asker = (await h.call('spawn_agent', { prompt: '@script:asker', title: 'Asker' })).job_id as string;
    const long = (await h.call('spawn_agent', { prompt: '@script:long', title: 'Long runner' })).job_id as string;
    await h.fake.waitForRequest((r) => r.script === 'long' && r.step === 0, 60_000);
    await waitForJob(h.hub, asker, (j) => j.status === 'needs_input', 60_000);
    const requestId = (await row(h.hub, sql<{ id: string }>`SELECT id FROM requests WHERE job_id = ${asker} AND status = 'pending'`))!.id;

    const env = cliEnv({ OVERSEER_HOME: h.home, TERM: 'xterm-256color' });
    const t = startTerminal([process.execPath, MAIN, 'watch'], { cwd: h.project, env, width: 100, height: 30 });
    terminals.push(t);

    const first = await t.waitFor('NEEDS YOU with the request and RUNNING with the long job', (s) =>
      /NEEDS YOU \(1\)/.test(s) && /APPROVE\? +Asker: migrate the users table/.test(s) && /RUNNING/.test(s) && /Long runner/.test(s));
    assert.match(first, /overseer watch · hub pid \d+/, 'the header names the hub');
    assert.match(first, /1 need you/);

    // Approve: select the request row, press a.
    await select(t, /Asker: migrate the users table/, 'the request');
    t.keys(['a']);
    await t.waitFor('the approval to be confirmed in the status bar', (s) => new RegExp(`${requestId}: approved`).test(s));
    const req = await row(h.hub, sql<{ status: string; decision: string; answered_by: string }>`SELECT status, decision, answered_by FROM requests WHERE id = ${requestId}`);
    assert.deepEqual(req, { status: 'answered', decision: 'approved', answered_by: 'person (cli)' });
    const done = await waitForJob(h.hub, asker, (j) => j.status === 'succeeded', 60_000);
    assert.match(done.result ?? '', /approved/, 'the child got the decision and went on');
    await t.waitFor('the request to leave NEEDS YOU', (s) => !/NEEDS YOU/.test(s) && /DONE/.test(s));

    // Cancel: select the long job, press c, answer y.
    const pid = (await job(h.hub, long)).pid!;
    assert.ok(pid && alive(pid), 'the long job runs');
    await select(t, /Long runner/, 'the long job');
    t.keys(['c']);
    await t.waitFor('the y/n question naming the job', (s) => new RegExp(`cancel "Long runner" \\(${long}\\) and its sub-agents\\? y/n`).test(s));
    assert.equal((await job(h.hub, long)).status, 'running', 'nothing happens before the answer');
    t.keys(['y']);
    await t.waitFor('the cancel to be confirmed', (s) => new RegExp(`"Long runner" \\(${long}\\) cancelled`).test(s));
    const cancelled = await waitForJob(h.hub, long, (j) => j.status === 'cancelled', 30_000);
    assert.match(cancelled.error ?? '', /cancelled by the person from overseer watch/);
    await eventually(`the long job's process ${pid} to be gone`, () => !alive(pid), 15_000);
    await t.waitFor('the cancelled job in DONE', (s) => /DONE \(2\)/.test(s) && /Long runner +cancelled/.test(s));

    // An action on a job that has ended says so.
    await select(t, /Long runner/, 'the cancelled job');
    t.keys(['c']);
    await t.waitFor('the y/n question', (s) => /y\/n/.test(s));
    t.keys(['y']);
    await t.waitFor('the refusal', (s) => new RegExp(`job ${long} ended meanwhile \\(cancelled\\): nothing to cancel`).test(s));

    // f follows its log full-screen (the transcript and the hub's verdict), q comes back; d shows its diff.
    t.keys(['f']);
    await t.waitFor('the log screen with the verdict', (s) => new RegExp(`log of "Long runner" \\(${long}\\) · ended`).test(s) && new RegExp(`overseer: job ${long} cancelled`).test(s));
    t.keys(['q']);
    await t.waitFor('the list again', (s) => /DONE \(2\)/.test(s));
    t.keys(['d']);
    await t.waitFor('the diff screen', (s) => new RegExp(`diff of "Long runner" \\(${long}\\): (?!reading)`).test(s));
    t.keys(['Escape']);
    await t.waitFor('the list again', (s) => /DONE \(2\)/.test(s));

    t.keys(['q']);
    const exit = await eventually('watch to exit on q', () => { const e = t.exited(); return e.dead ? e : undefined; }, 10_000);
    assert.deepEqual(exit, { dead: true, status: 0 });
    hold.open();
  });

  test('with no hub and no database it exits 1 saying where it looked and how to start one', async () => {
    const home = join(mkdtempSync(join(tmpdir(), 'ovs-watch-')), 'state');
    const r = await overseer(tmpdir(), ['watch'], { OVERSEER_HOME: home });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`looked in ${home.replace(/[/.]/g, '\\$&')}`));
    assert.match(r.stderr, /overseer serve/);
  });
});
