// Unit tests of the scripted fake OpenAI Responses API (src/fakemodel/fakeOpenAI.ts), driven over
// plain fetch: SSE shapes, step indexing, routing, step context, errors, delays, robustness.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { parseSse } from '../helpers/sse.js';
import {
  contextOf,
  fakeModelCatalog,
  startFakeOpenAI,
  textOf,
  type CodexStepContext,
  type FakeOpenAI,
} from '../../src/fakemodel/fakeOpenAI.js';

const text = (role: string, t: string) => ({
  type: 'message',
  role,
  content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: t }],
});
const env = (cwd: string) => text('user', `<environment_context>\n  <cwd>${cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>`);
const fc = (call_id: string, cmd: string) => ({ type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd }), call_id });
const fco = (call_id: string, output: unknown) => ({ type: 'function_call_output', call_id, output });

/** A first-turn request body the way codex 0.169.0 builds it, plus `more` input items. */
function body(prompt: string, more: unknown[] = [], extra: Record<string, unknown> = {}) {
  return {
    model: 'fake-model',
    instructions: undefined,
    input: [text('developer', 'You are a scripted fake model.'), text('developer', '<permissions>…</permissions>'), env('/abs/work'), text('user', prompt), ...more],
    tools: [{ type: 'function', name: 'exec_command' }, { type: 'custom', name: 'apply_patch' }],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    store: false,
    stream: true,
    ...extra,
  };
}

async function post(fake: FakeOpenAI, b: unknown, path = '/responses', signal?: AbortSignal) {
  const res = await fetch(fake.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-fake' },
    body: typeof b === 'string' ? b : JSON.stringify(b),
    ...(signal ? { signal } : {}),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The output items of an SSE response, in order. */
function itemsOf(raw: string): any[] {
  return parseSse(raw)
    .filter((e) => e.event === 'response.output_item.done')
    .map((e) => e.data.item);
}

/** The assistant text of an SSE response. */
function textOfSse(raw: string): string {
  return itemsOf(raw)
    .filter((i) => i.type === 'message')
    .map((i) => i.content.map((c: any) => c.text).join(''))
    .join('');
}

describe('fake openai: SSE rendering', () => {
  let fake: FakeOpenAI;
  before(async () => {
    fake = await startFakeOpenAI({
      scripts: {
        hello: [{ text: 'hello from fake' }],
        calls: [
          {
            text: 'running three tools',
            reasoning: 'thinking it over',
            calls: [
              { shell: 'echo hi > out.txt', workdir: '/abs/work/sub' },
              { patch: '*** Begin Patch\n*** Add File: a.txt\n+ä ✓ 𝄞\n*** End Patch\n' },
              { mcp: { server: 'probe', tool: 'echo', args: { text: 'ping "q"' } } },
              { raw: { type: 'tool_search_call', execution: 'client', status: 'completed', arguments: { query: 'echo', limit: 8 } } },
            ],
            usage: { input_tokens: 5000, output_tokens: 700, cached_tokens: 40, reasoning_tokens: 7 },
          },
        ],
        callOnly: [{ calls: [{ shell: 'true' }] }],
        empty: [{}],
      },
    });
  });
  after(() => fake.close());

  test('url ends in /v1; a text step is response.created, one output_item.done, response.completed', async () => {
    assert.equal(fake.url, `http://127.0.0.1:${fake.port}/v1`);
    const r = await post(fake, body('@script:hello say hi'));
    assert.equal(r.status, 200);
    assert.match(r.type, /^text\/event-stream/);
    const evs = parseSse(r.text);
    assert.deepEqual(evs.map((e) => e.event), ['response.created', 'response.output_item.done', 'response.completed']);
    for (const e of evs) assert.equal(e.data.type, e.event);
    const id = evs[0]!.data.response.id;
    assert.match(id, /^resp_fake_\d+$/);
    assert.equal(evs[0]!.data.response.status, 'in_progress');
    assert.deepEqual(evs[1]!.data, {
      type: 'response.output_item.done',
      output_index: 0,
      item: {
        type: 'message',
        id: id.replace('resp_', 'msg_'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'hello from fake', annotations: [] }],
      },
    });
    const done = evs[2]!.data.response;
    assert.equal(done.id, id);
    assert.equal(done.status, 'completed');
    assert.equal(done.model, 'fake-model');
    assert.deepEqual(done.usage, {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 10,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 110,
    });
    assert.deepEqual(done.output, [evs[1]!.data.item]);
  });

  test('also answers POST /v1/responses without the /v1 prefix in the url', async () => {
    const r = await fetch(`http://127.0.0.1:${fake.port}/responses`, { method: 'POST', body: JSON.stringify(body('@script:hello x')) });
    assert.equal(r.status, 200);
    assert.equal(textOfSse(await r.text()), 'hello from fake');
  });

  test('calls: reasoning, message, then exec_command / apply_patch / namespaced MCP / raw items; custom usage', async () => {
    const r = await post(fake, body('@script:calls go'));
    const evs = parseSse(r.text);
    const items = itemsOf(r.text);
    assert.deepEqual(
      evs.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.output_index),
      [0, 1, 2, 3, 4, 5],
    );
    const n = /^resp_fake_(\d+)$/.exec(evs[0]!.data.response.id)![1];
    assert.deepEqual(items[0], { type: 'reasoning', id: `rs_fake_${n}`, summary: [{ type: 'summary_text', text: 'thinking it over' }], encrypted_content: null });
    assert.equal(items[1].type, 'message');
    assert.equal(textOfSse(r.text), 'running three tools');
    assert.deepEqual(items[2], {
      type: 'function_call',
      id: `fc_fake_${n}_0`,
      call_id: `call_fake_${n}_0`,
      name: 'exec_command',
      arguments: JSON.stringify({ cmd: 'echo hi > out.txt', workdir: '/abs/work/sub' }),
      status: 'completed',
    });
    assert.deepEqual(items[3], {
      type: 'custom_tool_call',
      id: `ctc_fake_${n}_1`,
      call_id: `call_fake_${n}_1`,
      name: 'apply_patch',
      input: '*** Begin Patch\n*** Add File: a.txt\n+ä ✓ 𝄞\n*** End Patch\n',
      status: 'completed',
    });
    assert.deepEqual(items[4], {
      type: 'function_call',
      id: `fc_fake_${n}_2`,
      call_id: `call_fake_${n}_2`,
      name: 'echo',
      namespace: 'mcp__probe',
      arguments: '{"text":"ping \\"q\\""}',
      status: 'completed',
    });
    assert.deepEqual(JSON.parse(items[4].arguments), { text: 'ping "q"' });
    assert.deepEqual(items[5], {
      call_id: `call_fake_${n}_3`,
      type: 'tool_search_call',
      execution: 'client',
      status: 'completed',
      arguments: { query: 'echo', limit: 8 },
    });
    assert.deepEqual(evs.at(-1)!.data.response.usage, {
      input_tokens: 5000,
      input_tokens_details: { cached_tokens: 40 },
      output_tokens: 700,
      output_tokens_details: { reasoning_tokens: 7 },
      total_tokens: 5700,
    });
  });

  test('a call-only step sends no message; an empty step sends an empty message', async () => {
    const calls = itemsOf((await post(fake, body('@script:callOnly x'))).text);
    assert.deepEqual(calls.map((i) => i.type), ['function_call']);
    const empty = itemsOf((await post(fake, body('@script:empty x'))).text);
    assert.deepEqual(empty.map((i) => [i.type, i.content[0].text]), [['message', '']]);
  });

  test('call ids are unique across requests', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add(itemsOf((await post(fake, body('@script:callOnly x'))).text)[0].call_id);
    assert.equal(ids.size, 3);
  });

  test('fakeModelCatalog defines the slugs with a freeform apply_patch and no tool_search', () => {
    const c = fakeModelCatalog(['a', 'b']);
    assert.deepEqual(c.models.map((m) => m.slug), ['a', 'b']);
    assert.equal(c.models[0]!.apply_patch_tool_type, 'freeform');
    assert.equal(c.models[0]!.supports_search_tool, false);
    assert.equal(fakeModelCatalog().models[0]!.slug, 'fake-model');
  });
});

describe('fake openai: steps, routing and context', () => {
  let fake: FakeOpenAI;
  before(async () => {
    fake = await startFakeOpenAI({
      scripts: {
        three: [{ text: 'step zero', calls: [{ shell: 'a' }, { shell: 'b' }] }, { text: 'step one' }, { text: 'step two' }],
        default: [{ text: 'the default script' }],
        'dotted.name-1': [{ text: 'dotted' }],
        dev: [{ text: 'routed by developer text' }],
      },
    });
  });
  after(() => fake.close());

  test('step = number of model responses in input (runs of model items); past the end → "done"', async () => {
    const before = fake.requests.length;
    assert.equal(textOfSse((await post(fake, body('@script:three a'))).text), 'step zero');
    // One response with a message and two calls is ONE step; its outputs follow.
    const one = [text('assistant', 'step zero'), fc('c1', 'a'), fc('c2', 'b'), fco('c1', 'A'), fco('c2', 'B')];
    assert.equal(textOfSse((await post(fake, body('@script:three a', one))).text), 'step one');
    // Resume: the history comes back, then a new environment_context and the next prompt.
    const two = [...one, text('assistant', 'step one'), env('/abs/other'), text('user', 'next')];
    assert.equal(textOfSse((await post(fake, body('@script:three a', two))).text), 'step two');
    const three = [...two, { type: 'reasoning', summary: [] }, text('assistant', 'step two'), text('user', 'more')];
    assert.equal(textOfSse((await post(fake, body('@script:three a', three))).text), 'done');
    assert.deepEqual(
      fake.requests.slice(before).map((r) => [r.script, r.step, r.outcome, r.status]),
      [
        ['three', 0, 'sent', 200],
        ['three', 1, 'sent', 200],
        ['three', 2, 'sent', 200],
        ['three', 3, 'sent', 200],
      ],
    );
  });

  test('turn and turnStep count prompts and the responses since the last prompt', () => {
    const items = [text('assistant', 'x'), fc('c1', 'a'), fco('c1', 'A'), text('assistant', 'y'), env('/w2'), text('user', 'next'), fc('c2', 'b'), fco('c2', 'B')];
    const ctx = contextOf(body('@script:t first', items), 't');
    assert.deepEqual([ctx.step, ctx.turn, ctx.turnStep], [3, 1, 1]);
    assert.equal(ctx.prompt, 'next');
    assert.equal(ctx.cwd, '/w2');
    assert.deepEqual(ctx.userTexts, ['@script:t first', 'next']);
    const fresh = contextOf(body('p'), 't');
    assert.deepEqual([fresh.step, fresh.turn, fresh.turnStep], [0, 0, 0]);
  });

  test('routes by the first marker of the prompt, then earlier prompts (latest first), then developer text, else default', async () => {
    assert.equal(textOfSse((await post(fake, body('run @script:dotted.name-1 and @script:three'))).text), 'dotted');
    assert.equal(textOfSse((await post(fake, body('please run @script:dev.'))).text), 'routed by developer text');
    // `resume <id> "next"`: no marker in the new prompt, so the thread's script goes on.
    const resumed = [text('assistant', 'x'), env('/w'), text('user', 'next')];
    const before = fake.requests.length;
    await post(fake, body('@script:dev first', resumed));
    assert.equal(fake.requests[before]!.script, 'dev');
    // The environment_context is never the prompt.
    const b = body('no marker here');
    b.input[2] = env('/abs/@script:three');
    assert.equal(textOfSse((await post(fake, b)).text), 'the default script');
    const d = body('no marker');
    d.input[1] = text('developer', 'Agent role. @script:dev');
    assert.equal(textOfSse((await post(fake, d)).text), 'routed by developer text');
    assert.equal(textOfSse((await post(fake, body('@script:nope hi'))).text), 'no script named nope');
  });

  test('custom route and addScript', async () => {
    const f = await startFakeOpenAI({ route: (b) => (b.client_metadata?.who === 'x' ? 'ex' : undefined) });
    try {
      f.addScript('ex', [{ text: 'routed by metadata' }]);
      f.addScript('default', [{ text: 'fallback to marker routing' }]);
      assert.equal(textOfSse((await post(f, body('@script:other', [], { client_metadata: { who: 'x' } }))).text), 'routed by metadata');
      assert.equal(textOfSse((await post(f, body('no marker'))).text), 'fallback to marker routing');
    } finally {
      await f.close();
    }
  });

  test('function scripts get the step context: outputs with call names, developer, tools, MCP tools', async () => {
    const seen: CodexStepContext[] = [];
    fake.addScript('ctx', (ctx) => {
      seen.push(ctx);
      return { text: `step ${ctx.step} saw ${ctx.lastOutputs.map((o) => o.text).join('|')}` };
    });
    const more = [
      fc('c1', 'echo 1'),
      fco('c1', 'Chunk ID: x\nOutput:\n1\n'),
      text('assistant', 'now two tools'),
      { type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch', call_id: 'c2' },
      { type: 'function_call', name: 'echo', namespace: 'mcp__probe', arguments: '{"text":"ping"}', call_id: 'c3' },
      { type: 'tool_search_call', call_id: 'c4', execution: 'client', arguments: { query: 'x' } },
      { type: 'custom_tool_call_output', call_id: 'c2', output: 'Command blocked by PreToolUse hook: LOCKED' },
      fco('c3', [{ type: 'input_text', text: 'Wall time: 0.1 seconds\nOutput:' }, { type: 'input_text', text: 'echo: ping' }]),
      {
        type: 'tool_search_output',
        call_id: 'c4',
        execution: 'client',
        tools: [{ type: 'namespace', name: 'mcp__deferred', tools: [{ type: 'function', name: 'look', defer_loading: true }] }],
      },
    ];
    const tools = [
      { type: 'function', name: 'exec_command' },
      { type: 'namespace', name: 'mcp__probe', tools: [{ type: 'function', name: 'echo' }, { type: 'function', name: 'add' }] },
      { type: 'namespace', name: 'multi_agent_v1', tools: [{ type: 'function', name: 'spawn' }] },
      { type: 'web_search' },
    ];
    const r = await post(fake, body('@script:ctx hi', more, { tools }));
    assert.equal(textOfSse(r.text), 'step 2 saw Command blocked by PreToolUse hook: LOCKED|Wall time: 0.1 seconds\nOutput:\necho: ping|');
    const ctx = seen[0]!;
    assert.equal(ctx.script, 'ctx');
    assert.equal(ctx.prompt, '@script:ctx hi');
    assert.equal(ctx.developer, 'You are a scripted fake model.\n<permissions>…</permissions>');
    assert.equal(ctx.cwd, '/abs/work');
    assert.deepEqual(ctx.lastOutputs, [
      { call_id: 'c2', text: 'Command blocked by PreToolUse hook: LOCKED', type: 'custom_tool_call_output', name: 'apply_patch' },
      { call_id: 'c3', text: 'Wall time: 0.1 seconds\nOutput:\necho: ping', type: 'function_call_output', name: 'echo', namespace: 'mcp__probe' },
      { call_id: 'c4', text: '', type: 'tool_search_output', name: 'tool_search_call' },
    ]);
    assert.deepEqual(ctx.allOutputs.map((o) => [o.call_id, o.name]), [['c1', 'exec_command'], ['c2', 'apply_patch'], ['c3', 'echo'], ['c4', 'tool_search_call']]);
    assert.deepEqual(ctx.tools, ['exec_command', 'mcp__probe', 'multi_agent_v1', 'web_search']);
    assert.deepEqual(ctx.mcpTools, ['mcp__probe__echo', 'mcp__probe__add', 'mcp__deferred__look']);
    assert.deepEqual(ctx.userTexts, ['@script:ctx hi']);
    assert.equal(ctx.body.model, 'fake-model');
  });

  test('a throwing function script answers 400 with the message, and the server keeps serving', async () => {
    fake.addScript('boom', () => {
      throw new Error('kaboom');
    });
    fake.addScript('undef', (() => undefined) as any);
    const r = await post(fake, body('@script:boom'));
    assert.equal(r.status, 400);
    assert.match(JSON.parse(r.text).error.message, /fake script boom step 0 threw: kaboom/);
    assert.equal((await post(fake, body('@script:undef'))).status, 400);
    assert.equal((await post(fake, body('@script:three'))).status, 200);
  });

  test('textOf: strings, content parts, objects; anything else is empty', () => {
    assert.equal(textOf('a'), 'a');
    assert.equal(textOf([{ type: 'input_text', text: 'a' }, { type: 'input_image', image_url: 'x' }, { type: 'output_text', text: 'b' }]), 'a\nb');
    assert.equal(textOf({ content: [{ type: 'text', text: 'c' }] }), 'c');
    assert.equal(textOf(undefined), '');
    assert.equal(textOf(42), '');
  });
});

describe('fake openai: errors, delays, robustness', () => {
  let fake: FakeOpenAI;
  before(async () => {
    fake = await startFakeOpenAI({
      scripts: {
        bad: [{ error: { status: 400, message: 'scripted bad request' } }],
        busy: [{ error: { status: 500, message: 'busy', code: 'server_is_overloaded' } }],
        failed: [{ text: 'partial', error: { failed: 'scripted failure' } }],
        cut: [{ text: 'cut short', error: { closeEarly: true } }],
        slow: [{ text: 'late', delayMs: 300 }],
        veryslow: [{ text: 'never', delayMs: 60_000 }],
      },
    });
  });
  after(() => fake.close());

  test('an HTTP error step sends the status and {"error":{"message":…}}', async () => {
    const r = await post(fake, body('@script:bad'));
    assert.equal(r.status, 400);
    assert.match(r.type, /^application\/json/);
    assert.deepEqual(JSON.parse(r.text), { error: { message: 'scripted bad request', type: 'invalid_request_error', param: null, code: null } });
    const b = await post(fake, body('@script:busy'));
    assert.equal(b.status, 500);
    assert.deepEqual(JSON.parse(b.text).error, { message: 'busy', type: 'server_error', param: null, code: 'server_is_overloaded' });
    const rec = await fake.waitForRequest((q) => q.script === 'busy', 1000);
    assert.deepEqual([rec.outcome, rec.status], ['error', 500]);
  });

  test('a failed step sends response.failed (no items, no response.completed)', async () => {
    const r = await post(fake, body('@script:failed'));
    assert.equal(r.status, 200);
    const evs = parseSse(r.text);
    assert.deepEqual(evs.map((e) => e.event), ['response.created', 'response.failed']);
    assert.equal(evs[1]!.data.response.status, 'failed');
    assert.deepEqual(evs[1]!.data.response.error, { code: 'server_error', message: 'scripted failure' });
    assert.equal((await fake.waitForRequest((q) => q.script === 'failed', 1000)).outcome, 'failed');
  });

  test('a closeEarly step sends its items and ends the stream without response.completed', async () => {
    const r = await post(fake, body('@script:cut'));
    assert.equal(r.status, 200);
    assert.deepEqual(parseSse(r.text).map((e) => e.event), ['response.created', 'response.output_item.done']);
    assert.equal(textOfSse(r.text), 'cut short');
    assert.equal((await fake.waitForRequest((q) => q.script === 'cut', 1000)).outcome, 'closed');
  });

  test('delayMs holds the answer back', async () => {
    const t0 = Date.now();
    const r = await post(fake, body('@script:slow'));
    assert.ok(Date.now() - t0 >= 290, `answered after ${Date.now() - t0} ms`);
    assert.equal(textOfSse(r.text), 'late');
  });

  test('a client abort during the delay ends the wait at once (outcome aborted)', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const pending = post(fake, body('@script:veryslow'), '/responses', ac.signal);
    const arrived = await fake.waitForRequest((q) => q.script === 'veryslow', 5000);
    assert.equal(arrived.outcome, undefined, 'recorded on arrival, before the answer');
    assert.equal(arrived.headers.authorization, 'Bearer sk-fake');
    ac.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    const done = await fake.waitForRequest((q) => q.script === 'veryslow' && q.outcome !== undefined, 5000);
    assert.equal(done.outcome, 'aborted');
    assert.ok(Date.now() - t0 < 10_000);
  });

  test('malformed bodies get 400, unknown routes 404, and neither hurts the server', async () => {
    const before = fake.requests.length;
    for (const bad of ['{not json', '[]', '"str"', 'null', JSON.stringify({ model: 'm', input: 'nope' }), JSON.stringify({ model: 'm' })]) {
      const r = await post(fake, bad);
      assert.equal(r.status, 400, `for ${bad}`);
      assert.equal(typeof JSON.parse(r.text).error.message, 'string');
    }
    // Odd items inside input are tolerated.
    assert.equal((await post(fake, { input: [null, 3, 'x', { type: 'message' }, { role: 'user', content: 42 }] })).status, 200);
    assert.equal((await post(fake, body('x'), '/chat/completions')).status, 404);
    assert.equal((await fetch(`${fake.url}/responses`)).status, 404);
    assert.equal(fake.requests.length, before + 1, 'malformed requests are not recorded');
    // A raw request with a broken HTTP head is answered 400 too.
    const raw = await new Promise<string>((resolve, reject) => {
      const s = new net.Socket();
      let got = '';
      s.on('data', (d: Buffer) => (got += d.toString()));
      s.on('close', () => resolve(got));
      s.on('error', reject);
      s.connect(fake.port, '127.0.0.1', () => s.write('BLAH\r\n\r\n'));
    });
    assert.match(raw, /^HTTP\/1\.1 400/);
    assert.equal((await post(fake, body('@script:bad'))).status, 400, 'still serving scripts');
  });
});

describe('fake openai: waitForRequest and close', () => {
  test('resolves from recorded requests, on arrival and on outcome; rejects on timeout, throw and close', async () => {
    const fake = await startFakeOpenAI({ scripts: { a: [{ text: 'a' }], slow: [{ text: 's', delayMs: 60_000 }] } });
    let closed = false;
    try {
      await post(fake, body('@script:a 1'));
      const old = await fake.waitForRequest((r) => r.script === 'a', 10);
      assert.equal(old.outcome, 'sent');
      assert.equal(old.prompt, '@script:a 1');

      const later = fake.waitForRequest((r) => r.prompt === '@script:a 2' && r.outcome === 'sent', 5000);
      await post(fake, body('@script:a 2'));
      assert.equal((await later).step, 0);

      await assert.rejects(fake.waitForRequest((r) => r.script === 'never', 50), /no matching request within 50 ms/);
      const throwing = fake.waitForRequest(() => {
        throw new Error('bad predicate');
      }, 5000);
      void post(fake, body('@script:a 3'));
      await assert.rejects(throwing, /bad predicate/);

      // close(): a pending delayed answer is dropped (its socket destroyed), waiters are rejected.
      const pending = post(fake, body('@script:slow x')).then(
        () => 'answered',
        () => 'connection closed',
      );
      await fake.waitForRequest((r) => r.script === 'slow', 5000);
      const waiting = fake.waitForRequest((r) => r.script === 'never', 60_000);
      const t0 = Date.now();
      await fake.close();
      closed = true;
      assert.ok(Date.now() - t0 < 2000, `close took ${Date.now() - t0} ms`);
      await assert.rejects(waiting, /closed while waiting/);
      assert.equal(await pending, 'connection closed');
      assert.equal(fake.requests.find((r) => r.script === 'slow')?.outcome, 'aborted');
      await assert.rejects(fake.waitForRequest((r) => r.script === 'never', 10), /closed/);
      await fake.close(); // idempotent
    } finally {
      if (!closed) await fake.close();
    }
  });
});
