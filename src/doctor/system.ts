// Checks of the machine: Node.js, git (needed: worktrees, diffs) and gh (only for pull requests).
import { firstLine, formatSeconds } from './io.js';
import type { Check, DoctorDeps, ExecResult } from './types.js';

export const MIN_NODE_MAJOR = 20;

export function checkNode(deps: Pick<DoctorDeps, 'nodeVersion'>): Check {
  const major = Number(/^v?(\d+)/.exec(deps.nodeVersion)?.[1]);
  if (Number.isFinite(major) && major >= MIN_NODE_MAJOR) return { name: 'node', status: 'ok', detail: `Node.js v${deps.nodeVersion.replace(/^v/, '')}` };
  return {
    name: 'node',
    status: 'fail',
    detail: `Node.js v${deps.nodeVersion.replace(/^v/, '')} is too old: overseer needs ${MIN_NODE_MAJOR} or newer`,
    fix: `install Node.js ${MIN_NODE_MAJOR} or newer (https://nodejs.org, or nvm install ${MIN_NODE_MAJOR})`,
  };
}

/** Why a command that should have printed a version did not, in plain words. */
export function execProblem(cmd: string, r: ExecResult, timeoutMs: number): string {
  switch (r.kind) {
    case 'spawn_error':
      if (r.code === 'ENOENT') return `${cmd}: no such file`;
      if (r.code === 'EACCES') return `${cmd}: not executable (permission denied)`;
      return `${cmd} could not start: ${firstLine(r.message)}`;
    case 'timeout':
      return `\`${cmd}\` gave no answer within ${formatSeconds(timeoutMs)}`;
    case 'exited': {
      const why = firstLine(r.stderr) || firstLine(r.stdout);
      const how = r.signal ? `was killed by ${r.signal}` : `exited with code ${r.code}`;
      return `\`${cmd}\` ${how}${why ? `: ${why}` : ''}`;
    }
  }
}

const succeeded = (r: ExecResult): r is Extract<ExecResult, { kind: 'exited' }> => r.kind === 'exited' && r.code === 0;

export async function checkGit(deps: Pick<DoctorDeps, 'exec' | 'env' | 'cwd' | 'execTimeoutMs'>): Promise<Check> {
  const r = await deps.exec('git', ['--version'], { timeoutMs: deps.execTimeoutMs, env: deps.env, cwd: deps.cwd });
  if (succeeded(r)) return { name: 'git', status: 'ok', detail: firstLine(r.stdout) || 'installed' };
  const fix = 'install git (apt-get install git, brew install git, or https://git-scm.com) and make sure it is on PATH';
  if (r.kind === 'spawn_error' && r.code === 'ENOENT') return { name: 'git', status: 'fail', detail: 'git is not installed (not found on PATH); overseer needs it for worktrees, branches and diffs', fix };
  return { name: 'git', status: 'fail', detail: execProblem('git --version', r, deps.execTimeoutMs), fix };
}

/** gh matters only for opening pull requests: never worse than a warning. */
export async function checkGh(deps: Pick<DoctorDeps, 'exec' | 'env' | 'cwd' | 'execTimeoutMs'>): Promise<Check> {
  const opts = { timeoutMs: deps.execTimeoutMs, env: deps.env, cwd: deps.cwd };
  const v = await deps.exec('gh', ['--version'], opts);
  if (!succeeded(v)) {
    if (v.kind === 'spawn_error' && v.code === 'ENOENT') {
      return { name: 'gh', status: 'warn', detail: 'GitHub CLI (gh) is not installed: everything works except opening pull requests', fix: 'install gh (https://cli.github.com) and run gh auth login' };
    }
    return { name: 'gh', status: 'warn', detail: `${execProblem('gh --version', v, deps.execTimeoutMs)}; pull requests will not work`, fix: 'reinstall gh (https://cli.github.com)' };
  }
  const version = firstLine(v.stdout).replace(/\s*\(.*\)$/, '') || 'gh';
  // The output of `gh auth status` names the account and a masked token: never echoed.
  const a = await deps.exec('gh', ['auth', 'status'], opts);
  if (succeeded(a)) return { name: 'gh', status: 'ok', detail: `${version}, logged in (pull requests work)` };
  const why = a.kind === 'timeout' ? `\`gh auth status\` gave no answer within ${formatSeconds(deps.execTimeoutMs)}` : 'not logged in (`gh auth status` failed)';
  return { name: 'gh', status: 'warn', detail: `${version} is installed but ${why}: pull requests will not work`, fix: 'run gh auth login (or set GH_TOKEN)' };
}
