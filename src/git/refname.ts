// Branch names are validated by git's own rules (`git check-ref-format --branch`) when a job is
// spawned, so a name git would refuse fails the call instead of the job later.
import { loadExeca } from '../lazy.js';
import { gitEnv } from './exec.js';

/** Undefined when git accepts `name` as a new branch name; otherwise git's reason. */
export async function branchNameProblem(name: string): Promise<string | undefined> {
  if (name === 'HEAD' || name.startsWith('-')) return 'git reserves it';
  const r = await (await loadExeca()).execa('git', ['check-ref-format', '--branch', name], { reject: false, env: { ...process.env, ...gitEnv() }, stdin: 'ignore' });
  if (r.exitCode === 0) return undefined;
  return (r.stderr || 'git check-ref-format refused it').split('\n')[0];
}
