// classifyAttempt over realistic Claude Code `result` shapes (docs/cli-facts.md C4),
// spawn errors, signals and the hub's own stop reasons; isRetryable for every class.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { classifyAttempt, isRetryable, type AttemptFacts, type StopReason } from '../../src/domain/failure.js';
import { FAILURE_CLASSES, type FailureClass } from '../../src/domain/job.js';

// `result` events as Claude Code 2.1.330 emits them (the fields the classifier reads plus a few
// others, as in §4.2).
const RESULT = {
  success: { type: 'result', subtype: 'success', is_error: false, result: 'hello from fake', stop_reason: 'end_turn', terminal_reason: 'completed', api_error_status: null, num_turns: 1 },
  maxTurns: { type: 'result', subtype: 'error_max_turns', is_error: true, terminal_reason: 'max_turns', errors: ['Reached maximum number of turns (1)'], num_turns: 2, stop_reason: 'tool_use', api_error_status: null },
  maxBudget: { type: 'result', subtype: 'error_max_budget_usd', is_error: true, terminal_reason: 'budget_exhausted', errors: ['Reached maximum budget ($0.001)'], api_error_status: null },
  api400: { type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', result: 'API Error: 400 scripted bad request', api_error_status: 400 },
  api401: { type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', result: 'Invalid API key · Fix external API key', api_error_status: 401 },
  api429: { type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', result: 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}', api_error_status: 429 },
  api529: { type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', result: 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', api_error_status: 529 },
  api500: { type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', result: 'API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}', api_error_status: 500 },
  resumeUnknown: { type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: null, errors: ['No conversation found with session ID: 3c5b03e7-1490-44c8-9235-d893874a87e6'], num_turns: 0, api_error_status: null },
  sigintAborted: { type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_tools', errors: ['[ede_diagnostic] aborted'], api_error_status: null },
} satisfies Record<string, NonNullable<AttemptFacts['lastResult']> & { type: string; [extra: string]: unknown }>;

function cls(f: AttemptFacts): FailureClass | undefined {
  const c = classifyAttempt(f);
  if (c.ok) {
    assert.equal(c.failureClass, undefined, 'an ok attempt has no failure class');
    return undefined;
  }
  assert.ok(c.error && c.error.length > 0, 'a failed attempt carries an error text');
  return c.failureClass;
}

describe('classifyAttempt: result events', () => {
  test('normal end (success, exit 0) → ok', () => {
    assert.deepEqual(classifyAttempt({ lastResult: RESULT.success, exitCode: 0, signal: null }), { ok: true });
  });

  test('success with the agent reporting success → ok', () => {
    assert.deepEqual(classifyAttempt({ lastResult: RESULT.success, exitCode: 0, reportedOutcome: 'success' }), { ok: true });
  });

  test('success but finish(outcome: failure) → reported_failure', () => {
    const c = classifyAttempt({ lastResult: RESULT.success, exitCode: 0, reportedOutcome: 'failure' });
    assert.equal(c.ok, false);
    assert.equal(c.failureClass, 'reported_failure');
    assert.match(c.error ?? '', /failure/);
  });

  test('error_max_turns → max_turns, error text from errors[]', () => {
    const c = classifyAttempt({ lastResult: RESULT.maxTurns, exitCode: 1 });
    assert.equal(c.ok, false);
    assert.equal(c.failureClass, 'max_turns');
    assert.equal(c.error, 'Reached maximum number of turns (1)');
  });

  test('terminal_reason max_turns alone is enough', () => {
    assert.equal(cls({ lastResult: { is_error: true, subtype: 'error_during_execution', terminal_reason: 'max_turns' }, exitCode: 1 }), 'max_turns');
  });

  test('error_max_turns with no text falls back to a default message', () => {
    const c = classifyAttempt({ lastResult: { is_error: true, subtype: 'error_max_turns' }, exitCode: 1 });
    assert.equal(c.failureClass, 'max_turns');
    assert.match(c.error ?? '', /max_turns/);
  });

  test('error_max_budget_usd → budget', () => {
    const c = classifyAttempt({ lastResult: RESULT.maxBudget, exitCode: 1 });
    assert.equal(c.ok, false);
    assert.equal(c.failureClass, 'budget');
    assert.equal(c.error, 'Reached maximum budget ($0.001)');
  });

  test('terminal_reason budget_exhausted alone is enough', () => {
    assert.equal(cls({ lastResult: { is_error: true, terminal_reason: 'budget_exhausted' }, exitCode: 1 }), 'budget');
  });

  test('API 400 (subtype success, is_error true) → api_error with the API text', () => {
    const c = classifyAttempt({ lastResult: RESULT.api400, exitCode: 1 });
    assert.equal(c.ok, false);
    assert.equal(c.failureClass, 'api_error');
    assert.equal(c.error, 'API Error: 400 scripted bad request');
  });

  test('API 401 "Invalid API key" → auth', () => {
    const c = classifyAttempt({ lastResult: RESULT.api401, exitCode: 1 });
    assert.equal(c.failureClass, 'auth');
    assert.match(c.error ?? '', /Invalid API key/);
  });

  test('"Invalid API key" text without a status → auth', () => {
    assert.equal(cls({ lastResult: { ...RESULT.api401, api_error_status: null }, exitCode: 1 }), 'auth');
  });

  test('403 → auth', () => {
    assert.equal(cls({ lastResult: { ...RESULT.api400, result: 'API Error: 403 forbidden', api_error_status: 403 }, exitCode: 1 }), 'auth');
  });

  test('API 429 → rate_limited', () => {
    assert.equal(cls({ lastResult: RESULT.api429, exitCode: 1 }), 'rate_limited');
  });

  test('429 status alone (no rate-limit text) → rate_limited', () => {
    assert.equal(cls({ lastResult: { is_error: true, subtype: 'success', terminal_reason: 'api_error', result: 'API Error', api_error_status: 429 }, exitCode: 1 }), 'rate_limited');
  });

  test('API 529 overloaded → rate_limited', () => {
    assert.equal(cls({ lastResult: RESULT.api529, exitCode: 1 }), 'rate_limited');
  });

  test('API 500 → api_error', () => {
    const c = classifyAttempt({ lastResult: RESULT.api500, exitCode: 1 });
    assert.equal(c.failureClass, 'api_error');
    assert.match(c.error ?? '', /500/);
  });

  test('terminal_reason api_error without a status → api_error', () => {
    assert.equal(cls({ lastResult: { is_error: true, subtype: 'success', terminal_reason: 'api_error', result: 'something odd' }, exitCode: 1 }), 'api_error');
  });

  test('--resume of an unknown session (error_during_execution) → crashed with the errors text', () => {
    const c = classifyAttempt({ lastResult: RESULT.resumeUnknown, exitCode: 1, stderrTail: 'No conversation found with session ID: …' });
    assert.equal(c.failureClass, 'crashed');
    assert.match(c.error ?? '', /No conversation found/);
  });

  test('SIGINT during a tool (is_error, exit 0) → crashed, not ok', () => {
    assert.equal(cls({ lastResult: RESULT.sigintAborted, exitCode: 0 }), 'crashed');
  });

  test('is_error with no text at all → crashed naming the subtype', () => {
    const c = classifyAttempt({ lastResult: { is_error: true, subtype: 'error_during_execution' }, exitCode: 1 });
    assert.equal(c.failureClass, 'crashed');
    assert.match(c.error ?? '', /error_during_execution/);
  });

  test('result and errors[] are both part of the error text', () => {
    const c = classifyAttempt({ lastResult: { is_error: true, subtype: 'error_during_execution', result: 'first', errors: ['second', 'third'] }, exitCode: 1 });
    assert.equal(c.error, 'first; second; third');
  });

  test('an error result wins over the agent reporting success', () => {
    assert.equal(cls({ lastResult: RESULT.api500, exitCode: 1, reportedOutcome: 'success' }), 'api_error');
  });
});

describe('classifyAttempt: no result', () => {
  test('SIGKILL with no result → crashed, naming the signal', () => {
    const c = classifyAttempt({ exitCode: null, signal: 'SIGKILL' });
    assert.equal(c.ok, false);
    assert.equal(c.failureClass, 'crashed');
    assert.match(c.error ?? '', /SIGKILL/);
    assert.match(c.error ?? '', /without a result/);
  });

  test('non-zero exit with no result → crashed, naming the code and the stderr tail', () => {
    const c = classifyAttempt({ exitCode: 3, signal: null, stderrTail: 'Error: something broke\n' });
    assert.equal(c.failureClass, 'crashed');
    assert.match(c.error ?? '', /exit code 3/);
    assert.match(c.error ?? '', /something broke/);
  });

  test('exit 0 with no result is still a failure (crashed)', () => {
    assert.equal(cls({ exitCode: 0, signal: null }), 'crashed');
  });

  test('unknown exit → says unknown', () => {
    assert.match(classifyAttempt({}).error ?? '', /unknown/);
  });

  test('stderr "Invalid API key" with no result → auth', () => {
    const c = classifyAttempt({ exitCode: 1, stderrTail: 'Invalid API key · Please run /login' });
    assert.equal(c.failureClass, 'auth');
  });

  test('stderr "Not logged in" with no result → auth', () => {
    assert.equal(cls({ exitCode: 1, stderrTail: 'Not logged in · Please run /login' }), 'auth');
  });

  test('a huge stderr tail is cut to its last 500 characters', () => {
    const tail = `${'x'.repeat(5000)}END`;
    const c = classifyAttempt({ exitCode: 1, stderrTail: tail });
    assert.ok((c.error ?? '').length < 700, `error length ${(c.error ?? '').length}`);
    assert.ok((c.error ?? '').endsWith('END'));
  });

  test('reportedOutcome success does not rescue a missing result', () => {
    assert.equal(cls({ exitCode: null, signal: 'SIGKILL', reportedOutcome: 'success' }), 'crashed');
  });
});

describe('classifyAttempt: spawn errors', () => {
  test('spawn ENOENT → binary_not_found with the message', () => {
    const c = classifyAttempt({ spawnError: { code: 'ENOENT', message: 'spawn /opt/nope/claude ENOENT' } });
    assert.equal(c.ok, false);
    assert.equal(c.failureClass, 'binary_not_found');
    assert.equal(c.error, 'spawn /opt/nope/claude ENOENT');
  });

  test('spawn EACCES → binary_not_found', () => {
    assert.equal(cls({ spawnError: { code: 'EACCES', message: 'spawn claude EACCES' } }), 'binary_not_found');
  });

  test('other spawn error → crashed', () => {
    assert.equal(cls({ spawnError: { code: 'EMFILE', message: 'spawn EMFILE' } }), 'crashed');
    assert.equal(cls({ spawnError: { message: 'weird' } }), 'crashed');
  });

  test('a spawn error wins over a stop reason', () => {
    assert.equal(cls({ spawnError: { code: 'ENOENT', message: 'spawn claude ENOENT' }, stopReason: 'timeout' }), 'binary_not_found');
  });
});

describe('classifyAttempt: hub stop reasons', () => {
  const cases: [StopReason, FailureClass, RegExp][] = [
    ['timeout', 'timeout', /timeout/],
    ['budget', 'budget', /budget/],
    ['cancelled', 'cancelled', /cancel/],
    ['stopped', 'interrupted', /pause_agent/],
    ['hub_shutdown', 'interrupted', /shut down/],
    ['mcp_unavailable', 'mcp_unavailable', /MCP/],
    ['hook_bypassed', 'hook_bypassed', /without the lock hook deciding/],
  ];
  for (const [reason, want, msg] of cases) {
    test(`${reason} → ${want}`, () => {
      const c = classifyAttempt({ stopReason: reason, exitCode: null, signal: 'SIGTERM' });
      assert.equal(c.ok, false);
      assert.equal(c.failureClass, want);
      assert.match(c.error ?? '', msg);
    });

    test(`${reason} wins over whatever result the killed process printed`, () => {
      assert.equal(cls({ stopReason: reason, lastResult: RESULT.sigintAborted, exitCode: 0 }), want);
      assert.equal(cls({ stopReason: reason, lastResult: RESULT.success, exitCode: 0, reportedOutcome: 'success' }), want);
    });
  }
});

describe('isRetryable', () => {
  const notRetryable = new Set<FailureClass>(['cancelled', 'binary_not_found', 'auth', 'dependency_failed', 'budget', 'interrupted', 'hook_bypassed', 'setup_failed', 'dependency_conflict']);
  for (const c of FAILURE_CLASSES) {
    test(`${c} → ${notRetryable.has(c) ? 'not retryable' : 'retryable'}`, () => {
      assert.equal(isRetryable(c), !notRetryable.has(c));
    });
  }
});
