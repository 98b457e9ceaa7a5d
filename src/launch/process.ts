// The real ProcessLauncher: node:child_process, detached (own process group, so signals reach
// the child's own MCP servers and tools too), no shell, output streamed rather than buffered.
// (It was execa: 130 modules and about 6 MB of a hub's memory, plus promise and stream machinery
// per child, for what spawn, 'error' and 'close' give directly; docs/performance-hub-memory.md.)
import { spawn } from 'node:child_process';
import type { ChildHandle, ExitInfo, ProcessLauncher, SpawnCmd } from './types.js';

export class NodeLauncher implements ProcessLauncher {
  launch(cmd: SpawnCmd): ChildHandle {
    const child = spawn(cmd.bin, cmd.args, { cwd: cmd.cwd, env: cmd.env, stdio: [cmd.stdin, 'pipe', 'pipe'], detached: true, windowsHide: true });
    let stdinOpen = cmd.stdin === 'pipe';
    child.stdin?.on('error', () => { stdinOpen = false; });
    // 'close' comes after the exit and after stdout and stderr have ended (a grandchild that
    // keeps them open keeps it waiting, as the contract says); a process that could not start at
    // all gets 'error' (ENOENT, EACCES…, no pid) and then 'close'.
    const exited = new Promise<ExitInfo>((resolve) => {
      let failed: ExitInfo['spawnError'];
      child.on('error', (err: NodeJS.ErrnoException) => {
        if (child.pid === undefined) failed ??= { code: err.code, message: spawnMessage(cmd.bin, err.code, err.message) };
      });
      child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        stdinOpen = false;
        resolve(failed ? { code: null, signal: null, spawnError: failed } : { code, signal });
      });
    });
    const pid = child.pid;
    return {
      pid,
      onStdout: (cb) => child.stdout?.on('data', cb),
      onStderr: (cb) => child.stderr?.on('data', cb),
      write: (data) => {
        if (!stdinOpen || !child.stdin || child.stdin.destroyed) return false;
        child.stdin.write(data);
        return true;
      },
      closeStdin: () => {
        if (stdinOpen && child.stdin) child.stdin.end();
        stdinOpen = false;
      },
      stdinOpen: () => stdinOpen,
      signalGroup: (signal) => signalGroup(pid, signal),
      exited,
    };
  }
}

/** Send `signal` to the process group led by `pid`; false when there is none. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (!pid) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Does a process with this pid exist? */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

function spawnMessage(bin: string, code: string | undefined, message: string): string {
  if (code === 'ENOENT') return `cannot run ${bin}: no such file`;
  if (code === 'EACCES') return `cannot run ${bin}: permission denied`;
  return message;
}
