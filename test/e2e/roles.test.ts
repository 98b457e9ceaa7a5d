// End-to-end (real confined claude children, real hook, fake model): roles hold (issue 31 point 4).
// A reviewer child tries Write, Edit, a Bash redirection and a `node -e` write — each refused,
// nothing written — while it still reads a file and runs `git log`, and its work tree is mounted
// read-only in its sandbox (its own /proc/self/mountinfo says so). A planner child runs in Claude
// Code's plan mode (its init event says permissionMode "plan").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { StepContext, ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { startTestHub } from '../helpers/hub.js';
import { makeTempDir } from '../helpers/claude.js';
import { initRepo } from '../helpers/git.js';
import { lastResult } from '../helpers/steps.js';

test('a reviewer child: Write, Edit, Bash `echo x > f` and a node -e write are refused and write nothing; Read and git log work; its tree is read-only in its sandbox', { timeout: 240_000 }, async () => {
  const project = await initRepo(await makeTempDir('ovs-roles'), { 'README.md': '# roles\n', 'src.txt': 'original\n' });
  let tree = '';
  const seen: ToolResultInfo[] = [];
  const steps = (): { name: string; input: Record<string, unknown> }[] => [
    { name: 'Write', input: { file_path: join(tree, 'new.txt'), content: 'written\n' } },
    { name: 'Edit', input: { file_path: join(tree, 'src.txt'), old_string: 'original', new_string: 'edited' } },
    { name: 'Bash', input: { command: `echo x > ${join(tree, 'echoed.txt')}` } },
    { name: 'Bash', input: { command: `node -e "require('fs').writeFileSync('${join(tree, 'noded.txt')}', 'x')"` } },
    { name: 'Read', input: { file_path: join(tree, 'src.txt') } },
    { name: 'Bash', input: { command: `git -C ${tree} log --oneline` } },
    { name: 'Bash', input: { command: `grep -F ' ${tree} ' /proc/self/mountinfo` } },
  ];
  const h = await startTestHub({
    project,
    scripts: {
      review: async (ctx: StepContext) => {
        const s = steps();
        if (ctx.step > 0 && ctx.step <= s.length) seen.push(lastResult(ctx));
        if (ctx.step < s.length) return { tools: [s[ctx.step]!] };
        if (ctx.step === s.length) return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'reviewed' } }] };
        return { text: 'done' };
      },
    },
  });
  try {
    tree = realpathSync(project);
    const spawned = await h.call('spawn_agent', { prompt: '@script:review', title: 'Review', role: 'reviewer' });
    assert.equal(spawned.warning, undefined, 'the child runs confined');
    const w = await h.call('wait_for_agents', { job_ids: [spawned.job_id], timeout_s: 180 });
    assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
    assert.equal(seen.length, steps().length, JSON.stringify(seen));
    const [write, edit, echo, node, read, log, mounts] = seen as [ToolResultInfo, ToolResultInfo, ToolResultInfo, ToolResultInfo, ToolResultInfo, ToolResultInfo, ToolResultInfo];
    for (const [what, r] of [['Write', write], ['Edit', edit], ['echo', echo], ['node -e', node]] as const) {
      assert.equal(r.is_error, true, `${what} should be refused: ${r.text.slice(0, 300)}`);
      assert.match(r.text, /your role "reviewer" is read-only/, `${what}: ${r.text.slice(0, 300)}`);
    }
    for (const f of ['new.txt', 'echoed.txt', 'noded.txt']) assert.equal(existsSync(join(project, f)), false, `${f} was written`);
    assert.equal(readFileSync(join(project, 'src.txt'), 'utf8'), 'original\n');
    assert.equal(read.is_error, false, read.text);
    assert.match(read.text, /original/);
    assert.equal(log.is_error, false, log.text);
    assert.match(log.text, /[0-9a-f]{7}/, 'git log printed the first commit');
    // Below the hook: the tree is a read-only mount in the child's own namespace.
    assert.equal(mounts.is_error, false, mounts.text);
    assert.match(mounts.text, new RegExp(` ${tree.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} [^\\n]*\\bro\\b`), mounts.text);
    const agent = await h.call('get_agent', { job_id: spawned.job_id, events: true });
    assert.equal(agent.role, 'reviewer');
    const listed = await h.call('list_agents', {});
    assert.equal(listed.agents.find((a: { job_id: string }) => a.job_id === spawned.job_id).role, 'reviewer');
    // The reviewer's standing instructions reached its first prompt.
    const first = JSON.stringify(h.fake.requests.find((r) => JSON.stringify(r.body).includes('@script:review'))?.body ?? '');
    assert.match(first, /Your role: reviewer/);
  } finally {
    await h.stop();
  }
});

test('a planner child runs in Claude Code\'s plan mode, reads, and writes nothing', { timeout: 240_000 }, async () => {
  const project = await initRepo(await makeTempDir('ovs-roles'), { 'README.md': '# plan\n' });
  let tree = '';
  const seen: ToolResultInfo[] = [];
  const h = await startTestHub({
    project,
    scripts: {
      plan: async (ctx: StepContext) => {
        if (ctx.step > 0 && ctx.step <= 2) seen.push(lastResult(ctx));
        switch (ctx.step) {
          case 0: return { tools: [{ name: 'Read', input: { file_path: join(tree, 'README.md') } }] };
          case 1: return { tools: [{ name: 'Write', input: { file_path: join(tree, 'plan.txt'), content: 'x\n' } }] };
          case 2: return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'the plan' } }] };
          default: return { text: 'done' };
        }
      },
    },
  });
  try {
    tree = realpathSync(project);
    const spawned = await h.call('spawn_agent', { prompt: '@script:plan', title: 'Plan', role: 'planner' });
    const w = await h.call('wait_for_agents', { job_ids: [spawned.job_id], timeout_s: 180 });
    assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
    assert.equal(seen[0]?.is_error, false, JSON.stringify(seen));
    assert.equal(seen[1]?.is_error, true, JSON.stringify(seen));
    assert.equal(existsSync(join(project, 'plan.txt')), false);
    const out = await h.call('read_agent_output', { job_id: spawned.job_id, format: 'json', tail: 1000 });
    const init = JSON.stringify(out).match(/permissionMode\\?"\s*:\s*\\?"(\w+)/);
    assert.equal(init?.[1], 'plan', `the CLI's init event: ${JSON.stringify(out).slice(0, 500)}`);
    assert.equal((await h.call('get_agent', { job_id: spawned.job_id })).role, 'planner');
  } finally {
    await h.stop();
  }
});
