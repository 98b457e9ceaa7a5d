// End-to-end (real claude children, fake model): a child's in-process sub-agent (Claude Code's
// `Agent` tool) is held to the same locks as the child itself — the hook fires for its calls,
// and it runs inside the child's namespace, where the held file is read-only (issue 18).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep, holderScript } from '../helpers/holder.js';
import { eventually } from '../helpers/wait.js';
import type { ToolResultInfo } from '../../src/testing/fakeAnthropic.js';

const { hubWith } = scriptedHubs();
const finish = finishStep;

describe('sub-agents and locks', () => {
  test('an Agent sub-agent of B cannot write the file A holds: not with Write, not with a script', { timeout: 240_000 }, async () => {
    const releaseA = gate();
    const seen: ToolResultInfo[] = [];
    let root = '';
    const h = await hubWith({
      holder: holderScript(releaseA),
      parent: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'Agent', input: { description: 'write the file', prompt: '@script:sub write shared.txt', subagent_type: 'general-purpose', run_in_background: false } }] };
        if (ctx.step === 1) return finish('my sub-agent tried');
        return { text: 'done' };
      },
      sub: async (ctx) => {
        if (ctx.step > 0) seen.push(ctx.lastToolResults[0]!);
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(root, 'shared.txt'), content: 'sub-agent was here\n' } }] };
        if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: `printf '%s' "require('fs').writeFileSync('shared.txt', 'sub script\\\\n')" > s.js && node s.js` } }] };
        return { text: 'sub done' };
      },
    });
    root = realpathSync(h.project);
    const shared = join(root, 'shared.txt');
    writeFileSync(shared, 'original\n');
    const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A' })).job_id;
    await eventually('A holds shared.txt', () => (h.hub.locks.list({}).locks.some((l) => l.path === shared && l.holder === a) ? true : undefined), 60_000);
    const b = (await h.call('spawn_agent', { prompt: '@script:parent', title: 'Parent B' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [b], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
    assert.equal(readFileSync(shared, 'utf8'), 'original\n', 'the sub-agent wrote nothing');
    assert.equal(seen.length, 2, JSON.stringify(seen));
    assert.equal(seen[0]!.is_error, true);
    assert.match(seen[0]!.text, new RegExp(`${a}|Holder A`), `the hook named the holder: ${seen[0]!.text}`);
    assert.match(seen[1]!.text, /EROFS|read-only|held|lock/i, `the script was refused too: ${seen[1]!.text}`);
    releaseA.open();
    await h.call('wait_for_agents', { job_ids: [a], timeout_s: 60 });
  });
});
