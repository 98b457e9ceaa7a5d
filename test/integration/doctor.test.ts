// Integration: `overseer doctor` in-process against the real machine: the repo's own claude
// binary (its real --version), a local HTTP server standing in for the Anthropic API (a 404
// is an answer, so reachable), a closed port (refused), a server that never answers (time
// limit), and CLAUDE_BIN=/nonexistent (fail, exit code 1, the fix). Also the real exec helper.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDoctor, type DoctorIo } from '../../src/cli/doctor.js';
import { execCommand } from '../../src/doctor/io.js';
import type { Check } from '../../src/doctor/types.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLAUDE = join(REPO_ROOT, 'node_modules', '.bin', 'claude');
const CODEX = join(REPO_ROOT, 'node_modules', '.bin', 'codex');

let dir: string;
let server: Server;
let baseUrl: string;
let requests: string[] = [];
let silent: Server;
let silentUrl: string;
const sockets = new Set<Socket>();

function listen(s: Server): Promise<string> {
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doctor-int-'));
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"type":"error","error":{"type":"not_found_error"}}');
  });
  baseUrl = await listen(server);
  // Accepts connections and never answers.
  silent = createServer(() => undefined);
  silent.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  silentUrl = await listen(silent);
});

after(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all([server, silent].map((s) => new Promise((r) => s.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

/** The real environment (PATH for git and node) with the doctor's variables overridden; no codex (no network). */
function envWith(over: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, OVERSEER_HOME: join(dir, 'state'), CODEX_BIN: '/nonexistent/codex', ...over };
  for (const k of ['CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy']) delete env[k];
  return env;
}

/** `overseer doctor --json` in-process: its output, the exit codes it set, and the parsed report. */
async function doctor(env: NodeJS.ProcessEnv, extra: Partial<DoctorIo> = {}): Promise<{ out: string; codes: number[]; ok: boolean; checks: Map<string, Check> }> {
  const { out, codes } = await doctorText(env, extra, true);
  const r = JSON.parse(out) as { ok: boolean; checks: Check[] };
  return { out, codes, ok: r.ok, checks: new Map(r.checks.map((c) => [c.name, c])) };
}

/** `overseer doctor` (text, or --json) in-process. */
async function doctorText(env: NodeJS.ProcessEnv, extra: Partial<DoctorIo> = {}, json = false): Promise<{ out: string; codes: number[] }> {
  let out = '';
  const codes: number[] = [];
  await runDoctor({ json }, { env, cwd: dir, out: (t) => { out += t; }, setExitCode: (c) => codes.push(c), ...extra });
  return { out, codes };
}

describe('overseer doctor (in-process, real claude binary and HTTP)', () => {
  test('CLAUDE_BIN = the repo\'s claude, ANTHROPIC_BASE_URL answering 404: claude and its endpoint are ok', { skip: !existsSync(CLAUDE) && 'node_modules/.bin/claude is not installed' }, async () => {
    requests = [];
    const r = await doctor(envWith({ CLAUDE_BIN: CLAUDE, ANTHROPIC_BASE_URL: baseUrl }));
    const claude = r.checks.get('claude')!;
    assert.equal(claude.status, 'ok', claude.detail);
    assert.match(claude.detail, new RegExp(`^${CLAUDE.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(from CLAUDE_BIN\\): \\d+\\.\\d+\\.\\d+ \\(Claude Code\\)$`));
    assert.deepEqual(r.checks.get('claude endpoint'), { name: 'claude endpoint', status: 'ok', detail: `${baseUrl} (ANTHROPIC_BASE_URL) answers (HTTP 404)` });
    assert.deepEqual(requests, ['GET /']);
    assert.equal(r.checks.get('git')?.status, 'ok');
    assert.equal(r.checks.get('state dir')?.status, 'ok');
    assert.equal(r.checks.get('codex')?.status, 'warn');
    // Nothing Claude needs is missing (credentials are at worst a warning behind a base URL).
    assert.equal(r.ok, true, r.out);
    assert.deepEqual(r.codes, []);
  });

  test('CLAUDE_BIN=/nonexistent: fail with the fix, exit code 1, a ✘ line and the summary', async () => {
    const env = envWith({ CLAUDE_BIN: '/nonexistent', ANTHROPIC_BASE_URL: baseUrl });
    const r = await doctor(env);
    const claude = r.checks.get('claude')!;
    assert.equal(claude.status, 'fail');
    assert.equal(claude.detail, 'CLAUDE_BIN is /nonexistent, which does not exist');
    assert.equal(claude.fix, 'point CLAUDE_BIN at an existing claude binary (CLAUDE_BIN=/path/to/claude), or unset it and npm i -g @anthropic-ai/claude-code');
    assert.equal(r.ok, false);
    assert.deepEqual(r.codes, [1]);
    const text = await doctorText(env);
    assert.deepEqual(text.codes, [1]);
    assert.equal(text.out.trimEnd().split('\n').length, r.checks.size + 1);
    assert.match(text.out, /^✘ claude +CLAUDE_BIN is \/nonexistent, which does not exist — fix: point CLAUDE_BIN/m);
    assert.match(text.out, /\nNot ready: \d+ problems? \(claude[^)]*\) must be fixed before overseer can run Claude children.*\.\n$/);
  });

  test('the real codex binary with OVERSEER_CODEX_PROVIDER at the local server: the provider is what is checked', { skip: !existsSync(CODEX) && 'node_modules/.bin/codex is not installed' }, async () => {
    requests = [];
    const provider = JSON.stringify({ base_url: `${baseUrl}/v1`, env_key: 'DOCTOR_TEST_CODEX_KEY', name: 'local' });
    const r = await doctor(envWith({ CLAUDE_BIN: CLAUDE, ANTHROPIC_BASE_URL: baseUrl, CODEX_BIN: CODEX, OVERSEER_CODEX_PROVIDER: provider }));
    assert.equal(r.checks.get('config')?.status, 'ok');
    const codex = r.checks.get('codex')!;
    assert.equal(codex.status, 'ok', codex.detail);
    assert.match(codex.detail, /\(from CODEX_BIN\): codex-cli \d+\.\d+\.\d+$/);
    assert.equal(r.checks.get('codex endpoint')?.detail, `${baseUrl}/v1 (provider local) answers (HTTP 404)`);
    assert.deepEqual(r.checks.get('codex credentials'), {
      name: 'codex credentials', status: 'warn', detail: 'provider local takes its key from DOCTOR_TEST_CODEX_KEY, which is not set',
      fix: `export DOCTOR_TEST_CODEX_KEY=<key for ${baseUrl}/v1>`,
    });
    assert.deepEqual(requests.sort(), ['GET /', 'GET /v1']);
    // One command in a real codex child, against the bundled fake model (not the provider above).
    assert.equal(r.checks.get('codex shell')?.status, 'ok', r.checks.get('codex shell')?.detail);
    assert.equal(r.ok, true, r.out);
  });

  test('a closed port is refused; a server that never answers hits the time limit', async () => {
    const closed = createServer();
    const url = await listen(closed);
    await new Promise((r) => closed.close(r));
    const refused = await doctor(envWith({ CLAUDE_BIN: CLAUDE, ANTHROPIC_BASE_URL: url }));
    assert.deepEqual(refused.checks.get('claude endpoint'), {
      name: 'claude endpoint', status: 'fail', detail: `${url} (ANTHROPIC_BASE_URL) is not reachable: connection refused`,
      fix: 'start the server ANTHROPIC_BASE_URL points at, correct ANTHROPIC_BASE_URL, or unset it to use https://api.anthropic.com',
    });
    assert.equal(refused.ok, false);
    const hung = await doctor(envWith({ CLAUDE_BIN: CLAUDE, ANTHROPIC_BASE_URL: silentUrl }), { fetchTimeoutMs: 300 });
    assert.equal(hung.checks.get('claude endpoint')?.detail, `${silentUrl} (ANTHROPIC_BASE_URL) is not reachable: no answer within 300 ms`);
  });
});

describe('doctor exec helper (real processes)', () => {
  test('output and exit code; a missing binary; stdin is not a pipe; a hanging command is killed at the limit', async () => {
    const opts = { timeoutMs: 10_000, env: process.env, cwd: dir };
    assert.deepEqual(await execCommand(process.execPath, ['-e', 'process.stdout.write("v1\\n"); process.stderr.write("e"); process.exit(3)'], opts),
      { kind: 'exited', code: 3, signal: null, stdout: 'v1\n', stderr: 'e' });
    const missing = await execCommand('/nonexistent/bin', ['--version'], opts);
    assert.equal(missing.kind, 'spawn_error');
    assert.equal(missing.kind === 'spawn_error' && missing.code, 'ENOENT');
    // A command that reads stdin to the end would hang on a pipe; ignored stdin ends at once.
    const stdin = await execCommand(process.execPath, ['-e', 'let n=0; process.stdin.on("data", d => n += d.length).on("end", () => console.log("eof", n))'], opts);
    assert.deepEqual(stdin.kind === 'exited' && [stdin.code, stdin.stdout], [0, 'eof 0\n']);
    const started = Date.now();
    const hung = await execCommand(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { ...opts, timeoutMs: 300 });
    assert.equal(hung.kind, 'timeout');
    assert.ok(Date.now() - started < 5000);
  });
});
