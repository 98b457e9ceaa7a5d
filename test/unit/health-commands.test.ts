// commands_failed: which command results mean "never started" (src/launch/codex/commands.ts),
// the rule over an attempt's commands (src/floor/health.ts), and the rollout reader that finds
// them in a Codex rollout file, the only place they show when the sandbox cannot start.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { commandOutcome } from '../../src/launch/codex/commands.js';
import { commandsFailed } from '../../src/floor/health.js';
import { RolloutReader } from '../../src/launch/codex/rollout.js';

/** A unified-exec result as Codex 0.169.0 gives it to the model. */
const exec = (code: number, output: string): string => `Chunk ID: 459ede\nWall time: 0.0000 seconds\nProcess exited with code ${code}\nOriginal token count: 16\nOutput:\n${output}`;
const BWRAP = 'bwrap: execvp codex-linux-sandbox: No such file or directory';

describe('commandOutcome: did the command run?', () => {
  test('the sandbox could not start it (the text of the real failure)', () => {
    assert.deepEqual(commandOutcome(exec(1, `${BWRAP}\n`)), { started: false, exitCode: 1, reason: BWRAP });
  });

  test('other launcher and sandbox errors', () => {
    for (const line of [
      'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.',
      'bwrap: setting up uid map: Permission denied',
      "thread 'main' panicked at linux-sandbox/src/linux_run_main.rs:120:13: error applying Linux sandbox restrictions: x",
      'codex-linux-sandbox: nested sandbox refused',
      'Failed to execvp /bin/bash: No such file or directory',
    ]) assert.equal(commandOutcome(exec(1, `${line}\n`)).started, false, line);
    assert.deepEqual(commandOutcome('execution error: No such file or directory (os error 2)'), { started: false, exitCode: null, reason: 'execution error: No such file or directory (os error 2)' });
    assert.equal(commandOutcome('failed to spawn command: Permission denied (os error 13)').started, false);
  });

  test('a command that ran counts as started, whatever its exit code', () => {
    assert.deepEqual(commandOutcome(exec(0, 'hi\n')), { started: true, exitCode: 0 });
    assert.equal(commandOutcome(exec(1, "cat: missing.txt: No such file or directory\n")).started, true);
    assert.equal(commandOutcome(exec(127, 'bash: line 1: nosuchtool: command not found\n')).started, true);
    assert.equal(commandOutcome(exec(2, "ls: cannot access 'codex-linux-sandbox': No such file or directory\n")).started, true, 'the name in a normal error is not the helper failing');
    assert.equal(commandOutcome(exec(0, `${BWRAP}\n`)).started, true, 'exit 0: it ran (the command printed that text itself)');
    assert.equal(commandOutcome('Chunk ID: a\nWall time: 10.0 seconds\nProcess running with session ID 3\nOutput:\n').started, true, 'still running');
  });

  test("the classic shell tool's JSON result", () => {
    assert.equal(commandOutcome(JSON.stringify({ output: `${BWRAP}\n`, metadata: { exit_code: 1, duration_seconds: 0 } })).started, false);
    assert.equal(commandOutcome(JSON.stringify({ output: 'ok\n', metadata: { exit_code: 0, duration_seconds: 0 } })).started, true);
  });
});

describe('commandsFailed: the rule', () => {
  test('no command, or one that started: no warning', () => {
    assert.equal(commandsFailed({ run: 0, failedToStart: 0 }), undefined);
    assert.equal(commandsFailed({ run: 3, failedToStart: 2, reason: BWRAP }), undefined);
    assert.equal(commandsFailed({ run: 1, failedToStart: 0 }), undefined);
  });

  test('every command failed to start: the warning names the error and where to look', () => {
    for (const run of [1, 4]) {
      const d = commandsFailed({ run, failedToStart: run, reason: BWRAP });
      assert.ok(d);
      assert.match(d, /none of its shell commands started/);
      assert.ok(d.includes(BWRAP), d);
      assert.match(d, /overseer doctor/);
    }
  });
});

describe('RolloutReader: commands from the rollout file', () => {
  const home = mkdtempSync(join(os.tmpdir(), 'ovs-rollout-'));
  after(() => rmSync(home, { recursive: true, force: true }));
  const thread = '01a22316-f78d-7f00-a293-cdc61c3ceb3e';
  const day = join(home, 'sessions', '2026', '11', '28');
  mkdirSync(day, { recursive: true });
  const file = join(day, `rollout-2026-11-28T16-57-17-${thread}.jsonl`);
  const item = (payload: Record<string, unknown>): string => JSON.stringify({ timestamp: '2026-11-28T16:57:17.5Z', type: 'response_item', payload });

  test('a shell call and its output become one command signal; MCP calls, commands the hook refused and other lines do not', () => {
    writeFileSync(file, [
      JSON.stringify({ type: 'session_meta', payload: { id: thread } }),
      item({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"echo hi > out.txt"}', call_id: 'call_1' }),
      item({ type: 'function_call', name: 'mcp__overseer__finish', arguments: '{}', call_id: 'call_2' }),
      item({ type: 'function_call_output', call_id: 'call_2', output: 'bwrap: looks like a failure but is an MCP result' }),
      item({ type: 'function_call_output', call_id: 'call_1', output: exec(1, `${BWRAP}\n`) }),
      JSON.stringify({ type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { input_tokens: 100, output_tokens: 10 } } } }),
      item({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"echo x > held.txt"}', call_id: 'call_4' }),
      item({ type: 'function_call_output', call_id: 'call_4', output: 'Command blocked by PreToolUse hook: Overseer: held.txt is locked by j-2. Command: echo x > held.txt' }),
      item({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"true"}', call_id: 'call_3' }),
      '',
    ].join('\n'));
    const r = new RolloutReader(home, {});
    r.setSession(thread);
    const got = r.read();
    assert.deepEqual(got.filter((s) => s.kind === 'command'), [{ kind: 'command', callId: 'call_1', started: false, exitCode: 1, reason: BWRAP }]);
    assert.equal(got.filter((s) => s.kind === 'usage').length, 1);
    // The output of call_3 arrives later: read on from where it stopped.
    writeFileSync(file, `${item({ type: 'function_call_output', call_id: 'call_3', output: exec(0, '') })}\n`, { flag: 'a' });
    assert.deepEqual(r.read(), [{ kind: 'command', callId: 'call_3', started: true, exitCode: 0 }]);
  });
});
