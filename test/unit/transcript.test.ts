// Transcript rendering: one readable line per event, truncation that keeps the end, hard caps.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseClaudeLine, type ClaudeEvent } from '../../src/launch/claude/events.js';
import { renderEvent, renderTranscript, tailJson, truncate } from '../../src/launch/claude/transcript.js';

const j = (o: unknown): string => JSON.stringify(o);
function ev(o: unknown): ClaudeEvent {
  const p = parseClaudeLine(j(o));
  assert.ok(p.ok);
  return p.event;
}

const INIT = { type: 'system', subtype: 'init', model: 'claude-x', mcp_servers: [{ name: 'overseer', status: 'connected' }, { name: 'git', status: 'failed' }] };
const TEXT = { type: 'assistant', message: { id: 'm1', content: [{ type: 'text', text: 'I will write the file' }] } };
const TOOL = { type: 'assistant', message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'Write', input: { file_path: '/w/a.txt', content: 'hi' } }] } };
const OK = { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'File created successfully' }] } };
const ERR = { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'denied', is_error: true }] } };
const RESULT = { type: 'result', subtype: 'success', is_error: false, num_turns: 2, total_cost_usd: 0.0016, result: 'hello' };

describe('renderEvent', () => {
  test('each kind', () => {
    assert.equal(renderEvent(ev(INIT)), 'init: model claude-x, mcp overseer=connected, git=failed');
    assert.equal(renderEvent(ev(TEXT)), 'assistant: I will write the file');
    assert.equal(renderEvent(ev(TOOL)), 'tool_use Write {"file_path":"/w/a.txt","content":"hi"}');
    assert.equal(renderEvent(ev(OK)), 'tool_result ok: File created successfully');
    assert.equal(renderEvent(ev(ERR)), 'tool_result ERROR: denied');
    assert.equal(renderEvent(ev(RESULT)), 'result: success ($0.0016) hello');
    assert.equal(renderEvent(ev({ type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 1, error_status: 500 })), 'api_retry 1/1: status 500');
    assert.equal(renderEvent(ev({ type: 'system', subtype: 'permission_denied', tool_name: 'Write', message: 'not granted' })), 'permission_denied Write: not granted');
    assert.equal(renderEvent(ev({ type: 'user', message: { content: [{ type: 'text', text: '[Request interrupted by user]' }] } })), 'user: [Request interrupted by user]');
    assert.equal(renderEvent(ev({ type: 'tool_progress', tool_name: 'mcp__srv__sleep', elapsed_time_seconds: 30 })), 'tool_progress mcp__srv__sleep 30s');
    assert.equal(renderEvent(ev({ type: 'system', subtype: 'informational', content: 'auto mode unavailable' })), 'info: auto mode unavailable');
    assert.equal(renderEvent(ev({ type: 'system', subtype: 'hook_response', hook_name: 'PreToolUse:Write', outcome: 'error', output: 'blocked\n' })), 'hook PreToolUse:Write error: blocked');
  });

  test('noise renders as empty', () => {
    assert.equal(renderEvent(ev({ type: 'stream_event', event: { type: 'message_start' } })), '');
    assert.equal(renderEvent(ev({ type: 'system', subtype: 'status', status: 'requesting' })), '');
    assert.equal(renderEvent(ev({ type: 'mystery' })), '');
  });

  test('error results name the reason', () => {
    assert.equal(
      renderEvent(ev({ type: 'result', subtype: 'error_max_turns', is_error: true, num_turns: 2, total_cost_usd: 0.0016, errors: ['Reached maximum number of turns (1)'] })),
      'result: ERROR error_max_turns ($0.0016) Reached maximum number of turns (1)',
    );
    assert.equal(
      renderEvent(ev({ type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', api_error_status: 400, num_turns: 1, result: 'API Error: 400 bad' })),
      'result: ERROR api_error status 400 ($0.0000) API Error: 400 bad',
    );
  });

  test('fields are truncated with an ellipsis', () => {
    const big = { type: 'assistant', message: { content: [{ type: 'tool_use', id: 't', name: 'Write', input: { content: 'x'.repeat(10_000) } }] } };
    const out = renderEvent(ev(big), { maxFieldChars: 100 });
    assert.ok(out.startsWith('tool_use Write {"content":"xxx'));
    assert.ok(out.endsWith('…'));
    assert.equal(out.length, 'tool_use Write '.length + 100);
  });

  test('truncate never splits a surrogate pair', () => {
    assert.equal(truncate('ab🎉cd', 4), 'ab…');
    assert.equal(truncate('abc', 3), 'abc');
  });
});

describe('renderTranscript', () => {
  test('tail, unparsed lines and skipped noise', () => {
    const lines = [j(INIT), j(TEXT), 'garbage{' + 'z'.repeat(500), j({ type: 'stream_event' }), j(TOOL), j(OK), j(RESULT)];
    const all = renderTranscript(lines, 100);
    assert.equal(all.split('\n').length, 6);
    assert.ok(all.includes(`[unparsed] garbage{${'z'.repeat(191)}…`));
    assert.ok(!all.includes('z'.repeat(200)));
    assert.equal(renderTranscript(lines, 2), 'tool_result ok: File created successfully\nresult: success ($0.0016) hello');
    assert.equal(renderTranscript(lines, 0), '');
  });

  test('maxChars respected for 10,000 big events; the end is kept', () => {
    const lines: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      lines.push(j({ type: 'assistant', message: { content: [{ type: 'text', text: `event ${i} ` + 'y'.repeat(5000) }] } }));
    }
    lines.push(j(RESULT));
    const out = renderTranscript(lines, 10_001, { maxChars: 20_000 });
    assert.ok(out.length <= 20_000, `length ${out.length}`);
    assert.match(out, /^… \(\d+ earlier characters omitted\)\n/);
    assert.ok(out.endsWith('result: success ($0.0016) hello'));
    assert.ok(out.includes('event 9999 '));
    const omitted = Number(/\((\d+) earlier/.exec(out)?.[1]);
    const full = renderTranscript(lines, 10_001, { maxChars: Number.MAX_SAFE_INTEGER });
    assert.equal(full.length - omitted, out.length - out.indexOf('\n') - 1, 'omitted count is exact');
  });

  test('tiny maxChars still bounded', () => {
    for (const max of [1, 5, 30, 41, 100]) {
      assert.ok(renderTranscript([j(TEXT), j(TOOL), j(RESULT)], 10, { maxChars: max }).length <= max);
    }
  });
});

describe('tailJson', () => {
  test('parsed raw objects with deep string truncation', () => {
    const deep = { type: 'user', message: { content: [{ type: 'tool_result', content: [{ type: 'text', text: 'q'.repeat(5000) }] }] } };
    const out = tailJson([j(INIT), j(deep), 'oops'], 2, { maxFieldChars: 50 }) as any[];
    assert.equal(out.length, 2);
    const text: string = out[0].message.content[0].content[0].text;
    assert.equal(text.length, 50);
    assert.ok(text.endsWith('…'));
    assert.deepEqual(out[1], { type: 'unparsed', line: 'oops' });
  });

  test('serialized size under maxChars, oldest dropped first', () => {
    const lines = Array.from({ length: 1000 }, (_, i) => j({ type: 'assistant', i, message: { content: [{ type: 'text', text: 'w'.repeat(3000) }] } }));
    const out = tailJson(lines, 1000, { maxChars: 20_000, maxFieldChars: 1000 }) as any[];
    assert.ok(JSON.stringify(out).length <= 20_000);
    assert.ok(out.length > 5 && out.length < 1000);
    assert.equal(out.at(-1).i, 999);
    assert.equal(out[0].i, 1000 - out.length);
  });

  test('one entry too large on its own becomes a stub', () => {
    const wide = { type: 'assistant', ...Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v'.repeat(500)])) };
    const out = tailJson([j(wide)], 1, { maxChars: 2000 }) as any[];
    assert.equal(out.length, 1);
    assert.equal(out[0].type, 'assistant');
    assert.match(out[0].omitted, /entry too large/);
  });
});
