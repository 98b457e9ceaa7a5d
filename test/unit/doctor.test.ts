// `overseer doctor` checks, one by one, with injected exec/fetch/env: binaries missing or
// broken, endpoints refused vs answered (401 counts as reachable), credentials present or not
// (never printed), the state directory, database and hub.json, and the report/exit code.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { checkGh, checkGit, checkNode } from '../../src/doctor/system.js';
import { checkConfig, checkHub, checkStateDb, checkStateDir, KNOWN_SCHEMA_VERSION } from '../../src/doctor/state.js';
import { checkSessions } from '../../src/doctor/session.js';
import { checkConfinement, checkStatePlace } from '../../src/doctor/confine.js';
import { execFileSync } from 'node:child_process';
import { loadConfigFrom } from '../../src/config.js';
import {
  CLAUDE_CLI, CODEX_CLI, checkAgentBinary, checkClaudeCredentials, checkClaudeEndpoint, checkCodexCredentials, checkCodexEndpoint, codexProviderOf,
} from '../../src/doctor/agents.js';
import { doctorDeps, doctorOk, renderText } from '../../src/doctor/run.js';
import { safeUrl } from '../../src/doctor/io.js';
import { doctorReport, runDoctor } from '../../src/cli/doctor.js';
import type { Check, DoctorDeps, ExecFn, ExecResult, FetchFn } from '../../src/doctor/types.js';

let dir: string;
let stateHome: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'doctor-unit-'));
  stateHome = join(dir, 'state');
});
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const fresh = (): string => { const d = join(dir, `d${++n}`); mkdirSync(d, { recursive: true }); return d; };

/** An executable file at dir/name (content irrelevant: exec is injected). */
function fakeBin(d: string, name: string): string {
  const p = join(d, name);
  writeFileSync(p, '#!/bin/sh\nexit 0\n');
  chmodSync(p, 0o755);
  return p;
}

interface Call { bin: string; args: readonly string[] }
/** exec answering by `bin args` (first match by substring), recording calls. Unknown commands: ENOENT. */
function fakeExec(table: Record<string, ExecResult>, calls: Call[] = []): ExecFn {
  return async (bin, args) => {
    calls.push({ bin, args });
    const cmd = `${bin} ${args.join(' ')}`;
    const hit = Object.entries(table).find(([k]) => cmd.includes(k));
    return hit ? hit[1] : { kind: 'spawn_error', code: 'ENOENT', message: `spawn ${bin} ENOENT` };
  };
}
const exited = (stdout: string, code = 0, stderr = ''): ExecResult => ({ kind: 'exited', code, signal: null, stdout, stderr });

const answers = (status: number, urls: string[] = []): FetchFn => async (url) => { urls.push(url); return { status, body: null }; };
const refused: FetchFn = async () => { throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) }); };
/** Never answers: rejects only when the check's time limit aborts it. */
const hangs: FetchFn = (_url, init) => new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(init.signal.reason)));

function deps(over: Partial<DoctorDeps> = {}): DoctorDeps {
  const emptyPath = over.env?.PATH ?? fresh();
  return doctorDeps({
    cwd: dir,
    homedir: fresh(),
    platform: 'linux',
    nodeVersion: '20.11.1',
    packageRoot: fresh(),
    exec: fakeExec({}),
    fetch: answers(404),
    pidAlive: () => false,
    ...over,
    env: { PATH: emptyPath, ...over.env },
  });
}

describe('doctor: node, git, gh', () => {
  test('node 20 or newer is ok; older fails with the fix', () => {
    assert.equal(checkNode({ nodeVersion: '20.0.0' }).status, 'ok');
    assert.equal(checkNode({ nodeVersion: '22.3.0' }).status, 'ok');
    const old = checkNode({ nodeVersion: '18.19.0' });
    assert.equal(old.status, 'fail');
    assert.match(old.detail, /v18\.19\.0 is too old/);
    assert.match(old.fix!, /Node\.js 20 or newer/);
  });

  test('git: version when installed, fail with the fix when missing or broken', async () => {
    const ok = await checkGit(deps({ exec: fakeExec({ 'git --version': exited('git version 2.43.0\n') }) }));
    assert.deepEqual(ok, { name: 'git', status: 'ok', detail: 'git version 2.43.0' });
    const missing = await checkGit(deps());
    assert.equal(missing.status, 'fail');
    assert.match(missing.detail, /not installed/);
    assert.match(missing.fix!, /install git/);
    const broken = await checkGit(deps({ exec: fakeExec({ 'git --version': exited('', 127, 'error while loading shared libraries: libpcre2') }) }));
    assert.equal(broken.status, 'fail');
    assert.match(broken.detail, /exited with code 127: error while loading shared libraries/);
  });

  test('gh: missing or logged out is a warning; the auth output is never echoed', async () => {
    const missing = await checkGh(deps());
    assert.equal(missing.status, 'warn');
    assert.match(missing.detail, /not installed.*pull requests/);
    assert.match(missing.fix!, /cli\.github\.com.*gh auth login/);
    const loggedOut = await checkGh(deps({ exec: fakeExec({ 'gh --version': exited('gh version 2.40.0 (2023-12-07)\nhttps://github.com/cli/cli/releases/tag/v2.40.0\n'), 'gh auth status': exited('', 1, 'You are not logged into any GitHub hosts. To log in, run: gh auth login') }) }));
    assert.equal(loggedOut.status, 'warn');
    assert.match(loggedOut.detail, /^gh version 2\.40\.0 is installed but not logged in/);
    assert.equal(loggedOut.fix, 'run gh auth login (or set GH_TOKEN)');
    const ok = await checkGh(deps({ exec: fakeExec({ 'gh --version': exited('gh version 2.40.0 (2023-12-07)\n'), 'gh auth status': exited('', 0, 'Logged in to github.com account octo\n  - Token: gho_************************************\n') }) }));
    assert.equal(ok.status, 'ok');
    assert.doesNotMatch(ok.detail, /gho_|octo/);
  });
});

describe('doctor: which claude/codex binary, and --version', () => {
  const version = (v: string, calls: Call[] = []): ExecFn => fakeExec({ '--version': exited(`${v}\n`) }, calls);

  test('nothing anywhere: fail with the fix', async () => {
    const { check } = await checkAgentBinary(CLAUDE_CLI, undefined, deps());
    assert.equal(check.status, 'fail');
    assert.match(check.detail, /no claude binary: CLAUDE_BIN is not set, claude is not on PATH, and there is no bundled one/);
    assert.equal(check.fix, 'set CLAUDE_BIN=/path/to/claude or npm i -g @anthropic-ai/claude-code');
  });

  test('CLAUDE_BIN pointing at nothing: fail naming it, even when claude is on PATH', async () => {
    const path = fresh();
    fakeBin(path, 'claude');
    const { check } = await checkAgentBinary(CLAUDE_CLI, undefined, deps({ env: { PATH: path, CLAUDE_BIN: '/nonexistent/claude' }, exec: version('2.1.0 (Claude Code)') }));
    assert.equal(check.status, 'fail');
    assert.equal(check.detail, 'CLAUDE_BIN is /nonexistent/claude, which does not exist');
    assert.match(check.fix!, /CLAUDE_BIN=\/path\/to\/claude.*npm i -g @anthropic-ai\/claude-code/);
  });

  test('CLAUDE_BIN, then PATH, then the bundled one; --version is run with its output reported', async () => {
    const path = fresh();
    const onPath = fakeBin(path, 'claude');
    const explicit = fakeBin(fresh(), 'my-claude');
    const calls: Call[] = [];
    const a = await checkAgentBinary(CLAUDE_CLI, undefined, deps({ env: { PATH: path, CLAUDE_BIN: explicit }, exec: version('2.1.5 (Claude Code)', calls) }));
    assert.deepEqual(a.check, { name: 'claude', status: 'ok', detail: `${explicit} (from CLAUDE_BIN): 2.1.5 (Claude Code)` });
    assert.deepEqual(calls, [{ bin: explicit, args: ['--version'] }]);
    const b = await checkAgentBinary(CLAUDE_CLI, undefined, deps({ env: { PATH: path }, exec: version('2.1.5 (Claude Code)') }));
    assert.equal(b.check.detail, `${onPath} (claude on PATH): 2.1.5 (Claude Code)`);
    const root = fresh();
    mkdirSync(join(root, 'node_modules', '.bin'), { recursive: true });
    const bundled = fakeBin(join(root, 'node_modules', '.bin'), 'claude');
    const c = await checkAgentBinary(CLAUDE_CLI, undefined, deps({ packageRoot: root, exec: version('2.1.5 (Claude Code)') }));
    assert.equal(c.check.detail, `${bundled} (bundled with overseer-mcp): 2.1.5 (Claude Code)`);
    const d = await checkAgentBinary(CLAUDE_CLI, { claudeBin: explicit }, deps({ exec: version('2.1.5 (Claude Code)') }));
    assert.equal(d.check.detail, `${explicit} (from claudeBin in config.json): 2.1.5 (Claude Code)`);
  });

  test('a binary whose --version fails, hangs or cannot run: fail with the reason and a reinstall fix', async () => {
    const bin = fakeBin(fresh(), 'claude');
    const env = { CLAUDE_BIN: bin };
    const bad = await checkAgentBinary(CLAUDE_CLI, undefined, deps({ env, exec: fakeExec({ '--version': exited('', 1, 'Error: Cannot find module \'./cli.js\'\n    at x') }) }));
    assert.equal(bad.check.status, 'fail');
    assert.match(bad.check.detail, /does not work: `claude --version` exited with code 1: Error: Cannot find module '\.\/cli\.js'$/);
    assert.equal(bad.check.fix, 'reinstall it (npm i -g @anthropic-ai/claude-code) or point CLAUDE_BIN at a working claude');
    const hung = await checkAgentBinary(CLAUDE_CLI, undefined, deps({ env, execTimeoutMs: 5000, exec: fakeExec({ '--version': { kind: 'timeout', stdout: '', stderr: '' } }) }));
    assert.match(hung.check.detail, /`claude --version` gave no answer within 5 s/);
    const denied = await checkAgentBinary(CLAUDE_CLI, undefined, deps({ env, exec: fakeExec({ '--version': { kind: 'spawn_error', code: 'EACCES', message: 'spawn EACCES' } }) }));
    assert.match(denied.check.detail, /not executable \(permission denied\)/);
  });

  test('codex missing is only a warning, with its own fix', async () => {
    const { check, bin } = await checkAgentBinary(CODEX_CLI, undefined, deps());
    assert.equal(bin, undefined);
    assert.equal(check.status, 'warn');
    assert.match(check.detail, /no codex binary.*claude children are not affected/);
    assert.equal(check.fix, 'set CODEX_BIN=/path/to/codex or npm i -g @openai/codex');
    const broken = await checkAgentBinary(CODEX_CLI, undefined, deps({ env: { CODEX_BIN: fakeBin(fresh(), 'codex') }, exec: fakeExec({ '--version': exited('', 1) }) }));
    assert.equal(broken.check.status, 'warn');
  });
});

describe('doctor: endpoints', () => {
  test('claude: any HTTP answer (401) is reachable; the default URL is api.anthropic.com; nothing secret is sent', async () => {
    const urls: string[] = [];
    let init: unknown;
    const fetch: FetchFn = async (url, i) => { urls.push(url); init = i; return { status: 401, body: null }; };
    const c = await checkClaudeEndpoint(deps({ fetch, env: { ANTHROPIC_API_KEY: 'sk-ant-secret' } }));
    assert.deepEqual(c, { name: 'claude endpoint', status: 'ok', detail: 'https://api.anthropic.com (default) answers (HTTP 401)' });
    assert.deepEqual(urls, ['https://api.anthropic.com']);
    assert.doesNotMatch(JSON.stringify(init), /sk-ant-secret|headers/);
  });

  test('claude: ANTHROPIC_BASE_URL refused is a failure with the fix; credentials in the URL are masked', async () => {
    const c = await checkClaudeEndpoint(deps({ fetch: refused, env: { ANTHROPIC_BASE_URL: 'http://user:hunter2@127.0.0.1:9/v1?api_key=abc' } }));
    assert.equal(c.status, 'fail');
    assert.equal(c.detail, 'http://***:***@127.0.0.1:9/v1?api_key=*** (ANTHROPIC_BASE_URL) is not reachable: connection refused');
    assert.match(c.fix!, /start the server ANTHROPIC_BASE_URL points at/);
    assert.doesNotMatch(JSON.stringify(c), /hunter2|abc/);
  });

  test('no answer within the time limit; a proxy in the environment is mentioned', async () => {
    const c = await checkClaudeEndpoint(deps({ fetch: hangs, fetchTimeoutMs: 30, env: { HTTPS_PROXY: 'http://proxy:3128' } }));
    assert.equal(c.status, 'fail');
    assert.equal(c.detail, 'https://api.anthropic.com (default) is not reachable: no answer within 30 ms (this check connects directly, without HTTPS_PROXY)');
  });

  test('an invalid ANTHROPIC_BASE_URL fails without a request; Bedrock is not probed', async () => {
    const urls: string[] = [];
    const bad = await checkClaudeEndpoint(deps({ fetch: answers(200, urls), env: { ANTHROPIC_BASE_URL: 'localhost:8080' } }));
    assert.equal(bad.status, 'fail');
    assert.equal(bad.detail, 'ANTHROPIC_BASE_URL is not a valid http(s) URL');
    const bedrock = await checkClaudeEndpoint(deps({ fetch: answers(200, urls), env: { CLAUDE_CODE_USE_BEDROCK: '1' } }));
    assert.equal(bedrock.status, 'ok');
    assert.deepEqual(urls, []);
  });

  test('codex: the provider base_url, else api.openai.com/v1; unreachable is only a warning', async () => {
    const urls: string[] = [];
    const d = await checkCodexEndpoint(undefined, deps({ fetch: answers(404, urls) }));
    assert.equal(d.detail, "https://api.openai.com/v1 (codex's built-in OpenAI provider) answers (HTTP 404)");
    const p = await checkCodexEndpoint({ codexProvider: { base_url: 'http://127.0.0.1:4000/v1', name: 'litellm' } }, deps({ fetch: refused }));
    assert.equal(p.status, 'warn');
    assert.equal(p.detail, 'http://127.0.0.1:4000/v1 (provider litellm) is not reachable: connection refused');
    assert.match(p.fix!, /OVERSEER_CODEX_PROVIDER/);
    const unnamed = await checkCodexEndpoint({ codexProvider: { base_url: 'http://127.0.0.1:4000/v1' } }, deps());
    assert.equal(unnamed.detail, 'http://127.0.0.1:4000/v1 (provider overseer) answers (HTTP 404)');
    const broken = await checkCodexEndpoint({ codexProvider: { env_key: 'X' } }, deps());
    assert.equal(broken.status, 'warn');
    assert.match(broken.detail, /no base_url/);
    assert.deepEqual(urls, ['https://api.openai.com/v1']);
  });
});

describe('doctor: credentials (presence only)', () => {
  test('claude: none on Linux fails; the fix says how', () => {
    const c = checkClaudeCredentials(deps());
    assert.equal(c.status, 'fail');
    assert.match(c.detail, /^no credentials: ANTHROPIC_API_KEY is not set and there is no Claude Code login \(.*\.claude\/\.credentials\.json\)$/);
    assert.match(c.fix!, /export ANTHROPIC_API_KEY=.*\/login/);
  });

  test('claude: ANTHROPIC_API_KEY or a login file is ok, and no secret is printed', () => {
    const k = checkClaudeCredentials(deps({ env: { ANTHROPIC_API_KEY: 'sk-ant-api03-verysecret' } }));
    assert.deepEqual(k, { name: 'claude credentials', status: 'ok', detail: 'ANTHROPIC_API_KEY is set' });
    const home = fresh();
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', '.credentials.json'), '{"claudeAiOauth":{"accessToken":"sk-ant-oat01-secret"}}');
    const l = checkClaudeCredentials(deps({ homedir: home }));
    assert.equal(l.status, 'ok');
    assert.equal(l.detail, `a Claude Code login exists (${join(home, '.claude', '.credentials.json')})`);
    const cfgDir = fresh();
    writeFileSync(join(cfgDir, '.credentials.json'), '{}');
    assert.equal(checkClaudeCredentials(deps({ env: { CLAUDE_CONFIG_DIR: cfgDir } })).status, 'ok');
  });

  test('claude: none found is only a warning on macOS (Keychain) or behind ANTHROPIC_BASE_URL', () => {
    const mac = checkClaudeCredentials(deps({ platform: 'darwin' }));
    assert.equal(mac.status, 'warn');
    assert.match(mac.detail, /Keychain/);
    const gw = checkClaudeCredentials(deps({ env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080' } }));
    assert.equal(gw.status, 'warn');
    assert.match(gw.detail, /needs no key/);
  });

  test('codex: only OPENAI_API_KEY set says codex reads CODEX_API_KEY', () => {
    const c = checkCodexCredentials(undefined, stateHome, deps({ env: { OPENAI_API_KEY: 'sk-proj-secret' } }));
    assert.equal(c.status, 'warn');
    assert.equal(c.detail, "only OPENAI_API_KEY is set: codex's built-in provider authenticates from CODEX_API_KEY, not OPENAI_API_KEY");
    assert.equal(c.fix, 'export CODEX_API_KEY="$OPENAI_API_KEY"');
    assert.doesNotMatch(JSON.stringify(c), /sk-proj-secret/);
  });

  test("codex: CODEX_API_KEY or a login in overseer's CODEX_HOME; the user's ~/.codex login does not reach children", () => {
    assert.deepEqual(checkCodexCredentials(undefined, stateHome, deps({ env: { CODEX_API_KEY: 'sk-x' } })), { name: 'codex credentials', status: 'ok', detail: 'CODEX_API_KEY is set' });
    const none = checkCodexCredentials(undefined, stateHome, deps());
    assert.deepEqual(none, { name: 'codex credentials', status: 'warn', detail: 'no codex credentials: CODEX_API_KEY is not set', fix: 'export CODEX_API_KEY=<your OpenAI key>' });
    const home = fresh();
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex', 'auth.json'), '{"OPENAI_API_KEY":"sk-secret"}');
    const user = checkCodexCredentials(undefined, stateHome, deps({ homedir: home }));
    assert.equal(user.status, 'warn');
    assert.match(user.detail, /your codex login \(.*\.codex\/auth\.json\) does not reach children, which run with overseer's own CODEX_HOME/);
    assert.equal(user.fix, `export CODEX_API_KEY=<your OpenAI key>, or log in for overseer: CODEX_HOME=${join(stateHome, 'codex-home')} codex login`);
    const own = fresh();
    mkdirSync(join(own, 'codex-home'));
    writeFileSync(join(own, 'codex-home', 'auth.json'), '{}');
    const ok = checkCodexCredentials(undefined, own, deps({ homedir: home }));
    assert.equal(ok.status, 'ok');
    assert.match(ok.detail, /a codex login exists in overseer's CODEX_HOME/);
    assert.doesNotMatch(JSON.stringify([user, ok]), /sk-secret/);
  });

  test("codex: a configured provider's env_key is what counts", () => {
    const cfg = { codexProvider: { base_url: 'https://llm.example/v1', env_key: 'LLM_KEY', name: 'corp' } };
    assert.deepEqual(checkCodexCredentials(cfg, stateHome, deps({ env: { LLM_KEY: 'k' } })), { name: 'codex credentials', status: 'ok', detail: 'LLM_KEY is set (provider corp)' });
    const missing = checkCodexCredentials(cfg, stateHome, deps({ env: { CODEX_API_KEY: 'sk-x' } }));
    assert.equal(missing.status, 'warn');
    assert.equal(missing.detail, 'provider corp takes its key from LLM_KEY, which is not set');
    assert.match(missing.fix!, /^export LLM_KEY=/);
    assert.equal(checkCodexCredentials({ codexProvider: { base_url: 'http://127.0.0.1:1/v1' } }, stateHome, deps()).status, 'ok');
  });

  test('codexProviderOf reads the config defensively', () => {
    assert.deepEqual(codexProviderOf(undefined), {});
    assert.deepEqual(codexProviderOf({ maxAgents: 3 }), {});
    assert.ok(codexProviderOf({ codexProvider: 'http://x' }).problem);
    assert.deepEqual(codexProviderOf({ codexProvider: { base_url: 'http://x/v1', env_key: '' } }), { provider: { base_url: 'http://x/v1', env_key: undefined, name: undefined, id: undefined } });
  });
});

describe('doctor: state directory, database, hub', () => {
  test('an existing writable directory, and one that can be created, are ok', () => {
    const d = fresh();
    assert.deepEqual(checkStateDir(d), { name: 'state dir', status: 'ok', detail: `${d} (exists, writable)` });
    const later = join(d, 'a', 'b', '.overseer');
    assert.equal(checkStateDir(later).detail, `${later} (does not exist yet; created on first run)`);
  });

  test('a path under a regular file cannot be created (works as root, unlike chmod)', () => {
    const file = join(fresh(), 'not-a-dir');
    writeFileSync(file, 'x');
    const c = checkStateDir(join(file, 'state'));
    assert.equal(c.status, 'fail');
    assert.equal(c.detail, `${join(file, 'state')} does not exist and cannot be created: ${file} is a file, not a directory`);
    assert.match(c.fix!, /OVERSEER_HOME/);
    const itself = checkStateDir(file);
    assert.equal(itself.status, 'fail');
    assert.match(itself.detail, /exists but is not a directory/);
  });

  test('state db: none yet, current, older (will migrate), newer (fail), not a database (fail)', async () => {
    const none = fresh();
    assert.match((await checkStateDb(none)).detail, /no .*state\.db yet/);

    const cur = fresh();
    openDb(join(cur, 'state.db')).close();
    const c = await checkStateDb(cur);
    assert.equal(c.status, 'ok');
    assert.match(c.detail, new RegExp(`^${join(cur, 'state.db').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: schema version ${KNOWN_SCHEMA_VERSION} \\(current\\), 0 jobs, \\d+\\.\\d KB on disk \\(\\d+\\.\\d KB \\+ WAL \\d+( B|\\.\\d KB)\\)$`));
    writeFileSync(join(cur, 'state.db-wal'), Buffer.alloc(2048));
    assert.match((await checkStateDb(cur)).detail, /\+ WAL 2\.0 KB\)$/, 'the write-ahead log counts');

    const old = fresh();
    openDb(join(old, 'state.db'), MIGRATIONS.slice(0, 1)).close();
    assert.match((await checkStateDb(old)).detail, new RegExp(`schema version 1, 0 jobs, [^;]+ on disk [^;]+; migrated to ${KNOWN_SCHEMA_VERSION} when the hub next starts`));
    assert.match((await checkStateDb(old, 1)).detail, /schema version 1 \(current\)/);

    const newer = fresh();
    const db = openDb(join(newer, 'state.db'));
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(KNOWN_SCHEMA_VERSION + 5, 'future', Date.now());
    db.close();
    const nw = await checkStateDb(newer);
    assert.equal(nw.status, 'fail');
    assert.match(nw.detail, new RegExp(`schema version ${KNOWN_SCHEMA_VERSION + 5} is newer than this overseer knows \\(${KNOWN_SCHEMA_VERSION}\\)`));
    assert.match(nw.fix!, /upgrade overseer-mcp/);

    const junk = fresh();
    writeFileSync(join(junk, 'state.db'), 'this is not sqlite, just text that is long enough to have a header'.repeat(20));
    const j = await checkStateDb(junk);
    assert.equal(j.status, 'fail');
    assert.match(j.fix!, /move the damaged file aside/);
  });

  test('the check opens the database read-only: an older schema stays as it was', async () => {
    const d = fresh();
    openDb(join(d, 'state.db'), MIGRATIONS.slice(0, 1)).close();
    await checkStateDb(d);
    assert.match((await checkStateDb(d)).detail, /schema version 1,/);
  });

  test('sessions: the configured limits, and the running hub\'s counts', async () => {
    const d = mkdtempSync(join(tmpdir(), 'ovs-doc-sess-'));
    const config = loadConfigFrom({ home: d, maxSessionsPerToken: 5, sessionIdleS: 60, idleExitS: 0 });
    const none = await checkSessions(config, d, { fetchTimeoutMs: 100 });
    assert.equal(none.detail, 'at most 5 MCP sessions per token (OVERSEER_MAX_SESSIONS_PER_TOKEN), idle sessions closed after 60 s (OVERSEER_SESSION_IDLE_S), a background hub with no job and no lead exits never (OVERSEER_IDLE_EXIT_S); no hub running');
    writeFileSync(join(d, 'hub.json'), JSON.stringify({ pid: 4242, port: 5000, url: 'http://127.0.0.1:5000/mcp', started_at: 'x', version: '0.1.0' }));
    writeFileSync(join(d, 'lead.token'), 't'.repeat(40));
    let asked: string | undefined;
    const running = await checkSessions(config, d, { fetchTimeoutMs: 100, hubHealth: async (_i, token) => { asked = token; return { pid: 4242, started_at: 'x', sessions: { total: 3, lead: 1, agent: 2 } }; } });
    assert.equal(asked, 't'.repeat(40), 'the lead token was not sent');
    assert.match(running.detail, /; hub pid 4242 holds 3 sessions \(1 lead, 2 agent\)$/);
    const silent = await checkSessions(config, d, { fetchTimeoutMs: 100, hubHealth: async () => undefined });
    assert.match(silent.detail, /the hub in hub.json \(pid 4242\) does not answer$/);
    rmSync(d, { recursive: true, force: true });
  });

  test('hub: none, a live one with its url, a dead one left in hub.json', () => {
    const d = fresh();
    assert.equal(checkHub(d, { pidAlive: () => true }).detail, 'no hub running (one starts with the lead session)');
    writeFileSync(join(d, 'hub.json'), JSON.stringify({ pid: 4242, port: 5000, url: 'http://127.0.0.1:5000/mcp', started_at: '2025-01-01T00:00:00.000Z', version: '0.1.0' }));
    assert.deepEqual(checkHub(d, { pidAlive: (p) => p === 4242 }), { name: 'hub', status: 'ok', detail: 'hub running: pid 4242 at http://127.0.0.1:5000/mcp (overseer 0.1.0, since 2025-01-01T00:00:00.000Z)' });
    const dead = checkHub(d, { pidAlive: () => false });
    assert.equal(dead.status, 'ok');
    assert.match(dead.detail, /^no hub running \(hub.json is left from pid 4242, which has exited/);
  });

  test('config: an invalid value fails, naming it; the state dir still resolves', () => {
    const home = join(fresh(), 'state');
    const bad = checkConfig({ env: { OVERSEER_HOME: home, OVERSEER_MAX_AGENTS: 'lots' }, cwd: dir });
    assert.equal(bad.check.status, 'fail');
    assert.match(bad.check.detail, /maxAgents \(env OVERSEER_MAX_AGENTS\) = "lots"/);
    assert.equal(bad.home, home);
    assert.equal(bad.config, undefined);
    const good = checkConfig({ env: { OVERSEER_HOME: home }, cwd: dir });
    assert.equal(good.check.status, 'ok');
    assert.equal(good.config?.home, home);
  });
});

describe('doctor: report and exit code', () => {
  const allGood = (): Partial<DoctorDeps> => {
    const path = fresh();
    fakeBin(path, 'claude');
    fakeBin(path, 'git');
    return {
      env: { PATH: path, OVERSEER_HOME: join(fresh(), 'state'), ANTHROPIC_API_KEY: 'sk-ant-api03-topsecret', CODEX_BIN: '/nonexistent/codex' },
      exec: fakeExec({ 'git --version': exited('git version 2.43.0\n'), 'claude --version': exited('2.1.9 (Claude Code)\n') }),
      fetch: answers(404),
      probeConfine: () => ({ ok: true, bwrap: '/usr/bin/bwrap' }),
      which: () => '/usr/bin/python3',
      cwd: fresh(), // a project of its own, beside the state
    };
  };

  test('Claude works, codex and gh absent: ok, exit code untouched, JSON has the array plus ok; no secret anywhere', async () => {
    let out = '';
    const codes: number[] = [];
    await runDoctor({ json: true }, { ...deps(allGood()), out: (t) => { out += t; }, setExitCode: (c) => codes.push(c) });
    assert.deepEqual(codes, []);
    const parsed = JSON.parse(out) as { ok: boolean; checks: Check[] };
    assert.equal(parsed.ok, true);
    assert.deepEqual(parsed.checks.map((c) => c.name), ['node', 'git', 'config', 'state dir', 'state place', 'confinement', 'state db', 'hub', 'sessions', 'notifications', 'claude', 'claude endpoint', 'claude credentials', 'codex', 'gh']);
    assert.deepEqual(parsed.checks.filter((c) => c.status !== 'ok').map((c) => [c.name, c.status]), [['codex', 'warn'], ['gh', 'warn']]);
    for (const c of parsed.checks) assert.ok(['ok', 'warn', 'fail'].includes(c.status) && typeof c.detail === 'string');
    assert.doesNotMatch(out, /topsecret/);
  });

  test('claude missing: exit code 1; text has one line per check with its mark, then the summary', async () => {
    let out = '';
    const codes: number[] = [];
    const over = allGood();
    await runDoctor({}, { ...deps({ ...over, env: { ...over.env, CLAUDE_BIN: '/nonexistent' } }), out: (t) => { out += t; }, setExitCode: (c) => codes.push(c) });
    assert.deepEqual(codes, [1]);
    const lines = out.trimEnd().split('\n');
    assert.equal(lines.length, 15 + 1);
    assert.match(lines[0]!, /^✔ node {16}Node\.js v20\.11\.1$/);
    assert.ok(lines.includes('✘ claude              CLAUDE_BIN is /nonexistent, which does not exist — fix: point CLAUDE_BIN at an existing claude binary (CLAUDE_BIN=/path/to/claude), or unset it and npm i -g @anthropic-ai/claude-code'), out);
    assert.ok(lines.some((l) => l.startsWith('! codex ')));
    assert.equal(lines.at(-1), 'Not ready: 1 problem (claude) must be fixed before overseer can run Claude children; 2 warnings (codex, gh).');
  });

  test('renderText and doctorOk: warnings alone are ready', () => {
    const checks: Check[] = [{ name: 'a', status: 'ok', detail: 'fine' }, { name: 'bb', status: 'warn', detail: 'meh', fix: 'do x' }];
    assert.equal(doctorOk(checks), true);
    assert.equal(renderText(checks), '✔ a   fine\n! bb  meh — fix: do x\nReady: overseer can run Claude children; 1 warning (bb).\n');
    assert.equal(doctorOk([...checks, { name: 'c', status: 'fail', detail: 'no' }]), false);
  });

  test('a codex binary that is found brings its endpoint, credentials and shell checks', async () => {
    const over = allGood();
    const codex = fakeBin(fresh(), 'codex');
    const ran: string[] = [];
    const runCodexShell: DoctorDeps['runCodexShell'] = async (i) => {
      ran.push(i.bin);
      return { bin: i.bin, sandbox: 'workspace-write', confined: true, codexHome: '/s/doctor-codex/codex-home', codexHomeInTemp: false, helperLinks: true, outcome: 'not_started', command: { started: false, exitCode: 1, reason: 'bwrap: setting up uid map: Permission denied' }, fileWritten: false, timeoutMs: 60_000 };
    };
    const r = await doctorReport(deps({ ...over, env: { ...over.env, CODEX_BIN: codex, OPENAI_API_KEY: 'sk-proj-x' }, exec: fakeExec({ 'git --version': exited('git version 2.43.0\n'), '--version': exited('codex-cli 0.169.0\n') }), runCodexShell }));
    const byName = new Map(r.checks.map((c) => [c.name, c]));
    assert.equal(byName.get('codex')?.status, 'ok');
    assert.equal(byName.get('codex endpoint')?.status, 'ok');
    assert.equal(byName.get('codex credentials')?.status, 'warn');
    assert.deepEqual(ran, [codex], 'the shell check runs the binary the codex check found');
    assert.equal(byName.get('codex shell')?.status, 'warn');
    assert.match(byName.get('codex shell')!.detail, /"bwrap: setting up uid map: Permission denied"/);
    assert.deepEqual(r.checks.map((c) => c.name).filter((n) => n.startsWith('codex')), ['codex', 'codex endpoint', 'codex credentials', 'codex shell']);
    assert.equal(r.ok, true, 'a codex problem is a warning: Claude children are not affected');
  });

  test('safeUrl leaves plain URLs alone', () => {
    assert.equal(safeUrl('https://api.anthropic.com'), 'https://api.anthropic.com');
    assert.equal(safeUrl('nope'), '(not a valid URL)');
  });
});

describe('doctor: confinement and where the state is', () => {
  const cfg = (confine: 'auto' | 'require' | 'off') => loadConfigFrom({ home: '/s', confine });
  test('bubblewrap works: ok; switched off: a warning saying what is open', () => {
    const ok = checkConfinement(cfg('auto'), { probeConfine: () => ({ ok: true, bwrap: '/usr/bin/bwrap' }), which: () => '/usr/bin/python3' });
    assert.equal(ok.status, 'ok');
    assert.match(ok.detail, /files other agents hold are read-only/);
    const noPython = checkConfinement(cfg('auto'), { probeConfine: () => ({ ok: true, bwrap: '/usr/bin/bwrap' }), which: () => undefined });
    assert.equal(noPython.status, 'warn');
    assert.match(noPython.fix!, /python3/);
    const off = checkConfinement(cfg('off'), { probeConfine: () => { throw new Error('not probed when off'); } });
    assert.equal(off.status, 'warn');
    assert.match(off.detail, /lead token/);
  });

  test('bubblewrap missing: a warning in auto, a failure when required, with the fix', () => {
    const probe = () => ({ ok: false as const, reason: 'bubblewrap is not installed' });
    const auto = checkConfinement(cfg('auto'), { probeConfine: probe });
    assert.equal(auto.status, 'warn');
    assert.match(auto.detail, /bubblewrap is not installed/);
    assert.match(auto.fix!, /apt-get install bubblewrap/);
    assert.equal(checkConfinement(cfg('require'), { probeConfine: probe }).status, 'fail');
  });

  test('a state inside the project is a warning; outside it is fine', () => {
    const project = fresh();
    execFileSync('git', ['init', '-q', project]);
    assert.equal(checkStatePlace(join(project, '.overseer'), { cwd: project }).status, 'warn');
    assert.equal(checkStatePlace(join(fresh(), 'state'), { cwd: project }).status, 'ok');
  });
});
