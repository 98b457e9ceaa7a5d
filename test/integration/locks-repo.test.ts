// Integration: locks keyed by repository (issue 29 point 2; docs/decisions.md "Locks keyed by
// repository"). Real git: one origin cloned twice on `main` (A and B) and once more onto another
// branch (C), plus a directory outside any repository. Agents of a real hub work in each: the same
// relative file locked in clone A is refused / waited for in clone B and granted to B once A lets
// go; the other branch does not conflict; paths outside a repository lock as before; the real
// PreToolUse hook (hooks/overseer-hook.mjs against POST /hook) refuses B's edit of A's file.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { count, reopen, rows as allRows } from '../helpers/state.js';
import { sql } from 'kysely';
import { callAs, ok } from '../helpers/mcp.js';
import { makeTempDir } from '../helpers/claude.js';
import { gitOut, initRepo, testGitEnv } from '../helpers/git.js';
import { TokenRecorder } from '../helpers/tokens.js';
import { leadOf } from '../../src/domain/lead.js';

const HANG = { hang: [{ delayMs: 120_000, text: 'never' }] };
const HOOK = resolve(fileURLToPath(import.meta.url), '..', '..', '..', 'hooks', 'overseer-hook.mjs');

interface Agent { id: string; token: string; client: Client }
interface Lock { path: string; holder: string; repo: string | null; holder_path?: string; waiters: number }

let tmp: string;
let h: TestHub;
const rec = new TokenRecorder();
let origin: string;
let cloneA: string;
let cloneB: string;
let cloneC: string;
let plain: string;
let A: Agent;
let B: Agent;
let C: Agent;
let P: Agent;
let Q: Agent;

async function clone(name: string, branch?: string): Promise<string> {
  await gitOut(tmp, ['clone', '-q', origin, name]);
  const dir = realpathSync(join(tmp, name));
  if (branch) await gitOut(dir, ['checkout', '-q', '-b', branch]);
  return dir;
}

async function agentIn(cwd: string, title: string): Promise<Agent> {
  const id = (await h.call('spawn_agent', { prompt: '@script:hang', title, cwd })).job_id as string;
  await waitForJob(h.hub, id, (j) => j.status === 'running');
  return { id, token: await rec.token(id), client: await h.connect({ role: 'agent', jobId: id }) };
}

const waitRows = (holder: string): Promise<number> =>
  count(h.hub, sql`SELECT COUNT(*) AS n FROM lock_waits WHERE status = 'waiting' AND holder = ${holder}`);

/** The real hook process for `a` on a Write of `file` in `cwd`; its stdout (empty: allowed). */
function hookWrite(a: Agent, cwd: string, file: string): Promise<{ code: number | null; stdout: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(testGitEnv())) if (v !== undefined && !k.startsWith('OVERSEER_') && !k.startsWith('CLAUDE_')) env[k] = v;
  Object.assign(env, { OVERSEER_URL: h.hub.http!.url, OVERSEER_TOKEN: a.token, OVERSEER_AGENT_ID: a.id });
  const stdin = JSON.stringify({ session_id: 's', transcript_path: '/dev/null', cwd, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: file, content: 'x' }, tool_use_id: 't' });
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [HOOK], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); fail(new Error('the hook did not exit within 20 s')); }, 20_000);
    child.on('error', (e) => { clearTimeout(timer); fail(e); });
    child.on('close', (code) => { clearTimeout(timer); done({ code, stdout }); });
    child.stdin.end(stdin);
  });
}

describe('locks keyed by repository: two clones, two branches, a plain directory', () => {
  before(async () => {
    tmp = realpathSync(await makeTempDir('overseer-repo-locks'));
    origin = await initRepo(join(tmp, 'origin'), { 'shared.txt': 'one\n', 'src/a.ts': 'export {};\n' });
    cloneA = await clone('a');
    cloneB = await clone('b');
    cloneC = await clone('c', 'other');
    plain = join(tmp, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'f.txt'), 'plain\n');
    h = await startTestHub({ scripts: HANG, processes: rec, project: cloneA });
    [A, B, C, P, Q] = [await agentIn(cloneA, 'In A'), await agentIn(cloneB, 'In B'), await agentIn(cloneC, 'In C'), await agentIn(plain, 'Plain P'), await agentIn(plain, 'Plain Q')];
  });
  after(async () => {
    await h?.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  test('the same relative file in two clones on one branch: refused, then waited for, then granted after the unlock', async () => {
    assert.deepEqual((await ok(A.client, 'lock_files', { files: ['shared.txt'], reason: 'A edits' })).acquired, [join(cloneA, 'shared.txt')]);
    const refused = await callAs(B.client, 'lock_files', { files: ['shared.txt'], timeout_s: 0 });
    assert.equal(refused.isError, true, refused.text);
    assert.ok(refused.text.includes(A.id) && refused.text.includes(join(cloneB, 'shared.txt')) && refused.text.includes('another clone'), refused.text);

    const waiting = ok(B.client, 'lock_files', { files: ['shared.txt'], timeout_s: 60 });
    let settled = false;
    void waiting.then(() => { settled = true; }, () => { settled = true; });
    await eventually("B's request to wait", async () => ((await waitRows(B.id)) === 1 ? true : undefined));
    assert.equal(settled, false, 'B waits while A holds the file in its clone');
    const fromB = (await ok(B.client, 'list_locks', {})).locks as Lock[];
    assert.deepEqual(fromB.map((l) => [l.path, l.holder, l.holder_path, l.waiters]), [[join(cloneB, 'shared.txt'), A.id, join(cloneA, 'shared.txt'), 1]], 'B sees the lock on its own path, and where A has it');
    assert.match(fromB[0]!.repo ?? '', /^file:.*\/origin@main$/);

    assert.deepEqual((await ok(A.client, 'release_files', {})).released, [join(cloneA, 'shared.txt')]);
    assert.deepEqual((await waiting).acquired, [join(cloneB, 'shared.txt')]);
    const fromLead = (await h.call('list_locks', {})).locks as Lock[];
    assert.deepEqual(fromLead.map((l) => [l.path, l.holder, l.holder_path]), [[join(cloneA, 'shared.txt'), B.id, join(cloneB, 'shared.txt')]], 'the lead (in clone A) sees it on its own path');
    const refusedA = await callAs(A.client, 'lock_files', { files: ['shared.txt'], timeout_s: 0 });
    assert.equal(refusedA.isError, true, 'now A is the one refused');
    await ok(B.client, 'release_files', {});
  });

  test('another branch of the same repository does not conflict; a path outside any repository locks as before', async () => {
    await ok(A.client, 'lock_files', { files: ['shared.txt'] });
    assert.deepEqual((await ok(C.client, 'lock_files', { files: ['shared.txt'], timeout_s: 0 })).acquired, [join(cloneC, 'shared.txt')]);
    const repos = ((await h.call('list_locks', {})).locks as Lock[]).map((l) => l.repo).sort();
    assert.equal(repos.length, 2);
    assert.match(repos[0]!, /@main$/);
    assert.match(repos[1]!, /@other$/);

    assert.deepEqual((await ok(P.client, 'lock_files', { files: ['f.txt'] })).acquired, [join(plain, 'f.txt')]);
    const q = await callAs(Q.client, 'lock_files', { files: ['f.txt'], timeout_s: 0 });
    assert.equal(q.isError, true, 'two agents in one plain directory still exclude each other');
    const plainLock = ((await h.call('list_locks', { path_prefix: plain })).locks as Lock[]);
    assert.deepEqual(plainLock.map((l) => [l.path, l.holder, l.repo]), [[join(plain, 'f.txt'), P.id, null]]);
    for (const a of [A, C, P]) await ok(a.client, 'release_files', {});
  });

  test('the hook refuses an edit in clone B of a file locked in clone A, and lets the other branch edit it', async () => {
    await ok(A.client, 'lock_files', { files: ['src/a.ts'], reason: 'A refactors' });
    const r = await hookWrite(B, cloneB, join(cloneB, 'src', 'a.ts'));
    assert.equal(r.code, 0);
    const out = JSON.parse(r.stdout.trim()) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(out.hookSpecificOutput.permissionDecision, 'deny', r.stdout);
    assert.ok(out.hookSpecificOutput.permissionDecisionReason.includes(A.id), out.hookSpecificOutput.permissionDecisionReason);

    const c = await hookWrite(C, cloneC, join(cloneC, 'src', 'a.ts'));
    assert.deepEqual([c.code, c.stdout.trim()], [0, ''], 'clone C is on another branch: allowed');
    // B's free file is auto-locked under the repository's key: A cannot take it from clone A now.
    assert.deepEqual([(await hookWrite(B, cloneB, join(cloneB, 'README.b')) ).stdout.trim()], ['']);
    const taken = await callAs(A.client, 'lock_files', { files: ['README.b'], timeout_s: 0 });
    assert.equal(taken.isError, true, taken.text);
    assert.ok(taken.text.includes(B.id), taken.text);
    for (const a of [A, B, C]) await ok(a.client, 'release_files', {});
  });

  test('an agent working in the directory above the clones keys each file by the clone that contains it', async () => {
    const up = await agentIn(tmp, 'Above the clones');
    await ok(B.client, 'lock_files', { files: ['shared.txt'] });
    const r = await callAs(up.client, 'lock_files', { files: ['a/shared.txt'], timeout_s: 0 });
    assert.equal(r.isError, true, 'clone a\'s shared.txt is the file B holds in clone b');
    assert.ok(r.text.includes(B.id), r.text);
    const hook = await hookWrite(up, tmp, join(cloneA, 'shared.txt'));
    assert.match(hook.stdout, /"permissionDecision":"deny"/, 'the hook keys it the same way');
    assert.deepEqual((await ok(up.client, 'lock_files', { files: ['plain/f.txt'], timeout_s: 0 })).acquired, [join(plain, 'f.txt')], 'outside any repository: its absolute path');
    for (const a of [B, up]) await ok(a.client, 'release_files', {});
  });

  test('a checkout of another branch changes the key at once (HEAD is read on each call)', async () => {
    await ok(A.client, 'lock_files', { files: ['shared.txt'] });
    await gitOut(cloneB, ['checkout', '-q', '-b', 'b-own']);
    try {
      assert.deepEqual((await ok(B.client, 'lock_files', { files: ['shared.txt'], timeout_s: 0 })).acquired, [join(cloneB, 'shared.txt')]);
    } finally {
      await ok(B.client, 'release_files', {});
      await gitOut(cloneB, ['checkout', '-q', 'main']);
    }
    const again = await callAs(B.client, 'lock_files', { files: ['shared.txt'], timeout_s: 0 });
    assert.equal(again.isError, true, 'back on main: A\'s lock conflicts again');
    await ok(A.client, 'release_files', {});
  });
});

describe('a lock taken before migration 29 (keyed by its absolute path) is re-keyed when the hub starts', () => {
  test("the lead's lock in its clone: after a restart it excludes an agent of another clone", async () => {
    const dir = realpathSync(await makeTempDir('overseer-repo-rekey'));
    const o = await initRepo(join(dir, 'origin'), { 'keep.txt': 'k\n' });
    await gitOut(dir, ['clone', '-q', o, 'a']);
    await gitOut(dir, ['clone', '-q', o, 'b']);
    const [a, b] = [realpathSync(join(dir, 'a')), realpathSync(join(dir, 'b'))];
    const h1 = await startTestHub({ scripts: HANG, project: a });
    let h2: TestHub | undefined;
    try {
      await h1.call('lock_files', { files: ['keep.txt'], reason: 'lead keeps' });
      await h1.hub.stop();
      const db = await reopen(h1.hub);
      // As migration 29 leaves a lock held before it: '' and the absolute path.
      assert.equal(Number((await sql`UPDATE locks SET repo = '', rel_path = path`.execute(db.db)).numAffectedRows), 1);
      await db.close();

      const rec2 = new TokenRecorder();
      h2 = await startTestHub({ dir: h1.dir, fake: h1.fake, project: a, processes: rec2 });
      const rows = await allRows(h2.hub, sql<{ repo: string; rel_path: string; path: string; holder: string }>`SELECT repo, rel_path, path, holder FROM locks`);
      assert.equal(rows.length, 1);
      assert.match(rows[0]!.repo, /^file:.*\/origin@main$/);
      // The lead of the restarted hub holds it (on PostgreSQL each hub's lead is lead@<hub id>: src/domain/lead.ts).
      assert.deepEqual([rows[0]!.rel_path, rows[0]!.path, rows[0]!.holder], ['/keep.txt', join(a, 'keep.txt'), leadOf(h2.hub.hubId, h2.hub.ctx.sql.dialect === 'postgres')]);
      const id = (await h2.call('spawn_agent', { prompt: '@script:hang', title: 'In B', cwd: b })).job_id as string;
      await waitForJob(h2.hub, id, (j) => j.status === 'running');
      const agent = await h2.connect({ role: 'agent', jobId: id });
      const r = await callAs(agent, 'lock_files', { files: ['keep.txt'], timeout_s: 0 });
      assert.equal(r.isError, true, r.text);
      assert.match(r.text, /the lead/);
    } finally {
      await h2?.stop({ keep: true });
      await h1.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
