// Integration: the real PreToolUse lock hook (hooks/overseer-hook.mjs, and hooks/overseer-hook.sh
// as hookCommandLine runs it: every test runs on both) run as a child process
// against a real hub's POST /hook, with a real agent token (captured from the child's launch
// environment) or as the lead (hub.json + lead.token). Auto mode takes free files and denies
// files other agents hold (Edit/Write, Bash write targets, Codex apply_patch); strict mode
// denies unlocked files; off mode allows everything. It fails closed: unreachable hub,
// unknown token or garbage input → deny.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { makeTempDir } from '../helpers/claude.js';
import { TokenRecorder } from '../helpers/tokens.js';
import type { Config } from '../../src/config.js';
import { deadPort } from '../helpers/net.js';

const HOOKS_DIR = resolve(fileURLToPath(import.meta.url), '..', '..', '..', 'hooks');
const HOOK = join(HOOKS_DIR, 'overseer-hook.mjs');
const SH_HOOK = join(HOOKS_DIR, 'overseer-hook.sh');
type Kind = 'mjs' | 'sh' | 'bash';
/** The process of each hook: the Node hook; the sh hook with this node as its fallback
 * (hookCommandLine) under /bin/sh (dash here: its curl branch) and under bash (/dev/tcp). */
const hookCmd = (kind: Kind, node = process.execPath): [string, string[]] =>
  kind === 'mjs' ? [process.execPath, [HOOK]] : [kind === 'bash' ? '/bin/bash' : '/bin/sh', [SH_HOOK, node]];
const HANG = { hang: [{ delayMs: 120_000, text: 'never' }] };

interface HubUnderTest { h: TestHub; rec: TokenRecorder; root: string }
interface Agent { id: string; title: string; token: string; client: Client }
interface HookRun { code: number | null; stdout: string; stderr: string }

const hubs: TestHub[] = [];
const temps: string[] = [];

async function hubWith(config: Partial<Config> = {}): Promise<HubUnderTest> {
  const rec = new TokenRecorder();
  const h = await startTestHub({ scripts: HANG, processes: rec, config });
  hubs.push(h);
  return { h, rec, root: realpathSync(h.project) };
}

async function agentOf(t: HubUnderTest, title: string): Promise<Agent> {
  const id = (await t.h.call('spawn_agent', { prompt: '@script:hang', title })).job_id as string;
  await waitForJob(t.h.hub, id, (j) => j.status === 'running');
  return { id, title, token: await t.rec.token(id), client: await t.h.connect({ role: 'agent', jobId: id }) };
}

/** The environment without anything Overseer- or Claude-specific from the outer shell. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('OVERSEER_') && !k.startsWith('CLAUDE_')) env[k] = v;
  }
  return { ...env, ...extra };
}

const agentEnv = (t: HubUnderTest, a: Agent): NodeJS.ProcessEnv => cleanEnv({ OVERSEER_URL: t.h.hub.http!.url, OVERSEER_TOKEN: a.token, OVERSEER_AGENT_ID: a.id });

/** Runs the hook with `stdin`; resolves when it exits (killed after 20 s). */
function runHookAs(cmd: [string, string[]], stdin: string, env: NodeJS.ProcessEnv, cwd: string): Promise<HookRun> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd[0], cmd[1], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the hook did not exit within 20 s; stderr: ${stderr}`)); }, 20_000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code) => { clearTimeout(timer); resolveRun({ code, stdout, stderr }); });
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

/** A Claude-Code-shaped PreToolUse input. */
function preToolUse(cwd: string, toolName: string, toolInput: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: '00000000-0000-4000-8000-000000000000',
    transcript_path: '/dev/null',
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: 'toolu_test',
  });
}

function assertAllowed(r: HookRun, what: string): void {
  assert.equal(r.code, 0, `${what}: exit code (stderr: ${r.stderr})`);
  assert.equal(r.stdout.trim(), '', `${what}: no output means allow, got ${r.stdout}`);
}

/** The deny reason; asserts Claude Code's JSON shape. */
function denied(r: HookRun, what: string): string {
  assert.ok(r.code === 0 || r.code === 2, `${what}: exit ${r.code}`);
  if (r.code === 2) return r.stderr;
  let out: any;
  try { out = JSON.parse(r.stdout.trim()); } catch { assert.fail(`${what}: expected a JSON deny, got ${JSON.stringify(r.stdout)} (stderr ${r.stderr})`); }
  assert.equal(out.hookSpecificOutput?.hookEventName, 'PreToolUse', what);
  assert.equal(out.hookSpecificOutput?.permissionDecision, 'deny', `${what}: ${r.stdout}`);
  assert.equal(typeof out.hookSpecificOutput.permissionDecisionReason, 'string');
  return out.hookSpecificOutput.permissionDecisionReason as string;
}

async function lockRows(h: TestHub, prefix: string): Promise<[string, string, string | null][]> {
  return ((await h.call('list_locks', { path_prefix: prefix })).locks as { path: string; holder: string; reason: string | null }[]).map((l) => [l.path, l.holder, l.reason]);
}

after(async () => {
  for (const h of hubs) await h.stop();
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

for (const kind of ['mjs', 'sh', 'bash'] as const) {
  const runHook = (stdin: string, env: NodeJS.ProcessEnv, cwd: string): Promise<HookRun> => runHookAs(hookCmd(kind), stdin, env, cwd);

  describe(`lock hook (${kind}), auto mode`, () => {
    let t: HubUnderTest;
    let A: Agent;
    let B: Agent;
    const file = (rel: string): string => join(t.root, rel);

    before(async () => {
      t = await hubWith();
      A = await agentOf(t, 'Hook A');
      B = await agentOf(t, 'Hook B');
      const r = await B.client.callTool({ name: 'lock_files', arguments: { files: ['locked.txt'], reason: 'B rewrites it' } });
      assert.notEqual(r.isError, true);
    });

    test('Write of a free file: allowed silently, and the file is now locked by that agent', async () => {
      const r = await runHook(preToolUse(t.root, 'Write', { file_path: file('free.txt'), content: 'x' }), agentEnv(t, A), t.root);
      assertAllowed(r, 'Write free.txt');
      assert.deepEqual(await lockRows(t.h, file('free.txt')), [[file('free.txt'), A.id, 'edited (auto lock)']]);
      const again = await runHook(preToolUse(t.root, 'Edit', { file_path: 'free.txt', old_string: 'x', new_string: 'y' }), agentEnv(t, A), t.root);
      assertAllowed(again, 'Edit of its own auto-locked file (relative path)');
      const other = await runHook(preToolUse(t.root, 'Write', { file_path: file('free.txt'), content: 'z' }), agentEnv(t, B), t.root);
      assert.match(denied(other, 'B writing A\'s auto-locked file'), new RegExp(A.id));
    });

    test('Write of a file another agent locked: deny naming the holder (id and title) and lock_files', async () => {
      const r = await runHook(preToolUse(t.root, 'Write', { file_path: file('locked.txt'), content: 'mine now' }), agentEnv(t, A), t.root);
      const reason = denied(r, 'Write locked.txt');
      assert.ok(reason.includes(B.id), reason);
      assert.ok(reason.includes('"Hook B"'), reason);
      assert.match(reason, /lock_files/);
      assert.deepEqual(await lockRows(t.h, file('locked.txt')), [[file('locked.txt'), B.id, 'B rewrites it']], 'the lock did not move');
      // The denial is in A's events (overseer events / get_agent {events:true}).
      const ev = (await t.h.call('get_agent', { job_id: A.id, events: true })).events.filter((e: any) => e.kind === 'lock_denied');
      assert.deepEqual(ev.at(-1)?.data.files, [file('locked.txt')]);
      assert.ok(ev.at(-1).data.reason.includes(B.id));
      for (const [tool, input] of [
        ['Edit', { file_path: file('locked.txt'), old_string: 'a', new_string: 'b' }],
        ['MultiEdit', { file_path: 'locked.txt', edits: [{ old_string: 'a', new_string: 'b' }] }],
        ['NotebookEdit', { notebook_path: file('locked.txt'), new_source: 'x' }],
      ] as const) {
        assert.ok(denied(await runHook(preToolUse(t.root, tool, input), agentEnv(t, A), t.root), tool).includes(B.id), tool);
      }
    });

    test('Bash: recognised write targets are checked like edits; reads are allowed', async () => {
      for (const command of ['echo hi > locked.txt', 'sed -i s/a/b/ locked.txt', `cp other.txt ${file('locked.txt')}`, 'echo x | tee -a locked.txt',
        'git checkout -- locked.txt', 'rm -f locked.txt', 'mv tmp.txt locked.txt', 'npm run build 2> locked.txt']) {
        const reason = denied(await runHook(preToolUse(t.root, 'Bash', { command }), agentEnv(t, A), t.root), command);
        assert.ok(reason.includes(B.id), `${command}: ${reason}`);
      }
      assertAllowed(await runHook(preToolUse(t.root, 'Bash', { command: 'cat locked.txt' }), agentEnv(t, A), t.root), 'cat locked.txt');
      assertAllowed(await runHook(preToolUse(t.root, 'Bash', { command: 'grep -n foo locked.txt | wc -l' }), agentEnv(t, A), t.root), 'grep');
      assertAllowed(await runHook(preToolUse(t.root, 'Bash', { command: 'echo hi > /dev/null' }), agentEnv(t, A), t.root), 'outside the tree: the policy decides');
    });

    test('Codex apply_patch: targets parsed from the patch', async () => {
      const patch = '*** Begin Patch\n*** Update File: locked.txt\n@@\n-a\n+b\n*** End Patch\n';
      const stdin = JSON.stringify({ session_id: 's', cwd: t.root, hook_event_name: 'PreToolUse', tool_name: 'apply_patch', tool_input: { command: patch } });
      assert.ok(denied(await runHook(stdin, agentEnv(t, A), t.root), 'apply_patch').includes(B.id));
      const free = '*** Begin Patch\n*** Add File: patched-new.txt\n+hello\n*** End Patch\n';
      const ok = JSON.stringify({ session_id: 's', cwd: t.root, hook_event_name: 'PreToolUse', tool_name: 'apply_patch', tool_input: { command: free } });
      assertAllowed(await runHook(ok, agentEnv(t, A), t.root), 'apply_patch adding a free file');
      assert.deepEqual((await lockRows(t.h, file('patched-new.txt'))).map((r) => r[1]), [A.id]);
    });

    test('fails closed: unreachable hub, unknown token, garbage input', async () => {
      const port = await deadPort();
      const down = await runHook(preToolUse(t.root, 'Write', { file_path: file('any.txt'), content: 'x' }),
        cleanEnv({ OVERSEER_URL: `http://127.0.0.1:${port}/mcp`, OVERSEER_TOKEN: A.token }), t.root);
      assert.match(denied(down, 'hub unreachable'), /could not reach the hub/);
      const badToken = await runHook(preToolUse(t.root, 'Write', { file_path: file('any.txt'), content: 'x' }),
        cleanEnv({ OVERSEER_URL: t.h.hub.http!.url, OVERSEER_TOKEN: 'not-a-real-token' }), t.root);
      assert.match(denied(badToken, 'unknown token'), /401/);
      const garbage = await runHook('this is {not json', agentEnv(t, A), t.root);
      assert.match(denied(garbage, 'garbage stdin'), /hook/);
      const empty = await runHook('', agentEnv(t, A), t.root);
      denied(empty, 'empty stdin');
      assert.deepEqual(await lockRows(t.h, file('any.txt')), [], 'nothing was locked by the failed checks');
    });

    test('lead mode: no agent env, hub.json and lead.token from OVERSEER_HOME', async () => {
      assert.ok(existsSync(join(t.h.home, 'hub.json')), 'the test hub wrote hub.json');
      const env = cleanEnv({ OVERSEER_HOME: t.h.home });
      const reason = denied(await runHook(preToolUse(t.root, 'Write', { file_path: file('locked.txt'), content: 'lead' }), env, t.root), 'lead writing locked.txt');
      assert.ok(reason.includes(B.id), reason);
      assertAllowed(await runHook(preToolUse(t.root, 'Write', { file_path: file('lead-free.txt'), content: 'x' }), env, t.root), 'lead writing a free file');
      assert.deepEqual((await lockRows(t.h, file('lead-free.txt'))).map((r) => r[1]), ['lead']);
      await t.h.call('release_files', {});

      const empty = await makeTempDir('ovs-nohub');
      temps.push(empty);
      assertAllowed(await runHook(preToolUse(t.root, 'Write', { file_path: file('locked.txt'), content: 'x' }), cleanEnv({ OVERSEER_HOME: empty }), t.root), 'no hub.json: no hub, nothing to check');
    });
  });

  describe(`lock hook (${kind}), strict and off modes`, () => {
    test('strict: editing a file that is not locked is denied; after lock_files it is allowed', async () => {
      const t = await hubWith({ lockMode: 'strict' });
      const S = await agentOf(t, 'Strict agent');
      const f = join(t.root, 'strict.txt');
      const reason = denied(await runHook(preToolUse(t.root, 'Write', { file_path: f, content: 'x' }), agentEnv(t, S), t.root), 'strict, unlocked');
      assert.match(reason, /strict/);
      assert.match(reason, /lock_files/);
      assert.deepEqual(await lockRows(t.h, f), [], 'strict mode takes nothing on its own');
      const locked = await S.client.callTool({ name: 'lock_files', arguments: { files: ['strict.txt'] } });
      assert.notEqual(locked.isError, true);
      assertAllowed(await runHook(preToolUse(t.root, 'Write', { file_path: f, content: 'x' }), agentEnv(t, S), t.root), 'strict, locked by me');
      denied(await runHook(preToolUse(t.root, 'Bash', { command: 'echo x > other.txt' }), agentEnv(t, S), t.root), 'strict, Bash write to an unlocked file');
    });

    test('off: always allowed, nothing locked', async () => {
      const t = await hubWith({ lockMode: 'off' });
      const O1 = await agentOf(t, 'Off one');
      const O2 = await agentOf(t, 'Off two');
      const held = await O2.client.callTool({ name: 'lock_files', arguments: { files: ['held.txt'] } });
      assert.notEqual(held.isError, true);
      const f = join(t.root, 'held.txt');
      assertAllowed(await runHook(preToolUse(t.root, 'Write', { file_path: f, content: 'x' }), agentEnv(t, O1), t.root), 'off, held by another');
      assertAllowed(await runHook(preToolUse(t.root, 'Write', { file_path: join(t.root, 'free.txt'), content: 'x' }), agentEnv(t, O1), t.root), 'off, free');
      assert.deepEqual(await lockRows(t.h, t.root), [[f, O2.id, null]], 'no auto locks in off mode');
    });
  });
}

describe('lock hook (sh): its own fail-closed paths, the Node fallback, the token off argv', () => {
  let t: HubUnderTest;
  let A: Agent;
  let B: Agent;
  let bin = '';
  const file = (rel: string): string => join(t.root, rel);
  const sh = (stdin: string, env: NodeJS.ProcessEnv, node?: string): Promise<HookRun> => runHookAs(hookCmd('sh', node), stdin, env, t.root);
  const write = (rel: string): string => preToolUse(t.root, 'Write', { file_path: file(rel), content: 'x' });

  before(async () => {
    t = await hubWith();
    A = await agentOf(t, 'Sh A');
    B = await agentOf(t, 'Sh B');
    const r = await B.client.callTool({ name: 'lock_files', arguments: { files: ['held.txt'], reason: 'B owns it' } });
    assert.notEqual(r.isError, true);
    bin = await makeTempDir('ovs-sh-bin');
    temps.push(bin);
  });

  for (const shell of ['sh', 'bash'] as const) test(`${shell}: a hub that accepts the connection and never answers → a deny within the hook's 8 s (before the 15 s hook timeout)`, async () => {
    const sockets: Socket[] = [];
    const server = createServer((s) => { sockets.push(s); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as AddressInfo).port;
      const t0 = Date.now();
      const r = await runHookAs(hookCmd(shell), write('hang.txt'), cleanEnv({ OVERSEER_URL: `http://127.0.0.1:${port}/mcp`, OVERSEER_TOKEN: A.token }), t.root);
      const took = Date.now() - t0;
      assert.match(denied(r, 'hanging hub'), /could not reach the hub at http:\/\/127\.0\.0\.1:\d+\/mcp \(no answer within 8 s/);
      assert.ok(took >= 7_000 && took < 14_000, `took ${took} ms`);
      assert.ok(sockets.length >= 1, 'the hook never connected');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test('no curl on PATH → the Node hook answers (same verdicts); no curl and no node → a deny', async () => {
    const noCurl = join(bin, 'no-curl');
    mkdirSync(noCurl);
    for (const tool of ['cat', 'tr', 'sed', 'sha256sum']) {
      const at = execFileSync('/bin/sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
      symlinkSync(at, join(noCurl, tool));
    }
    const env = { ...agentEnv(t, A), PATH: noCurl };
    assertAllowed(await sh(write('fallback-free.txt'), env), 'free file through the fallback');
    assert.deepEqual((await lockRows(t.h, file('fallback-free.txt'))).map((r) => r[1]), [A.id], 'the Node hook took the lock');
    assert.ok(denied(await sh(write('held.txt'), env), 'held file through the fallback').includes(B.id));
    const none = await sh(write('held.txt'), env, join(bin, 'no-such-node'));
    assert.match(denied(none, 'neither curl nor node'), /needs curl or node/);
  });

  test('the bearer token is not on curl\'s command line (ps shows argv); the verdict is the same through a recording curl', async () => {
    const rec = join(bin, 'rec');
    mkdirSync(rec);
    const real = execFileSync('/bin/sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
    const log = join(bin, 'curl-argv.txt');
    writeFileSync(join(rec, 'curl'), `#!/bin/sh\nprintf '%s\\n' "$@" >> '${log}'\nexec '${real}' "$@"\n`);
    chmodSync(join(rec, 'curl'), 0o755);
    const env = { ...agentEnv(t, A), PATH: `${rec}:${process.env.PATH}` };
    assert.ok(denied(await sh(write('held.txt'), env), 'held file').includes(B.id));
    assertAllowed(await sh(write('argv-free.txt'), env), 'free file');
    const argv = readFileSync(log, 'utf8');
    assert.match(argv, /\/hook$/m, 'the recording curl was used');
    assert.ok(!argv.includes(A.token), 'the agent token is on curl\'s argv');
  });
  test('bash: the hook posts over /dev/tcp and starts no curl (a curl on PATH that only records and fails); an input over 16 KB goes through curl', async () => {
    const rec = join(bin, 'rec-bash');
    mkdirSync(rec);
    const log = join(bin, 'curl-bash.txt');
    writeFileSync(join(rec, 'curl'), `#!/bin/sh\nprintf '%s\\n' "$@" >> '${log}'\nexit 7\n`);
    chmodSync(join(rec, 'curl'), 0o755);
    const env = { ...agentEnv(t, A), PATH: `${rec}:${process.env.PATH}` };
    const bash = (stdin: string): Promise<HookRun> => runHookAs(hookCmd('bash', join(bin, 'no-such-node')), stdin, env, t.root);
    assert.ok(denied(await bash(write('held.txt')), 'held file').includes(B.id));
    assertAllowed(await bash(write('tcp-free.txt')), 'free file');
    assert.deepEqual((await lockRows(t.h, file('tcp-free.txt'))).map((r) => r[1]), [A.id], 'the hub took the lock for A');
    assert.equal(existsSync(log), false, 'curl was started');
    // Over 16 KB (a large patch): curl, which here fails, so the hook fails closed naming curl's exit.
    const big = preToolUse(t.root, 'Write', { file_path: file('big.txt'), content: 'x'.repeat(20_000) });
    assert.match(denied(await bash(big), 'big input'), /could not reach the hub .*curl exit 7/);
    assert.match(readFileSync(log, 'utf8'), /\/hook$/m, 'the big input went to curl');
    assert.deepEqual(await lockRows(t.h, file('big.txt')), [], 'nothing was locked');
  });

  test('bash: unreachable hub, unknown token and a hub that closes without answering → a deny', async () => {
    const bash = (stdin: string, env: NodeJS.ProcessEnv): Promise<HookRun> => runHookAs(hookCmd('bash', join(bin, 'no-such-node')), stdin, env, t.root);
    const port = await deadPort();
    assert.match(denied(await bash(write('x.txt'), cleanEnv({ OVERSEER_URL: `http://127.0.0.1:${port}/mcp`, OVERSEER_TOKEN: A.token })), 'closed port'), /could not reach the hub .*connection refused or closed/);
    assert.match(denied(await bash(write('x.txt'), cleanEnv({ OVERSEER_URL: t.h.hub.http!.url, OVERSEER_TOKEN: 'not-a-real-token' })), 'unknown token'), /hub answered 401/);
    const server = createServer((s) => { s.resume(); s.end(); }); // reads what comes, answers nothing
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const p = (server.address() as AddressInfo).port;
      assert.match(denied(await bash(write('x.txt'), cleanEnv({ OVERSEER_URL: `http://127.0.0.1:${p}/mcp`, OVERSEER_TOKEN: A.token })), 'closed at once'), /connection refused or closed/);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    // A hub that resets the connection at once: the hook's write fails (EPIPE, not a SIGPIPE that would kill it unheard).
    const reset = createServer((s) => { s.resetAndDestroy(); });
    await new Promise<void>((r) => reset.listen(0, '127.0.0.1', () => r()));
    try {
      const p = (reset.address() as AddressInfo).port;
      const big = preToolUse(t.root, 'Write', { file_path: file('x.txt'), content: 'y'.repeat(15_000) });
      for (let i = 0; i < 5; i++) assert.match(denied(await bash(big, cleanEnv({ OVERSEER_URL: `http://127.0.0.1:${p}/mcp`, OVERSEER_TOKEN: A.token })), 'reset'), /connection refused or closed/);
    } finally {
      await new Promise<void>((r) => reset.close(() => r()));
    }
    assert.deepEqual(await lockRows(t.h, file('x.txt')), [], 'nothing was locked');
  });
});
