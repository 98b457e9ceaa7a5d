// Unit: which rows of a transcript line go into the search index — Claude stream-json (shapes as
// recorded in docs/cli-facts.md C4 and the claude-events fixtures) and Codex `exec --json`
// (as in codex-transcript.test.ts): assistant text, tool calls with their input, tool results,
// capped; noise yields nothing; a result is named after the call it answers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chunks, extractLine, MAX_ROW_CHARS, MAX_TEXT_ROWS, ToolNames } from '../../src/search/extract.js';

const NOW = Date.parse('2026-11-22T00:00:00Z');
const x = (v: unknown): ReturnType<typeof extractLine> => extractLine(JSON.stringify(v), NOW);

const ASSISTANT = {
  type: 'assistant',
  message: {
    id: 'msg_fake_6', type: 'message', role: 'assistant', model: 'claude-opus-5-5',
    content: [
      { type: 'thinking', thinking: 'secret musing about zebras' },
      { type: 'text', text: 'I will run the tests now.' },
      { type: 'tool_use', id: 'toolu_fake_6_0', name: 'mcp__srv__echo', input: { text: 'ping' } },
      { type: 'tool_use', id: 'toolu_fake_6_1', name: 'Bash', input: { command: 'npm test -- --grep parser' } },
    ],
    usage: { input_tokens: 100, output_tokens: 1 },
  },
  parent_tool_use_id: null, session_id: '8e75', uuid: 'u1', timestamp: '2026-11-21T22:51:02.534Z',
};
const RESULT = {
  type: 'user',
  message: { role: 'user', content: [{ tool_use_id: 'toolu_fake_6_0', type: 'tool_result', content: [{ type: 'text', text: 'echo:ping pid=8114' }, { type: 'image', source: {} }, { type: 'text', text: 'line2' }] }] },
  parent_tool_use_id: null, session_id: '8e75', timestamp: '2026-11-21T22:51:03.000Z',
  tool_use_result: [{ type: 'text', text: 'echo:ping pid=8114' }],
};

describe('Claude stream-json', () => {
  test('assistant text and tool calls become rows; thinking does not; the event time is kept', () => {
    const r = x(ASSISTANT);
    assert.equal(r.at, Date.parse('2026-11-21T22:51:02.534Z'));
    assert.deepEqual(r.rows, [
      { kind: 'text', text: 'I will run the tests now.' },
      { kind: 'tool_call', tool: 'mcp__srv__echo', text: 'mcp__srv__echo {"text":"ping"}', toolUseId: 'toolu_fake_6_0' },
      { kind: 'tool_call', tool: 'Bash', text: 'Bash {"command":"npm test -- --grep parser"}', toolUseId: 'toolu_fake_6_1' },
    ]);
  });

  test('tool_result blocks become rows (text blocks joined, others as [type]); an error result too', () => {
    assert.deepEqual(x(RESULT).rows, [{ kind: 'tool_result', text: 'echo:ping pid=8114\n[image]\nline2', toolUseId: 'toolu_fake_6_0' }]);
    const err = x({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '<tool_use_error>Error: No such tool available</tool_use_error>', is_error: true }] } });
    assert.equal(err.rows[0]!.text, '<tool_use_error>Error: No such tool available</tool_use_error>');
  });

  test('a result is named after its call; an unknown call leaves it unnamed', () => {
    const names = new ToolNames();
    const call = x(ASSISTANT).rows;
    names.resolve(call);
    const res = x(RESULT).rows;
    names.resolve(res);
    assert.equal(res[0]!.tool, 'mcp__srv__echo');
    // Answered: forgotten, so a second result with that id is not named again.
    const again = x(RESULT).rows;
    names.resolve(again);
    assert.equal(again[0]!.tool, undefined);
  });

  test('noise yields nothing: init, result, stream_event, user text, tool_progress, system, garbage', () => {
    const lines = [
      { type: 'system', subtype: 'init', session_id: 's', tools: ['Bash'], mcp_servers: [] },
      { type: 'result', subtype: 'success', is_error: false, result: 'I will run the tests now.', total_cost_usd: 0.01 },
      { type: 'stream_event', event: { type: 'content_block_delta', delta: { type: 'text_delta', text: 'I will' } } },
      { type: 'user', message: { role: 'user', content: 'please also fix the linter' } },
      { type: 'tool_progress', tool_use_id: 't', tool_name: 'Bash', elapsed_time_seconds: 30 },
      { type: 'system', subtype: 'status', status: 'compacting' },
      { type: 'assistant', message: { content: [{ type: 'text', text: '   ' }] } },
    ];
    for (const l of lines) assert.deepEqual(x(l).rows, [], JSON.stringify(l));
    assert.deepEqual(extractLine('not json at all', NOW).rows, []);
    assert.deepEqual(extractLine('{"type":', NOW).rows, []);
    assert.deepEqual(extractLine('[1,2]', NOW).rows, []);
    assert.deepEqual(extractLine('', NOW).rows, []);
  });

  test('a timestamp that is garbled or far in the future is not used', () => {
    assert.equal(x({ ...ASSISTANT, timestamp: 'yesterday' }).at, undefined);
    assert.equal(x({ ...ASSISTANT, timestamp: '2999-01-01T00:00:00Z' }).at, undefined);
    assert.equal(x({ ...ASSISTANT, timestamp: '1970-01-02T00:00:00Z' }).at, undefined);
  });

  test('tool inputs and results are capped; long text is split into rows, words kept whole', () => {
    const big = x({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't', name: 'Write', input: { content: 'y'.repeat(10_000) } }] } }).rows[0]!;
    assert.equal(big.text.length, MAX_ROW_CHARS);
    assert.ok(big.text.endsWith('…'));
    const res = x({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't', content: 'z'.repeat(9000) }] } }).rows[0]!;
    assert.equal(res.text.length, MAX_ROW_CHARS);
    const words = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(' ');
    const rows = x({ type: 'assistant', message: { content: [{ type: 'text', text: words }] } }).rows;
    assert.ok(rows.length > 1 && rows.length <= MAX_TEXT_ROWS);
    for (const r of rows) assert.ok(r.text.length <= MAX_ROW_CHARS);
    assert.equal(rows.map((r) => r.text).join(' '), words);
  });
});

describe('Codex exec --json', () => {
  const item = (it: Record<string, unknown>, type = 'item.completed'): ReturnType<typeof extractLine> => x({ type, item: it });

  test('agent messages, commands with their output, MCP calls with results or errors, patches, web searches', () => {
    assert.deepEqual(item({ id: 'item_6', type: 'agent_message', text: 'hi from fake model' }).rows, [{ kind: 'text', text: 'hi from fake model' }]);
    assert.deepEqual(item({ id: 'item_2', type: 'command_execution', command: "/bin/bash -lc 'echo hello-from-shell > out.txt && cat out.txt'", aggregated_output: 'hello-from-shell\n', exit_code: 0, status: 'completed' }).rows, [
      { kind: 'tool_call', tool: 'shell', text: "shell /bin/bash -lc 'echo hello-from-shell > out.txt && cat out.txt'" },
      { kind: 'tool_result', tool: 'shell', text: 'hello-from-shell\n' },
    ]);
    assert.deepEqual(item({ id: 'item_4', type: 'mcp_tool_call', server: 'probe', tool: 'echo', arguments: { text: 'ping' }, result: { content: [{ type: 'text', text: 'echo: ping' }], structured_content: null }, error: null, status: 'completed' }).rows, [
      { kind: 'tool_call', tool: 'mcp__probe__echo', text: 'mcp__probe__echo {"text":"ping"}' },
      { kind: 'tool_result', tool: 'mcp__probe__echo', text: 'echo: ping' },
    ]);
    assert.deepEqual(item({ id: 'item_5', type: 'mcp_tool_call', server: 'probe', tool: 'echo', arguments: { text: 'ping' }, result: null, error: { message: 'MCP tool call requires approval' }, status: 'failed' }).rows[1],
      { kind: 'tool_result', tool: 'mcp__probe__echo', text: 'MCP tool call requires approval' });
    assert.deepEqual(item({ id: 'item_3', type: 'file_change', changes: [{ path: '/abs/work/hello.txt', kind: 'add' }], status: 'completed' }).rows,
      [{ kind: 'tool_call', tool: 'apply_patch', text: 'apply_patch add /abs/work/hello.txt' }]);
    assert.deepEqual(item({ id: 'w', type: 'web_search', query: 'sqlite fts5 trigram' }).rows, [{ kind: 'tool_call', tool: 'web_search', text: 'web_search sqlite fts5 trigram' }]);
  });

  test('a command without output gives only its call; Codex lines carry no time of their own', () => {
    const r = item({ id: 'c', type: 'command_execution', command: 'true', aggregated_output: '', exit_code: 0 });
    assert.deepEqual(r.rows.map((row) => row.kind), ['tool_call']);
    assert.equal(r.at, undefined);
  });

  test('noise yields nothing: started items, reasoning, warnings, todo lists, thread and turn events', () => {
    const lines = [
      { type: 'thread.started', thread_id: '01a2' },
      { type: 'turn.started' },
      { type: 'item.started', item: { id: 'item_2', type: 'command_execution', command: 'ls', aggregated_output: '', status: 'in_progress' } },
      { type: 'item.completed', item: { id: 'item_1', type: 'reasoning', text: '**Thinking** about zebras' } },
      { type: 'item.completed', item: { id: 'item_0', type: 'error', message: 'Model metadata not found' } },
      { type: 'item.completed', item: { id: 't', type: 'todo_list', items: [{ text: 'a', completed: false }] } },
      { type: 'turn.completed', usage: { input_tokens: 100, output_tokens: 10 } },
      { type: 'turn.failed', error: { message: 'stream disconnected' } },
      { type: 'error', message: 'Reconnecting... 1/5' },
    ];
    for (const l of lines) assert.deepEqual(x(l).rows, [], JSON.stringify(l));
  });
});

test('chunks: pieces within the size, cut at whitespace, never inside a surrogate pair, bounded', () => {
  assert.deepEqual(chunks('short', 10, 3), ['short']);
  const emoji = '😀'.repeat(10); // 20 UTF-16 units, no whitespace
  const parts = chunks(emoji, 5, 10);
  for (const p of parts) assert.ok(!/[\ud800-\udbff]$/.test(p) && !/^[\udc00-\udfff]/.test(p), JSON.stringify(p));
  assert.equal(parts.join(''), emoji);
  const capped = chunks('a '.repeat(100), 10, 2);
  assert.equal(capped.length, 2);
  assert.ok(capped[1]!.endsWith('…'));
});
