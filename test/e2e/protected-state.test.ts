// End-to-end (real claude child, real hook, real permission rules from --settings, fake model):
// a child cannot read the hub's state — the lead's token above all — with Claude Code's own
// tools (Read; 2.1.330 has no Grep/Glob tools: search goes through Bash), nor write the settings it runs under, in any lock mode. The token's text must never
// reach the model (issue 9 point 1; issue 18 point 1). Bash reads are the sandbox's (issue 18),
// and, where the sandbox is missing (confine off), the hub's: a command that names the state is
// refused by the hook before it runs (issue 26 point 4, src/services/stateGuard.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { startTestHub } from '../helpers/hub.js';
import { codexHubs } from '../helpers/codexHub.js';
import { cwdOf, lastResult } from '../helpers/steps.js';

for (const lockMode of ['auto', 'off'] as const) {
  test(`lock mode ${lockMode}: Reads of the hub's state (token, database) and a Write to .claude/settings.local.json are refused; the token never reaches the model`, { timeout: 180_000 }, async () => {
    const seen: ToolResultInfo[] = [];
    let home = '';
    const h = await startTestHub({
      config: { lockMode },
      scripts: {
        snoop: async (ctx) => {
          if (ctx.step > 0 && ctx.step <= 4) seen.push(lastResult(ctx));
          switch (ctx.step) {
            case 0: return { tools: [{ name: 'Read', input: { file_path: join(home, 'lead.token') } }] };
            case 1: return { tools: [{ name: 'Read', input: { file_path: join(home, 'state.db') } }] };
            case 2: return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), '.claude', 'settings.local.json'), content: '{"disableAllHooks": true}\n' } }] };
            case 3: return { tools: [{ name: 'Write', input: { file_path: join(home, 'policy.json'), content: '{"rules":[],"default":"allow"}' } }] };
            case 4: return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'tried' } }] };
            default: return { text: 'done' };
          }
        },
      },
    });
    try {
      home = h.home;
      const token = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
      const id = (await h.call('spawn_agent', { prompt: '@script:snoop', title: 'Snoop' })).job_id;
      const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
      assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
      assert.equal(seen.length, 4, JSON.stringify(seen));
      for (const [i, r] of seen.entries()) assert.equal(r.is_error, true, `step ${i + 1} should be refused: ${r.text.slice(0, 300)}`);
      assert.match(seen[0]!.text, /denied by your permission settings|may not read the hub's own state/);
      assert.match(seen[1]!.text, /denied by your permission settings|may not read the hub's own state/);
      assert.match(seen[2]!.text, /denied by your permission settings|agents may not write there/);
      assert.match(seen[3]!.text, /denied by your permission settings|agents may not write there/);
      const everything = JSON.stringify(h.fake.requests.map((r) => r.body));
      assert.ok(!everything.includes(token), 'the lead token reached the model');
      assert.equal(existsSync(join(h.project, '.claude', 'settings.local.json')), false);
      assert.equal(existsSync(join(h.home, 'policy.json')), false);
    } finally {
      await h.stop();
    }
  });
}

test('confine off: Bash (cat, a relative path after cd, python) and Read of the lead token are refused by the hub; the token never reaches the model', { timeout: 180_000 }, async () => {
  const seen: ToolResultInfo[] = [];
  let home = '';
  let dir = '';
  const h = await startTestHub({
    config: { confine: 'off' },
    scripts: {
      snoop: async (ctx) => {
        const steps = [
          { name: 'Bash', input: { command: `cat ${join(home, 'lead.token')}` } },
          { name: 'Read', input: { file_path: join(home, 'lead.token') } },
          { name: 'Bash', input: { command: `python3 -c "print(open('${join(home, 'lead.token')}').read())"` } },
          { name: 'Bash', input: { command: `cd ${dir} && node -e "process.stdout.write(require('fs').readFileSync('state/lead.token'))"` } },
          { name: 'Bash', input: { command: `cat ${home}/lead.* | base64` } },
        ];
        if (ctx.step > 0 && ctx.step <= steps.length) seen.push(lastResult(ctx));
        if (ctx.step < steps.length) return { tools: [steps[ctx.step]!] };
        if (ctx.step === steps.length) return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'tried' } }] };
        return { text: 'done' };
      },
    },
  });
  try {
    home = realpathSync(h.home);
    dir = realpathSync(h.dir);
    const token = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
    const spawned = await h.call('spawn_agent', { prompt: '@script:snoop', title: 'Snoop' });
    assert.match(spawned.warning ?? '', /without OS confinement/, 'the child really runs unconfined');
    const w = await h.call('wait_for_agents', { job_ids: [spawned.job_id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
    assert.equal(seen.length, 5, JSON.stringify(seen));
    for (const [i, r] of seen.entries()) {
      assert.equal(r.is_error, true, `step ${i} should be refused: ${r.text.slice(0, 300)}`);
      assert.ok(!r.text.includes(token), `step ${i} got the token`);
    }
    // Claude Code's own Read rules may answer first for cat and Read; python and node it cannot read.
    assert.match(seen[0]!.text, /denied by your permission settings|may not read the hub's own state/);
    assert.match(seen[1]!.text, /denied by your permission settings|may not read the hub's own state/);
    for (const i of [2, 3, 4]) assert.match(seen[i]!.text, /may not read the hub's own state, nor name it: .*the lead's token/, `step ${i}: ${seen[i]!.text.slice(0, 300)}`);
    const everything = JSON.stringify(h.fake.requests.map((r) => r.body));
    assert.ok(!everything.includes(token), 'the lead token reached the model');
  } finally {
    await h.stop();
  }
});

describe('codex children', () => {
  const { codexHub } = codexHubs();
  test('confine off: a codex shell that names the lead token (cat, python) is blocked by the hub\'s hook; the token never reaches the model', { timeout: 180_000 }, async () => {
    const outputs: string[] = [];
    let home = '';
    const steps = [() => `cat ${join(home, 'lead.token')}`, () => `python3 -c "print(open('${join(home, 'lead.token')}').read())"`];
    const { h, openai } = await codexHub({
      snoop: async (ctx) => {
        if (ctx.step > 0) outputs.push(...ctx.lastOutputs.map((o) => o.text));
        return ctx.step < steps.length ? { calls: [{ shell: steps[ctx.step]!() }] } : { text: 'tried' };
      },
    }, { config: { confine: 'off' } });
    home = realpathSync(h.home);
    const token = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
    const spawned = await h.call('spawn_agent', { prompt: '@script:snoop', provider: 'codex' });
    assert.match(spawned.warning ?? '', /without OS confinement/);
    const w = await h.call('wait_for_agents', { job_ids: [spawned.job_id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
    assert.equal(outputs.length, steps.length, JSON.stringify(outputs));
    for (const o of outputs) assert.match(o, /blocked by PreToolUse hook: .*may not read the hub's own state, nor name it: .*the lead's token/s, o.slice(0, 400));
    assert.ok(!JSON.stringify(openai.requests.map((r) => r.body)).includes(token), 'the lead token reached the model');
  });
});
