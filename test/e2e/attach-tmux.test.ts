// End to end, in a real terminal: `overseer attach <job>` (the built CLI) runs in tmux against a
// hub whose real claude child runs on the fake model. The child makes a turn and is held in
// its next one; attach stops it, opens the interactive `claude --resume` on its session (the
// fake sees the same session id and the job's history), a person types a message and reads the
// fake's answer on screen, exits, and hands the job back: it resumes headless on the same
// conversation and finishes. Without a hub, attach says how to start one. Waits are on the screen, the fake's requests or the hub's state.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, MAIN, overseer } from '../helpers/cli.js';
import { claudeEnv, skipFirstRun } from '../helpers/claude.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { startTerminal, type Terminal } from '../helpers/tmux.js';
import type { RecordedRequest } from '../../src/fakemodel/fakeAnthropic.js';
import { attempts as attemptRows, events, job } from '../helpers/state.js';

const { hubWith } = scriptedHubs();
const terminals: Terminal[] = [];
before(buildCli);
after(() => { for (const t of terminals) t.kill(); });

const PERSON = 'hello from the person';
const REPLY = 'PERSON-REPLY-42';
const userTexts = (r: RecordedRequest): string => JSON.stringify(r.body?.messages ?? []);

describe('overseer attach in a terminal', () => {
  test('takes over a running job on its own session, the person talks to it, hands it back and it resumes headless on the same conversation', { timeout: 240_000 }, async () => {
    const hold = gate(200_000);
    const h = await hubWith({
      agent: async (ctx) => {
        const texts = ctx.userTexts.join('\n');
        if (texts.includes('handed the task back')) {
          return JSON.stringify(ctx.body.messages.at(-2) ?? {}).includes('mcp__overseer__finish') ? { text: 'done' } : finishStep('finished after the person handed it back');
        }
        if (texts.includes(PERSON)) return { text: REPLY };
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'first turn' } }] };
        await hold.wait;
        return { text: 'held' };
      },
      default: () => ({ text: 'ok' }),
    });
    const home = join(h.dir, 'home');
    skipFirstRun(home, h.project);
    const id = (await h.call('spawn_agent', { prompt: '@script:agent do the thing', title: 'Taken over' })).job_id as string;
    // It made a turn and is in its next one.
    await h.fake.waitForRequest((r) => r.script === 'agent' && r.step === 1, 60_000);
    const sessionId = (await waitForJob(h.hub, id, (j) => j.status === 'running' && j.session_id !== null)).session_id!;
    const before = h.fake.requests.length;

    const env: NodeJS.ProcessEnv = { ...claudeEnv({ home, baseUrl: h.fake.url }), OVERSEER_HOME: h.home, TERM: 'xterm-256color' };
    for (const k of Object.keys(env)) if (k.startsWith('OVERSEER_') && k !== 'OVERSEER_HOME') delete env[k];
    const t = startTerminal([process.execPath, MAIN, 'attach', id], { cwd: h.project, env, width: 120, height: 40 });
    terminals.push(t);

    await t.waitFor('the interactive claude prompt', (s) => /❯/.test(s) && /Claude Code/.test(s), 60_000);
    const attached = await job(h.hub, id);
    assert.equal(attached.status, 'interrupted', 'the job was stopped, not cancelled or retried');
    assert.match(attached.status_message ?? '', /taken over by a person/);
    assert.ok((await events(h.hub, id)).some((e) => e.kind === 'attached'), 'an attached event');
    assert.equal((await attemptRows(h.hub, id)).length, 1, 'no retry was started');

    t.keys([PERSON], { literal: true });
    t.keys(['Enter']);
    await t.waitFor("the fake's answer on screen", (s) => s.includes(REPLY), 60_000);
    const personReq = h.fake.requests.slice(before).find((r) => userTexts(r).includes(PERSON) && r.script === 'agent');
    assert.ok(personReq, 'the interactive session asked the fake');
    assert.ok(JSON.stringify(personReq.body.metadata ?? {}).includes(sessionId), `the request carries the job's session id ${sessionId}: ${JSON.stringify(personReq.body.metadata)}`);
    assert.match(userTexts(personReq), /@script:agent do the thing/, "the job's conversation is in the request");
    assert.match(userTexts(personReq), /mcp__overseer__report_status/, "the job's first turn is in the request");

    // Exit claude (Ctrl-C twice), then hand it back.
    t.keys(['C-c']);
    await t.waitFor('the exit hint', (s) => /again to exit/i.test(s), 10_000).catch(() => undefined);
    t.keys(['C-c']);
    await t.waitFor('the choice', (s) => /What now for/.test(s), 30_000);
    t.keys(['r', 'Enter']);
    await t.waitFor('the confirmation', (s) => new RegExp(`${id} handed back`).test(s), 30_000);
    const exit = await eventually('attach to exit', () => { const e = t.exited(); return e.dead ? e : undefined; }, 10_000);
    assert.deepEqual(exit, { dead: true, status: 0 });

    const done = await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 90_000);
    assert.equal(done.result, 'finished after the person handed it back');
    assert.equal(done.session_id, sessionId, 'same session');
    const resumed = h.fake.requests.find((r) => userTexts(r).includes('handed the task back'));
    assert.ok(resumed, 'the headless resume asked the fake');
    assert.match(userTexts(resumed), new RegExp(REPLY), "the resumed conversation holds the person's exchange");
    assert.ok(JSON.stringify(resumed.body.metadata ?? {}).includes(sessionId), 'the resumed request carries the same session id');
    const attempts = await attemptRows(h.hub, id);
    assert.deepEqual(attempts.map((a) => [a.kind, a.session_id]), [['initial', sessionId], ['resume', sessionId]]);
    const kinds = (await events(h.hub, id)).map((e) => e.kind);
    assert.ok(kinds.indexOf('attached') < kinds.indexOf('detached') && kinds.indexOf('detached') < kinds.lastIndexOf('resumed'), kinds.join(','));
    hold.open();
  });

  test('overseer attach with no hub running says how to start one', async () => {
    const home = join(mkdtempSync(join(tmpdir(), 'ovs-attach-')), 'state');
    const r = await overseer(tmpdir(), ['attach', 'j-1'], { OVERSEER_HOME: home });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /No Overseer hub is running/);
    assert.match(r.stderr, /overseer serve/);
    const bad = await overseer(tmpdir(), ['attach', 'j-1', '--then', 'later'], { OVERSEER_HOME: home });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--then "later" is not valid: use resume, finish, leave/);
  });
});
