// End-to-end, the headline (issue 28): a real `claude -p` lead on the fake model calls
// run_script through `overseer mcp` (the bridge starts the hub as a process of its own) with a
// script that fans out three real claude children with parallel, pipes their answers into a
// fourth that answers with a JSON Schema, and logs. Once two children have finished and the third
// is in the middle of its turn (the fake model holds its answer), the hub is killed with SIGKILL.
// A later Overseer tool call (an MCP client over `overseer mcp`, as the next window would make)
// starts a new hub, and the run completes by itself: the journal answers the two finished
// reviews, the third goes on in its own session, the judge runs live. The fake model saw exactly
// one conversation per agent. Needs `npm run build` first.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { promptOf, startFakeAnthropic, type Script, type Step } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir, runClaude } from '../helpers/claude.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { alive, eventually } from '../helpers/wait.js';
import { killStateAndRemove } from '../helpers/stateKill.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
/** What the hub tells an agent it continues after a restart (prompts/run-hub-restart.md). */
const RESTARTED = /The hub that ran you stopped while you worked/;

const SCRIPT = `export const meta = { name: 'durable-review', description: 'three reviews, one verdict, across a hub crash' }
phase('Review')
const reviews = await parallel(args.map((f) => () => agent('@script:review review file ' + f, { label: f, max_turns: 6 })))
log(reviews.filter(Boolean).length + ' reviews')
phase('Judge')
const verdict = await agent('@script:judge judge these: ' + reviews.join('; '), { label: 'judge', schema: { type: 'object', properties: { ship: { type: 'boolean' }, seen: { type: 'number' } }, required: ['ship', 'seen'] } })
log('verdict ' + verdict.ship)
return { reviews, verdict }`;

const fileOf = (prompt: string): string => /review file (\w+)/.exec(prompt)?.[1] ?? '?';
/** Has the agent already called finish in this conversation? */
const calledFinish = (messages: any[]): boolean =>
  messages.some((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_use' && b.name === 'mcp__overseer__finish'));

describe('a script run survives kill -9 of its hub', { timeout: 420_000 }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  test('real claude lead; two of three children done, hub killed; the next tool call starts a hub that finishes the run; one conversation per agent', async () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    // gamma's first process asks for its second turn and waits for this; nothing opens it before the kill.
    const held = gate(300_000);
    const fake = await startFakeAnthropic();
    cleanups.push(() => fake.close());
    fake.addScript('lead', (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__run_script', input: { script: SCRIPT, args: ['alpha', 'beta', 'gamma'] } }] };
      return { text: `started: ${ctx.lastToolResults[0]?.text ?? ''}` };
    });
    const review: Script = async (ctx): Promise<Step> => {
      const file = fileOf(ctx.prompt);
      if (calledFinish(ctx.body.messages)) return { text: 'done' };
      if (file !== 'gamma') return finishStep(`reviewed ${file}`);
      // gamma: a first turn that lands in its session, then a second that the killed hub's process never sees answered.
      if (ctx.userTexts.some((t) => RESTARTED.test(t))) return finishStep('reviewed gamma');
      if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'reading gamma' } }] };
      await held.wait;
      return { text: 'the first process of gamma was not supposed to get here' };
    };
    fake.addScript('review', review);
    fake.addScript('judge', (ctx): Step => {
      if (ctx.lastToolResults.length) return { text: 'judged' };
      const seen = (ctx.prompt.match(/reviewed \w+/g) ?? []).length;
      return { tools: [{ name: 'StructuredOutput', input: { ship: seen === 3, seen } }] };
    });

    const dir = await makeTempDir('ovs-durable');
    const state = join(dir, 'state');
    const project = join(dir, 'project');
    mkdirSync(project);
    const env: NodeJS.ProcessEnv = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), OVERSEER_HOME: state, CLAUDE_BIN: claudeBin(), OVERSEER_KILL_GRACE_MS: '1000' };
    delete env.OVERSEER_PORT;
    const hubPid = (): number => (JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number }).pid;
    cleanups.push(async () => {
      held.open();
      await killStateAndRemove(state, dir);
    });

    // The lead: one run_script call, then it ends its turn and exits (runClaude kills its process group, its bridge included).
    const mcpConfig = JSON.stringify({ mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [CLI, 'mcp'] } } });
    const lead = await runClaude(['-p', '@script:lead review three files', '--output-format', 'stream-json', '--verbose', '--mcp-config', mcpConfig, '--strict-mcp-config',
      '--permission-mode', 'dontAsk', '--allowedTools', 'mcp__overseer__*', '--max-turns', '4'], { cwd: project, env, timeoutMs: 120_000 });
    assert.equal(lead.code, 0, lead.stderr);
    const answered = await fake.waitForRequest((q) => q.script === 'lead' && q.step === 1, 5000);
    const runId = /run_id\\*"\s*:\s*\\*"(r-[a-z0-9]+)/.exec(JSON.stringify(answered.body.messages.at(-1).content))?.[1];
    assert.ok(runId, `the lead got no run id back: ${JSON.stringify(answered.body.messages.at(-1).content).slice(0, 500)}`);

    // Two reviews finished (journaled as done), gamma's first process waits for its second answer.
    const gammaHeld = await fake.waitForRequest((q) => q.script === 'review' && q.step === 1 && fileOf(promptOf(q.body)) === 'gamma', 120_000);
    const db = new Database(join(state, 'state.db'), { readonly: true });
    cleanups.push(() => { db.close(); });
    const calls = (): { seq: number; label: string; status: string; job_id: string }[] => db.prepare('SELECT seq, label, status, job_id FROM script_calls WHERE run_id = ? ORDER BY seq').all(runId) as never;
    await eventually('alpha and beta journaled as done', () => calls().filter((c) => c.status === 'done').length === 2, 120_000, 50);
    assert.deepEqual(calls().map((c) => [c.label, c.status]).sort(), [['alpha', 'done'], ['beta', 'done'], ['gamma', 'running']]);
    const gammaJob = calls().find((c) => c.label === 'gamma')!.job_id;
    const gammaPid = (db.prepare('SELECT pid FROM jobs WHERE id = ?').get(gammaJob) as { pid: number | null }).pid;
    assert.ok(gammaPid && alive(gammaPid), 'gamma\'s process runs while the hub is killed');
    assert.equal(gammaHeld.outcome, undefined, 'gamma\'s second turn is still unanswered');

    const firstHub = hubPid();
    process.kill(firstHub, 'SIGKILL');
    await eventually('the hub gone', () => !alive(firstHub), 10_000);
    assert.equal((db.prepare('SELECT status FROM runs WHERE id = ?').get(runId) as { status: string }).status, 'running', 'the run is left running by the dead hub');

    // The next window's first tool call: the bridge finds no hub and starts one, which continues the run.
    const client = new Client({ name: 'next-window', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: env as Record<string, string>, cwd: project, stderr: 'ignore' }));
    cleanups.push(() => client.close().catch(() => undefined));
    const getRun = async (waitS: number): Promise<any> => {
      const r = await client.callTool({ name: 'get_run', arguments: { run_id: runId, wait_s: waitS } }, undefined, { timeout: (waitS + 30) * 1000 });
      const text = (r.content as { text: string }[])[0]!.text;
      assert.ok(!r.isError, text);
      return JSON.parse(text);
    };
    const deadline = Date.now() + 240_000;
    let v = await getRun(20);
    while (v.status === 'running' && Date.now() < deadline) v = await getRun(20);
    const secondHub = hubPid();
    assert.notEqual(secondHub, firstHub, 'a new hub answered');

    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result.reviews, ['reviewed alpha', 'reviewed beta', 'reviewed gamma']);
    assert.deepEqual(v.result.verdict, { ship: true, seen: 3 }, 'the judge\'s validated object');
    assert.deepEqual(v.calls.map((c: any) => [c.label, c.phase, c.status, c.job_status]).sort(), [
      ['alpha', 'Review', 'done', 'succeeded'], ['beta', 'Review', 'done', 'succeeded'], ['gamma', 'Review', 'done', 'succeeded'], ['judge', 'Judge', 'done', 'succeeded'],
    ]);
    assert.equal(v.calls.length, 4, 'no call was made twice');

    // One conversation per agent: a conversation starts with a step-0 request. The review of gamma
    // went on in its session (its first turn in the request), it did not start over.
    const starts = fake.requests.filter((q) => q.step === 0 && (q.script === 'review' || q.script === 'judge'));
    assert.deepEqual(starts.map((q) => (q.script === 'judge' ? 'judge' : fileOf(promptOf(q.body)))).sort(), ['alpha', 'beta', 'gamma', 'judge']);
    const resumed = fake.requests.filter((q) => q.script === 'review' && JSON.stringify(q.body.messages).match(RESTARTED));
    assert.ok(resumed.length > 0, 'gamma was not continued after the restart');
    assert.ok(resumed.every((q) => fileOf(promptOf(q.body)) === 'gamma' && q.step >= 1), 'only gamma was continued, in its conversation');
    assert.match(JSON.stringify(resumed[0]!.body.messages), /reading gamma/, 'the continued conversation holds gamma\'s first turn');
    const attempts = (job: string): number => (db.prepare('SELECT COUNT(*) AS n FROM attempts WHERE job_id = ?').get(job) as { n: number }).n;
    for (const c of v.calls) assert.equal(attempts(c.job_id), c.label === 'gamma' ? 2 : 1, `${c.label}: attempts`);
    // The log reads as one run: what the first hub logged is not logged again by the replay.
    assert.deepEqual(v.log.map((l: any) => [l.kind, l.text]), [['phase', 'Review'], ['log', '3 reviews'], ['phase', 'Judge'], ['log', 'verdict true']]);
  });
});
