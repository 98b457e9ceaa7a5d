// Unit: Codex `exec --json` transcripts (lines as recorded in docs/cli-facts.md X2) render as
// readable text through the same entry points as Claude's (renderTranscript / renderLine), so
// read_agent_output and `overseer logs` show Codex jobs; Claude lines in the same call still
// render; every field is capped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderLine, renderTranscript } from '../../src/launch/claude/transcript.js';
import { isCodexEvent, renderCodexEvent } from '../../src/launch/codex/transcript.js';

const RECORDED = [
  '{"type":"thread.started","thread_id":"01a2004f-222b-71e0-a713-c7dfcffa4794"}',
  '{"type":"turn.started"}',
  '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"**Thinking** about the answer"}}',
  '{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc \'echo hello-from-shell > out.txt && cat out.txt\'","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc \'echo hello-from-shell > out.txt && cat out.txt\'","aggregated_output":"hello-from-shell\\n","exit_code":0,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"/abs/work/hello.txt","kind":"add"}],"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"probe","tool":"echo","arguments":{"text":"ping"},"result":{"content":[{"type":"text","text":"echo: ping"}],"structured_content":null},"error":null,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_5","type":"mcp_tool_call","server":"probe","tool":"echo","arguments":{"text":"ping"},"result":null,"error":{"message":"MCP tool call requires approval, but approval policy is never"},"status":"failed"}}',
  '{"type":"item.completed","item":{"id":"item_6","type":"agent_message","text":"hi from fake model"}}',
  '{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":3,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":2}}',
];

test('a recorded Codex transcript renders one readable entry per meaningful event', () => {
  const out = renderTranscript(RECORDED, 100);
  assert.equal(out, [
    'init: codex thread 01a2004f-222b-71e0-a713-c7dfcffa4794',
    'warning: Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.',
    'reasoning: **Thinking** about the answer',
    "exec (running) /bin/bash -lc 'echo hello-from-shell > out.txt && cat out.txt'",
    "exec (exit 0) /bin/bash -lc 'echo hello-from-shell > out.txt && cat out.txt'",
    'hello-from-shell',
    'file_change completed: add /abs/work/hello.txt',
    'tool_use mcp__probe__echo {"text":"ping"}',
    'tool_result ok: echo: ping',
    'tool_use mcp__probe__echo {"text":"ping"}',
    'tool_result ERROR: MCP tool call requires approval, but approval policy is never',
    'assistant: hi from fake model',
    'result: success (thread tokens: 100 in, 10 out)',
  ].join('\n'));
});

test('a failed turn and a reconnect line are shown as such', () => {
  assert.equal(renderCodexEvent({ type: 'turn.failed', error: { message: 'stream disconnected before completion' } }), 'result: ERROR stream disconnected before completion');
  assert.equal(renderCodexEvent({ type: 'error', message: 'Reconnecting... 1/5 (boom)' }), 'error: Reconnecting... 1/5 (boom)');
  assert.equal(renderCodexEvent({ type: 'turn.started' }), '');
});

test('Codex and Claude lines are told apart per line; Claude lines keep their own rendering', () => {
  assert.equal(isCodexEvent({ type: 'item.completed' }), true);
  assert.equal(isCodexEvent({ type: 'assistant' }), false);
  const claude = '{"type":"assistant","timestamp":"2026-11-24T10:11:12.000Z","message":{"id":"m1","content":[{"type":"text","text":"hello"}]}}';
  assert.equal(renderTranscript([RECORDED[0]!, claude], 10), 'init: codex thread 01a2004f-222b-71e0-a713-c7dfcffa4794\nassistant: hello');
  // With timestamps: the event's own time, or a blank column when it has none (Codex lines).
  assert.equal(renderLine(claude, { timestamps: true }), '10:11:12 assistant: hello');
  assert.equal(renderLine(RECORDED[9]!, { timestamps: true }), `${' '.repeat(9)}assistant: hi from fake model`);
});

test('fields are capped (command output, messages)', () => {
  const big = 'x'.repeat(5000);
  const out = renderCodexEvent({ type: 'item.completed', item: { type: 'command_execution', command: 'cat big', aggregated_output: big, exit_code: 0 } }, 100);
  const [, body] = out.split('\n');
  assert.equal(body!.length, 100);
  assert.ok(body!.endsWith('…'));
});
