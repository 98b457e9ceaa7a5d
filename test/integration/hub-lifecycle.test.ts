// Integration (built CLI, real processes): the hub is a process of its own behind `overseer
// mcp` bridges. kill -9 of the hub answers the bridge's pending call at once with an error
// naming what happened, the bridge starts a new hub by itself (prompt reconcile) and the next
// call works on a re-initialized session. A background hub exits after its idle grace period
// with no live job and no lead, and not while a job runs or a lead is connected, and at once
// when its state directory is deleted. Needs
// `npm run build` first.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir } from '../helpers/claude.js';
import { alive, eventually } from '../helpers/wait.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js');

const hubPidOf = (state: string): number | undefined => {
  try {
    return (JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
};
const json = (r: object): any => {
  const text = ((r as { content: { text: string }[] }).content)[0]!.text;
  assert.ok(!(r as { isError?: boolean }).isError, text);
  return JSON.parse(text);
};

describe('hub lifecycle behind overseer mcp', { timeout: 240_000 }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  const setup = async (extra: Record<string, string>): Promise<{ fake: FakeAnthropic; state: string; project: string; bridge: (name: string) => Promise<Client> }> => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    const dir = await makeTempDir('ovs-life');
    const state = join(dir, 'state');
    const project = join(dir, 'project');
    mkdirSync(project);
    const fake = await startFakeAnthropic();
    const env = Object.fromEntries(Object.entries(claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url })).filter((e): e is [string, string] => e[1] !== undefined));
    Object.assign(env, { OVERSEER_HOME: state, CLAUDE_BIN: claudeBin(), OVERSEER_KILL_GRACE_MS: '1000', ...extra });
    delete env.OVERSEER_PORT;
    cleanups.push(async () => {
      const pid = hubPidOf(state);
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
      if (existsSync(join(state, 'state.db'))) {
        const db = new Database(join(state, 'state.db'), { readonly: true });
        for (const { pid: p } of db.prepare('SELECT pid FROM jobs WHERE pid IS NOT NULL').all() as { pid: number }[]) {
          try { process.kill(-p, 'SIGKILL'); } catch { /* gone */ }
        }
        db.close();
      }
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    });
    const bridge = async (name: string): Promise<Client> => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, cwd: project, stderr: 'ignore' });
      const client = new Client({ name, version: '1.0.0' });
      await client.connect(transport);
      cleanups.push(() => client.close().catch(() => undefined));
      return client;
    };
    return { fake, state, project, bridge };
  };

  test('kill -9 of the hub: the pending call fails at once, the bridge restarts the hub, the next call works', async () => {
    const { state, bridge } = await setup({});
    const lead = await bridge('lead');
    json(await lead.callTool({ name: 'write_note', arguments: { key: 'k/a', value: 'before' } }));
    const first = hubPidOf(state)!;
    assert.ok(first && alive(first));
    const pending = lead.callTool({ name: 'watch_notes', arguments: { prefix: 'w/', timeout_s: 120 } }, undefined, { timeout: 150_000 });
    pending.catch(() => undefined);
    // The call must be in the hub when it dies (one that reaches the bridge later rightly goes to
    // the next hub): the hub's /health counts the lead's calls in flight.
    const base = new URL((JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { url: string }).url).origin;
    const token = readFileSync(join(state, 'lead.token'), 'utf8').trim();
    for (const deadline = Date.now() + 20_000; ;) {
      const h = await (await fetch(`${base}/health`, { headers: { authorization: `Bearer ${token}` } })).json() as { calls_in_flight?: { lead: number } };
      if ((h.calls_in_flight?.lead ?? 0) >= 1) break;
      assert.ok(Date.now() < deadline, 'the watch_notes call never reached the hub');
      await new Promise((r) => setTimeout(r, 20));
    }
    process.kill(first, 'SIGKILL');
    const t0 = Date.now();
    await assert.rejects(pending, (err: Error) => {
      assert.match(err.message, new RegExp(`overseer hub \\(pid ${first}\\) died \\(killed or crashed\\)`));
      assert.match(err.message, /retry/);
      return true;
    });
    const took = Date.now() - t0;
    assert.ok(took < 5000, `the pending call was answered after ${took} ms`);
    // No request needed: a lead is connected, so the bridge starts a new hub at once.
    const second = await eventually('a new hub', () => { const p = hubPidOf(state); return p && p !== first && alive(p) ? p : undefined; }, 30_000);
    const got = json(await lead.callTool({ name: 'read_note', arguments: { key: 'k/a' } }));
    assert.equal(got.value, 'before', 'the next call did not reach the new hub');
    assert.equal(hubPidOf(state), second);
    // A background hub whose state directory is deleted (a removed temp dir) stops by itself.
    await lead.close();
    // Its log goes with the directory: held open here, what it wrote stays readable if it does not exit.
    const log = openSync(join(state, 'logs', 'overseer.log'), 'r');
    cleanups.push(() => closeSync(log));
    await rm(state, { recursive: true, force: true });
    await eventually('the hub to exit once its state directory is gone', () => !alive(second), 15_000, 50).catch((err: Error) => {
      const text = readFileSync(log, 'utf8').split('\n').slice(-30).join('\n');
      throw new Error(`${err.message}; the end of the hub's log:\n${text}`);
    });
  });

  test('idle exit: not while a lead is connected, not while a job runs, then after the grace period', async () => {
    // A 3 s grace period: with 1 s, a bridge whose start took a second on a loaded machine found the hub
    // it had started already gone (seen in CI).
    const { fake, state, bridge } = await setup({ OVERSEER_IDLE_EXIT_S: '3' });
    // The child spends 7 s (over two grace periods) inside one model call, then needs the hub to answer report_status.
    fake.addScript('slow', (ctx) => {
      if (ctx.step === 0) return { delayMs: 7000, tools: [{ name: 'mcp__overseer__report_status', input: { message: 'still here' } }] };
      return { text: `done (${ctx.lastToolResults[0]?.is_error ? 'error' : 'ok'})` };
    });
    const lead = await bridge('idle-lead');
    // The bridge answers initialize itself and starts the hub behind it (src/server/bridge.ts).
    const hub = await eventually('the bridge to start the hub', () => hubPidOf(state), 30_000);
    // A connected lead keeps it: a 7 s watch (over two grace periods) returns from the same hub.
    const w = json(await lead.callTool({ name: 'watch_notes', arguments: { prefix: 'none/', timeout_s: 7 } }));
    assert.equal(w.timed_out, true);
    assert.ok(alive(hub), 'the hub exited while a lead was connected');
    const jobId = json(await lead.callTool({ name: 'spawn_agent', arguments: { prompt: '@script:slow' } })).job_id as string;
    await lead.close();
    // No lead now; the job alone keeps the hub: the child's report_status after 7 s must be answered.
    await fake.waitForRequest((q) => q.script === 'slow' && q.step === 1, 60_000);
    const end = await eventually('the hub to exit once idle', () => !alive(hub), 30_000, 50);
    assert.ok(end);
    const db = new Database(join(state, 'state.db'), { readonly: true });
    const row = db.prepare('SELECT status, result FROM jobs WHERE id = ?').get(jobId) as { status: string; result: string };
    db.close();
    assert.equal(row.status, 'succeeded', 'the job did not finish: the hub exited under it');
    assert.equal(row.result, 'done (ok)', 'report_status failed: the hub was gone while the job ran');
    assert.ok(!existsSync(join(state, 'hub.json')), 'an idle exit is a clean stop: hub.json removed');
  });
});
