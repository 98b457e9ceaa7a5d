// End-to-end: the crew outlives the window. Lead 1 is a real `claude -p` whose Overseer is
// `overseer mcp` (the bridge, which starts the hub as a process of its own); it spawns a child
// whose fake-model script blocks on a gate the test holds. Lead 1 exits and its whole process
// group is killed (as closing a window would): the child keeps running (pid alive, job still
// running in the database). A second real `claude -p` lead then waits for the child and sees it
// finish once the test opens the gate. Needs `npm run build` first.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startFakeAnthropic } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir, runClaude } from '../helpers/claude.js';
import { gate } from '../helpers/gate.js';
import { alive, eventually } from '../helpers/wait.js';
import { killStateAndRemove } from '../helpers/stateKill.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

describe('the crew outlives the lead window', { timeout: 300_000 }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  test('lead 1 exits with its process group killed; the child runs on; lead 2 waits for it and sees it finish', async () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    const childGate = gate(120_000);
    const fake = await startFakeAnthropic();
    cleanups.push(() => fake.close());
    fake.addScript('lead1', (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:gated do the gated work', title: 'gated' } }] };
      return { text: `spawned: ${ctx.lastToolResults[0]?.text ?? ''}` };
    });
    fake.addScript('gated', async (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'waiting at the gate' } }] };
      await childGate.wait;
      return { text: 'gated work finished' };
    });
    fake.addScript('lead2', (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__list_agents', input: {} }] };
      if (ctx.step === 1) {
        const id = (JSON.parse(ctx.lastToolResults[0]!.text) as { agents: { job_id: string }[] }).agents[0]!.job_id;
        return { tools: [{ name: 'mcp__overseer__wait_for_agents', input: { job_ids: [id], timeout_s: 120 } }] };
      }
      return { text: 'lead 2 saw it' };
    });

    const dir = await makeTempDir('ovs-outlive');
    const state = join(dir, 'state');
    const project = join(dir, 'project');
    mkdirSync(project);
    const env: NodeJS.ProcessEnv = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), OVERSEER_HOME: state, CLAUDE_BIN: claudeBin(), OVERSEER_KILL_GRACE_MS: '1000' };
    delete env.OVERSEER_PORT;
    cleanups.push(async () => {
      childGate.open();
      await killStateAndRemove(state, dir);
    });
    const mcpConfig = JSON.stringify({ mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [CLI, 'mcp'] } } });
    const leadArgs = (prompt: string): string[] => ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--mcp-config', mcpConfig, '--strict-mcp-config',
      '--permission-mode', 'dontAsk', '--allowedTools', 'mcp__overseer__*', '--max-turns', '6'];

    // Lead 1: spawn, then exit. runClaude kills lead 1's whole process group once it has exited (its bridge included).
    const run1 = await runClaude(leadArgs('@script:lead1 start the gated child'), { cwd: project, env, timeoutMs: 120_000 });
    assert.equal(run1.code, 0, run1.stderr);
    const spawned = await fake.waitForRequest((q) => q.script === 'lead1' && q.step === 1, 5000);
    assert.match(JSON.stringify(spawned.body.messages.at(-1).content), /job_id/, 'lead 1 did not get a job id back');
    await fake.waitForRequest((q) => q.script === 'gated' && q.step === 1, 60_000);

    const db = new Database(join(state, 'state.db'), { readonly: true });
    const job = (): { id: string; status: string; pid: number | null; result: string | null } => db.prepare('SELECT id, status, pid, result FROM jobs').get() as never;
    const child = job();
    assert.equal(child.status, 'running', 'the child was stopped when lead 1 went away');
    assert.ok(child.pid && alive(child.pid), 'the child process died with lead 1');
    const hubPid = (JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number }).pid;
    assert.ok(alive(hubPid), 'the hub died with lead 1');

    // Lead 2: a new window on the same state; it waits for the child while the gate is still closed.
    const run2 = runClaude(leadArgs('@script:lead2 wait for the running child'), { cwd: project, env, timeoutMs: 180_000 });
    await fake.waitForRequest((q) => q.script === 'lead2' && q.step === 1, 60_000);
    assert.equal(job().status, 'running');
    childGate.open();
    const r2 = await run2;
    assert.equal(r2.code, 0, r2.stderr);
    const final = await fake.waitForRequest((q) => q.script === 'lead2' && q.step === 2, 5000);
    const waited = JSON.stringify((final.body as { messages: { content: unknown }[] }).messages.at(-1)!.content);
    assert.match(waited, /succeeded/, `lead 2's wait did not report the child finishing: ${waited.slice(0, 500)}`);
    assert.match(waited, /gated work finished/);
    await eventually('the job recorded as succeeded', () => job().status === 'succeeded', 10_000);
    assert.equal(job().result, 'gated work finished');
    assert.equal(job().pid === null || !alive(child.pid!), true, 'the child process is left over');
    db.close();
  });
});
