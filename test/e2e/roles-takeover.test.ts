// End to end (real claude on the fake model, real bubblewrap, a real terminal in tmux): a takeover
// keeps the role (issue 31). The command attach_agent hands the person is the runner's own
// enforcement: a planner's session opens in Claude Code's plan mode; a reviewer's runs in the
// same confinement as its runs, its work tree read-only. In the person's interactive session the
// reviewer's model tries Write and a Bash `echo x > f`: both refused, nothing written; the same
// confinement refuses a shell's write at the OS (EROFS), with no hook to help.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { StepContext, ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeEnv, skipFirstRun } from '../helpers/claude.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { startTerminal, type Terminal } from '../helpers/tmux.js';
import { lastResult } from '../helpers/steps.js';
import { job } from '../helpers/state.js';

const { hubWith } = scriptedHubs();
const terminals: Terminal[] = [];
after(() => { for (const t of terminals) t.kill(); });

const PERSON = 'TAKEOVER-9: write the fix yourself';
const REPLY = 'REVIEWER-CANNOT-WRITE-9';

/** The last tool the model called in this conversation (the assistant message before the last user one). */
const lastTool = (ctx: StepContext): string | undefined => {
  const m = ctx.body.messages.at(-2) as { role: string; content: unknown } | undefined;
  const blocks = m && Array.isArray(m.content) ? m.content as { type: string; name?: string }[] : [];
  return blocks.filter((b) => b.type === 'tool_use').at(-1)?.name;
};

describe('a takeover keeps the role', () => {
  test('a planner\'s session opens in plan mode; a reviewer\'s is confined with its tree read-only: in the person\'s session Write and `echo x > f` are refused and nothing is written', { timeout: 240_000 }, async () => {
    let tree = '';
    const seen: ToolResultInfo[] = [];
    const h = await hubWith({
      rev: (ctx) => {
        if (ctx.userTexts.some((t) => t.includes(PERSON))) {
          const last = lastTool(ctx);
          if (last) seen.push(lastResult(ctx));
          if (!last || last.startsWith('mcp__overseer__finish')) return { tools: [{ name: 'Write', input: { file_path: join(tree, 'fixed.txt'), content: 'fixed\n' } }] };
          if (last === 'Write') return { tools: [{ name: 'Bash', input: { command: `echo x > ${join(tree, 'echoed.txt')}` } }] };
          return { text: REPLY };
        }
        return ctx.step === 0 ? finishStep('reviewed') : { text: 'done' };
      },
      plan: (ctx) => (ctx.step === 0 ? finishStep('planned') : { text: 'done' }),
    });
    tree = realpathSync(h.project);
    const home = join(h.dir, 'home');
    skipFirstRun(home, h.project);
    const reviewer = (await h.call('spawn_agent', { prompt: '@script:rev review the code', title: 'Review', role: 'reviewer' })).job_id as string;
    const planner = (await h.call('spawn_agent', { prompt: '@script:plan plan the change', title: 'Plan', role: 'planner' })).job_id as string;
    for (const id of [reviewer, planner]) await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 90_000);

    // The planner: plan mode in the person's command, confined as its runs.
    const p = await h.call('attach_agent', { job_id: planner });
    assert.equal(p.role, 'planner');
    const pa = p.command.args as string[];
    assert.deepEqual(pa.slice(pa.indexOf('--permission-mode'), pa.indexOf('--permission-mode') + 2), ['--permission-mode', 'plan']);
    await h.call('detach_agent', { job_id: planner, then: 'leave' });

    // The reviewer: bubblewrap first, its tree bound read-only, then claude --resume on its session.
    const a = await h.call('attach_agent', { job_id: reviewer });
    assert.equal(a.role, 'reviewer');
    const args = a.command.args as string[];
    assert.match(a.command.bin, /bwrap$/, `confined: ${a.command.bin}`);
    const cut = args.indexOf('--');
    assert.ok(cut > 0, 'bubblewrap\'s options, then the command');
    assert.deepEqual(args.slice(args.indexOf('--ro-bind'), args.indexOf('--ro-bind') + 3), ['--ro-bind', tree, tree], 'the tree is bound read-only first');
    assert.ok(args.slice(cut).includes('--resume') && args[args.indexOf('--resume') + 1] === a.session_id);
    // The same confinement holds with no hook at all: a shell's write fails at the OS.
    const os = spawnSync(a.command.bin, [...args.slice(0, cut), '--', 'sh', '-c', 'echo x > os-echoed.txt'], { cwd: a.command.cwd, env: { PATH: process.env.PATH, HOME: home }, encoding: 'utf8', timeout: 20_000 });
    assert.notEqual(os.status, 0, os.stderr);
    assert.match(os.stderr, /Read-only file system/, os.stderr);
    assert.equal(existsSync(join(tree, 'os-echoed.txt')), false);

    // The person's interactive session, exactly as overseer attach runs it.
    const env: NodeJS.ProcessEnv = { ...claudeEnv({ home, baseUrl: h.fake.url }), TERM: 'xterm-256color' };
    for (const k of Object.keys(env)) if (k.startsWith('OVERSEER_')) delete env[k];
    Object.assign(env, a.command.env);
    const t = startTerminal([a.command.bin, ...args], { cwd: a.command.cwd, env, width: 120, height: 40 });
    terminals.push(t);
    await t.waitFor('the interactive claude prompt', (s) => /❯/.test(s) && /Claude Code/.test(s), 60_000);
    t.keys([PERSON], { literal: true });
    t.keys(['Enter']);
    await t.waitFor("the fake's answer on screen", (s) => s.includes(REPLY), 90_000);
    assert.equal(seen.length, 2, JSON.stringify(seen));
    const [write, echo] = seen as [ToolResultInfo, ToolResultInfo];
    for (const [what, r] of [['Write', write], ['echo x > f', echo]] as const) {
      assert.equal(r.is_error, true, `${what} should be refused: ${r.text.slice(0, 300)}`);
      assert.match(r.text, /read-only/, `${what}: ${r.text.slice(0, 300)}`);
    }
    for (const f of ['fixed.txt', 'echoed.txt']) assert.equal(existsSync(join(tree, f)), false, `${f} was written`);

    t.keys(['C-c']);
    await t.waitFor('the exit hint', (s) => /again to exit/i.test(s), 10_000).catch(() => undefined);
    t.keys(['C-c']);
    await eventually('the session to end', () => (t.exited().dead ? true : undefined), 30_000);
    const left = await h.call('detach_agent', { job_id: reviewer, then: 'leave' });
    assert.equal(left.status, 'succeeded');
    assert.equal((await job(h.hub, reviewer)).token_hash, null);
  });
});
