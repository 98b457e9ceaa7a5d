// Branch names are validated by git's own rules (`git check-ref-format --branch`) when a job is
// spawned, so a name git would refuse fails the call instead of the job later.
import { git } from './exec.js';

/** Undefined when git accepts `name` as a new branch name; otherwise git's reason. */
export async function branchNameProblem(name: string): Promise<string | undefined> {
  if (name === 'HEAD' || name.startsWith('-')) return 'git reserves it';
  const r = await git(['check-ref-format', '--branch', name], { cwd: process.cwd(), allowFail: true });
  if (r.code === 0) return undefined;
  return (r.stderr || 'git check-ref-format refused it').split('\n')[0];
}
