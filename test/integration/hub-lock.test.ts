// Integration: one hub per state directory. acquireHubLock against a real second process
// (test/fixtures/hold-lock.ts) that holds the lock: a live holder is reported with its
// hub.json, a holder killed with -9 is taken over at once (no staleness wait).
// ensureLeadToken writes a 0600 token file and reuses it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireHubLock, ensureLeadToken, readHubInfo } from '../../src/server/hubLock.js';
import { silentLogger } from '../../src/log.js';
import { makeTempDir } from '../helpers/claude.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'hold-lock.ts');

function deadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms); }),
  ]);
}

/** Starts the lock-holding fixture in its own process group; resolves once it printed "locked". */
async function startHolder(stateDir: string, procs: ChildProcess[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, stateDir], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  procs.push(child);
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  await deadline(
    new Promise<void>((resolve, reject) => {
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('locked\n')) resolve();
      });
      child.once('exit', (code, sig) => reject(new Error(`hold-lock exited (${code ?? sig}) before locking: ${err}`)));
      child.once('error', reject);
    }),
    30_000,
    'hold-lock fixture',
  );
  return child;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

describe('hub lock', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  const procs: ChildProcess[] = [];
  const tmp = async (): Promise<string> => {
    const d = await makeTempDir('ovs-lock');
    dirs.push(d);
    return d;
  };

  after(async () => {
    for (const p of procs) killGroup(p);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  test('a free state directory is acquired, and release frees it', async () => {
    const state = join(await tmp(), 'state');
    const first = await acquireHubLock(state, silentLogger);
    assert.equal(first.kind, 'acquired');
    assert.ok(existsSync(join(state, 'hub.lock')), 'no hub.lock while held');
    if (first.kind === 'acquired') await first.release();
    assert.ok(!existsSync(join(state, 'hub.lock')), 'hub.lock left behind after release');
    const again = await acquireHubLock(state, silentLogger);
    assert.equal(again.kind, 'acquired');
    if (again.kind === 'acquired') await again.release();
  });

  describe('held by another process', () => {
    let state: string;
    let holder: ChildProcess;

    before(async () => {
      state = join(await tmp(), 'state');
      holder = await startHolder(state, procs);
    });

    test('a live holder is reported with its hub.json', async () => {
      const r = await deadline(acquireHubLock(state, silentLogger), 30_000, 'acquire while held');
      assert.equal(r.kind, 'running');
      if (r.kind !== 'running') return;
      assert.equal(r.info.pid, holder.pid);
      assert.equal(r.info.url, 'http://127.0.0.1:1/mcp');
      assert.deepEqual(readHubInfo(state), r.info);
      // Reporting the holder must not have broken its lock.
      assert.ok(existsSync(join(state, 'hub.lock')), 'the live holder\'s lock was removed');
      assert.equal(holder.exitCode, null);
    });

    test('a holder killed with -9 is taken over at once', async () => {
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      process.kill(-holder.pid!, 'SIGKILL');
      await deadline(exited, 10_000, 'holder exit');
      assert.ok(existsSync(join(state, 'hub.lock')), 'precondition: the dead holder left its lock behind');
      const started = Date.now();
      const r = await deadline(acquireHubLock(state, silentLogger), 30_000, 'acquire after kill -9');
      const took = Date.now() - started;
      assert.equal(r.kind, 'acquired');
      if (r.kind === 'acquired') await r.release();
      // The lock is 15 s from stale: taking it over must not wait for that, nor sit in retries.
      assert.ok(took < 2000, `taking over a dead hub's lock took ${took} ms (expected < 2000 ms)`);
    });
  });

  describe('lead token', () => {
    test('is created with mode 0600 and reused', async () => {
      const state = await tmp();
      let made = 0;
      const make = (): string => {
        made++;
        return `tok-${made}-${'a'.repeat(40)}`;
      };
      const t1 = ensureLeadToken(state, make);
      const file = join(state, 'lead.token');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(readFileSync(file, 'utf8').trim(), t1);
      const t2 = ensureLeadToken(state, make);
      assert.equal(t2, t1);
      assert.equal(made, 1, 'the token was generated again instead of reused');
      assert.equal(statSync(file).mode & 0o777, 0o600);
    });

    test('a token file with loose permissions is tightened to 0600', async () => {
      const state = await tmp();
      const file = join(state, 'lead.token');
      const tok = 'b'.repeat(48);
      writeFileSync(file, `${tok}\n`, { mode: 0o644 });
      const t = ensureLeadToken(state, () => 'never-used-never-used-never-used-x');
      assert.equal(t, tok);
      assert.equal(statSync(file).mode & 0o777, 0o600);
    });

    test('a truncated token file is replaced by a fresh token', async () => {
      const state = await tmp();
      const file = join(state, 'lead.token');
      writeFileSync(file, 'short\n', { mode: 0o600 });
      const fresh = 'c'.repeat(48);
      assert.equal(ensureLeadToken(state, () => fresh), fresh);
      assert.equal(readFileSync(file, 'utf8').trim(), fresh);
      assert.equal(statSync(file).mode & 0o777, 0o600);
    });
  });
});
