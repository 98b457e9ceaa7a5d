// Runs every child inside its confinement (bubblewrap, Linux): a ProcessLauncher decorator, so
// the supervisor, the launchers and the stream handling stay as they are. Availability is
// probed once per hub: a bwrap that cannot build the mounts (no user namespaces, another OS,
// package missing) is reported by `overseer doctor` and on every spawn, and — unless the
// config requires confinement — children then run unconfined, held by the hook alone.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { constants as osConstants } from 'node:os';
import type { ChildHandle, ExitInfo, ProcessLauncher, SpawnCmd } from '../launch/types.js';
import { which } from '../launch/which.js';
import { bwrapArgs } from './plan.js';
import { ConfineError, planFor, type JailInputs } from './jail.js';
import type { LockMounts } from './lockMounts.js';

export type ConfineMode = 'auto' | 'require' | 'off';

export interface ConfineStatus {
  /** Children run confined. */
  active: boolean;
  mode: ConfineMode;
  /** Why not, and what to do (when inactive and not switched off). */
  reason?: string;
  bwrap?: string;
  /** Files other agents hold are read-only inside each child (needs python3), and why not. */
  heldReadOnly?: boolean;
  heldReason?: string;
}

/** Can bubblewrap build a child's mounts here? One run of `bwrap … true` (~10 ms). */
export function probeBwrap(pathEnv = process.env.PATH): { ok: true; bwrap: string } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: `no OS confinement on ${process.platform} yet (Linux uses bubblewrap)` };
  const bwrap = which('bwrap', pathEnv);
  if (!bwrap) return { ok: false, reason: 'bubblewrap is not installed (bwrap not on PATH): install it, e.g. apt-get install bubblewrap' };
  const dir = mkdtempSync(path.join(tmpdir(), 'overseer-probe-'));
  try {
    execFileSync(bwrap, [...bwrapArgs({ hide: [dir], hideFiles: [], reveal: [], readOnly: [] }), '--', 'true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    return { ok: true, bwrap };
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim() || (err as Error).message;
    return { ok: false, reason: `bubblewrap cannot create a mount namespace here (${stderr.split('\n')[0]}): allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor profile for bwrap)` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function confineStatus(mode: ConfineMode, probe: () => ReturnType<typeof probeBwrap> = probeBwrap): ConfineStatus {
  if (mode === 'off') return { active: false, mode, reason: 'switched off (OVERSEER_CONFINE=off)' };
  const p = probe();
  return p.ok ? { active: true, mode, bwrap: p.bwrap } : { active: false, mode, reason: p.reason };
}

/** Turns a command into the same command confined (a person's takeover of an agent, src/takeover). */
export interface CommandConfiner {
  /** `cmd` run under bubblewrap with its work tree's plan (its role's read-only tree included).
   * Throws ConfineError when the tree cannot be confined. */
  command(cmd: SpawnCmd): SpawnCmd;
}

/** No confinement (switched off, unavailable, or an injected process launcher): the command as it is. */
export const UNCONFINED: CommandConfiner = { command: (cmd) => cmd };

/** Wraps `inner` so each child runs under bubblewrap with the plan of its work tree. */
export class ConfinedLauncher implements ProcessLauncher, CommandConfiner {
  constructor(private readonly inner: ProcessLauncher, private readonly bwrap: string, private readonly inputs: JailInputs, private readonly locks?: LockMounts) {}

  launch(cmd: SpawnCmd): ChildHandle {
    // Under bwrap a missing binary would be bwrap's own exit 1: say it the way an unconfined start would.
    const bin = binOf(cmd);
    try {
      accessSync(bin, constants.X_OK);
    } catch (err) {
      const code = (err as { code?: string }).code === 'ENOENT' ? 'ENOENT' : 'EACCES';
      return failed(`cannot run ${cmd.bin}: ${code === 'ENOENT' ? 'no such file' : 'permission denied'}`, code);
    }
    let confined;
    try {
      confined = this.confined(cmd, (jobId) => {
        if (!this.locks) return [];
        const held = this.locks.heldByOthers(jobId);
        this.locks.seed(jobId, held);
        return held;
      });
    } catch (err) {
      if (!(err instanceof ConfineError)) throw err;
      return failed(`cannot confine this agent: ${err.message}`);
    }
    const child = this.inner.launch(confined);
    return { ...child, pid: child.pid, exited: child.exited.then(unwrapExit) };
  }

  /** A person's takeover: the same plan, without the files other agents hold (their read-only
   * mounts follow running children only; the lock hook still checks the person's edits). */
  command(cmd: SpawnCmd): SpawnCmd {
    return this.confined(cmd, () => []);
  }

  private confined(cmd: SpawnCmd, held: (jobId: string) => string[]): SpawnCmd {
    // A role that writes nothing (src/roles): its whole tree is read-only, so no program it runs can write there.
    const plan = planFor(cmd.cwd, cmd.env, this.inputs, { readOnlyTree: cmd.readOnlyTree });
    const jobId = cmd.env.OVERSEER_AGENT_ID;
    if (jobId) plan.held = held(jobId);
    return { ...cmd, bin: this.bwrap, args: [...bwrapArgs(plan), '--', binOf(cmd), ...cmd.args] };
  }
}

const binOf = (cmd: SpawnCmd): string => (cmd.bin.includes('/') ? cmd.bin : which(cmd.bin, cmd.env.PATH) ?? cmd.bin);

/** bubblewrap exits with 128+N when the agent was killed by signal N: report the signal, as an
 * unconfined start would. */
export function unwrapExit(e: ExitInfo): ExitInfo {
  if (e.spawnError || e.signal || e.code === null || e.code <= 128 || e.code > 128 + 64) return e;
  const name = Object.entries(osConstants.signals).find(([, n]) => n === e.code! - 128)?.[0];
  return name ? { code: null, signal: name } : e;
}

/** A child that never started (spawnError), so the supervisor settles the attempt with the reason. */
function failed(message: string, code = 'ECONFINE'): ChildHandle {
  return {
    pid: undefined,
    onStdout: () => undefined,
    onStderr: () => undefined,
    write: () => false,
    closeStdin: () => undefined,
    stdinOpen: () => false,
    signalGroup: () => false,
    exited: Promise.resolve({ code: null, signal: null, spawnError: { code, message } }),
  };
}
