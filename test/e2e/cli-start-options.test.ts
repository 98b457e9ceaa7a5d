// End-to-end (built CLI as a separate process, hub over HTTP with the lead token, real claude
// children on the fake model): the person can start everything the lead can (issue 31 point 5).
// `overseer spawn` with every spawn_agent option: each one reaches the job (get_agent and the job's
// row); `overseer workflow start` / `overseer debate start` with their tools' options; a bad flag
// exits 2 naming the flag and starts nothing.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, overseer as runCli } from '../helpers/cli.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { job } from '../helpers/state.js';
import { initRepo } from '../helpers/git.js';

const { hubWith } = scriptedHubs();
before(buildCli);

async function overseer(h: { home: string; project: string }, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await runCli(h.project, args, { OVERSEER_HOME: h.home });
  return { code: r.code ?? -1, out: r.stdout, err: r.stderr };
}

describe('the person starts what the lead can', () => {
  test('overseer spawn: every spawn_agent option reaches the job; a bad flag exits 2 and spawns nothing', { timeout: 240_000 }, async () => {
    const hold = gate();
    const h = await hubWith({ hold: async (ctx) => { if (ctx.step === 0) { await hold.wait; return finishStep('held'); } return { text: 'done' }; } });
    mkdirSync(join(h.home, 'templates'), { recursive: true });
    writeFileSync(join(h.home, 'templates', 'careful.md'), '---\ndescription: careful\n---\nWrite the tests first.\n');
    const repo = await initRepo(join(h.dir, 'repo'));
    // A dependency that stays running, so the spawned job waits in the queue with its spec as given.
    const dep = (await h.call('spawn_agent', { prompt: '@script:hold', title: 'Dep' })).job_id as string;
    await h.fake.waitForRequest((r) => r.script === 'hold' && r.step === 0, 60_000);

    const s = await overseer(h, ['spawn', '--prompt', 'the whole spec', '--title', 'All options', '--provider', 'claude', '--model', 'sonnet', '--cwd', repo,
      '--worktree', '--branch', 'feature/cli-all', '--no-bootstrap', '--depends-on', dep, '--priority', '3', '--max-turns', '7', '--budget-usd', '0.5',
      '--timeout-s', '90', '--context', '{"api":"the schema"}', '--template', 'careful', '--checks', 'diff_not_empty', '--checks', 'command:node -e "process.exit(0, 1)"',
      '--retry', 'same', '--labels', 'a,b', '--labels', 'c', '--project', 'web', '--role', 'reviewer', '--json']);
    assert.equal(s.code, 0, s.err + s.out);
    const id = JSON.parse(s.out).job_id as string;
    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.title, 'All options');
    assert.equal(a.provider, 'claude');
    assert.equal(a.model, 'sonnet');
    assert.equal(a.branch, 'feature/cli-all');
    assert.deepEqual(a.depends_on, [dep]);
    assert.equal(a.priority, 3);
    assert.deepEqual(a.labels, ['a', 'b', 'c']);
    assert.equal(a.project, 'web');
    assert.equal(a.role, 'reviewer');
    assert.equal(a.cwd, repo);
    const row = await job(h.hub, id);
    assert.equal(row.prompt.includes('the whole spec'), true);
    assert.equal(row.worktree, 1);
    assert.equal(row.max_turns, 7);
    assert.equal(row.budget_usd, 0.5);
    assert.equal(row.timeout_s, 90);
    assert.deepEqual(JSON.parse(row.context_json!), { api: 'the schema' });
    assert.equal(row.template, 'careful');
    assert.deepEqual(JSON.parse(row.checks_json), ['diff_not_empty', 'command:node -e "process.exit(0, 1)"']);
    assert.equal(row.retry, 'same');

    // Bad flags: exit 2 naming the flag and what it takes; nothing spawned.
    const before = (await h.call('list_agents', {})).agents.length;
    for (const [args, want] of [
      [['--priority', 'high'], /--priority "high" is not a number/],
      [['--priority', '11'], /--priority: priority must be between -10 and 10/],
      [['--retry', 'maybe'], /--retry "maybe" is not one of none, same, analyze/],
      [['--context', '{api'], /--context "\{api" is not JSON/],
      [['--checks', 'lint'], /--checks \(at 0\): unknown check "lint"/],
      [['--depends-on', 'j-nope'], /j-nope/], // the hub's own refusal, also exit 2
    ] as [string[], RegExp][]) {
      const r = await overseer(h, ['spawn', '--prompt', 'never', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, want);
    }
    assert.equal((await h.call('list_agents', {})).agents.length, before);
    hold.open();
    await waitForJob(h.hub, dep, (r) => r.status === 'succeeded', 60_000);
    await h.call('cancel_agent', { job_id: id });
  });

  test('overseer workflow start and overseer debate start pass their tools\' options; bad flags exit 2 and start nothing', { timeout: 240_000 }, async () => {
    const h = await hubWith({});
    const w = await overseer(h, ['workflow', 'start', '--task', 'build the thing', '--title', 'From the CLI', '--max-cycles', '2', '--no-worktree',
      '--approve-plan', '--implementer', '{"provider":"claude","model":"sonnet"}', '--phase-limits', '{"max_turns":5}', '--project', 'web', '--json']);
    assert.equal(w.code, 0, w.err + w.out);
    const wf = await h.call('get_workflow', { workflow_id: JSON.parse(w.out).workflow_id });
    assert.equal(wf.title, 'From the CLI');
    assert.equal(wf.max_cycles, 2);
    assert.equal(wf.worktree, null);
    await h.call('cancel_workflow', { workflow_id: wf.workflow_id });

    const d = await overseer(h, ['debate', 'start', '--task', 'tabs or spaces', '--title', 'Debate from the CLI', '--sides', '[{"provider":"claude"},{"provider":"claude","model":"sonnet"}]',
      '--max-rounds', '2', '--json']);
    assert.equal(d.code, 0, d.err + d.out);
    const db = await h.call('get_debate', { debate_id: JSON.parse(d.out).debate_id });
    assert.equal(db.title, 'Debate from the CLI');
    assert.equal(db.max_rounds, 2);
    await h.call('cancel_debate', { debate_id: db.debate_id });

    for (const [args, want] of [
      [['workflow', 'start', '--task', 'x', '--max-cycles', '0'], /--max-cycles: max_cycles must be between 1 and 50/],
      [['workflow', 'start', '--task', 'x', '--implementer', 'claude'], /--implementer "claude" is not JSON/],
      [['debate', 'start', '--task', 'x', '--sides', '[{"provider":"claude"}]'], /--sides: a debate has exactly two sides/],
      [['debate', 'start', '--task', 'x'], /--sides/],
    ] as [string[], RegExp][]) {
      const r = await overseer(h, args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, want);
    }
    assert.equal((await h.call('list_workflows', {})).workflows.length, 1);
    assert.equal((await h.call('list_debates', {})).debates.length, 1);
  });
});
