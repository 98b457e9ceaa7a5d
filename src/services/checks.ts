// Completion checks of the tool contract, run in the job's work tree once the agent's
// process ended cleanly. All must pass for the job to succeed.
import { loadExeca } from '../lazy.js';
import { hasChanges } from '../git/worktree.js';

export type Check = string; // 'diff_not_empty' | 'no_error_in_output' | `command:${string}`

export interface CheckFacts {
  workDir: string;
  baseCommit?: string;
  sawErrorResult: boolean;
  resultText?: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

export interface CheckResult {
  check: Check;
  ok: boolean;
  detail?: string;
}

export async function runChecks(checks: Check[], f: CheckFacts): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const c of checks) out.push(await runCheck(c, f));
  return out;
}

async function runCheck(c: Check, f: CheckFacts): Promise<CheckResult> {
  if (c === 'diff_not_empty') {
    const changed = await hasChanges(f.workDir, f.baseCommit).catch(() => false);
    return { check: c, ok: changed, detail: changed ? undefined : 'the agent changed no file in its work tree' };
  }
  if (c === 'no_error_in_output') {
    const errLine = (f.resultText ?? '').split('\n').find((l) => /^\s*(error|fatal|exception)\b[:\s]/i.test(l));
    if (f.sawErrorResult) return { check: c, ok: false, detail: 'a turn of the agent ended with an error result' };
    if (errLine) return { check: c, ok: false, detail: `the final output has an error line: ${errLine.slice(0, 200)}` };
    return { check: c, ok: true };
  }
  const cmd = c.slice('command:'.length).trim();
  const r = await (await loadExeca()).execa('sh', ['-c', cmd], { cwd: f.workDir, env: f.env, reject: false, timeout: f.timeoutMs, all: true, stdin: 'ignore' });
  if (r.exitCode === 0) return { check: c, ok: true };
  const tail = (r.all ?? '').toString().slice(-800);
  return { check: c, ok: false, detail: `\`${cmd}\` ${r.timedOut ? 'timed out' : `exited ${r.exitCode ?? r.signal}`}${tail ? `: ${tail}` : ''}` };
}
