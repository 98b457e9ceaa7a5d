// Process level: the built CLI (`node dist/cli/main.js mcp`) as the lead's stdio MCP server,
// driven by the SDK's StdioClientTransport, with real claude children against the fake API.
// `overseer mcp` is a bridge to a hub process of its own (started detached on first use); a
// second `overseer mcp` on the same state directory bridges to the same hub. The hub outlives
// its bridges; `overseer stop` stops it. Then `status --json`, `logs <job>` and `--version`.
// Needs `npm run build` first.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
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
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function deadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms); }),
  ]);
}

/** The child process behind a StdioClientTransport (the SDK keeps it private; we need its exit code). */
function processOf(t: StdioClientTransport): ChildProcess {
  const p = (t as unknown as { _process?: ChildProcess })._process;
  assert.ok(p, 'the stdio transport has no process');
  return p;
}

function exitOf(p: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve({ code: p.exitCode, signal: p.signalCode });
  return new Promise((resolve) => p.once('exit', (code, signal) => resolve({ code, signal })));
}

function resultJson(result: object): any {
  const r = result as { content?: unknown; isError?: unknown };
  const text = (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
  assert.ok(!r.isError, text);
  return JSON.parse(text);
}

function runCli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      if (err && code === -1) reject(new Error(`overseer ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve({ code, stdout, stderr });
    });
  });
}

interface Lead {
  client: Client;
  transport: StdioClientTransport;
  proc: ChildProcess;
  errors: Error[];
  stderr: () => string;
  /** Every byte the process wrote to stdout. */
  stdout: () => string;
}

/** Asserts that every stdout line is a JSON-RPC 2.0 message (logs must never go to stdout). */
function assertOnlyJsonRpc(lead: Lead): void {
  const out = lead.stdout();
  assert.ok(out.length > 0, 'nothing arrived on stdout');
  const lines = out.split('\n');
  assert.equal(lines.pop(), '', 'stdout does not end with a newline');
  for (const line of lines) {
    let msg: { jsonrpc?: unknown } | undefined;
    try {
      msg = JSON.parse(line) as { jsonrpc?: unknown };
    } catch {
      assert.fail(`non-JSON line on stdout: ${line.slice(0, 300)}`);
    }
    assert.equal(msg?.jsonrpc, '2.0', `not a JSON-RPC message on stdout: ${line.slice(0, 300)}`);
  }
  assert.deepEqual(lead.errors, [], 'the client saw transport errors');
}

describe('overseer mcp over stdio (built CLI)', { timeout: 240_000 }, () => {
  let fake: FakeAnthropic;
  let dir: string;
  let state: string;
  let project: string;
  let env: Record<string, string>;
  const leads: Lead[] = [];
  let first: Lead;
  let jobId: string;
  let outFile: string;
  let hubExitedCleanly = false;
  let hubPid = 0;

  const startLead = async (name: string): Promise<Lead> => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, cwd: project, stderr: 'pipe' });
    let err = '';
    let out = '';
    transport.stderr?.on('data', (d: Buffer) => { err += d.toString('utf8'); });
    // Tap stdout as soon as the process exists (before initialize is even sent).
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      processOf(transport).stdout!.on('data', (d: Buffer) => { out += d.toString('utf8'); });
    };
    const client = new Client({ name, version: '1.0.0' });
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    await deadline(client.connect(transport), 60_000, `${name}: connect`).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\nstderr: ${err}`);
    });
    const lead: Lead = { client, transport, proc: processOf(transport), errors, stderr: () => err, stdout: () => out };
    leads.push(lead);
    return lead;
  };

  before(async () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    dir = await makeTempDir('ovs-stdio');
    state = join(dir, 'state');
    project = join(dir, 'project');
    mkdirSync(project);
    outFile = join(project, 'out.txt');
    fake = await startFakeAnthropic();
    fake.addScript('write-file', (ctx) => {
      if (ctx.step === 0) return { text: 'Reporting first.', tools: [{ name: 'mcp__overseer__report_status', input: { message: 'writing the file' } }] };
      if (ctx.step === 1) return { text: 'Now the file.', tools: [{ name: 'Write', input: { file_path: outFile, content: 'written by a child\n' } }] };
      return { text: `done (${ctx.lastToolResults[0]?.is_error ? 'error' : 'ok'})` };
    });
    const base = claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url });
    env = Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined));
    Object.assign(env, { OVERSEER_HOME: state, CLAUDE_BIN: claudeBin(), OVERSEER_KILL_GRACE_MS: '2000' });
    delete env.OVERSEER_PORT;
    first = await startLead('stdio-lead-1');
  });

  after(async () => {
    if (hubPid && !hubExitedCleanly) {
      try { process.kill(hubPid, 'SIGKILL'); } catch { /* gone */ }
    }
    for (const l of leads) {
      if (l.proc.exitCode === null && l.proc.signalCode === null) {
        try { l.proc.kill('SIGKILL'); } catch { /* gone */ }
      }
    }
    // If the hub did not stop cleanly its children (own process groups) may still run.
    if (!hubExitedCleanly && state && existsSync(join(state, 'state.db'))) {
      try {
        const db = new Database(join(state, 'state.db'), { readonly: true });
        const pids = db.prepare('SELECT pid FROM attempts WHERE pid IS NOT NULL AND ended_at IS NULL').all() as { pid: number }[];
        db.close();
        for (const { pid } of pids) {
          try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
        }
      } catch { /* best effort */ }
    }
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the hub records itself: hub.json with its pid, lead.token 0600', async () => {
    // The bridge answers initialize itself and starts the hub behind it (src/server/bridge.ts).
    const info = await eventually('the bridge to start the hub', () => existsSync(join(state, 'hub.json')) && JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number; port: number; url: string; version: string }, 30_000);
    assert.notEqual(info.pid, first.proc.pid, 'the bridge became the hub: the hub must be a process of its own');
    assert.ok(alive(info.pid));
    hubPid = info.pid;
    assert.ok(info.port > 0);
    assert.equal(info.url, `http://127.0.0.1:${info.port}/mcp`);
    assert.equal(info.version, VERSION);
    const tok = join(state, 'lead.token');
    assert.equal(statSync(tok).mode & 0o777, 0o600);
    assert.ok(readFileSync(tok, 'utf8').trim().length >= 32);
  });

  test('lists the lead tools, with nothing but JSON-RPC on stdout', async () => {
    const names = (await first.client.listTools()).tools.map((t) => t.name);
    for (const t of ['spawn_agent', 'wait_for_agents', 'get_agent', 'list_agents', 'cancel_agent', 'pause_agent', 'resume_agent', 'message_agent']) {
      assert.ok(names.includes(t), `${t} missing: ${names}`);
    }
    assert.ok(!names.includes('report_status'));
    assert.equal(first.client.getServerVersion()?.name, 'overseer');
    assertOnlyJsonRpc(first);
  });

  test('spawns a child that writes a file; wait_for_agents reports success', async () => {
    const spawned = resultJson(await first.client.callTool({ name: 'spawn_agent', arguments: { prompt: '@script:write-file write out.txt', title: 'writer' } }));
    jobId = spawned.job_id;
    assert.equal(spawned.title, 'writer');
    const waited = resultJson(await first.client.callTool(
      { name: 'wait_for_agents', arguments: { job_ids: [jobId], timeout_s: 120 } }, undefined, { timeout: 150_000 },
    ));
    assert.equal(waited.timed_out, false);
    const done = waited.done[0];
    assert.equal(done.status, 'succeeded', `${JSON.stringify(done)}\nhub stderr: ${first.stderr()}`);
    assert.equal(done.status_message, 'writing the file');
    assert.equal(done.result, 'done (ok)');
    assert.equal(readFileSync(outFile, 'utf8'), 'written by a child\n');
    assertOnlyJsonRpc(first);
  });

  test('a second overseer mcp on the same state bridges to the running hub', async () => {
    assert.ok(jobId, 'needs the job of the previous test');
    const second = await startLead('stdio-lead-2');
    assert.notEqual(second.proc.pid, hubPid);
    const info = JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number };
    assert.equal(info.pid, hubPid, 'a second hub took over hub.json');
    const names = (await second.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('pause_agent'), 'the bridge speaks as a lead');
    const page = resultJson(await second.client.callTool({ name: 'list_agents', arguments: {} }));
    const mine = page.agents.find((a: { job_id: string }) => a.job_id === jobId);
    assert.ok(mine, `the bridged lead does not see ${jobId}: ${JSON.stringify(page)}`);
    assert.equal(mine.status, 'succeeded');
    assertOnlyJsonRpc(second);

    // `overseer serve` on a served directory says which hub serves it (pid, port, since) and exits 1.
    const serve = await runCli(['serve'], env, project);
    assert.equal(serve.code, 1, serve.stdout);
    const i2 = JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number; port: number; started_at: string };
    assert.ok(serve.stderr.includes(`pid ${i2.pid}, port ${i2.port}`) && serve.stderr.includes(`since ${i2.started_at}`), serve.stderr);
    assert.equal(serve.stdout, '', 'a second serve printed that it listens');

    // Closing the bridge's stdin ends the bridge, not the hub.
    const bridgeExit = exitOf(second.proc);
    second.proc.stdin!.end();
    const b = await deadline(bridgeExit, 20_000, 'bridge exit');
    assert.deepEqual(b, { code: 0, signal: null }, `bridge stderr: ${second.stderr()}`);
    assert.equal(first.proc.exitCode, null, 'the first bridge died with the second');
    assert.ok(alive(hubPid), 'the hub died with a bridge');
    const still = resultJson(await first.client.callTool({ name: 'get_agent', arguments: { job_id: jobId } }));
    assert.equal(still.status, 'succeeded');
  });

  test('closing the last bridge leaves the hub running; overseer stop stops it cleanly', async () => {
    const exit = exitOf(first.proc);
    first.proc.stdin!.end();
    assert.deepEqual(await deadline(exit, 30_000, 'bridge exit'), { code: 0, signal: null }, `bridge stderr: ${first.stderr()}`);
    assert.ok(alive(hubPid), 'the hub exited with its last bridge');
    const r = await runCli(['stop'], env, project);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Stopped the hub for .* \\(pid ${hubPid}, port \\d+, running since `));
    assert.ok(!alive(hubPid), 'the hub still runs after overseer stop');
    hubExitedCleanly = true;
    assert.ok(!existsSync(join(state, 'hub.json')), 'hub.json was left behind by a clean stop');
    const again = await runCli(['stop'], env, project);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /No hub runs for /);
  });

  test('status --json prints the jobs', async () => {
    assert.ok(jobId);
    const r = await runCli(['status', '--json'], env, project);
    assert.equal(r.code, 0, r.stderr);
    const jobs = JSON.parse(r.stdout) as { job_id: string; status: string; title: string }[];
    assert.ok(Array.isArray(jobs));
    const j = jobs.find((x) => x.job_id === jobId);
    assert.ok(j, r.stdout);
    assert.equal(j.status, 'succeeded');
    assert.equal(j.title, 'writer');
  });

  test('logs <job> prints a readable transcript with the tool calls', async () => {
    assert.ok(jobId);
    const r = await runCli(['logs', jobId], env, project);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /tool_use mcp__overseer__report_status/);
    assert.match(r.stdout, /tool_use Write/);
    assert.ok(r.stdout.includes(outFile), r.stdout);
    assert.match(r.stdout, /done \(ok\)/);
    assert.ok(!r.stdout.split('\n').some((l) => l.startsWith('{"type"')), 'logs printed raw stream-json instead of a readable transcript');
  });

  test('logs of an unknown job fails with a clear message', async () => {
    const r = await runCli(['logs', 'j-nope0000'], env, project);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /j-nope0000/);
    assert.ok(r.stderr.includes(jobId), r.stderr);
  });

  test('--version prints the package version', async () => {
    const r = await runCli(['--version'], env, project);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), VERSION);
  });
});
