// A child process for the lock races of test/integration/sql-locks.test.ts: the lock decisions of
// src/store/sql/lockDecisions.ts on a connection of its own, one JSON command per stdin line, one
// JSON answer per stdout line (the protocol of sqlRacers.ts; started with its `script` argument).
//   {op: 'open', home, url?}                     openSql → {ok}
//   {op: 'acquire', holder, paths, wait, scope?} acquireOrWait, then (when granted) the holders of its
//                                                paths read back → {ok, kind, waitId?, heldBy?, cycle?}
//   {op: 'hook', holder, targets, scope?}        hookDecide (auto mode), then the holders read back → {ok, kind, took?, heldBy?}
// `scope` (src/domain/lockKeys.ts) defaults to unshared; heldBy is keyed by keyString (the path, unshared).
//   {op: 'grant'}                                grantWaiting → {ok, granted}
//   {op: 'release', holder}                      release everything of holder → {ok, released}
//   {op: 'close'}                                → {ok}, then exits
import { serveSqlRacer } from './racerLoop.js';
import type { SqlDb } from '../../src/store/sql/open.js';
import { acquireOrWait, grantWaiting, hookDecide } from '../../src/store/sql/lockDecisions.js';
import { heldAmong, lockTx, release } from '../../src/store/sql/locks.js';
import { keyString, lockItems, UNSHARED, type LockScope } from '../../src/domain/lockKeys.js';

const NOW = (): number => Date.now();

/** key → holder now, for the paths asked about (read after the decision committed). */
async function heldBy(s: SqlDb, scope: LockScope, paths: readonly string[]): Promise<Record<string, string>> {
  return Object.fromEntries((await heldAmong(s.db, lockItems(scope, paths))).map((l) => [keyString({ repo: l.repo, rel: l.rel_path }), l.holder]));
}

await serveSqlRacer({
  async acquire(cmd, s) {
    const paths = cmd.paths as string[];
    const scope = (cmd.scope as LockScope | undefined) ?? UNSHARED;
    const r = await acquireOrWait(s.db, { holder: cmd.holder as string, items: lockItems(scope, paths), reason: null, ttlS: 600, now: NOW(), wait: cmd.wait === true });
    if (r.kind === 'granted') return { ok: true, kind: r.kind, heldBy: await heldBy(s, scope, paths) };
    if (r.kind === 'waiting') return { ok: true, kind: r.kind, waitId: r.waitId };
    if (r.kind === 'deadlock') return { ok: true, kind: r.kind, cycle: r.cycle };
    return { ok: true, kind: r.kind };
  },
  async hook(cmd, s) {
    const targets = cmd.targets as string[];
    const scope = (cmd.scope as LockScope | undefined) ?? UNSHARED;
    const items = lockItems(scope, targets);
    const r = await hookDecide(s.db, { holder: cmd.holder as string, targets: items, exact: items, dirs: [], mode: 'auto', now: NOW(), renew: true, reason: 'edited (auto lock)', ttlS: 600 });
    return r.kind === 'took' ? { ok: true, kind: r.kind, took: r.took.map((i) => i.path), heldBy: await heldBy(s, scope, targets) } : { ok: true, kind: r.kind };
  },
  grant: async (_cmd, s) => ({ ok: true, granted: (await grantWaiting(s.db, NOW())).granted }),
  release: async (cmd, s) => ({ ok: true, released: await lockTx(s.db, (trx) => release(trx, cmd.holder as string)) }),
});
