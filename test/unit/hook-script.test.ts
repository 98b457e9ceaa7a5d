// hooks/overseer-hook.mjs and hooks/overseer-hook.sh (under /bin/sh, dash and bash where present:
// the same expectations hold for every one) as a process, with no hub at all: it fails CLOSED (garbage input, an
// unreachable hub, a hub that answers 500 or non-JSON → a deny on stdout, exit 0), stays out
// of the way when there is no hub to ask (no OVERSEER_* env and no live hub.json → exit 0,
// nothing printed), and forwards exactly what it got. A tiny node:http server on 127.0.0.1:0
// stands in for the hub's POST /hook and records what it receives.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deadPort } from '../helpers/net.js';
import { projectStateDir } from '../../src/config.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const HOOK = join(REPO_ROOT, 'hooks', 'overseer-hook.mjs');
const SH_HOOK = join(REPO_ROOT, 'hooks', 'overseer-hook.sh');

/** How each variant is started: the Node hook, and the sh hook under every POSIX shell at hand.
 * The sh hook's argument is the node it falls back to (as in hookCommandLine); here a node that
 * does not exist, so a case the sh should decide by itself fails if it fell back instead. */
const HOOK_VARIANTS: { name: string; cmd: string; args: string[] }[] = [
  { name: 'overseer-hook.mjs', cmd: process.execPath, args: [HOOK] },
  ...[...new Map(['/bin/sh', '/bin/dash', '/usr/bin/dash', '/bin/bash'].filter((sh) => existsSync(sh)).map((sh) => [realpathSync(sh), sh])).values()]
    .map((sh) => ({ name: `overseer-hook.sh (${sh})`, cmd: sh, args: [SH_HOOK, '/nonexistent/node-the-sh-hook-must-not-need'] })),
];

interface HookRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** The environment of the test process without anything that would point the hook at a real hub. */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('OVERSEER_') && !k.startsWith('CLAUDE_') && k !== 'CLAUDECODE') env[k] = v;
  }
  return { ...env, ...extra };
}

function runHookWith(o: { stdin: string; env: Record<string, string>; cwd: string; variant: (typeof HOOK_VARIANTS)[number] }): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(o.variant.cmd, o.variant.args, { cwd: o.cwd, env: baseEnv(o.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(o.stdin);
  });
}

/** The deny reason the hook printed; fails unless stdout is exactly one PreToolUse deny. */
function denyReason(r: HookRun): string {
  assert.equal(r.code, 0, `the hook must exit 0 (stderr: ${r.stderr})`);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, `one JSON line expected on stdout, got ${JSON.stringify(r.stdout)}`);
  const v = JSON.parse(lines[0]!) as { hookSpecificOutput?: { hookEventName?: string; permissionDecision?: string; permissionDecisionReason?: string } };
  assert.equal(v.hookSpecificOutput?.hookEventName, 'PreToolUse');
  assert.equal(v.hookSpecificOutput?.permissionDecision, 'deny');
  const reason = v.hookSpecificOutput?.permissionDecisionReason;
  assert.equal(typeof reason, 'string');
  assert.ok(reason!.length > 0, 'empty deny reason');
  return reason!;
}

function assertAllowed(r: HookRun): void {
  assert.equal(r.code, 0, `the hook must exit 0 (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', 'nothing on stdout means "no decision": the edit goes ahead');
}

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A stand-in for the hub: records every request, answers with `respond`. */
class FakeHub {
  readonly requests: Received[] = [];
  respond: (res: ServerResponse) => void = (res) => json(res, 200, { decision: 'none' });
  private server?: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        this.respond(res);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The URL a child gets in OVERSEER_URL (the MCP endpoint; the hook posts to /hook). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const pid = Number(r.stdout);
  assert.ok(pid > 0, 'could not get a pid');
  return pid;
}

const hookInput = (cwd: string, file = join(cwd, 'src', 'a.ts')): string =>
  JSON.stringify({
    session_id: 'test-session', transcript_path: '/dev/null', cwd, permission_mode: 'default', hook_event_name: 'PreToolUse',
    tool_name: 'Write', tool_input: { file_path: file, content: 'export const a = 1;\n' },
  });

for (const variant of HOOK_VARIANTS) describe(`${variant.name} (no hub)`, { timeout: 120_000 }, () => {
  const runHook = (o: { stdin: string; env: Record<string, string>; cwd: string }): Promise<HookRun> => runHookWith({ ...o, variant });
  let tmp = '';
  let fake: FakeHub;
  const dirs: string[] = [];

  /** A fresh directory under the test's temp dir (real path). */
  const dir = (name: string): string => {
    const d = join(tmp, `${name}-${dirs.length}`);
    mkdirSync(d, { recursive: true });
    dirs.push(d);
    return d;
  };

  before(async () => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'ovs-hook-script-')));
    fake = new FakeHub();
    await fake.start();
  });

  beforeEach(() => {
    fake.requests.length = 0;
    fake.respond = (res) => json(res, 200, { decision: 'none' });
  });

  after(async () => {
    await fake?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('garbage on stdin → a deny on stdout, exit 0', async () => {
    const cwd = dir('garbage');
    const r = await runHook({ stdin: 'this is {not json', cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
    assert.match(denyReason(r), /lock hook failed/i);
    assert.equal(fake.requests.length, 0, 'nothing should be sent for input that is not JSON');
  });

  test('garbage on stdin with no hub configured at all → still a deny', async () => {
    const cwd = dir('garbage-nohub');
    const r = await runHook({ stdin: '\u0000\u0001garbage', cwd, env: { CLAUDE_PROJECT_DIR: cwd } });
    denyReason(r);
  });

  test('empty stdin → a deny (the input was not understood)', async () => {
    const cwd = dir('empty');
    const r = await runHook({ stdin: '', cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
    denyReason(r);
  });

  test('OVERSEER_URL at a closed port → a deny that says the hub could not be reached', async () => {
    const cwd = dir('closed');
    const port = await deadPort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_URL: url, OVERSEER_TOKEN: 'tok' } });
    const reason = denyReason(r);
    assert.match(reason, /could not reach the hub/i);
    assert.ok(reason.includes(`127.0.0.1:${port}`), `the reason should name the hub's address: ${reason}`);
  });

  test('no OVERSEER_* env and no hub.json up the tree → exit 0, nothing printed', async () => {
    const cwd = dir('nohub');
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { CLAUDE_PROJECT_DIR: cwd } });
    assertAllowed(r);
  });

  test('OVERSEER_URL without OVERSEER_TOKEN (and no hub.json) → no hub to ask: exit 0, nothing sent', async () => {
    const cwd = dir('url-only');
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { CLAUDE_PROJECT_DIR: cwd, OVERSEER_URL: fake.url } });
    assertAllowed(r);
    assert.equal(fake.requests.length, 0);
  });

  test('hub.json with a dead pid → exit 0, nothing printed, the stale URL is not contacted', async () => {
    const project = dir('dead');
    const state = join(project, '.overseer');
    mkdirSync(state);
    writeFileSync(join(state, 'hub.json'), JSON.stringify({ pid: deadPid(), port: fake.port, url: fake.url, started_at: new Date().toISOString(), version: '0.0.0' }));
    writeFileSync(join(state, 'lead.token'), 'lead-token\n');
    const sub = join(project, 'src', 'deep');
    mkdirSync(sub, { recursive: true });
    // Found by walking up from CLAUDE_PROJECT_DIR (a subdirectory of the project).
    const r = await runHook({ stdin: hookInput(sub), cwd: sub, env: { CLAUDE_PROJECT_DIR: sub } });
    assertAllowed(r);
    assert.equal(fake.requests.length, 0, 'a dead hub must not be asked');
  });

  test('hub.json of a live hub (found up the tree) → asks it with the lead token', async () => {
    const project = dir('live');
    const state = join(project, '.overseer');
    mkdirSync(state);
    writeFileSync(join(state, 'hub.json'), JSON.stringify({ pid: process.pid, port: fake.port, url: fake.url, started_at: new Date().toISOString(), version: '0.0.0' }));
    writeFileSync(join(state, 'lead.token'), 'the-lead-token\n');
    fake.respond = (res) => json(res, 200, { decision: 'deny', reason: 'held by agent j-1' });
    const input = hookInput(project);
    const r = await runHook({ stdin: input, cwd: project, env: { CLAUDE_PROJECT_DIR: project } });
    assert.equal(denyReason(r), 'held by agent j-1');
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.headers.authorization, 'Bearer the-lead-token');
    assert.equal(fake.requests[0]!.body, input);
  });

  test('the default layout: the project\'s state under $XDG_STATE_HOME (found from a subdirectory) → asked with its lead token', async () => {
    const project = realpathSync(dir('xdg-project'));
    const xdg = dir('xdg-state');
    const state = projectStateDir(project, { XDG_STATE_HOME: xdg });
    mkdirSync(state, { recursive: true });
    writeFileSync(join(state, 'hub.json'), JSON.stringify({ pid: process.pid, port: fake.port, url: fake.url }));
    writeFileSync(join(state, 'lead.token'), 'xdg-token');
    const sub = join(project, 'src');
    mkdirSync(sub);
    const r = await runHook({ stdin: hookInput(sub), cwd: sub, env: { XDG_STATE_HOME: xdg, CLAUDE_PROJECT_DIR: sub } });
    assertAllowed(r);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.headers.authorization, 'Bearer xdg-token');
  });

  test('OVERSEER_HOME pointing at a live hub.json → asks it with the lead token', async () => {
    const cwd = dir('home-cwd');
    const home = dir('home-state');
    writeFileSync(join(home, 'hub.json'), JSON.stringify({ pid: process.pid, port: fake.port, url: fake.url }));
    writeFileSync(join(home, 'lead.token'), 'home-token');
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_HOME: home, CLAUDE_PROJECT_DIR: cwd } });
    assertAllowed(r);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.headers.authorization, 'Bearer home-token');
  });

  test('the hub answers {decision: "deny", reason: "X"} → a deny with reason X', async () => {
    const cwd = dir('deny');
    fake.respond = (res) => json(res, 200, { decision: 'deny', reason: 'X' });
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
    assert.equal(denyReason(r), 'X');
  });

  test('a deny reason with quotes, backslashes, unicode and a "reason": lookalike comes out exactly as the Node hook prints it', async () => {
    const cwd = dir('odd-reason');
    for (const reason of ['held by "agent \\ j-2" — édition "reason":"no" \\"', 'ends in a backslash \\', 'two \\\\', '"', '\\"\\', 'line\nbreak\ttab']) {
      fake.respond = (res) => json(res, 200, { decision: 'deny', reason, locked: ['/a"b'] });
      const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
      assert.equal(denyReason(r), reason);
      assert.equal(r.stdout, `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })}\n`);
    }
  });

  test('the hub answers {decision: "none"} → exit 0, nothing printed (the edit goes ahead)', async () => {
    const cwd = dir('none');
    fake.respond = (res) => json(res, 200, { decision: 'none', locked: [join(cwd, 'src', 'a.ts')] });
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
    assertAllowed(r);
    assert.equal(fake.requests.length, 1);
  });

  test('the hub answers 500 → a deny', async () => {
    const cwd = dir('500');
    fake.respond = (res) => json(res, 500, { jsonrpc: '2.0', error: { code: -32001, message: 'internal error' }, id: null });
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
    assert.match(denyReason(r), /500/);
  });

  test('the hub answers 401 (unknown token) → a deny', async () => {
    const cwd = dir('401');
    fake.respond = (res) => json(res, 401, { jsonrpc: '2.0', error: { code: -32001, message: 'unauthorized: unknown or expired token' }, id: null });
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
    assert.match(denyReason(r), /401/);
  });

  test('the hub answers something that is not JSON → a deny', async () => {
    const cwd = dir('nonjson');
    fake.respond = (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>not the hub</html>');
    };
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
    assert.match(denyReason(r), /not JSON/i);
  });

  test('the hub never answers → a deny after the hook\'s own timeout (before Claude Code\'s 15 s)', async () => {
    const cwd = dir('hang');
    fake.respond = () => undefined; // keep the request open
    const t0 = Date.now();
    const r = await runHook({ stdin: hookInput(cwd), cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
    const took = Date.now() - t0;
    assert.match(denyReason(r), /could not reach the hub/i);
    assert.ok(took < 14_000, `the hook took ${took} ms; Claude Code kills it at 15 s`);
  });

  test('input around whitespace (a trailing newline, CRLF, leading blanks) is still JSON: forwarded byte for byte, allowed', async () => {
    const cwd = dir('ws');
    for (const input of [`${hookInput(cwd)}\n`, `${hookInput(cwd)}\r\n`, ` \t\n${hookInput(cwd)}\n\n`]) {
      fake.requests.length = 0;
      const r = await runHook({ stdin: input, cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: 'tok' } });
      assertAllowed(r);
      assert.equal(fake.requests.length, 1, JSON.stringify(input));
      assert.equal(fake.requests[0]!.body, input);
    }
  });

  test('sends POST /hook with Authorization: Bearer <OVERSEER_TOKEN> and the stdin JSON as the body', async () => {
    const cwd = dir('forward');
    const token = 'agent-token-0123456789abcdef';
    // Unusual but valid JSON: the body must be forwarded byte for byte, not re-serialised.
    const input = `{ "session_id": "s", "cwd": ${JSON.stringify(cwd)}, "hook_event_name": "PreToolUse",\n  "tool_name": "Edit", "tool_input": { "file_path": "src/é ü.ts", "old_string": "a", "new_string": "b" } }`;
    const r = await runHook({ stdin: input, cwd, env: { OVERSEER_URL: fake.url, OVERSEER_TOKEN: token } });
    assertAllowed(r);
    assert.equal(fake.requests.length, 1);
    const q = fake.requests[0]!;
    assert.equal(q.method, 'POST');
    assert.equal(q.url, '/hook');
    assert.equal(q.headers.authorization, `Bearer ${token}`);
    assert.match(q.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(q.body, input);
    assert.equal(Number(q.headers['content-length']), Buffer.byteLength(input));
  });
});
