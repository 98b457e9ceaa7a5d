// Worker thread of the job-claim race (test/integration/sql-jobs.test.ts): a dispatcher on a
// connection of its own (SQLite: the state file; PostgreSQL: a pool of its own) waits for the
// start signal, then tries to start every queued job in `ids` as the runner does (claimAttempt:
// the claim, its attempt row and its `started` event in one transaction) and reports the jobs it won.
import { parentPort, workerData } from 'node:worker_threads';
import { openSql } from '../../src/store/sql/open.js';
import { claimAttempt } from '../../src/store/sql/jobs.js';

const { home, url, ids, start, me } = workerData as { home: string; url?: string; ids: string[]; start: SharedArrayBuffer; me: string };
const s = await openSql({ home, databaseUrl: url });
await s.db.selectFrom('jobs').select('id').limit(1).execute();
const flag = new Int32Array(start);
parentPort!.postMessage({ ready: true });
Atomics.wait(flag, 0, 0);
const won: string[] = [];
for (const id of ids) {
  const r = await claimAttempt(s.db, { jobId: id, now: Date.now(), tokenHash: `${me}-${id}`, files: (n) => ({ transcript: `/dev/null/${me}/${n}`, stderr: '' }) });
  if (r) won.push(r.job.id);
}
await s.close();
parentPort!.postMessage({ me, won });
