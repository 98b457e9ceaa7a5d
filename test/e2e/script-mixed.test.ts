// End-to-end (issue 28: any CLI): one script run starts a Claude agent and a Codex agent in
// parallel, both real CLIs on their fake models (the fake Anthropic API, the fake Responses API).
// Both answers come back to the script (the Codex one as the object of its --output-schema), and
// get_run lists both calls with their jobs and providers. Each fake model saw one conversation.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { codexHubs } from '../helpers/codexHub.js';
import { finishStep } from '../helpers/holder.js';
import type { Script } from '../../src/fakemodel/fakeAnthropic.js';
import type { CodexScript } from '../../src/fakemodel/fakeOpenAI.js';

const { codexHub } = codexHubs();

const claudeAgent: Script = (ctx) => (ctx.step === 0 ? finishStep('claude says hi') : { text: 'done' });
/** Codex answers with the JSON its --output-schema asks for, as its final message. */
const codexAgent: CodexScript = () => ({ text: JSON.stringify({ cli: 'codex', ok: true }) });

describe('a script run with Claude and Codex agents', () => {
  test('agent() with provider claude and provider codex in parallel: both answers, both jobs with their providers', { timeout: 240_000 }, async () => {
    const { h, openai } = await codexHub({ 'mixed-codex': codexAgent }, { scripts: { 'mixed-claude': claudeAgent } });
    const r = await h.call('run_script', {
      script: `export const meta = { name: 'two-clis', description: 'one claude, one codex' }
const [fromClaude, fromCodex] = await parallel([
  () => agent('@script:mixed-claude say hi', { provider: 'claude', label: 'claude', max_turns: 4 }),
  () => agent('@script:mixed-codex say hi', { provider: 'codex', label: 'codex', schema: { type: 'object', properties: { cli: { type: 'string' }, ok: { type: 'boolean' } }, required: ['cli', 'ok'], additionalProperties: false } }),
])
log('claude: ' + fromClaude)
return { fromClaude, fromCodex }`,
    });
    const v = await h.call('get_run', { run_id: r.run_id, wait_s: 200 });
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, { fromClaude: 'claude says hi', fromCodex: { cli: 'codex', ok: true } });
    assert.deepEqual(v.calls.map((c: any) => [c.label, c.provider, c.status, c.job_status]).sort(), [
      ['claude', 'claude', 'done', 'succeeded'], ['codex', 'codex', 'done', 'succeeded'],
    ]);
    for (const c of v.calls) {
      const a = await h.call('get_agent', { job_id: c.job_id });
      assert.equal(a.provider, c.label, `the ${c.label} call's job`);
    }
    const codexJob = v.calls.find((c: any) => c.label === 'codex').job_id;
    const thread = openai.requests.find((q) => q.script === 'mixed-codex')?.headers['thread-id'];
    assert.equal((await h.call('get_agent', { job_id: codexJob })).session_id, thread, 'the codex job is the codex thread');
    assert.equal(h.fake.requests.filter((q) => q.script === 'mixed-claude' && q.step === 0).length, 1, 'one claude conversation');
    assert.equal(new Set(openai.requests.filter((q) => q.script === 'mixed-codex').map((q) => q.headers['thread-id'])).size, 1, 'one codex thread');
    assert.deepEqual(v.log.map((l: any) => l.text), ['claude: claude says hi']);
  });
});
