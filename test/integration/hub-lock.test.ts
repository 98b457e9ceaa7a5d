// Integration: exactly one hub per state directory. The claim is a kernel lock on
// <state>/hub.claim (SQLite/fcntl), so it is free the moment its holder dies and can never be
// taken from a live holder, whatever hub.json says. Real processes (test/fixtures/claim-hub.mjs,
// claiming exactly as `overseer serve` does; needs `npm run build`): a live holder with a
// forged hub.json keeps its claim; kill -9 frees it at once; N processes started together,
// round after round (after kill -9 of the previous hub, or with a stale hub.json), yield one
// hub and N-1 processes naming it. ensureLeadToken writes a 0600 token file and reuses it.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLeadToken, readHubInfo, tryAcquireHub } from '../../src/hubfiles/hubLock.js';
import { tryClaim } from '../../src/hubfiles/claim.js';
import { makeTempDir } from '../helpers/claude.js';
import { alive, eventually } from '../helpers/wait.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'claim-hub.mjs');

interface Run { proc: ChildProcess; line: Promise<string>; exit: Promise<number | null> }
const procs: ChildProcess[] = [];

/** Start one claimant; `line` is its first stdout line (serving/running/gave-up). */
function claimant(state: string, env: NodeJS.ProcessEnv = {}): Run {
  const proc = spawn(process.execPath, [FIXTURE, state], { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  procs.push(proc);
  let out = '';
  let err = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const exit = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const line = new Promise<string>((resolve, reject) => {
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    void exit.then((code) => reject(new Error(`claimant exited (${code}) without a word: ${err}`)));
  });
  line.catch(() => undefined);
  return { proc, line, exit };
}

function kill9(p: ChildProcess): Promise<void> {
  const gone = new Promise<void>((r) => { if (p.exitCode !== null || p.signalCode !== null) r(); else p.once('exit', () => r()); });
  try { process.kill(-p.pid!, 'SIGKILL'); } catch { /* gone */ }
  return gone;
}

const DEAD_PID = 2 ** 22 - 7; // above the default pid_max: never a live process

describe('hub claim', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  const tmp = async (): Promise<string> => {
    const d = await makeTempDir('ovs-claim');
    dirs.push(d);
    return join(d, 'state');
  };
  after(async () => {
    for (const p of procs) await kill9(p);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  test('in one process: a held claim is refused, release frees it, hub.json is removed with it', async () => {
    assert.ok(existsSync(FIXTURE.replace('test/fixtures/claim-hub.mjs', 'dist/hubfiles/hubLock.js')), 'run npm run build first');
    const state = await tmp();
    const a = tryAcquireHub(state);
    assert.ok(a, 'a free directory was not claimed');
    assert.equal(tryClaim(state), undefined, 'a second claim succeeded while the first is held');
    a.publish({ pid: process.pid, port: 1, url: 'http://127.0.0.1:1/mcp', started_at: 'now', version: 'x' });
    assert.equal(readHubInfo(state)?.pid, process.pid);
    await a.release();
    assert.equal(readHubInfo(state), undefined, 'hub.json left behind after release');
    const b = tryAcquireHub(state);
    assert.ok(b, 'not claimable after release');
    await b.release();
  });

  test('a live hub holding the claim with hub.json forged to a dead pid: a second process never serves', async () => {
    const state = await tmp();
    const a = claimant(state);
    assert.match(await a.line, /^serving /);
    writeFileSync(join(state, 'hub.json'), JSON.stringify({ pid: DEAD_PID, port: 1, url: 'http://127.0.0.1:1/mcp', started_at: 'forged', version: 'x' }));
    const b = claimant(state, { OVERSEER_TEST_CLAIM_WAIT_MS: '1500' });
    assert.match(await b.line, /^gave-up /, 'the second process did not wait and give up');
    assert.equal(await b.exit, 2);
    assert.equal(tryClaim(state), undefined, 'the live hub lost its claim');
    assert.ok(alive(a.proc.pid!));
    // A forged hub.json naming a live pid that is not the hub (this test process) is not believed either.
    writeFileSync(join(state, 'hub.json'), JSON.stringify({ pid: process.pid, port: 1, url: 'http://127.0.0.1:1/mcp', started_at: 'forged', version: 'x' }));
    const c = claimant(state, { OVERSEER_TEST_CLAIM_WAIT_MS: '1000' });
    assert.match(await c.line, /^gave-up /);
    await kill9(a.proc);
  });

  test('kill -9 of the holder frees the claim at once', async () => {
    const state = await tmp();
    const a = claimant(state);
    const [, pid] = (await a.line).split(' ');
    await kill9(a.proc);
    assert.equal(readHubInfo(state)?.pid, Number(pid), 'precondition: the dead hub left hub.json behind');
    const started = Date.now();
    const b = claimant(state);
    assert.match(await b.line, /^serving /);
    const took = Date.now() - started;
    assert.ok(took < 5000, `taking over took ${took} ms`);
    await kill9(b.proc);
  });

  test('N=8 processes at once, 20 rounds (after kill -9, with a stale hub.json): exactly one serves, the others name it', async () => {
    const state = await tmp();
    const N = 8;
    let previous: Run | undefined;
    const started = Date.now();
    for (let round = 0; round < 20; round++) {
      if (previous) await kill9(previous.proc); // every round after the first follows a kill -9
      if (round % 3 === 1) writeFileSync(join(state, 'hub.json'), JSON.stringify({ pid: DEAD_PID, port: 1, url: 'http://127.0.0.1:1/mcp', started_at: 'stale', version: 'x' }));
      const runs = Array.from({ length: N }, () => claimant(state));
      const lines = await Promise.all(runs.map((r) => r.line));
      const serving = runs.filter((_, i) => lines[i]!.startsWith('serving '));
      assert.equal(serving.length, 1, `round ${round}: ${serving.length} hubs served: ${lines.join(' | ')}`);
      const [, hubPid, hubPort] = lines[lines.findIndex((l) => l.startsWith('serving '))]!.split(' ');
      for (let i = 0; i < N; i++) {
        if (runs[i] === serving[0]) continue;
        assert.equal(lines[i], `running ${hubPid} ${hubPort}`, `round ${round}: a loser did not name the hub`);
        assert.equal(await runs[i]!.exit, 1);
      }
      assert.equal(readHubInfo(state)?.pid, Number(hubPid));
      previous = serving[0];
    }
    if (previous) await kill9(previous.proc);
    process.stderr.write(`# stress: 20 rounds × ${N} claimants in ${Date.now() - started} ms\n`);
  });

  describe('lead token', () => {
    test('is created with mode 0600 and reused', async () => {
      const state = await tmp();
      let made = 0;
      const make = (): string => {
        made++;
        return `tok-${made}-${'a'.repeat(40)}`;
      };
      const { mkdirSync } = await import('node:fs');
      mkdirSync(state, { recursive: true });
      const t1 = ensureLeadToken(state, make);
      const file = join(state, 'lead.token');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(readFileSync(file, 'utf8').trim(), t1);
      assert.equal(ensureLeadToken(state, make), t1);
      assert.equal(made, 1, 'the token was generated again instead of reused');
    });

    test('a token file with loose permissions is tightened; a truncated one replaced', async () => {
      const state = await tmp();
      const { mkdirSync } = await import('node:fs');
      mkdirSync(state, { recursive: true });
      const file = join(state, 'lead.token');
      writeFileSync(file, `${'b'.repeat(48)}\n`, { mode: 0o644 });
      assert.equal(ensureLeadToken(state, () => 'never-used-never-used-never-used-x'), 'b'.repeat(48));
      assert.equal(statSync(file).mode & 0o777, 0o600);
      writeFileSync(file, 'short\n', { mode: 0o600 });
      assert.equal(ensureLeadToken(state, () => 'c'.repeat(48)), 'c'.repeat(48));
      assert.equal(readFileSync(file, 'utf8').trim(), 'c'.repeat(48));
      assert.equal(statSync(file).mode & 0o777, 0o600);
    });
  });
});
void eventually;
