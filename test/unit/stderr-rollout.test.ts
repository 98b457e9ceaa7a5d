// The child's stderr file stays bounded to its last 1 MiB; Codex's rollout file is read as it
// grows, one model call per new token_count line, resumed threads from where they stood.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StderrLog } from '../../src/launch/stderrLog.js';
import { RolloutReader } from '../../src/launch/codex/rollout.js';

const dir = mkdtempSync(join(tmpdir(), 'ovs-stderr-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('StderrLog', () => {
  test('keeps everything while small, then at most 2× the cap while running and exactly the last cap bytes once closed', () => {
    const path = join(dir, 'a', 'attempt-1.stderr');
    const log = new StderrLog(path, 1000);
    log.write(Buffer.from('first line\n'));
    assert.equal(readFileSync(path, 'utf8'), 'first line\n', 'written as it comes');
    for (let i = 0; i < 50; i++) log.write(Buffer.from(`${String(i).padStart(4, '0')}${'x'.repeat(95)}\n`));
    assert.ok(statSync(path).size <= 2000, `size while running ${statSync(path).size}`);
    log.close();
    const text = readFileSync(path, 'utf8');
    assert.equal(text.length, 1000);
    assert.ok(text.endsWith(`0049${'x'.repeat(95)}\n`), 'the newest output is kept');
    assert.ok(!text.includes('first line'), 'the oldest is dropped');
    assert.match(log.text(200), /0049x+\n$/);
  });
});

const tokenCount = (ordinal: number, input: number, output: number): string =>
  `${JSON.stringify({ ordinal, type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { input_tokens: input, cached_input_tokens: 0, output_tokens: output } } } })}\n`;

describe('RolloutReader', () => {
  test('one call per new token_count line, tokens = the difference of running totals; a resumed thread starts at the end of its file', () => {
    const home = join(dir, 'codex-home');
    const day = join(home, 'sessions', '2026', '11', '24');
    mkdirSync(day, { recursive: true });
    const r = new RolloutReader(home, { model: 'm' });
    assert.deepEqual(r.read(), [], 'no thread yet');
    r.setSession('T1');
    assert.deepEqual(r.read(), [], 'no file yet');
    const file = join(day, 'rollout-2026-11-24T10-00-00-T1.jsonl');
    writeFileSync(file, `{"type":"session_meta"}\n${tokenCount(3, 100, 10)}`);
    const first = r.read();
    assert.equal(first.length, 1);
    assert.deepEqual(first[0], { kind: 'usage', callId: 'T1:3', model: 'm', usage: { input: 100, output: 10, cachedInput: 0 }, total: { input: 100, output: 10, cachedInput: 0 } });
    appendFileSync(file, `${tokenCount(5, 250, 30)}${tokenCount(6, 250, 30)}{"type":"event_msg","payload":{"type":"token_co`);
    const next = r.read();
    assert.equal(next.length, 1, 'a repeated total is not a new call; a half-written line waits');
    assert.deepEqual((next[0] as { usage: unknown }).usage, { input: 150, output: 20, cachedInput: 0 });
    appendFileSync(file, `unt"}}\n${tokenCount(8, 400, 35)}`);
    assert.deepEqual(r.read().map((s) => (s as { callId: string }).callId), ['T1:8']);

    const resumed = new RolloutReader(home, { resumeThread: 'T1', priorUsage: { input: 400, output: 35, cachedInput: 0 } });
    assert.deepEqual(resumed.read(), [], 'earlier turns are not counted again');
    appendFileSync(file, tokenCount(9, 500, 40));
    assert.deepEqual(resumed.read().map((s) => (s as { usage: unknown }).usage), [{ input: 100, output: 5, cachedInput: 0 }]);
  });
});
