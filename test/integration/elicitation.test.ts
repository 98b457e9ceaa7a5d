// Integration: approvals reach the person through the lead's client when it can elicit (an
// interactive Claude Code); a cancelled elicitation (Claude Code in -p mode) falls back to the
// lead answering with respond.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

async function setup(answer: (msg: string) => ElicitResult): Promise<{ h: TestHub; agent: Client; jobId: string; asked: string[]; firstAsk: Promise<void> }> {
  const h = await startTestHub({ scripts: { hang: [{ delayMs: 120_000, text: 'never' }] } });
  hubs.push(h);
  const asked: string[] = [];
  let onAsk!: () => void;
  const firstAsk = new Promise<void>((r) => { onAsk = r; });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await h.hub.server({ role: 'lead' }).connect(a);
  const person = new Client({ name: 'interactive-lead', version: '1' }, { capabilities: { elicitation: { form: {} } } });
  person.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message);
    onAsk();
    return answer(req.params.message);
  });
  await person.connect(b);
  const jobId = (await h.call('spawn_agent', { prompt: '@script:hang' })).job_id as string;
  await waitForJob(h.hub, jobId, (j) => j.status === 'running');
  const agent = await h.connect({ role: 'agent', jobId });
  return { h, agent, jobId, asked, firstAsk };
}

const text = (r: any): any => JSON.parse((r.content as { text: string }[])[0]!.text);

describe('elicitation', () => {
  test('an interactive lead client asks the person, whose answer closes the request', async () => {
    const { h, agent, jobId, asked } = await setup(() => ({ action: 'accept', content: { decision: 'approved', comment: 'go ahead (person)' } }));
    const r = text(await agent.callTool({ name: 'request_approval', arguments: { summary: 'drop the cache table', plan: { rollback: 'restore from backup' } } }));
    assert.equal(r.decision, 'approved');
    assert.equal(r.comment, 'go ahead (person)');
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, new RegExp(`Agent ${jobId} requests approval: drop the cache table`));
    const all = await h.call('list_requests', { status: 'all' });
    assert.equal(all.requests[0].answered_by, 'person');
    await h.call('cancel_agent', { job_id: jobId });
  });

  test('a cancelled elicitation falls back to the lead', async () => {
    const { h, agent, jobId, asked, firstAsk } = await setup(() => ({ action: 'cancel' }));
    const pending = agent.callTool({ name: 'ask_lead', arguments: { question: 'which database?', options: ['postgres', 'sqlite'] } });
    const w = await h.call('wait_for_agents', { job_ids: [jobId], timeout_s: 30 });
    assert.equal(w.attention.length, 1);
    await firstAsk;
    assert.equal(asked.length, 1, 'the person was asked');
    const req = w.attention[0];
    const closed = await h.call('respond', { request_id: req.request_id, answer: 'sqlite' });
    assert.equal(closed.answered_by, 'lead');
    assert.equal(text(await pending).answer, 'sqlite');
    await h.call('cancel_agent', { job_id: jobId });
  });
});
