// Integration: file locks through real MCP clients (the lead and three agents linked in memory)
// on a real hub and SQLite file — all-or-nothing, waiting, FIFO, deadlock refused at once, TTL
// expiry and renewal, release rights, path validation and canonical real paths, the lead as a
// holder, release on job end, reconciliation after a hub restart, waiters and prefixes,
// progress notifications and cancellation of a waiting request.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { rm } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { count, reopen } from '../helpers/state.js';
import { sql } from 'kysely';
import { callAs, ok } from '../helpers/mcp.js';
import { makeTempDir } from '../helpers/claude.js';
import { leadOf } from '../../src/domain/lead.js';

const HANG = { hang: [{ delayMs: 120_000, text: 'never' }] };

interface Agent { id: string; title: string; client: Client }

let h: TestHub;
let A: Agent;
let B: Agent;
let C: Agent;
let root: string; // real path of the project (the agents' work tree)
const temps: string[] = [];

async function spawnAgent(hub: TestHub, title: string): Promise<Agent> {
  const id = (await hub.call('spawn_agent', { prompt: '@script:hang', title })).job_id as string;
  await waitForJob(hub.hub, id, (j) => j.status === 'running');
  return { id, title, client: await hub.connect({ role: 'agent', jobId: id }) };
}

/** Real absolute path of a file in the work tree. */
const real = (rel: string): string => join(root, rel);

/** Tracks whether a promise has settled, without consuming its outcome. */
function track<T>(p: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false;
  p.then(() => { done = true; }, () => { done = true; });
  return { promise: p, settled: () => done };
}

const waitRows = (hub: TestHub, holder?: string): Promise<number> =>
  count(hub.hub, sql`SELECT COUNT(*) AS n FROM lock_waits WHERE status = 'waiting'${holder ? sql` AND holder = ${holder}` : sql``}`);

/** Resolves once `holder` has `n` waiting lock requests in the database (the request reached the hub). */
const waiting = (hub: TestHub, holder: string, n = 1): Promise<number> =>
  eventually(`${holder} to wait for ${n} lock request(s)`, async () => ((await waitRows(hub, holder)) === n ? n : undefined), 10_000, 5);

async function locks(prefix?: string): Promise<{ path: string; holder: string; reason: string | null; acquired_at: string; expires_at: string; waiters: number }[]> {
  return (await h.call('list_locks', prefix === undefined ? {} : { path_prefix: prefix })).locks;
}

/** Release everything the lead and the three agents hold (end of each test). */
async function releaseAll(): Promise<void> {
  await h.call('release_files', {});
  for (const a of [A, B, C]) await ok(a.client, 'release_files', {});
  assert.deepEqual(await locks(), [], 'no locks left behind');
}

before(async () => {
  h = await startTestHub({ scripts: HANG, progressEveryMs: 50 });
  root = realpathSync(h.project);
  A = await spawnAgent(h, 'Agent A');
  B = await spawnAgent(h, 'Agent B');
  C = await spawnAgent(h, 'Agent C');
});
after(async () => {
  await h.stop();
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

describe('lock_files: acquiring', () => {
  test('all or nothing: a conflict names the holder (id, title, reason) and locks none of the files', async () => {
    const held = await ok(A.client, 'lock_files', { files: ['aon-x.txt'], reason: 'refactor x' });
    assert.deepEqual(held.acquired, [real('aon-x.txt')]);
    const r = await callAs(B.client, 'lock_files', { files: ['aon-x.txt', 'aon-y.txt'], timeout_s: 0 });
    assert.equal(r.isError, true);
    assert.match(r.text, /^conflict: /);
    assert.ok(r.text.includes(A.id), r.text);
    assert.ok(r.text.includes('"Agent A"'), r.text);
    assert.ok(r.text.includes('refactor x'), r.text);
    assert.ok(r.text.includes(real('aon-x.txt')), r.text);
    assert.match(r.text, /Nothing was locked/);
    const now = await locks(real('aon-'));
    assert.deepEqual(now.map((l) => [l.path, l.holder]), [[real('aon-x.txt'), A.id]], 'aon-y.txt must not be locked');
    await releaseAll();
  });

  test('a waiting request is granted when the holder releases', async () => {
    await ok(A.client, 'lock_files', { files: ['wait-x.txt'] });
    const pB = track(callAs(B.client, 'lock_files', { files: ['wait-x.txt'], timeout_s: 30 }));
    await waiting(h, B.id);
    assert.equal(pB.settled(), false);
    assert.equal((await locks(real('wait-x.txt')))[0]!.waiters, 1);
    assert.deepEqual((await ok(A.client, 'release_files', { files: ['wait-x.txt'] })).released, [real('wait-x.txt')]);
    const r = await pB.promise;
    assert.equal(r.isError, false, r.text);
    assert.deepEqual(r.value.acquired, [real('wait-x.txt')]);
    const now = await locks(real('wait-x.txt'));
    assert.deepEqual(now.map((l) => [l.holder, l.waiters]), [[B.id, 0]]);
    assert.equal(await waitRows(h), 0, 'the wait row is gone');
    await releaseAll();
  });

  test('a wait that times out names the holder and leaves nothing locked or waiting', async () => {
    await ok(A.client, 'lock_files', { files: ['to-x.txt'], reason: 'slow work' });
    const t0 = Date.now();
    const r = await callAs(B.client, 'lock_files', { files: ['to-x.txt', 'to-y.txt'], timeout_s: 0.3 });
    assert.ok(Date.now() - t0 >= 250, 'it waited');
    assert.equal(r.isError, true);
    assert.match(r.text, /timed out/);
    assert.ok(r.text.includes(A.id) && r.text.includes('slow work'), r.text);
    assert.equal(await waitRows(h), 0);
    assert.deepEqual((await locks(real('to-'))).map((l) => [l.path, l.holder]), [[real('to-x.txt'), A.id]]);
    await releaseAll();
  });

  test('waiters are served first come, first served', async () => {
    await ok(A.client, 'lock_files', { files: ['fifo.txt'] });
    const pB = track(callAs(B.client, 'lock_files', { files: ['fifo.txt'], timeout_s: 30 }));
    await waiting(h, B.id);
    const pC = track(callAs(C.client, 'lock_files', { files: ['fifo.txt'], timeout_s: 30 }));
    await waiting(h, C.id);
    await ok(A.client, 'release_files', { files: ['fifo.txt'] });
    const rB = await pB.promise;
    assert.equal(rB.isError, false, rB.text);
    assert.equal(pC.settled(), false, 'C still waits while B holds the file');
    assert.deepEqual((await locks(real('fifo.txt'))).map((l) => [l.holder, l.waiters]), [[B.id, 1]]);
    await ok(B.client, 'release_files', { files: ['fifo.txt'] });
    const rC = await pC.promise;
    assert.equal(rC.isError, false, rC.text);
    assert.deepEqual((await locks(real('fifo.txt'))).map((l) => l.holder), [C.id]);
    await releaseAll();
  });

  test('a request that would deadlock fails at once naming the cycle; the other wait goes on', async () => {
    await ok(A.client, 'lock_files', { files: ['dl-x.txt'] });
    await ok(B.client, 'lock_files', { files: ['dl-y.txt'] });
    const pA = track(callAs(A.client, 'lock_files', { files: ['dl-y.txt'], timeout_s: 30 }));
    await waiting(h, A.id);
    const started = Date.now();
    const r = await callAs(B.client, 'lock_files', { files: ['dl-x.txt'], timeout_s: 30 });
    assert.ok(Date.now() - started < 5000, 'refused at once, not after the timeout');
    assert.equal(r.isError, true);
    assert.match(r.text, /deadlock/);
    assert.ok(r.text.includes(A.id) && r.text.includes(B.id), r.text);
    assert.ok(r.text.includes(real('dl-x.txt')) && r.text.includes(real('dl-y.txt')), r.text);
    assert.equal(await waitRows(h, B.id), 0, 'B is not left waiting');
    assert.deepEqual((await locks(real('dl-'))).map((l) => [l.path, l.holder]), [[real('dl-x.txt'), A.id], [real('dl-y.txt'), B.id]]);
    assert.equal(pA.settled(), false, "A's wait is still pending");
    await ok(B.client, 'release_files', { files: ['dl-y.txt'] });
    const rA = await pA.promise;
    assert.equal(rA.isError, false, rA.text);
    assert.deepEqual(rA.value.acquired, [real('dl-y.txt')]);
    await releaseAll();
  });
});

describe('lock_files: TTL', () => {
  test('a lock expires after its ttl_s and a waiter gets it without the holder releasing', async () => {
    const t0 = Date.now();
    await ok(A.client, 'lock_files', { files: ['ttl.txt'], ttl_s: 5 });
    const r = await callAs(B.client, 'lock_files', { files: ['ttl.txt'], timeout_s: 30 });
    const elapsed = Date.now() - t0;
    assert.equal(r.isError, false, r.text);
    assert.ok(elapsed >= 4500, `granted after ${elapsed} ms, before the 5 s TTL`);
    assert.ok(elapsed < 25_000, `granted only after ${elapsed} ms`);
    assert.deepEqual((await locks(real('ttl.txt'))).map((l) => l.holder), [B.id]);
    await releaseAll();
  });

  test("any call by the holder renews its locks; other callers' calls do not", async () => {
    await ok(A.client, 'lock_files', { files: ['renew.txt'], ttl_s: 60 });
    const e0 = Date.parse((await locks(real('renew.txt')))[0]!.expires_at);
    // Let the clock move on (ISO times have millisecond resolution).
    await eventually('the clock to advance', () => Date.now() > e0 - 60_000 + 5, 1000, 1);
    await ok(B.client, 'read_note', { key: 'unrelated' });
    await h.call('read_note', { key: 'unrelated' });
    const e1 = Date.parse((await locks(real('renew.txt')))[0]!.expires_at);
    assert.equal(e1, e0, 'calls of others do not renew A\'s lock');
    await ok(A.client, 'read_note', { key: 'unrelated' });
    const e2 = Date.parse((await locks(real('renew.txt')))[0]!.expires_at);
    assert.ok(e2 > e1, `expires_at moved from ${new Date(e1).toISOString()} to ${new Date(e2).toISOString()}`);
    await releaseAll();
  });
});

describe('release_files', () => {
  test('releasing a file someone else holds is forbidden and releases nothing', async () => {
    await ok(A.client, 'lock_files', { files: ['rel-a.txt'] });
    await ok(B.client, 'lock_files', { files: ['rel-b.txt'] });
    const r = await callAs(B.client, 'release_files', { files: ['rel-a.txt', 'rel-b.txt'] });
    assert.equal(r.isError, true);
    assert.match(r.text, /^forbidden: /);
    assert.ok(r.text.includes(A.id), r.text);
    assert.match(r.text, /Nothing was released/);
    assert.deepEqual((await locks(real('rel-'))).map((l) => [l.path, l.holder]), [[real('rel-a.txt'), A.id], [real('rel-b.txt'), B.id]]);
    const lead = await h.callRaw('release_files', { files: ['rel-a.txt'] });
    assert.equal(lead.isError, true, 'the lead cannot release an agent\'s lock either');
    assert.equal((await locks(real('rel-a.txt'))).length, 1);
    await releaseAll();
  });

  test('without files it releases all of mine and nothing of others', async () => {
    await ok(A.client, 'lock_files', { files: ['all-q.txt', 'all-p.txt'] });
    await ok(B.client, 'lock_files', { files: ['all-r.txt'] });
    const r = await ok(A.client, 'release_files', {});
    assert.deepEqual(r.released, [real('all-p.txt'), real('all-q.txt')]);
    assert.deepEqual((await locks(real('all-'))).map((l) => [l.path, l.holder]), [[real('all-r.txt'), B.id]]);
    assert.deepEqual((await ok(A.client, 'release_files', {})).released, [], 'idempotent');
    await releaseAll();
  });
});

describe('lock paths', () => {
  test('paths outside the work tree, NUL bytes, empty paths and too many files are refused; nothing is locked', async () => {
    const outside = join(dirname(root), `not-in-tree-${process.pid}.txt`);
    const cases: [unknown[], RegExp][] = [
      [['../outside.txt'], /outside the work tree/],
      [[outside], /outside the work tree/],
      [['ok-1.txt', '../outside.txt'], /outside the work tree/],
      [['bad\u0000name.txt'], /NUL byte/],
      [[''], /empty/],
      [['   '], /empty/],
      [['.'], /work tree root/],
      [Array.from({ length: 10_000 }, (_, i) => `many/f${i}.txt`), /at most 1000/],
    ];
    const held = async (): Promise<string> => JSON.stringify((await locks()).map((l) => [l.path, l.holder]));
    const snapshot = await held();
    for (const [files, re] of cases) {
      const r = await callAs(A.client, 'lock_files', { files });
      assert.equal(r.isError, true, `${JSON.stringify(files).slice(0, 80)} should be refused: ${r.text.slice(0, 200)}`);
      assert.match(r.text, re, JSON.stringify(files).slice(0, 80));
      assert.ok(r.text.length < 20_000, 'the error stays small');
      assert.equal(await held(), snapshot, `${JSON.stringify(files).slice(0, 80)} locked something`);
    }
    const lead = await h.callRaw('lock_files', { files: ['../outside.txt'] });
    assert.equal(lead.isError, true);
    assert.match(lead.text, /outside the work tree/);
    assert.equal(await held(), snapshot);
  });

  test('a call with many deep paths does not stall the hub: another caller is answered meanwhile', async () => {
    const deep = Array.from({ length: 200 }, () => 'd').join('/');
    mkdirSync(join(root, deep), { recursive: true });
    const files = Array.from({ length: 1000 }, (_, k) => `${deep}/f${k}.txt`);
    const order: string[] = [];
    const big = callAs(A.client, 'lock_files', { files, timeout_s: 0 }).then((r) => { order.push('lock_files'); return r; });
    // Sent after lock_files: answered while its paths resolve, not after.
    const small = h.call('list_notes', {}).then(() => { order.push('list_notes'); });
    const [r] = await Promise.all([big, small]);
    assert.equal(r.isError, false, r.text.slice(0, 300));
    assert.equal(r.value.acquired_count, 1000, 'the count is exact even when the list is too long for one result');
    assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS n FROM locks WHERE holder = ${A.id}`), 1000);
    assert.deepEqual(order, ['list_notes', 'lock_files']);
    await ok(A.client, 'release_files', {});
    rmSync(join(root, 'd'), { recursive: true, force: true });
  });

  test('relative, dotted, trailing-slash, absolute and symlinked spellings are one lock', async () => {
    mkdirSync(join(root, 'sp', 'a'), { recursive: true });
    mkdirSync(join(root, 'sp', 'realdir'), { recursive: true });
    writeFileSync(join(root, 'sp', 'b.txt'), 'b\n');
    symlinkSync(join(root, 'sp', 'b.txt'), join(root, 'sp', 'link.txt'));
    symlinkSync(join(root, 'sp', 'realdir'), join(root, 'sp', 'linkdir'));
    const outsideDir = await makeTempDir('ovs-outside');
    temps.push(outsideDir);
    symlinkSync(outsideDir, join(root, 'sp', 'escape'));
    const b = real('sp/b.txt');
    for (const spelling of ['sp/b.txt', './sp/a/../b.txt', 'sp/b.txt/', join(h.project, 'sp', 'b.txt'), 'sp/link.txt', 'sp//b.txt']) {
      const r = await ok(A.client, 'lock_files', { files: [spelling], timeout_s: 0 });
      assert.deepEqual(r.acquired, [b], `${spelling} should resolve to ${b}`);
    }
    assert.deepEqual((await ok(A.client, 'lock_files', { files: ['sp/b.txt', './sp/link.txt'] })).acquired, [b], 'deduplicated');
    assert.deepEqual((await locks(real('sp/'))).map((l) => l.path), [b], 'one lock row');

    const viaLink = await callAs(B.client, 'lock_files', { files: ['sp/link.txt'], timeout_s: 0 });
    assert.equal(viaLink.isError, true, 'locking through the symlink conflicts with the real path');
    assert.ok(viaLink.text.includes(b) && viaLink.text.includes(A.id), viaLink.text);

    // A file that does not exist yet, under a symlinked directory.
    await ok(A.client, 'lock_files', { files: ['sp/realdir/new.txt'] });
    const viaDirLink = await callAs(B.client, 'lock_files', { files: ['sp/linkdir/new.txt'], timeout_s: 0 });
    assert.equal(viaDirLink.isError, true);
    assert.ok(viaDirLink.text.includes(real('sp/realdir/new.txt')), viaDirLink.text);

    const escape = await callAs(B.client, 'lock_files', { files: ['sp/escape/x.txt'] });
    assert.equal(escape.isError, true, 'a symlink leading out of the tree is refused');
    assert.match(escape.text, /outside the work tree/);
    assert.deepEqual((await locks(real('sp/'))).map((l) => [l.path, l.holder]), [[b, A.id], [real('sp/realdir/new.txt'), A.id]]);
    await releaseAll();
  });
});

describe('holders', () => {
  test('the lead can lock too; its holder is "lead"', async () => {
    const r = await h.call('lock_files', { files: ['lead.txt'], reason: 'lead edits' });
    assert.deepEqual(r.acquired, [real('lead.txt')]);
    assert.deepEqual((await locks(real('lead.txt'))).map((l) => [l.holder, l.reason]), [['lead', 'lead edits']]);
    const b = await callAs(B.client, 'lock_files', { files: ['lead.txt'], timeout_s: 0 });
    assert.equal(b.isError, true);
    assert.match(b.text, /held by the lead/);
    assert.deepEqual((await h.call('release_files', {})).released, [real('lead.txt')]);
    await releaseAll();
  });

  test("a job's end releases its locks and grants the waiters", async () => {
    const D = await spawnAgent(h, 'Agent D');
    await ok(D.client, 'lock_files', { files: ['end-1.txt', 'end-2.txt'] });
    const pB = track(callAs(B.client, 'lock_files', { files: ['end-1.txt'], timeout_s: 30 }));
    await waiting(h, B.id);
    const cancelled = await h.call('cancel_agent', { job_id: D.id });
    assert.equal(cancelled.status, 'cancelled');
    const r = await pB.promise;
    assert.equal(r.isError, false, r.text);
    const now = await locks(real('end-'));
    assert.deepEqual(now.map((l) => [l.path, l.holder]), [[real('end-1.txt'), B.id]], 'D holds nothing any more');
    await releaseAll();
  });
});

describe('list_locks', () => {
  test('waiters count the requests waiting per path; path_prefix filters', async () => {
    await ok(A.client, 'lock_files', { files: ['wp/one.txt', 'wp/two.txt', 'other.txt'], reason: 'batch' });
    const pB = track(callAs(B.client, 'lock_files', { files: ['wp/one.txt'], timeout_s: 30 }));
    await waiting(h, B.id);
    const pC = track(callAs(C.client, 'lock_files', { files: ['wp/one.txt', 'wp/two.txt'], timeout_s: 30 }));
    await waiting(h, C.id);
    const wp = await locks(real('wp/'));
    assert.deepEqual(wp.map((l) => [l.path, l.holder, l.reason, l.waiters]), [
      [real('wp/one.txt'), A.id, 'batch', 2],
      [real('wp/two.txt'), A.id, 'batch', 1],
    ]);
    for (const l of wp) {
      assert.ok(Date.parse(l.acquired_at) <= Date.parse(l.expires_at));
      assert.match(l.expires_at, /^\d{4}-\d\d-\d\dT/);
    }
    assert.deepEqual((await locks(real('wp/t'))).map((l) => l.path), [real('wp/two.txt')]);
    assert.equal((await locks()).length, 3);
    assert.deepEqual(await locks(real('nothing-here/')), []);
    // Agents see the same list.
    assert.equal((await ok(B.client, 'list_locks', { path_prefix: real('wp/') })).locks.length, 2);

    await ok(A.client, 'release_files', {});
    assert.equal((await pB.promise).isError, false);
    assert.equal(pC.settled(), false, 'C needs one.txt, which B now holds');
    await ok(B.client, 'release_files', {});
    assert.deepEqual((await pC.promise).value.acquired, [real('wp/one.txt'), real('wp/two.txt')]);
    await releaseAll();
  });
});

describe('lock_files as a blocking tool', () => {
  test('sends progress while it waits; cancelling the request drops the wait', async () => {
    await ok(A.client, 'lock_files', { files: ['prog.txt'] });
    const seen: { progress: number; message?: string }[] = [];
    const ac = new AbortController();
    let third!: () => void;
    const gotThree = new Promise<void>((r) => { third = r; });
    const call = h.call('lock_files', { files: ['prog.txt'], timeout_s: 120 }, {
      signal: ac.signal,
      onprogress: (p) => { seen.push(p as { progress: number; message?: string }); if (seen.length === 3) third(); },
    });
    call.catch(() => undefined);
    let deadline: NodeJS.Timeout | undefined;
    try {
      await Promise.race([gotThree, new Promise((_, rej) => { deadline = setTimeout(() => rej(new Error(`only ${seen.length} progress notifications in 10 s`)), 10_000); })]);
    } finally {
      clearTimeout(deadline);
    }
    assert.equal(await waitRows(h, leadOf(h.hub.hubId, h.hub.ctx.sql.dialect === 'postgres')), 1); // lead@<hub> on PostgreSQL (src/domain/lead.ts)
    assert.match(seen[0]!.message ?? '', /waiting \d+s/);
    assert.ok(seen[2]!.progress >= seen[0]!.progress, 'progress does not go backwards');
    ac.abort();
    await assert.rejects(call);
    await eventually('the cancelled wait row to be dropped', async () => ((await waitRows(h)) === 0 ? true : undefined), 10_000, 5);
    assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS n FROM lock_waits`), 0, 'lock_waits is empty');
    assert.deepEqual((await locks(real('prog.txt'))).map((l) => l.holder), [A.id], 'the lead got nothing');
    await ok(A.client, 'release_files', {});
    assert.deepEqual(await locks(), [], 'releasing later grants nothing to the cancelled request');
    await releaseAll();
  });
});

describe('hub restart', () => {
  test("the lead's locks survive a restart; a job's are released (reconciled)", async () => {
    const h1 = await startTestHub({ scripts: HANG });
    let h2: TestHub | undefined;
    try {
      const r1 = realpathSync(h1.project);
      const D = await spawnAgent(h1, 'Agent D');
      await h1.call('lock_files', { files: ['keep.txt'], reason: 'lead keeps' });
      await ok(D.client, 'lock_files', { files: ['gone.txt'] });
      await h1.hub.stop();
      // A crash (kill -9) would leave the job's lock and a wait row behind: plant them (the lock as
      // one taken before migration 29, keyed by its absolute path).
      const db = await reopen(h1.hub);
      const now = Date.now();
      const gone = join(r1, 'gone.txt');
      await sql`INSERT INTO locks (rel_path, path, holder, reason, ttl_s, acquired_at, expires_at) VALUES (${gone}, ${gone}, ${D.id}, 'crash', 600, ${now}, ${now + 600_000}) ON CONFLICT DO NOTHING`.execute(db.db);
      await sql`INSERT INTO lock_waits (holder, paths_json, reason, ttl_s, created_at) VALUES (${D.id}, ${JSON.stringify([join(r1, 'keep.txt')])}, NULL, 600, ${now})`.execute(db.db);
      await db.close();

      h2 = await startTestHub({ dir: h1.dir, fake: h1.fake });
      const after = (await h2.call('list_locks', {})).locks as { path: string; holder: string; reason: string }[];
      assert.deepEqual(after.map((l) => [l.path, l.holder, l.reason]), [[join(r1, 'keep.txt'), 'lead', 'lead keeps']]);
      assert.ok(h2.hub.reconciled?.locksReleasedFor?.includes(D.id), `reconciled: ${JSON.stringify(h2.hub.reconciled)}`);
      assert.equal(await count(h2.hub, sql`SELECT COUNT(*) AS n FROM lock_waits`), 0, 'waits died with the old hub');
      assert.deepEqual((await h2.call('release_files', {})).released, [join(r1, 'keep.txt')], 'the lead still owns it');
    } finally {
      await h2?.stop({ keep: true });
      await h1.stop();
    }
  });

  test('a lock that survived a restart still expires by its TTL and wakes a waiter', async () => {
    const h1 = await startTestHub({ scripts: HANG });
    let h2: TestHub | undefined;
    try {
      const t0 = Date.now();
      await h1.call('lock_files', { files: ['survivor.txt'], ttl_s: 5 });
      await h1.hub.stop();
      h2 = await startTestHub({ dir: h1.dir, fake: h1.fake });
      assert.equal((await h2.call('list_locks', {})).locks.length, 1, 'the lead\'s lock survived');
      const E = await spawnAgent(h2, 'Agent E');
      const r = await callAs(E.client, 'lock_files', { files: ['survivor.txt'], timeout_s: 15 });
      const elapsed = Date.now() - t0;
      assert.equal(r.isError, false, `the waiter should get the file once the lead's lock expires (~5 s), got after ${elapsed} ms: ${r.text}`);
      assert.ok(elapsed >= 4500, `granted after ${elapsed} ms`);
      assert.ok(elapsed < 12_000, `granted only after ${elapsed} ms: the expiry timer was not armed after the restart`);
    } finally {
      await h2?.stop({ keep: true });
      await h1.stop();
    }
  });
});
