// A request's store cost, before and after it moved onto the asynchronous layer (issue 29 step 4):
// one request opened (row + the job's needs_input), answered (the compare-and-set close + the
// recount of the job's pending requests) and the two reads wait_for_agents makes on every check
// (pending requests of the awaited jobs, unseen late answers). "sync" runs the synchronous store's
// statements as they were at commit 48422c7 (src/store/requests.ts, RequestService.close), kept
// here only to compare; "layer" runs src/store/sql/requests.ts over the same SQLite file (the
// hub's sqlOver), and over PostgreSQL (a fresh database on the tests' server) for reference.
// Per operation: median of 7 rounds of N cycles, alternating before and after, µs (the wait's check with 8 jobs awaited, one
// pending request each). Run alone: node --import tsx bench/requests.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { openDb, tx, type Db } from '../src/store/db.js';
import { openSql, sqlOver, type SqlDb } from '../src/store/sql/open.js';
import { closeRequest, openRequest, pendingFor, unseenLate, type NewRequest } from '../src/store/sql/requests.js';
import { freshDatabase } from '../test/helpers/postgres.js';

const N = 500;
const ROUNDS = 7;
let n = 0;
const newRequest = (jobId: string): NewRequest => ({
  id: `r-${n++}`, job_id: jobId, kind: 'approval', summary: 'may I?', plan_json: null, options_json: null, created_at: n,
  tool_name: null, tool_input_json: null, expires_at: null, who: 'any',
});

interface Ops { open(jobId: string): Promise<string>; close(id: string): Promise<void>; attention(jobIds: string[]): Promise<void> }

/** The synchronous store's statements as of 48422c7, for the "before" figures. */
function syncOps(db: Db): Ops {
  const setStatus = (id: string, from: string, to: string): void => {
    const j = db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as { status: string } | undefined;
    if (j?.status === from) db.prepare('UPDATE jobs SET status = @status, updated_at = @__now WHERE id = @__id').run({ status: to, __now: Date.now(), __id: id });
  };
  return {
    open: async (jobId) => {
      const r = newRequest(jobId);
      tx(db, () => {
        db.prepare(`INSERT INTO requests (id, job_id, kind, summary, plan_json, options_json, status, created_at, tool_name, tool_input_json, expires_at, who)
          VALUES (@id, @job_id, @kind, @summary, @plan_json, @options_json, 'pending', @created_at, @tool_name, @tool_input_json, @expires_at, @who)`).run(r);
        setStatus(jobId, 'running', 'needs_input');
      });
      db.prepare('SELECT * FROM jobs WHERE id = ?').get(jobId);
      return r.id;
    },
    close: async (id) => {
      const r = db.prepare('SELECT * FROM requests WHERE id = ?').get(id) as { job_id: string };
      tx(db, () => {
        const ok = db.prepare(`UPDATE requests SET status = ?, decision = ?, answer = ?, comment = ?, answered_by = ?, answered_at = ? WHERE id = ? AND status = 'pending'`)
          .run('answered', 'approved', null, null, 'lead', Date.now(), id).changes > 0;
        if (ok && (db.prepare(`SELECT COUNT(*) AS c FROM requests WHERE job_id = ? AND status = 'pending'`).get(r.job_id) as { c: number }).c === 0) setStatus(r.job_id, 'needs_input', 'running');
      });
      db.prepare('SELECT * FROM jobs WHERE id = ?').get(r.job_id);
    },
    attention: async (ids) => {
      db.prepare(`SELECT * FROM requests WHERE status = 'pending' AND job_id IN (${ids.map(() => '?').join(',')}) ORDER BY created_at`).all(...ids);
      db.prepare(`SELECT * FROM request_late_answers WHERE lead_seen_at IS NULL AND job_id IN (${ids.map(() => '?').join(',')}) ORDER BY id`).all(...ids);
    },
  };
}

function layerOps(s: SqlDb): Ops {
  return {
    open: async (jobId) => {
      const r = newRequest(jobId);
      await openRequest(s.db, r, Date.now());
      return r.id;
    },
    close: async (id) => void (await closeRequest(s.db, id, { status: 'answered', decision: 'approved', by: 'lead' }, Date.now())),
    attention: async (ids) => {
      await pendingFor(s.db, ids);
      await unseenLate(s.db, ids);
    },
  };
}

async function seedJobs(s: SqlDb): Promise<string[]> {
  const ids = Array.from({ length: 8 }, (_, i) => `j-bench${i}`);
  for (const [i, id] of ids.entries()) {
    await sql`INSERT INTO jobs (id, seq, depth, title, prompt, provider, cwd, status, created_at, updated_at) VALUES (${id}, ${i + 1}, 1, 'bench', 'p', 'claude', '/tmp', 'running', 1, 1)`.execute(s.db);
  }
  return ids;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Figures { open: number; close: number; attention: number }
const medians = (fs: Figures[]): Figures => ({ open: median(fs.map((f) => f.open)), close: median(fs.map((f) => f.close)), attention: median(fs.map((f) => f.attention)) });

async function measure(ops: Ops, jobs: string[], rounds = ROUNDS): Promise<Figures> {
  const open: number[] = [];
  const close: number[] = [];
  const attention: number[] = [];
  for (let round = -1; round < rounds; round++) {
    const ids: string[] = [];
    let t = performance.now();
    for (let i = 0; i < N; i++) ids.push(await ops.open(jobs[i % jobs.length]!));
    const o = (performance.now() - t) * 1000 / N;
    t = performance.now();
    for (const id of ids) await ops.close(id);
    const c = (performance.now() - t) * 1000 / N;
    // The wait's check with one pending request per awaited job (a busy crew, not a backlog).
    const asked: string[] = [];
    for (const j of jobs) asked.push(await ops.open(j));
    t = performance.now();
    for (let i = 0; i < N; i++) await ops.attention(jobs);
    const a = (performance.now() - t) * 1000 / N;
    for (const id of asked) await ops.close(id);
    if (round < 0) continue; // warm-up
    open.push(o);
    attention.push(a);
    close.push(c);
  }
  return { open: median(open), close: median(close), attention: median(attention) };
}

const line = (what: string, r: Figures): string =>
  `${what.padEnd(22)} open ${r.open.toFixed(1).padStart(7)} µs   answer ${r.close.toFixed(1).padStart(7)} µs   wait check ${r.attention.toFixed(1).padStart(7)} µs\n`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'overseer-bench-requests-'));
  try {
    const db = openDb(join(dir, 'state.db'));
    const s = sqlOver(db);
    const jobs = await seedJobs(s);
    process.stdout.write(`requests: ${N} opened, checked and answered per round, median of ${ROUNDS} rounds (8 jobs)\n`);
    // Alternated round by round, so that a busy machine's slow spell hits both alike.
    const before: Figures[] = [];
    const afterR: Figures[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      before.push(await measure(syncOps(db), jobs, 1));
      afterR.push(await measure(layerOps(s), jobs, 1));
    }
    process.stdout.write(line('SQLite, sync (before)', medians(before)));
    process.stdout.write(line('SQLite, layer (after)', medians(afterR)));
    await s.close();
    db.close();
    const pgDb = await freshDatabase().catch((err: unknown) => {
      process.stdout.write(`PostgreSQL: not measured (${(err as Error).message.split('\n')[0]})\n`);
      return undefined;
    });
    if (pgDb) {
      const pg = await openSql({ home: dir, databaseUrl: pgDb.url });
      process.stdout.write(line('PostgreSQL, layer', await measure(layerOps(pg), await seedJobs(pg))));
      await pg.close();
      await pgDb.drop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
