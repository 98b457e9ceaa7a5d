// End-to-end: REAL codex children (devDependency, codex-cli 0.169.0) spawned by an in-process
// hub against the scripted fake Responses API. A Codex child uses Overseer's tools over HTTP
// (lock_files, write_note, finish), edits through apply_patch and the shell; the job records
// the thread as its session, turns, tokens and a cost from the price table (null when the
// model has no price). Failures: a missing binary, a provider that refuses connections, and an
// uncatalogued model slug that still works.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { FAKE_MODEL } from '../helpers/codex.js';
import { codexHubs } from '../helpers/codexHub.js';
import type { CodexScript, CodexStepContext } from '../../src/fakemodel/fakeOpenAI.js';
import { deadPort } from '../helpers/net.js';

const { codexHub } = codexHubs();

const mcp = (tool: string, args: Record<string, unknown>) => ({ mcp: { server: 'overseer', tool, args } });
const outputsText = (ctx: CodexStepContext): string => ctx.lastOutputs.map((o) => `[${o.name}] ${o.text}`).join('\n');

/** Locks two files, patches one, writes the other with the shell, leaves a note, finishes. */
const fullScript = (seen: string[]): CodexScript => (ctx) => {
  if (ctx.step > 0) seen.push(outputsText(ctx));
  switch (ctx.step) {
    case 0: return { text: 'locking', calls: [mcp('lock_files', { files: ['patched.txt', 'shell.txt'], reason: 'codex edits' })] };
    case 1: return { calls: [{ patch: '*** Begin Patch\n*** Add File: patched.txt\n+from apply_patch\n*** End Patch\n' }, { shell: 'printf "from shell\\n" > shell.txt' }] };
    case 2: return { calls: [mcp('write_note', { key: 'codex/status', value: 'both files written' }), mcp('finish', { result: 'codex wrote patched.txt and shell.txt' })] };
    default: return { text: 'all done', usage: { input_tokens: 300, output_tokens: 30 } };
  }
};

describe('codex children: tools, files and accounting', () => {
  test('a codex child locks, patches, runs the shell, writes a note and finishes; session = thread, tokens counted, cost unknown', async () => {
    const seen: string[] = [];
    const { h, openai } = await codexHub({ full: fullScript(seen) });
    const id = (await h.call('spawn_agent', { prompt: '@script:full edit two files', provider: 'codex', title: 'Codex editor' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    const done = w.done[0];
    assert.equal(done.status, 'succeeded', `${done.error}\n${seen.join('\n---\n')}`);

    const root = realpathSync(h.project);
    assert.equal(readFileSync(join(root, 'patched.txt'), 'utf8'), 'from apply_patch\n', seen.join('\n---\n'));
    assert.equal(readFileSync(join(root, 'shell.txt'), 'utf8'), 'from shell\n');
    assert.match(seen[0]!, /\[lock_files\][\s\S]*acquired/, 'the lock_files result came back to the model');
    const note = await h.call('read_note', { key: 'codex/status' });
    assert.equal(note.value, 'both files written');
    assert.equal(note.author, id, 'the note is written as the codex job');

    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.provider, 'codex');
    assert.equal(a.result, 'codex wrote patched.txt and shell.txt');
    const reqs = openai.requests.filter((r) => r.script === 'full');
    const thread = reqs[0]!.headers['thread-id'];
    assert.ok(typeof thread === 'string' && thread.length > 0, 'codex sent its thread id');
    assert.equal(a.session_id, thread, 'the job session is the codex thread');
    assert.ok(a.turns > 0, `turns ${a.turns}`);
    // 3 requests at the default 100/10, the last one at 300/30.
    assert.equal(reqs.length, 4);
    assert.equal(a.input_tokens, 600);
    assert.equal(a.output_tokens, 60);
    assert.equal(a.cost_usd, null, 'fake-model has no price: cost unknown, never a made-up number');
    assert.equal(a.lock_violations, null, 'both changed files were locked by the job');
    assert.deepEqual((await h.call('list_locks', {})).locks, [], 'locks released at the end');
  });

  test('with a price for fake-model, cost_usd is computed from the token difference of a resumed thread', async () => {
    const script: CodexScript = (ctx) => (ctx.turn === 0
      ? { text: 'first turn', usage: { input_tokens: 1000, output_tokens: 100 } }
      : { text: 'second turn', usage: { input_tokens: 2000, output_tokens: 500 } });
    const { h } = await codexHub({ priced: script }, { config: { codexPrices: { [FAKE_MODEL]: { input: 1, output: 2 } } } });
    const id = (await h.call('spawn_agent', { prompt: '@script:priced say something', provider: 'codex' })).job_id;
    const w1 = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w1.done[0].status, 'succeeded', w1.done[0].error);
    const a1 = await h.call('get_agent', { job_id: id });
    assert.equal(a1.input_tokens, 1000);
    assert.equal(a1.output_tokens, 100);
    assert.equal(a1.cost_usd, (1000 * 1 + 100 * 2) / 1e6);

    await h.call('resume_agent', { job_id: id, message: 'once more' });
    const w2 = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w2.done[0].status, 'succeeded', w2.done[0].error);
    const a2 = await h.call('get_agent', { job_id: id });
    // The thread total after the resume is 3000/600; only the 2000/500 difference is new.
    assert.equal(a2.input_tokens, 3000);
    assert.equal(a2.output_tokens, 600);
    assert.equal(a2.cost_usd, (3000 * 1 + 600 * 2) / 1e6);
    assert.equal(a2.attempts.length, 2);
    assert.equal(a2.attempts[1].cost_usd, (2000 * 1 + 500 * 2) / 1e6, 'the resumed attempt is charged the difference only');
  });
});

describe('codex children: failures', () => {
  test('codex missing → binary_not_found saying how to set CODEX_BIN', async () => {
    const { h } = await codexHub({}, { config: { codexBin: '/nonexistent/codex' } });
    const id = (await h.call('spawn_agent', { prompt: 'anything', provider: 'codex' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 30 });
    assert.equal(w.done[0].status, 'failed');
    assert.equal(w.done[0].failure_class, 'binary_not_found');
    assert.match(w.done[0].error, /CODEX_BIN/);
  });

  test('a provider that refuses connections fails promptly as api_error saying the endpoint could not be reached', async () => {
    const port = await deadPort();
    const { h } = await codexHub({}, {
      config: { codexProvider: { base_url: `http://127.0.0.1:${port}/v1`, env_key: 'FAKE_API_KEY', request_max_retries: 0, stream_max_retries: 0 } },
    });
    const t0 = Date.now();
    const id = (await h.call('spawn_agent', { prompt: 'anything', provider: 'codex' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    const ms = Date.now() - t0;
    assert.equal(w.done[0].status, 'failed');
    assert.equal(w.done[0].failure_class, 'api_error', w.done[0].error);
    assert.match(w.done[0].error, /could not be reached/);
    assert.ok(ms < 20_000, `failed after ${ms} ms`);
  });

  test('an uncatalogued model slug still works: the warning items do not fail the job', async () => {
    const { h, openai } = await codexHub({ plain: [{ calls: [{ shell: 'echo plain > plain.txt' }] }, { text: 'wrote plain.txt' }] }, { catalog: false });
    const id = (await h.call('spawn_agent', { prompt: '@script:plain write plain.txt', provider: 'codex' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', w.done[0].error);
    assert.equal(w.done[0].result, 'wrote plain.txt');
    assert.equal(readFileSync(join(realpathSync(h.project), 'plain.txt'), 'utf8'), 'plain\n');
    const transcript = readFileSync(join(h.home, 'agents', id, 'attempt-1.jsonl'), 'utf8');
    assert.match(transcript, /"type":"error","message":"Model metadata for `fake-model` not found/, 'codex did warn about the unknown slug');
    assert.equal(openai.requests.filter((r) => r.script === 'plain').length, 2);
  });
});
