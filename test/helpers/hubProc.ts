// A child process that is one hub of the many-hubs building blocks (src/store/sql/hubs.ts,
// notify.ts, claims.ts, commands.ts) for test/integration/sql-hubs.test.ts: real processes that
// can be killed with -9, stopped and continued. One JSON command per stdin line, answered by one
// line {n, ...}; what happens on its own is told as {event, ...} lines. Run by hubProcs.ts.
//   {op: 'open', home, url?}                       openSql → {}
//   {op: 'register', beatMs, timeoutMs, holdMs?}    HubRegistry.start → {id}; holdMs: the reconcile
//                                                   callback holds its transaction that long (a race window)
//   {op: 'detect'}                                  registry.detect() → {dead: [ids]}
//   {op: 'stop'}                                    registry.stop() → {clean}
//   {op: 'claim', jobs: [ids], hub}                 claimJob for each, attempt inserted on a win → {won: [ids]}
//   {op: 'close'}                                   → {}, then exits
// Events: {event: 'reconciled', hub, released, commands} from inside the reconcile transaction;
//         {event: 'committed', hub} once it committed; {event: 'fenced', deadAt}.
import { commandLoop, say } from './childLoop.js';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import pino from 'pino';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { HubRegistry } from '../../src/store/sql/hubs.js';
import { releaseOwned } from '../../src/store/sql/claims.js';
import { claimJob } from '../../src/store/sql/jobs.js';
import { closeCommandsOf } from '../../src/store/sql/commands.js';

let s: SqlDb | undefined;
let url: string | undefined;
let reg: HubRegistry | undefined;
const log = pino({ level: process.env.HUB_PROC_LOG ?? 'error' }, pino.destination(2));

async function run(cmd: Record<string, unknown>): Promise<Record<string, unknown>> {
  switch (cmd.op) {
    case 'open':
      url = cmd.url as string | undefined;
      s = await openSql({ home: cmd.home as string, databaseUrl: url });
      return {};
    case 'register': {
      const holdMs = Number(cmd.holdMs ?? 0);
      reg = await HubRegistry.start({
        db: s!.db, dialect: s!.dialect, url, log,
        identity: { host: hostname(), pid: process.pid, url: null, stateDir: '/tmp/hub-test', version: 'test' },
        beatMs: Number(cmd.beatMs), timeoutMs: Number(cmd.timeoutMs),
        async reconcile(trx, dead) {
          await sql`INSERT INTO reconciled (hub_id, by_pid) VALUES (${dead.id}, ${process.pid})`.execute(trx);
          const released = await releaseOwned(trx, dead.id);
          const commands = await closeCommandsOf(trx, dead.id, 'its owner hub died', Date.now());
          say({ event: 'reconciled', hub: dead.id, released, commands });
          if (holdMs) await new Promise((r) => setTimeout(r, holdMs));
        },
        onReconciled: (dead) => say({ event: 'committed', hub: dead.id }),
        onFenced: (row) => say({ event: 'fenced', deadAt: row?.dead_at ?? null }),
      });
      return { id: reg.id };
    }
    case 'detect':
      return { dead: (await reg!.detect()).map((h) => h.id) };
    case 'stop':
      return { clean: await reg!.stop() };
    case 'claim': {
      const won: string[] = [];
      for (const id of cmd.jobs as string[]) {
        const r = await claimJob(s!.db, { jobId: id, hubId: cmd.hub as string, now: Date.now(), tokenHash: null }, async (trx, job) => {
          await sql`INSERT INTO attempts (job_id, n, kind, status, started_at, transcript) VALUES (${job.id}, 1, 'initial', 'running', ${Date.now()}, ${`t-${process.pid}`})`.execute(trx);
        });
        if (r) won.push(id);
      }
      return { won };
    }
    case 'close':
      await reg?.stop().catch(() => undefined);
      await s?.close();
      return {};
    default:
      throw new Error(`unknown op ${String(cmd.op)}`);
  }
}

await commandLoop(run, 'close');
