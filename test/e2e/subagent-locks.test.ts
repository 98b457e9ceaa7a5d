// End-to-end (real claude children, fake model): a child's in-process sub-agents — Claude Code's
// `Agent` tool and `agent()` in a `Workflow` script — are held to the same locks as the child
// itself: the hook fires for their calls, and they run inside the child's namespace, where the
// held file is read-only (issue 18).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep, holderScript } from '../helpers/holder.js';
import { eventually } from '../helpers/wait.js';
import type { Script, ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';

const { hubWith } = scriptedHubs();

/** A sub-agent that tries the held file with Write, then with a script the hook cannot read. */
function subWriter(seen: ToolResultInfo[], root: () => string): Script {
  return async (ctx) => {
    if (ctx.step > 0) seen.push(ctx.lastToolResults[0]!);
    if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(root(), 'shared.txt'), content: 'sub-agent was here\n' } }] };
    if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: `printf '%s' "require('fs').writeFileSync('shared.txt', 'sub script\\\\n')" > s.js && node s.js` } }] };
    return { text: 'sub done' };
  };
}

/** A holds shared.txt; B (script `parent`) starts sub-agents that run `sub`; both tries must fail. */
async function heldAgainstSubAgents(parent: Script, policy?: unknown): Promise<void> {
  const releaseA = gate();
  const seen: ToolResultInfo[] = [];
  let root = '';
  const h = await hubWith({ holder: holderScript(releaseA), parent, sub: subWriter(seen, () => root) });
  root = realpathSync(h.project);
  if (policy) writeFileSync(join(h.home, 'policy.json'), JSON.stringify(policy));
  const shared = join(root, 'shared.txt');
  writeFileSync(shared, 'original\n');
  const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A' })).job_id;
  await eventually('A holds shared.txt', async () => ((await h.hub.locks.list({})).locks.some((l) => l.path === shared && l.holder === a) ? true : undefined), 60_000);
  const b = (await h.call('spawn_agent', { prompt: '@script:parent', title: 'Parent B' })).job_id;
  const w = await h.call('wait_for_agents', { job_ids: [b], timeout_s: 180 });
  assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
  assert.equal(readFileSync(shared, 'utf8'), 'original\n', 'the sub-agent wrote nothing');
  assert.equal(seen.length, 2, JSON.stringify(seen));
  assert.equal(seen[0]!.is_error, true);
  assert.match(seen[0]!.text, new RegExp(`${a}|Holder A`), `the hook named the holder: ${seen[0]!.text}`);
  assert.match(seen[1]!.text, /EROFS|read-only|held|lock/i, `the script was refused too: ${seen[1]!.text}`);
  releaseA.open();
  await h.call('wait_for_agents', { job_ids: [a], timeout_s: 60 });
}

describe('sub-agents and locks', () => {
  test('an Agent sub-agent of B cannot write the file A holds: not with Write, not with a script', { timeout: 240_000 }, async () => {
    await heldAgainstSubAgents(async (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'Agent', input: { description: 'write the file', prompt: '@script:sub write shared.txt', subagent_type: 'general-purpose', run_in_background: false } }] };
      if (ctx.step === 1) return finishStep('my sub-agent tried');
      return { text: 'done' };
    });
  });

  test('an agent() of a Workflow script in B cannot write the file A holds', { timeout: 240_000 }, async () => {
    const script = [
      "export const meta = { name: 'write-shared', description: 'one agent writes the shared file', phases: [{ title: 'Write' }] }",
      "await agent('@script:sub write shared.txt', { label: 'writer', phase: 'Write' })",
      'return { ok: true }',
    ].join('\n');
    // The Workflow tool asks for permission: this crew's policy allows it.
    await heldAgainstSubAgents(async (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'Workflow', input: { script } }] };
      if (/task-notification/.test(JSON.stringify(ctx.body.messages.at(-1)))) return finishStep('my workflow tried');
      return { text: 'waiting for the workflow' };
    }, { rules: [{ action: 'allow', tool: 'Workflow' }, { action: 'allow', tool: 'Bash' }], default: 'allow' });
  });
});
