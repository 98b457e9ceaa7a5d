// Unit tests of the scripted fake Anthropic Messages API (src/fakemodel/fakeAnthropic.ts),
// driven over plain fetch: SSE shapes, step indexing, routing, errors, delays, robustness.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startFakeAnthropic, textOf, type FakeAnthropic, type StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { parseSse } from '../helpers/sse.js';

const userMsg = (content: unknown) => ({ role: 'user', content });
const asstMsg = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] });
const envMsg = { role: 'system', content: '# Environment\nYou have been invoked…' };

function body(prompt: string, extra: Record<string, unknown> = {}, more: unknown[] = []) {
  return {
    model: 'claude-test-model',
    stream: true,
    system: [{ type: 'text', text: 'You are a test.' }],
    messages: [
      userMsg([
        { type: 'text', text: '<system-reminder>noise</system-reminder>\n' },
        { type: 'text', text: prompt },
      ]),
      envMsg,
      ...more,
    ],
    ...extra,
  };
}

async function post(fake: FakeAnthropic, b: unknown, path = '/v1/messages?beta=true', signal?: AbortSignal) {
  const res = await fetch(fake.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof b === 'string' ? b : JSON.stringify(b),
    signal,
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The assistant text of an SSE turn. */
function sseText(raw: string): string {
  return parseSse(raw)
    .filter((e) => e.event === 'content_block_delta' && e.data.delta.type === 'text_delta')
    .map((e) => e.data.delta.text)
    .join('');
}

describe('fake anthropic: SSE rendering', () => {
  let fake: FakeAnthropic;
  before(async () => {
    fake = await startFakeAnthropic({
      scripts: {
        hello: [{ text: 'hello from fake' }],
        tools: [
          {
            text: 'I will write two files.',
            tools: [
              { name: 'Write', input: { file_path: '/abs/work/out.txt', content: 'hi\n' } },
              { name: 'mcp__srv__echo', input: { text: 'ping ✓ 𝄞 "quoted"' } },
            ],
            usage: { input_tokens: 5000, output_tokens: 700 },
          },
        ],
        toolOnly: [{ tools: [{ name: 'Read', input: { file_path: '/x' } }] }],
      },
    });
  });
  after(() => fake.close());

  test('text turn has the exact event order and shapes, and echoes the model', async () => {
    const r = await post(fake, body('@script:hello say hi'));
    assert.equal(r.status, 200);
    assert.match(r.type, /^text\/event-stream/);
    const evs = parseSse(r.text);
    assert.deepEqual(
      evs.map((e) => e.event),
      ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    );
    for (const e of evs) assert.equal(e.data.type, e.event);
    const start = evs[0]!.data.message;
    assert.equal(start.model, 'claude-test-model');
    assert.equal(start.role, 'assistant');
    assert.deepEqual(start.content, []);
    assert.equal(start.stop_reason, null);
    assert.match(start.id, /^msg_fake_\d+$/);
    assert.deepEqual(start.usage, { input_tokens: 100, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    assert.deepEqual(evs[1]!.data, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    assert.deepEqual(evs[2]!.data, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello from fake' } });
    assert.deepEqual(evs[3]!.data, { type: 'content_block_stop', index: 0 });
    assert.deepEqual(evs[4]!.data, {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 20 },
    });
  });

  test('tool turn: text block, one tool_use block per tool, input via input_json_delta, custom usage', async () => {
    const r = await post(fake, body('@script:tools go'));
    assert.equal(r.status, 200);
    const evs = parseSse(r.text);
    assert.equal(evs[0]!.event, 'message_start');
    assert.equal(evs[0]!.data.message.usage.input_tokens, 5000);
    assert.equal(evs.at(-1)!.event, 'message_stop');
    const md = evs.at(-2)!;
    assert.equal(md.event, 'message_delta');
    assert.equal(md.data.delta.stop_reason, 'tool_use');
    assert.equal(md.data.usage.output_tokens, 700);

    const starts = evs.filter((e) => e.event === 'content_block_start').map((e) => e.data);
    assert.deepEqual(
      starts.map((s) => [s.index, s.content_block.type]),
      [[0, 'text'], [1, 'tool_use'], [2, 'tool_use']],
    );
    const n = /^msg_fake_(\d+)$/.exec(evs[0]!.data.message.id)![1];
    assert.equal(starts[1].content_block.id, `toolu_fake_${n}_0`);
    assert.equal(starts[2].content_block.id, `toolu_fake_${n}_1`);
    assert.equal(starts[1].content_block.name, 'Write');
    assert.deepEqual(starts[1].content_block.input, {});

    // Every block is closed before the next opens, and each tool's partial JSON rebuilds its input.
    let open: number | null = null;
    const json = new Map<number, string>();
    for (const e of evs.slice(1, -2)) {
      if (e.event === 'content_block_start') {
        assert.equal(open, null);
        open = e.data.index;
      } else if (e.event === 'content_block_delta') {
        assert.equal(e.data.index, open);
        if (e.data.delta.type === 'input_json_delta') json.set(open!, (json.get(open!) ?? '') + e.data.delta.partial_json);
      } else if (e.event === 'content_block_stop') {
        assert.equal(e.data.index, open);
        open = null;
      } else assert.fail(`unexpected event ${e.event}`);
    }
    const deltas1 = evs.filter((e) => e.event === 'content_block_delta' && e.data.index === 1);
    assert.ok(deltas1.length >= 2, 'input is streamed in more than one delta');
    assert.deepEqual(JSON.parse(json.get(1)!), { file_path: '/abs/work/out.txt', content: 'hi\n' });
    assert.deepEqual(JSON.parse(json.get(2)!), { text: 'ping ✓ 𝄞 "quoted"' });
    assert.equal(sseText(r.text), 'I will write two files.');
  });

  test('a tool-only step sends no text block', async () => {
    const evs = parseSse((await post(fake, body('@script:toolOnly x'))).text);
    const starts = evs.filter((e) => e.event === 'content_block_start');
    assert.equal(starts.length, 1);
    assert.equal(starts[0]!.data.index, 0);
    assert.equal(starts[0]!.data.content_block.type, 'tool_use');
  });

  test('tool ids are unique across requests', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const evs = parseSse((await post(fake, body('@script:toolOnly x'))).text);
      ids.add(evs.find((e) => e.event === 'content_block_start')!.data.content_block.id);
    }
    assert.equal(ids.size, 3);
  });

  test('non-streaming request gets a JSON message', async () => {
    const r = await post(fake, body('@script:tools go', { stream: false }));
    assert.equal(r.status, 200);
    assert.match(r.type, /^application\/json/);
    const m = JSON.parse(r.text);
    assert.equal(m.type, 'message');
    assert.equal(m.model, 'claude-test-model');
    assert.equal(m.stop_reason, 'tool_use');
    assert.deepEqual(
      m.content.map((b: any) => b.type),
      ['text', 'tool_use', 'tool_use'],
    );
    assert.deepEqual(m.content[1].input, { file_path: '/abs/work/out.txt', content: 'hi\n' });
    assert.equal(m.usage.input_tokens, 5000);
    assert.equal(m.usage.output_tokens, 700);
  });
});

describe('fake anthropic: steps and routing', () => {
  let fake: FakeAnthropic;
  before(async () => {
    fake = await startFakeAnthropic({
      scripts: {
        three: [{ text: 'step zero' }, { text: 'step one' }],
        default: [{ text: 'the default script' }],
        'dotted.name-1': [{ text: 'dotted' }],
        sys: [{ text: 'routed by system prompt' }],
      },
    });
  });
  after(() => fake.close());

  test('step index = number of assistant messages (system entries ignored); past the end → "done"', async () => {
    const before = fake.requests.length;
    assert.equal(sseText((await post(fake, body('@script:three a'))).text), 'step zero');
    const one = [asstMsg('x'), userMsg([{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }]), envMsg];
    assert.equal(sseText((await post(fake, body('@script:three a', {}, one))).text), 'step one');
    const two = [...one, asstMsg('y'), userMsg('more')];
    assert.equal(sseText((await post(fake, body('@script:three a', {}, two))).text), 'done');
    assert.deepEqual(
      fake.requests.slice(before).map((r) => [r.script, r.step, r.outcome, r.status]),
      [
        ['three', 0, 'sent', 200],
        ['three', 1, 'sent', 200],
        ['three', 2, 'sent', 200],
      ],
    );
  });

  test('routes by the first @script marker of the prompt, then the system prompt, else default', async () => {
    assert.equal(sseText((await post(fake, body('run @script:dotted.name-1 and @script:three'))).text), 'dotted');
    // A marker closing a sentence still names the script.
    assert.equal(sseText((await post(fake, body('please run @script:sys.'))).text), 'routed by system prompt');
    assert.equal(sseText((await post(fake, body('no marker', { system: 'Agent role. @script:sys' }))).text), 'routed by system prompt');
    assert.equal(
      sseText((await post(fake, body('no marker', { system: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b @script:sys' }] }))).text),
      'routed by system prompt',
    );
    // Only the last text block of the first user message is the prompt: the reminder is not searched.
    const b = body('no marker here');
    (b.messages[0] as any).content[0].text = '<system-reminder>@script:three</system-reminder>';
    assert.equal(sseText((await post(fake, b)).text), 'the default script');
    assert.equal(sseText((await post(fake, body('@script:nope hi'))).text), 'no script named nope');
  });

  test('a string user content is a prompt too', async () => {
    const r = await post(fake, { model: 'm', stream: true, messages: [userMsg('@script:three plain')] });
    assert.equal(sseText(r.text), 'step zero');
  });

  test('custom route and addScript', async () => {
    const f = await startFakeAnthropic({ route: (b) => (b.metadata?.who === 'x' ? 'ex' : undefined) });
    try {
      f.addScript('ex', [{ text: 'routed by metadata' }]);
      f.addScript('default', [{ text: 'fallback to marker routing' }]);
      assert.equal(sseText((await post(f, body('@script:other', { metadata: { who: 'x' } }))).text), 'routed by metadata');
      assert.equal(sseText((await post(f, body('no marker'))).text), 'fallback to marker routing');
    } finally {
      await f.close();
    }
  });

  test('function scripts receive the full step context', async () => {
    const seen: StepContext[] = [];
    fake.addScript('ctx', (ctx) => {
      seen.push(ctx);
      return { text: `step ${ctx.step} saw ${ctx.lastToolResults.map((t) => t.text).join('|')}` };
    });
    const more = [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'Write', input: {} }] },
      userMsg([{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'File created', cache_control: { type: 'ephemeral' } }]),
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_b', name: 'X', input: {} }, { type: 'tool_use', id: 'toolu_c', name: 'Y', input: {} }] },
      userMsg([
        { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: 'part1' }, { type: 'text', text: 'part2' }] },
        { type: 'tool_result', tool_use_id: 'toolu_c', content: 'denied', is_error: true },
        { type: 'text', text: 'injected later' },
      ]),
      { role: 'system', content: 'env update' },
    ];
    const r = await post(fake, body('@script:ctx hi', { system: [{ type: 'text', text: 'S1' }, { type: 'text', text: 'S2' }] }, more));
    assert.equal(sseText(r.text), 'step 2 saw part1\npart2|denied');
    const ctx = seen[0]!;
    assert.equal(ctx.script, 'ctx');
    assert.equal(ctx.prompt, '@script:ctx hi');
    assert.equal(ctx.system, 'S1\nS2');
    assert.deepEqual(ctx.lastToolResults, [
      { tool_use_id: 'toolu_b', text: 'part1\npart2', is_error: false },
      { tool_use_id: 'toolu_c', text: 'denied', is_error: true },
    ]);
    assert.deepEqual(
      ctx.allToolResults.map((t) => t.tool_use_id),
      ['toolu_a', 'toolu_b', 'toolu_c'],
    );
    assert.deepEqual(ctx.userTexts, ['<system-reminder>noise</system-reminder>\n', '@script:ctx hi', 'injected later']);
    assert.equal(ctx.body.model, 'claude-test-model');
  });

  test('userTexts includes messages claude injected mid-turn as a role:"system" entry', async () => {
    // Shape captured from claude 2.1.330 (two stdin messages written during one turn).
    const note = (t: string) =>
      `The user sent a new message while you were working:\n${t}\n\nThis is how Claude Code surfaces messages the user sends mid-turn — within the running turn, often alongside the next tool result, rather than as a separate conversation turn. Address the message above as you continue this turn.`;
    let seen: StepContext | undefined;
    fake.addScript('midturn', (ctx) => {
      seen = ctx;
      return { text: 'ok' };
    });
    const more = [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'Write', input: {} }] },
      userMsg([{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'File created' }]),
      { role: 'system', content: [{ type: 'text', text: `${note('second message')}\n\n${note('line one\n\nline two')}`, cache_control: { type: 'ephemeral' } }] },
    ];
    await post(fake, body('@script:midturn first', {}, more));
    assert.deepEqual(seen!.userTexts.slice(1), ['@script:midturn first', 'second message', 'line one\n\nline two']);
    assert.equal(seen!.step, 1);
  });

  test('a throwing function script answers 400 with the message, and the server keeps serving', async () => {
    fake.addScript('boom', () => {
      throw new Error('kaboom');
    });
    const r = await post(fake, body('@script:boom'));
    assert.equal(r.status, 400);
    assert.match(JSON.parse(r.text).error.message, /kaboom/);
    assert.equal((await post(fake, body('@script:three'))).status, 200);
  });

  test('textOf joins text blocks and accepts strings', () => {
    assert.equal(textOf('a'), 'a');
    assert.equal(textOf([{ type: 'text', text: 'a' }, { type: 'tool_reference', tool_name: 'x' }, { type: 'text', text: 'b' }]), 'a\nb');
    assert.equal(textOf(undefined), '');
  });
});

describe('fake anthropic: errors, delays, robustness', () => {
  let fake: FakeAnthropic;
  before(async () => {
    fake = await startFakeAnthropic({
      scripts: {
        bad: [{ error: { status: 400, message: 'scripted bad request' } }],
        overloaded: [{ error: { status: 529, message: 'busy' } }],
        typed: [{ error: { status: 500, type: 'custom_error', message: 'custom' } }],
        slow: [{ text: 'late', delayMs: 300 }],
        veryslow: [{ text: 'never', delayMs: 60_000 }],
      },
    });
  });
  after(() => fake.close());

  test('error steps send the status and the Anthropic error body', async () => {
    const r = await post(fake, body('@script:bad'));
    assert.equal(r.status, 400);
    assert.deepEqual(JSON.parse(r.text), { type: 'error', error: { type: 'invalid_request_error', message: 'scripted bad request' } });
    const o = await post(fake, body('@script:overloaded'));
    assert.equal(o.status, 529);
    assert.equal(JSON.parse(o.text).error.type, 'overloaded_error');
    const t = await post(fake, body('@script:typed'));
    assert.equal(t.status, 500);
    assert.deepEqual(JSON.parse(t.text).error, { type: 'custom_error', message: 'custom' });
    const rec = await fake.waitForRequest((q) => q.script === 'typed', 1000);
    assert.equal(rec.outcome, 'error');
    assert.equal(rec.status, 500);
  });

  test('delayMs holds the answer back', async () => {
    const t0 = Date.now();
    const r = await post(fake, body('@script:slow'));
    assert.ok(Date.now() - t0 >= 290, `answered after ${Date.now() - t0} ms`);
    assert.equal(sseText(r.text), 'late');
  });

  test('a client abort during the delay ends the wait at once (outcome aborted)', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const pending = post(fake, body('@script:veryslow'), undefined, ac.signal);
    const arrived = await fake.waitForRequest((q) => q.script === 'veryslow', 5000);
    assert.equal(arrived.outcome, undefined, 'recorded on arrival, before the answer');
    ac.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    const done = await fake.waitForRequest((q) => q.script === 'veryslow' && q.outcome !== undefined, 5000);
    assert.equal(done.outcome, 'aborted');
    assert.ok(Date.now() - t0 < 10_000);
  });

  test('malformed bodies get 400 and do not hurt the server', async () => {
    const before = fake.requests.length;
    for (const bad of ['{not json', '[]', '"str"', JSON.stringify({ model: 'm', messages: 'nope' })]) {
      const r = await post(fake, bad);
      assert.equal(r.status, 400, `for ${bad}`);
      assert.equal(JSON.parse(r.text).type, 'error');
    }
    assert.equal(fake.requests.length, before, 'malformed requests are not recorded');
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

  test('count_tokens, and 404 for other routes and methods', async () => {
    const c = await post(fake, body('count me please'), '/v1/messages/count_tokens?beta=true');
    assert.equal(c.status, 200);
    const n = JSON.parse(c.text).input_tokens;
    assert.ok(Number.isInteger(n) && n > 10, `rough count ${n}`);
    assert.equal((await post(fake, body('x'), '/v1/other')).status, 404);
    assert.equal((await fetch(`${fake.url}/api/hello`, { method: 'HEAD' })).status, 404);
    const g = await fetch(`${fake.url}/v1/messages`);
    assert.equal(g.status, 404);
    assert.equal(((await g.json()) as { type: string }).type, 'error');
  });
});

describe('fake anthropic: waitForRequest and close', () => {
  test('resolves for an already-recorded request and for a later one; rejects on timeout', async () => {
    const fake = await startFakeAnthropic({ scripts: { a: [{ text: 'a' }], b: [{ text: 'b' }] } });
    try {
      await post(fake, body('@script:a'));
      const early = await fake.waitForRequest((r) => r.script === 'a', 10);
      assert.equal(early.step, 0);
      const later = fake.waitForRequest((r) => r.script === 'b', 5000);
      await post(fake, body('@script:b'));
      assert.equal((await later).script, 'b');
      await assert.rejects(fake.waitForRequest((r) => r.script === 'never', 50), /no matching request within 50 ms/);
    } finally {
      await fake.close();
    }
  });

  test('close() destroys open connections, fails pending waits, and is idempotent', async () => {
    const fake = await startFakeAnthropic({ scripts: { hang: [{ text: 'x', delayMs: 60_000 }] } });
    const pending = assert.rejects(post(fake, body('@script:hang')));
    await fake.waitForRequest((r) => r.script === 'hang', 5000);
    const waiting = assert.rejects(fake.waitForRequest(() => false, 60_000), /closed/);
    const t0 = Date.now();
    await fake.close();
    assert.ok(Date.now() - t0 < 5000);
    await pending;
    await waiting;
    assert.equal(fake.requests[0]!.outcome, 'aborted');
    await fake.close();
  });
});
