// The real ProcessLauncher: execa, detached (own process group, so signals reach the child's
// own MCP servers and tools too), no shell, output streamed rather than buffered.
import { execa } from 'execa';
import type { ChildHandle, ExitInfo, ProcessLauncher, SpawnCmd } from './types.js';

export class ExecaLauncher implements ProcessLauncher {
  launch(cmd: SpawnCmd): ChildHandle {
    const child = execa(cmd.bin, cmd.args, {
      cwd: cmd.cwd,
      env: cmd.env,
      extendEnv: false,
      stdin: cmd.stdin,
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      detached: true,
      cleanup: false,
      windowsHide: true,
    });
    let stdinOpen = cmd.stdin === 'pipe';
    child.stdin?.on('error', () => { stdinOpen = false; });
    const exited: Promise<ExitInfo> = child.then(
      (r) => {
        stdinOpen = false;
        const errCode = (r as { code?: string }).code;
        if (r.failed && r.exitCode === undefined && !r.signal && errCode) {
          return { code: null, signal: null, spawnError: { code: errCode, message: spawnMessage(cmd.bin, errCode, r.message ?? `cannot run ${cmd.bin}`) } };
        }
        return { code: r.exitCode ?? null, signal: r.signal ?? null };
      },
      (err: unknown) => {
        stdinOpen = false;
        const e = err as { code?: string; message?: string };
        return { code: null, signal: null, spawnError: { code: e.code, message: spawnMessage(cmd.bin, e.code, e.message ?? String(err)) } };
      },
    );
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
