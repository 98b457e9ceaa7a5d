// The supervisor (src/services/supervisor.ts) on its own: a real child process (the scripted
// stand-in for `claude -p --input-format stream-json`, test/fixtures/fake-claude.mjs, launched by
// the real NodeLauncher and the real Claude launcher and parser), an injected clock the test
// moves by hand, and every hook recorded. Each test waits on a recorded hook or on the outcome,
// with a deadline; the only polling is for facts that have no event (a process stopped in /proc,
// a file's content).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Supervisor, type AttemptOutcome, type Progress, type SupervisorHooks } from '../../src/services/supervisor.js';
import { ClaudeLauncher } from '../../src/launch/claude/launcher.js';
import { NodeLauncher } from '../../src/launch/process.js';
import { StartGate } from '../../src/launch/startGate.js';
import type { AgentLauncher, LaunchSpec } from '../../src/launch/types.js';
import type { ToolOutcome } from '../../src/confine/hookLedger.js';
import type { LineLimit } from '../../src/limits/signals.js';
import type { Clock } from '../../src/clock.js';
import { alive, eventually, procStopped } from '../helpers/wait.js';

const FAKE_CLAUDE = fileURLToPath(new URL('../fixtures/fake-claude.mjs', import.meta.url));
const MODEL = 'claude-sonnet-4-5';

/** A step of the fixture's script (see test/fixtures/fake-claude.mjs). */
type Step = Record<string, unknown>;

/** Stream-json events as Claude Code prints them ("$SESSION": the fixture's session id). */
const ev = {
  init: (status = 'connected'): Step => ({ out: { type: 'system', subtype: 'init', session_id: '$SESSION', model: MODEL, tools: ['Read'], mcp_servers: [{ name: 'overseer', status }] } }),
  text: (id: string, text: string, usage?: Record<string, number>): Step => ({
    out: { type: 'assistant', session_id: '$SESSION', message: { id, model: MODEL, role: 'assistant', content: [{ type: 'text', text }], ...(usage ? { usage } : {}) } },
  }),
  toolUse: (id: string, toolId: string, name: string, input: Record<string, unknown>): Step => ({
    out: { type: 'assistant', session_id: '$SESSION', message: { id, model: MODEL, role: 'assistant', content: [{ type: 'tool_use', id: toolId, name, input }] } },
  }),
  toolResult: (toolId: string, text: string): Step => ({ out: { type: 'user', session_id: '$SESSION', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolId, content: text }] } } }),
  result: (text: string, extra: Record<string, unknown> = {}): Step => ({
    out: { type: 'result', subtype: 'success', is_error: false, result: text, session_id: '$SESSION', num_turns: 1, total_cost_usd: 0, ...extra },
  }),
};
/** Print the replay of the message being answered (Claude took it). */
const REPLAY: Step = { replay: true };

class ManualClock implements Clock {
  t = 1_750_000_000_000;
  now(): number { return this.t; }
  advance(ms: number): void { this.t += ms; }
}

type Seen =
  | { hook: 'started'; pid: number | undefined }
  | { hook: 'session'; id: string }
  | { hook: 'progress'; p: Progress }
  | { hook: 'idle' }
  | { hook: 'toolUses'; ids: string[] }
  | { hook: 'toolResults'; results: ToolOutcome[] }
  | { hook: 'activity'; what?: string }
  | { hook: 'transcript'; line: string }
  | { hook: 'limit'; l: LineLimit }
  | { hook: 'modelAnswer' }
  | { hook: 'startWait'; ahead: number }
  | { hook: 'startSlot'; waitedMs: number }
  | { hook: 'log'; level: number; msg: string; obj: Record<string, unknown> };
type Of<K extends Seen['hook']> = Extract<Seen, { hook: K }>;

/** Everything the supervisor told its hooks and its log, in order; waits on it with a deadline. */
class Recorder {
  readonly seen: Seen[] = [];
  private readonly waiters = new Set<() => void>();

  push(e: Seen): void {
    this.seen.push(e);
    for (const w of [...this.waiters]) w();
  }

  of<K extends Seen['hook']>(hook: K): Of<K>[] {
    return this.seen.filter((e): e is Of<K> => e.hook === hook);
  }

  until<K extends Seen['hook']>(hook: K, pred: (e: Of<K>) => boolean = () => true, timeoutMs = 10_000): Promise<Of<K>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${hook}; seen: ${this.seen.map((e) => e.hook).join(', ')}`));
      }, timeoutMs);
      const check = (): void => {
        const e = this.of(hook).find(pred);
        if (!e) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(e);
      };
      this.waiters.add(check);
      check();
    });
  }

  hooks(): SupervisorHooks {
    return {
      onStarted: (pid) => this.push({ hook: 'started', pid }),
      onSession: (id) => this.push({ hook: 'session', id }),
      onProgress: (p) => this.push({ hook: 'progress', p }),
      onIdle: () => this.push({ hook: 'idle' }),
      onToolUses: (ids) => this.push({ hook: 'toolUses', ids }),
      onToolResults: (results) => this.push({ hook: 'toolResults', results }),
      onActivity: (what) => this.push({ hook: 'activity', what }),
      onTranscriptLine: (line) => this.push({ hook: 'transcript', line }),
      onLimit: (l) => this.push({ hook: 'limit', l }),
      onModelAnswer: () => this.push({ hook: 'modelAnswer' }),
      onStartWait: (ahead) => this.push({ hook: 'startWait', ahead }),
      onStartSlot: (waitedMs) => this.push({ hook: 'startSlot', waitedMs }),
    };
  }

  /** The activity lines that said something (turns), in order. */
  said(): string[] {
    return this.of('activity').flatMap((e) => (e.what === undefined ? [] : [e.what]));
  }

  logged(msg: string): Of<'log'>[] {
    return this.of('log').filter((e) => e.msg === msg);
  }
}

function within<T>(p: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const supervisors: Supervisor[] = [];
const dirs: string[] = [];
const orphans: number[] = [];
after(async () => {
  for (const s of supervisors) if (!s.ended) s.stop('cancelled');
  await within(Promise.all(supervisors.map((s) => s.done)), 'every attempt to end');
  for (const pid of orphans) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface AttemptOptions {
  timeoutMs?: number;
  budgetUsd?: number;
  killGraceMs?: number;
  launcher?: AgentLauncher;
  startGate?: StartGate;
  reported?: 'success' | 'failure';
  /** Hooks that replace the recording ones. */
  hooks?: Partial<SupervisorHooks>;
}

/** A supervisor over the fake claude, its clock, its recorder and its files. */
function attempt(o: AttemptOptions = {}) {
  const dir = mkdtempSync(join(os.tmpdir(), 'ov-sup-'));
  dirs.push(dir);
  const clock = new ManualClock();
  const rec = new Recorder();
  const log = pino({ level: 'debug' }, {
    write: (s: string) => {
      const obj = JSON.parse(s) as Record<string, unknown>;
      rec.push({ hook: 'log', level: obj.level as number, msg: String(obj.msg), obj });
    },
  });
  const transcriptPath = join(dir, 'attempt-1.jsonl');
  const stderrPath = join(dir, 'attempt-1.stderr');
  const sup = new Supervisor({
    launcher: o.launcher ?? new ClaudeLauncher({ bin: FAKE_CLAUDE }),
    processes: new NodeLauncher(),
    clock,
    log,
    transcriptPath,
    stderrPath,
    timeoutMs: o.timeoutMs ?? 60_000,
    budgetUsd: o.budgetUsd,
    killGraceMs: o.killGraceMs ?? 5_000,
    reportedOutcome: () => o.reported,
    startGate: o.startGate,
  }, { ...rec.hooks(), ...o.hooks });
  supervisors.push(sup);
  const spec: LaunchSpec = {
    jobId: `j-sup-${randomUUID().slice(0, 8)}`,
    message: '',
    cwd: dir,
    sessionId: randomUUID(),
    resume: false,
    mcpUrl: 'http://127.0.0.1:9/mcp',
    token: 'test-token',
    appendSystemPrompt: 'you are a test child',
    env: { PATH: process.env.PATH },
    mcpTimeoutMs: 10_000,
  };
  return {
    sup, rec, clock, dir, spec, transcriptPath, stderrPath,
    /** Start the attempt; its first message is this script. */
    start(steps: Step[]): void { sup.start({ ...spec, message: JSON.stringify(steps) }); },
    outcome: (): Promise<AttemptOutcome> => within(sup.done, 'the attempt to end'),
    /** The transcript file's lines, once it holds `n` (it is written asynchronously). */
    transcript: (n: number): Promise<string[]> => eventually(`${n} lines in the transcript`, () => {
      const lines = readFileSync(transcriptPath, 'utf8').split('\n').filter(Boolean);
      return lines.length === n && lines;
    }),
  };
}

test('a whole turn: session from init, turns and activity from assistant lines, cost and tokens settled by the result, then stdin closes and the child exits', async () => {
  const a = attempt();
  a.start([
    ev.init(),
    REPLAY,
    ev.text('msg_1', 'Reading the file', { input_tokens: 1000, output_tokens: 100 }),
    ev.toolUse('msg_1', 'toolu_1', 'Read', { file_path: '/x/a.ts' }),
    ev.toolResult('toolu_1', 'export const a = 1;'),
    ev.text('msg_2', 'All good.\nNothing to change.', { input_tokens: 1200, output_tokens: 200 }),
    ev.result('finished', { total_cost_usd: 0.0123, usage: { input_tokens: 2200, output_tokens: 300 }, structured_output: { verdict: 'clean' } }),
  ]);
  // The attempt's time is the injected clock's.
  a.clock.advance(4321);
  const o = await a.outcome();

  assert.equal(o.ok, true, o.error);
  assert.deepEqual(o.exit, { code: 0, signal: null }, 'the child exited by itself once the supervisor closed its stdin');
  assert.equal(o.sessionId, a.spec.sessionId);
  assert.equal(o.sessionStarted, true);
  assert.equal(o.turns, 2, 'two message ids: msg_1 (text and tool call) and msg_2');
  assert.equal(o.costUsd, 0.0123, "the result's figure replaces the estimate");
  assert.deepEqual(o.tokens, { input: 2200, output: 300, cachedInput: 0, cacheCreation: 0 });
  assert.equal(o.resultText, 'finished');
  assert.equal(o.stopReason, undefined);
  assert.equal(o.sawErrorResult, false);
  assert.deepEqual(o.structured, { verdict: 'clean' }, "the result's structured_output (runs with --json-schema)");
  assert.equal(o.durationMs, 4321);

  const r = a.rec;
  assert.equal(typeof r.of('started')[0]?.pid, 'number');
  assert.deepEqual(r.of('session').map((e) => e.id), [a.spec.sessionId]);
  assert.deepEqual(r.said(), ['Reading the file', '→ Read /x/a.ts', 'All good.']);
  assert.deepEqual(r.of('toolUses').map((e) => e.ids), [['toolu_1']]);
  assert.deepEqual(r.of('toolResults').map((e) => e.results), [[{ toolUseId: 'toolu_1', name: 'Read', isError: false, text: 'export const a = 1;' }]]);
  assert.equal(r.of('idle').length, 1);
  assert.ok(r.of('modelAnswer').length >= 2, 'each assistant message is a model answer');
  const progress = r.of('progress').map((e) => e.p);
  // The first model call is reported at once, priced by the table: 1000 in × $3/M + 100 out × $15/M.
  assert.equal(progress[0]?.turns, 1);
  assert.ok(Math.abs(progress[0]!.costUsd - 0.0045) < 1e-9, `first estimate ${progress[0]?.costUsd}`);
  assert.deepEqual(progress.at(-1), { turns: 2, costUsd: 0.0123, costUnknown: false, tokens: o.tokens, lastText: 'finished' }, 'the final state is reported before done');

  // On disk by the time the outcome is reported: `overseer logs` right after the end sees the result.
  const onDisk = readFileSync(a.transcriptPath, 'utf8').split('\n').filter(Boolean);
  assert.equal(onDisk.length, 7, 'the transcript was not flushed when the attempt ended');
  const lines = await a.transcript(7);
  assert.deepEqual(r.of('transcript').map((e) => e.line), lines, 'every transcript line went to the index too');
  assert.match(lines[0]!, /"subtype":"init"/);
  assert.match(lines[6]!, /"type":"result"/);
});

test('lines that are not events are logged and kept in the transcript; the stream goes on', async () => {
  const a = attempt();
  a.start([ev.init(), REPLAY, { line: 'this is not json {' }, { line: '[1,2]' }, { line: '{"no":"type"}' }, ev.text('msg_1', 'still here'), ev.result('still fine')]);
  const o = await a.outcome();
  assert.equal(o.ok, true, o.error);
  assert.equal(o.resultText, 'still fine');
  const reasons = a.rec.logged('non-event line from child').map((e) => String(e.obj.reason));
  assert.equal(reasons.length, 3, reasons.join(' | '));
  assert.match(reasons[0]!, /^not JSON/);
  assert.match(reasons[1]!, /not a JSON object \(array\)/);
  assert.match(reasons[2]!, /missing "type"/);
  assert.deepEqual(a.rec.said(), ['still here']);
  const lines = await a.transcript(7);
  assert.equal(lines[2], 'this is not json {');
});

test('a hook that throws on one line is logged; the rest of the stream is handled and the attempt ends on its result', async () => {
  const a = attempt({ hooks: { onSession: () => { throw new Error('the store refused the write'); } } });
  a.start([ev.init(), REPLAY, ev.text('msg_1', 'after the failure'), ev.result('done anyway')]);
  const o = await a.outcome();
  assert.equal(o.ok, true, o.error);
  assert.equal(o.sessionId, a.spec.sessionId, 'the session id was taken before the hook failed');
  assert.equal(o.resultText, 'done anyway');
  assert.deepEqual(a.rec.said(), ['after the failure']);
  const errors = a.rec.logged('handling a line of the child stream failed');
  assert.equal(errors.length, 1);
  assert.match(JSON.stringify(errors[0]!.obj.err), /the store refused the write/);
});

test('a message delivered mid-turn is answered before stdin closes: idle once, after the last result', async () => {
  const a = attempt();
  a.start([ev.init(), REPLAY, ev.text('msg_1', 'working on it'), { waitInput: true }, ev.result('first answer')]);
  await a.rec.until('activity', (e) => e.what === 'working on it');
  assert.equal(a.sup.acceptsInput(), true);
  assert.equal(a.sup.deliver(JSON.stringify([REPLAY, ev.text('msg_2', 'read your message'), ev.result('second answer')])), true);
  const o = await a.outcome();
  assert.equal(o.ok, true, o.error);
  assert.equal(o.turns, 2);
  assert.equal(o.resultText, 'second answer');
  const idle = a.rec.seen.findIndex((e) => e.hook === 'idle');
  const second = a.rec.seen.findIndex((e) => e.hook === 'transcript' && e.line.startsWith('{"type":"result"') && e.line.includes('"second answer"'));
  assert.equal(a.rec.of('idle').length, 1, 'the first result came while the second message was unconsumed: not idle then');
  assert.ok(second >= 0 && idle > second, 'idle only after the second result');
  assert.equal(a.sup.acceptsInput(), false, 'nothing can be written to an ended attempt');
  assert.equal(a.sup.deliver('too late'), false);
});

test('a result that puts the attempt over its budget stops the child', async () => {
  const a = attempt({ budgetUsd: 0.01 });
  a.start([ev.init(), REPLAY, ev.result('expensive', { total_cost_usd: 0.05 })]);
  const o = await a.outcome();
  assert.equal(o.failureClass, 'budget');
  assert.equal(o.stopReason, 'budget');
  assert.equal(o.costUsd, 0.05);
  assert.equal(o.exit.signal, 'SIGTERM');
  assert.equal(a.rec.of('idle').length, 0, 'a stopped attempt is not idle');
});

test("the live estimate of a model call over the budget stops the child before any result", async () => {
  const a = attempt({ budgetUsd: 1 });
  // 1M input tokens of claude-sonnet-4-5: $3.
  a.start([ev.init(), REPLAY, ev.text('msg_1', 'a big read', { input_tokens: 1_000_000, output_tokens: 0 }), { hang: true }]);
  const o = await a.outcome();
  assert.equal(o.failureClass, 'budget');
  assert.ok(Math.abs(o.costUsd - 3) < 1e-9, `cost ${o.costUsd}`);
  assert.equal(o.exit.signal, 'SIGTERM');
});

test('partial-message usage counts toward cost but is not kept in the transcript; a cancelled child keeps the estimate', async () => {
  const a = attempt();
  a.start([
    ev.init(),
    REPLAY,
    { out: { type: 'stream_event', session_id: '$SESSION', event: { type: 'message_start', message: { id: 'msg_p', model: MODEL, usage: { input_tokens: 1_000_000, output_tokens: 1 } } } } },
    { out: { type: 'stream_event', session_id: '$SESSION', api_message_id: 'msg_p', event: { type: 'message_delta', usage: { output_tokens: 100_000 } } } },
    ev.text('msg_v', 'progress note'),
    { hang: true },
  ]);
  await a.rec.until('activity', (e) => e.what === 'progress note');
  a.sup.stop('cancelled');
  const o = await a.outcome();
  assert.equal(o.failureClass, 'cancelled');
  // $3 for 1M input, $1.50 for 100k output.
  assert.ok(Math.abs(o.costUsd - 4.5) < 1e-9, `cost ${o.costUsd}`);
  assert.deepEqual(o.tokens, { input: 1_000_000, output: 100_000, cachedInput: 0, cacheCreation: 0 });
  assert.ok(a.rec.of('modelAnswer').length >= 1, 'usage from the API is a model answering');
  // (The replay of the script names them: only a line that is one counts.)
  const partial = (l: string): boolean => l.startsWith('{"type":"stream_event"');
  assert.ok(!a.rec.of('transcript').some((e) => partial(e.line)), 'partial messages are not transcript lines');
  const lines = await a.transcript(3);
  assert.ok(!lines.some(partial));
});

test('init without the overseer MCP server connected stops the child as mcp_unavailable', async () => {
  const a = attempt();
  a.start([ev.init('failed'), REPLAY, { hang: true }]);
  const o = await a.outcome();
  assert.equal(o.failureClass, 'mcp_unavailable');
  assert.equal(o.stopReason, 'mcp_unavailable');
  assert.equal(o.sessionId, a.spec.sessionId, 'the session is known all the same');
  const warn = a.rec.logged('overseer MCP server not connected in child');
  assert.equal(warn.length, 1);
  assert.equal(warn[0]!.obj.status, 'failed');
});

test('a process that exits without a result line fails as crashed, with its exit code and stderr in the reason', async () => {
  const a = attempt();
  a.start([ev.init(), REPLAY, ev.text('msg_1', 'half way'), { stderr: 'fatal: lost the connection to the API\n' }, { exit: 3 }]);
  const o = await a.outcome();
  assert.equal(o.ok, false);
  assert.equal(o.failureClass, 'crashed');
  assert.equal(o.error, 'the process ended (exit code 3) without a result: fatal: lost the connection to the API');
  assert.deepEqual(o.exit, { code: 3, signal: null });
  assert.equal(o.turns, 1);
  assert.equal(o.sessionStarted, true);
  assert.equal(o.resultText, 'half way', 'the last text stands in for a result');
  assert.equal(readFileSync(a.stderrPath, 'utf8'), 'fatal: lost the connection to the API\n');
});

test("a provider limit the CLI retries is reported; Claude's synthetic error message is no model answer; a 429 result is rate_limited", async () => {
  const a = attempt();
  const apiError = 'API Error: Request rejected (429) · slow down';
  a.start([
    ev.init(),
    REPLAY,
    { out: { type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 10, retry_delay_ms: 500, error_status: 429, error: 'rate_limit', session_id: '$SESSION' } },
    { out: { type: 'assistant', session_id: '$SESSION', message: { id: 'synthetic-1', model: '<synthetic>', role: 'assistant', content: [{ type: 'text', text: apiError }] } } },
    ev.result(apiError, { is_error: true, api_error_status: 429, terminal_reason: 'api_error' }),
  ]);
  const o = await a.outcome();
  assert.equal(o.failureClass, 'rate_limited');
  assert.equal(o.sawErrorResult, true);
  assert.deepEqual(a.rec.of('limit').map((e) => e.l), [{ hit: { kind: 'rate_limit', status: 429, retryAfterMs: 500, message: 'API 429 rate_limit' }, retrying: true }]);
  assert.equal(a.rec.of('modelAnswer').length, 0);
});

test('the agent reporting failure through finish makes a clean exit a reported_failure', async () => {
  const a = attempt({ reported: 'failure' });
  a.start([ev.init(), REPLAY, ev.result('could not do it')]);
  const o = await a.outcome();
  assert.equal(o.failureClass, 'reported_failure');
  assert.deepEqual(o.exit, { code: 0, signal: null });
});

test("the timeout fires on the injected clock's time left, frozen time not counted", async () => {
  const a = attempt({ timeoutMs: 60_000 });
  a.start([ev.init(), REPLAY, ev.text('msg_1', 'thinking'), { hang: true }]);
  await a.rec.until('activity', (e) => e.what === 'thinking');
  // 10 ms of the minute left when it is frozen; frozen for a long while; thawed, it has its 10 ms.
  a.clock.advance(59_990);
  assert.equal(a.sup.freeze(), true);
  a.clock.advance(1_000_000);
  assert.equal(a.sup.frozenMs(), 1_000_000);
  assert.equal(a.sup.thaw(), true);
  const o = await a.outcome();
  assert.equal(o.failureClass, 'timeout');
  assert.equal(o.stopReason, 'timeout');
  assert.equal(o.error, 'the attempt ran past its timeout_s and was stopped');
  assert.equal(o.exit.signal, 'SIGTERM');
  assert.equal(o.durationMs, 1_059_990);
});

test('freeze stops the process group and refuses messages; thaw resumes it with its time left, and the message is answered', async () => {
  const a = attempt({ timeoutMs: 60_000 });
  a.start([ev.init(), REPLAY, ev.text('msg_1', 'waiting for you'), { waitInput: true }, ev.result('first answer')]);
  await a.rec.until('activity', (e) => e.what === 'waiting for you');
  const pid = a.sup.pid!;
  a.clock.advance(1_000);
  assert.equal(a.sup.freeze(), true);
  assert.equal(a.sup.freeze(), false, 'already frozen');
  await eventually('the child to be stopped', () => procStopped(pid));
  assert.equal(a.sup.acceptsInput(), false);
  assert.equal(a.sup.deliver(JSON.stringify([REPLAY, ev.result('too early')])), false, 'no message into a frozen child');
  // Frozen past the whole timeout: the time left (59 s) is kept, so thawing does not end it.
  a.clock.advance(120_000);
  assert.equal(a.sup.frozenMs(), 120_000);
  assert.equal(a.sup.thaw(), true);
  assert.equal(a.sup.thaw(), false, 'not frozen any more');
  await eventually('the child to run again', () => !procStopped(pid));
  assert.equal(a.sup.deliver(JSON.stringify([REPLAY, ev.text('msg_2', 'thawed'), ev.result('second answer')])), true);
  const o = await a.outcome();
  assert.equal(o.ok, true, o.error);
  assert.equal(o.resultText, 'second answer');
  assert.equal(a.sup.frozenMs(), 120_000);
});

test('stop: SIGTERM, then SIGKILL after the grace period; the first reason wins', async () => {
  const a = attempt({ killGraceMs: 200 });
  a.start([ev.init(), REPLAY, { ignoreTerm: true }, ev.text('msg_1', 'stubborn'), { hang: true }]);
  await a.rec.until('activity', (e) => e.what === 'stubborn');
  a.sup.stop('cancelled');
  a.sup.stop('timeout');
  const o = await a.outcome();
  assert.equal(o.stopReason, 'cancelled');
  assert.equal(o.failureClass, 'cancelled');
  assert.equal(o.exit.signal, 'SIGKILL');
  assert.equal(a.sup.ended, true);
});

test('no binary found: the attempt ends at once as binary_not_found, with the hint', async () => {
  const a = attempt({ launcher: new ClaudeLauncher({ pathEnv: join(os.tmpdir(), 'no-such-dir') }) });
  a.start([ev.init()]);
  const o = await a.outcome();
  assert.equal(o.failureClass, 'binary_not_found');
  assert.match(o.error!, /^no claude binary found\. Install Claude Code/);
  assert.equal(a.rec.of('started').length, 0);
  assert.equal(a.sup.pid, undefined);
});

test('a binary that cannot be run: binary_not_found naming it, with the hint', async () => {
  const missing = join(os.tmpdir(), `no-such-claude-${randomUUID()}`);
  const a = attempt({ launcher: new ClaudeLauncher({ bin: missing }) });
  a.start([ev.init()]);
  const o = await a.outcome();
  assert.equal(o.failureClass, 'binary_not_found');
  assert.equal(o.error, `cannot run ${missing}: no such file. Install Claude Code (npm i -g @anthropic-ai/claude-code) or set CLAUDE_BIN to the path of the claude binary.`);
  assert.deepEqual(a.rec.of('started').map((e) => e.pid), [undefined]);
});

test('the start gate: a start waits for a slot, takes it when the one ahead connects, and one stopped while waiting ends without a process', async () => {
  const gate = new StartGate({ concurrency: () => 1, holdMs: 600_000 });
  const first = attempt({ startGate: gate });
  const second = attempt({ startGate: gate });
  const third = attempt({ startGate: gate });
  // The first prints nothing until it gets a second message: only startReleased frees its slot.
  first.start([{ waitInput: true }, ev.init(), REPLAY, ev.result('first')]);
  second.start([ev.init(), REPLAY, ev.result('second')]);
  third.start([ev.init(), REPLAY, ev.result('third')]);
  assert.equal(first.rec.of('startWait').length, 0, 'a free slot: no wait');
  assert.deepEqual(second.rec.of('startWait').map((e) => e.ahead), [0]);
  assert.deepEqual(third.rec.of('startWait').map((e) => e.ahead), [1]);
  assert.equal(second.sup.pid, undefined, 'not launched while it waits');

  third.sup.stop('cancelled');
  const t = await third.outcome();
  assert.equal(t.failureClass, 'cancelled');
  assert.deepEqual(t.exit, { code: null, signal: null });
  assert.equal(third.rec.of('started').length, 0);
  assert.equal(gate.waiting, 1);

  second.clock.advance(700);
  first.sup.startReleased();
  assert.deepEqual(second.rec.of('startSlot').map((e) => e.waitedMs), [700], 'the wait is measured on the injected clock');
  assert.equal(typeof second.sup.pid, 'number');
  const s = await second.outcome();
  assert.equal(s.ok, true, s.error);
  assert.equal(s.resultText, 'second');

  assert.equal(first.sup.deliver(JSON.stringify([REPLAY, ev.result('first, again')])), true);
  const f = await first.outcome();
  assert.equal(f.ok, true, f.error);
  assert.equal(f.resultText, 'first, again');
  assert.equal(gate.inFlight, 0);
});

test('settleLost settles an attempt whose exit never arrives (a descendant outside the group holds its pipes)', async () => {
  const a = attempt();
  a.start([ev.init(), REPLAY, { orphan: true }, ev.result('done')]);
  const line = await a.rec.until('transcript', (e) => e.line.startsWith('{"type":"fixture"'));
  orphans.push((JSON.parse(line.line) as { orphan_pid: number }).orphan_pid);
  await a.rec.until('idle');
  const pid = a.sup.pid!;
  await eventually('the child to exit', () => !alive(pid));
  assert.equal(a.sup.ended, false, 'its stdout is still open: no exit yet');
  a.sup.settleLost(50);
  const o = await a.outcome();
  assert.equal(o.ok, true, o.error);
  assert.deepEqual(o.exit, { code: null, signal: null });
  assert.equal(o.resultText, 'done');
});
