// The composition of confinement for a hub: probe bubblewrap once, wrap the process launcher,
// and keep held files read-only in every confined child (when python3 is there to do it).
import { join } from 'node:path';
import type { Config } from '../config.js';
import { stateRoot } from '../config.js';
import type { Logger } from '../log.js';
import type { Q } from '../store/sql/tx.js';
import { jobsByStatus } from '../store/sql/jobs.js';
import { allLocks } from '../store/sql/locks.js';
import type { ProcessLauncher } from '../launch/types.js';
import { which } from '../launch/which.js';
import type { Bus } from '../services/bus.js';
import { ConfinedLauncher, confineStatus, UNCONFINED, type CommandConfiner, type ConfineStatus } from './launcher.js';
import { LockMounts, pythonHelper } from './lockMounts.js';
import { ChildScopes, treeOf } from './childScopes.js';

export interface Confinement {
  processes: ProcessLauncher;
  /** The same confinement for a command a person runs (overseer attach): the runner's code path. */
  commands: CommandConfiner;
  status: ConfineStatus;
  lockMounts?: LockMounts;
  /** Start following lock and job changes. */
  attach(bus: Bus): () => void;
}

export function setupConfinement(o: {
  /** The layer, where the lock mounts read the locks and the running jobs at each pass. */
  config: Config; q: Q; projectDir: string; packageRoot: string; kbGlobal: string; log: Logger; now: () => number; base: ProcessLauncher;
}): Confinement {
  const status = confineStatus(o.config.confine);
  if (!status.active) return { processes: o.base, commands: UNCONFINED, status, attach: () => () => undefined };
  const python = o.config.lockMode === 'off' ? undefined : which('python3');
  let lockMounts: LockMounts | undefined;
  if (o.config.lockMode === 'off') {
    status.heldReadOnly = false;
    status.heldReason = 'lock mode off: held files are not enforced';
  } else if (python) {
    lockMounts = new LockMounts({
      held: async () => (await allLocks(o.q)).map((l) => ({ path: l.path, holder: l.holder, repo: l.repo, rel: l.rel_path })),
      running: async () => (await jobsByStatus(o.q, 'running')).map((j) => ({ jobId: j.id, pid: j.pid, tree: treeOf(j) })),
      scopes: new ChildScopes(),
      helper: pythonHelper(python, join(o.packageRoot, 'hooks', 'overseer-lockmount.py')),
      log: o.log,
      now: o.now,
    });
    status.heldReadOnly = true;
  } else {
    status.heldReadOnly = false;
    status.heldReason = 'python3 is not on PATH: files other agents hold are not made read-only inside a child (the lock hook still checks what it can read)';
    o.log.warn(status.heldReason);
  }
  const processes = new ConfinedLauncher(o.base, status.bwrap!, {
    stateDir: o.config.home, stateRoot: stateRoot(process.env), projectDir: o.projectDir, packageRoot: o.packageRoot,
    secretFiles: ['', '-wal', '-shm'].map((s) => `${o.kbGlobal}${s}`), databaseUrl: o.config.databaseUrl,
  }, lockMounts);
  return {
    processes, commands: processes, status, lockMounts,
    attach: (bus) => {
      if (!lockMounts) return () => undefined;
      // Every lock and job change starts a pass, which reads both through the layer; the first
      // one now fills the view a child's start plans from (LockMounts.heldByOthers).
      // Other hubs' too: a file another hub's agent took turns read-only here (one pass per resync).
      const sync = (): void => void lockMounts!.sync();
      const offs = [bus.on('lock', sync, { remote: true, resync: sync }), bus.on('job', sync, { remote: true, resync: sync })];
      void lockMounts.sync();
      return () => { for (const off of offs) off(); lockMounts!.close(); };
    },
  };
}
