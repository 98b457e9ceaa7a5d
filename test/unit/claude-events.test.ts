// parseClaudeLine on real-shaped stream-json samples (docs/cli-facts.md C4) and on garbage.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseClaudeLine, type ClaudeEvent } from '../../src/launch/claude/events.js';

function parse(obj: unknown): ClaudeEvent {
  const p = parseClaudeLine(JSON.stringify(obj));
  assert.ok(p.ok, `expected ok: ${JSON.stringify(p)}`);
  return p.event;
}
function as<K extends ClaudeEvent['kind']>(e: ClaudeEvent, kind: K): Extract<ClaudeEvent, { kind: K }> {
  assert.equal(e.kind, kind);
  return e as Extract<ClaudeEvent, { kind: K }>;
}

const SID = '8e75b1ac-168f-4167-91ae-6dab48f9cdf0';

describe('parseClaudeLine: real-shaped events', () => {
  test('system/init with connected and failed MCP servers', () => {
    const e = as(
      parse({
        type: 'system', subtype: 'init', cwd: '/abs/work', session_id: SID,
        tools: ['Task', 'Bash', 'Write', 'mcp__srv__echo', 42],
        mcp_servers: [
          { name: 'srv', status: 'connected', source: 'dynamic' },
          { name: 'overseer', status: 'failed', source: 'dynamic' },
          { status: 'connected' },
        ],
        model: 'claude-opus-5-5', claude_code_version: '2.1.330',
      }),
      'init',
    );
    assert.deepEqual([e.sessionId, e.model, e.cwd], [SID, 'claude-opus-5-5', '/abs/work']);
    assert.deepEqual(e.mcpServers, [{ name: 'srv', status: 'connected' }, { name: 'overseer', status: 'failed' }]);
    assert.deepEqual(e.tools, ['Task', 'Bash', 'Write', 'mcp__srv__echo']);
    assert.equal(e.raw.claude_code_version, '2.1.330');
  });

  test('init without mcp_servers / tools', () => {
    const e = as(parse({ type: 'system', subtype: 'init' }), 'init');
    assert.deepEqual([e.mcpServers, e.tools, e.model], [[], [], undefined]);
  });

  test('assistant tool_use for an MCP tool', () => {
    const e = as(
      parse({
        type: 'assistant',
        message: {
          id: 'msg_fake_6', role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_fake_6_0', name: 'mcp__srv__echo', input: { text: 'ping' } }],
          stop_reason: null, usage: { input_tokens: 100, output_tokens: 1 },
        },
        tool_use_meta: [{ id: 'toolu_fake_6_0', display_name: 'Echo', server_display_name: 'probe-stdio', tool_name: 'echo' }],
      }),
      'assistant',
    );
    assert.equal(e.messageId, 'msg_fake_6');
    assert.deepEqual(e.text, []);
    assert.deepEqual(e.toolUses, [{ id: 'toolu_fake_6_0', name: 'mcp__srv__echo', input: { text: 'ping' } }]);
    assert.equal(e.usage.input_tokens, 100);
  });

  test('assistant text block', () => {
    const e = as(parse({ type: 'assistant', message: { id: 'm', content: [{ type: 'text', text: 'I will write the file' }, { type: 'thinking', thinking: 'x' }] } }), 'assistant');
    assert.deepEqual(e.text, ['I will write the file']);
    assert.deepEqual(e.toolUses, []);
  });

  test('user tool_result with array content', () => {
    const e = as(
      parse({
        type: 'user',
        message: { role: 'user', content: [{ tool_use_id: 'toolu_fake_6_0', type: 'tool_result', content: [{ type: 'text', text: 'echo:ping pid=8114' }, { type: 'image', source: {} }, { type: 'text', text: 'line2' }] }] },
        tool_use_result: [{ type: 'text', text: 'echo:ping pid=8114' }],
      }),
      'tool_result',
    );
    assert.deepEqual(e.results, [{ toolUseId: 'toolu_fake_6_0', isError: false, text: 'echo:ping pid=8114\n[image]\nline2' }]);
  });

  test('user tool_result with string content and is_error', () => {
    const e = as(
      parse({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '<tool_use_error>Error: No such tool available: mcp__srv__echo</tool_use_error>', is_error: true }] } }),
      'tool_result',
    );
    assert.equal(e.results[0]?.isError, true);
    assert.match(e.results[0]?.text ?? '', /No such tool available/);
  });

  test('tool_result after ToolSearch (tool_reference block plus text)', () => {
    const e = as(
      parse({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'tool_reference', tool_name: 'mcp__srv__echo' }] }, { type: 'text', text: 'Tool loaded.' }] } }),
      'tool_result',
    );
    assert.equal(e.results[0]?.text, '[tool_reference]');
  });

  test('user interrupt marker as text (array and string content)', () => {
    const a = as(parse({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user for tool use]' }] } }), 'user_text');
    assert.equal(a.text, '[Request interrupted by user for tool use]');
    const b = as(parse({ type: 'user', message: { role: 'user', content: 'first via stdin' } }), 'user_text');
    assert.equal(b.text, 'first via stdin');
  });

  test('result success', () => {
    const e = as(
      parse({
        type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: 'hello from fake', stop_reason: 'end_turn',
        terminal_reason: 'completed', session_id: SID, total_cost_usd: 0.0008, api_error_status: null, permission_denials: [],
        modelUsage: { 'claude-opus-5-5': { costUSD: 0.0008 } },
      }),
      'result',
    );
    const { raw: _raw, ...fields } = e;
    assert.deepEqual(fields, {
      kind: 'result', isError: false, subtype: 'success', result: 'hello from fake', errors: undefined, sessionId: SID,
      numTurns: 1, totalCostUsd: 0.0008, costUsd: 0.0008 /* falls back to total_cost_usd */, costReported: true, terminalReason: 'completed',
      apiErrorStatus: null, stopReason: 'end_turn', permissionDenials: [],
    });
  });

  test('result error_max_turns', () => {
    const e = as(
      parse({ type: 'result', subtype: 'error_max_turns', is_error: true, num_turns: 2, stop_reason: 'tool_use', terminal_reason: 'max_turns', errors: ['Reached maximum number of turns (1)'], total_cost_usd: 0.0016 }),
      'result',
    );
    assert.deepEqual([e.isError, e.result, e.errors, e.terminalReason], [true, undefined, ['Reached maximum number of turns (1)'], 'max_turns']);
  });

  test('API 400: subtype success with is_error true', () => {
    const e = as(
      parse({ type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', result: 'API Error: 400 scripted bad request', api_error_status: 400, num_turns: 1, total_cost_usd: 0 }),
      'result',
    );
    assert.deepEqual([e.isError, e.apiErrorStatus, e.subtype], [true, 400, 'success']);
  });

  test('per-process cost: model_usage_since_last_result summed, not cumulative total', () => {
    const e = as(
      parse({
        type: 'result', subtype: 'success', is_error: false, total_cost_usd: 5.5,
        model_usage_since_last_result: { 'claude-opus-5-5': { costUSD: 0.25 }, 'claude-haiku': { costUSD: 0.125 }, junk: 3 },
        permission_denials: [{ tool_name: 'Write' }],
      }),
      'result',
    );
    assert.deepEqual([e.costUsd, e.totalCostUsd, e.permissionDenials.length], [0.375, 5.5, 1]);
  });

  test('result without is_error falls back to subtype; no cost → 0', () => {
    const e = as(parse({ type: 'result', subtype: 'error_during_execution' }), 'result');
    assert.deepEqual([e.isError, e.costUsd], [true, 0]);
  });

  test('system/api_retry and permission_denied', () => {
    const r = as(parse({ type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 1, retry_delay_ms: 500, error_status: 500, error: 'server_error' }), 'api_retry');
    assert.deepEqual([r.attempt, r.maxRetries, r.errorStatus, r.error], [1, 1, 500, 'server_error']);
    const o = as(parse({ type: 'system', subtype: 'api_retry', error_status: null, error: { type: 'overloaded' } }), 'api_retry');
    assert.deepEqual([o.errorStatus, o.error], [null, '{"type":"overloaded"}']);
    const d = as(parse({ type: 'system', subtype: 'permission_denied', tool_name: 'Write', tool_use_id: 't', message: 'Claude requested permissions to write' }), 'permission_denied');
    assert.equal(d.toolName, 'Write');
    assert.match(d.message ?? '', /requested permissions/);
  });

  test('other system subtypes, tool_progress, stream_event, unknown', () => {
    assert.equal(as(parse({ type: 'system', subtype: 'hook_response', outcome: 'error' }), 'system').subtype, 'hook_response');
    assert.equal(as(parse({ type: 'system' }), 'system').subtype, '');
    assert.equal(as(parse({ type: 'tool_progress', tool_name: 'mcp__srv__sleep', elapsed_time_seconds: 30 }), 'other').type, 'tool_progress');
    assert.equal(as(parse({ type: 'stream_event', event: { type: 'message_start' } }), 'other').type, 'stream_event');
    assert.equal(as(parse({ type: 'brand_new_thing' }), 'other').type, 'brand_new_thing');
  });

  test('malformed fields inside a typed event are tolerated', () => {
    const a = as(parse({ type: 'assistant', message: { content: [null, 3, { type: 'tool_use' }, { type: 'text', text: 7 }] } }), 'assistant');
    assert.deepEqual(a.toolUses, [{ id: '', name: '', input: undefined }]);
    assert.deepEqual(a.text, []);
    assert.equal(as(parse({ type: 'assistant', message: 'nope' }), 'assistant').text.length, 0);
    assert.equal(as(parse({ type: 'user' }), 'user_text').text, '');
    const r = as(parse({ type: 'result', is_error: 'yes', num_turns: 'x', errors: [1, 'b'], permission_denials: {} }), 'result');
    assert.equal(r.numTurns, undefined);
    assert.deepEqual(r.errors, ['1', 'b']);
    assert.deepEqual(r.permissionDenials, []);
  });
});

describe('parseClaudeLine: garbage', () => {
  const bad = ['not json', '[]', '{"no":"type"}', 'null', '{"type":"assistant","message":{"con', '', '   ', '42', '"str"', '{"type":""}', '{"type":7}', 'true', '\u0000\uFFFD'];
  for (const line of bad) {
    test(`rejects ${JSON.stringify(line)}`, () => {
      const p = parseClaudeLine(line);
      assert.equal(p.ok, false);
      if (!p.ok) {
        assert.equal(p.line, line);
        assert.ok(p.reason.length > 0);
      }
    });
  }

  test('never throws on random input', () => {
    let seed = 7;
    const rnd = (n: number): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    const alphabet = '{}[]":,typeresultsystemuser0123456789.-nul\\ ';
    for (let i = 0; i < 2000; i++) {
      let s = '';
      const len = rnd(60);
      for (let j = 0; j < len; j++) s += alphabet[rnd(alphabet.length)];
      assert.doesNotThrow(() => parseClaudeLine(s));
    }
  });
});
