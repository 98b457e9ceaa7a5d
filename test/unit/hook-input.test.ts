// Unit: the shape check of a POST /hook body (found by the adversarial suite: null or a
// non-string cwd used to reach the lock service and answer 500).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkHookInput } from '../../src/domain/hookInput.js';

test('non-objects and wrongly typed fields are refused with a reason naming them', () => {
  for (const [body, word] of [[null, 'object'], [[], 'object'], [42, 'object'], ['s', 'object'], [{ cwd: 5 }, 'cwd'], [{ cwd: {} }, 'cwd'], [{ tool_name: 1 }, 'tool_name'], [{ tool_input: 'x' }, 'tool_input'], [{ tool_input: [] }, 'tool_input'], [{ tool_input: null }, 'tool_input']] as const) {
    const r = checkHookInput(body);
    assert.equal(r.ok, false, JSON.stringify(body));
    if (!r.ok) assert.match(r.reason, new RegExp(word));
  }
});

test('a well-formed input passes through unchanged', () => {
  const body = { tool_name: 'Write', cwd: '/tmp/x', tool_input: { file_path: 'a' }, session_id: 's' };
  const r = checkHookInput(body);
  assert.ok(r.ok);
  if (r.ok) assert.equal(r.input, body);
  assert.ok(checkHookInput({}).ok);
});
