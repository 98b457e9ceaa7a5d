// The job state machine: statuses, which are terminal, and which transitions are legal. Pure.

export const JOB_STATUSES = [
  'queued', 'waiting', 'running', 'frozen', 'needs_input',
  'succeeded', 'failed', 'cancelled', 'interrupted',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const FAILURE_CLASSES = [
  'max_turns', 'budget', 'timeout', 'crashed', 'rate_limited', 'auth', 'api_error',
  'cancelled', 'binary_not_found', 'mcp_unavailable', 'check_failed', 'dependency_failed',
  'reported_failure', 'interrupted', 'hook_bypassed', 'setup_failed', 'dependency_conflict',
] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** Ended for good: nothing runs, nothing will run unless resumed. */
export function isTerminal(s: JobStatus): boolean {
  return s === 'succeeded' || s === 'failed' || s === 'cancelled';
}

/** Has a live process (or is about to). */
export function isActive(s: JobStatus): boolean {
  return s === 'running' || s === 'frozen' || s === 'needs_input';
}

/** Not yet started. */
export function isPending(s: JobStatus): boolean {
  return s === 'queued' || s === 'waiting';
}

/** A job a waiter can stop waiting for: terminal, or interrupted (needs a resume to go on). */
export function isSettled(s: JobStatus): boolean {
  return isTerminal(s) || s === 'interrupted';
}

const TRANSITIONS: Record<JobStatus, readonly JobStatus[]> = {
  waiting: ['queued', 'failed', 'cancelled'],
  queued: ['running', 'waiting', 'failed', 'cancelled', 'interrupted'],
  running: ['frozen', 'needs_input', 'succeeded', 'failed', 'cancelled', 'interrupted', 'queued'],
  frozen: ['running', 'succeeded', 'failed', 'cancelled', 'interrupted'],
  needs_input: ['running', 'frozen', 'succeeded', 'failed', 'cancelled', 'interrupted'],
  // Ended jobs can be resumed (their session continued): they go back to the queue.
  succeeded: ['queued'],
  failed: ['queued'],
  cancelled: ['queued'],
  interrupted: ['queued', 'cancelled', 'failed'],
};

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function assertTransition(jobId: string, from: JobStatus, to: JobStatus): void {
  if (!canTransition(from, to)) throw new Error(`illegal job transition ${jobId}: ${from} → ${to}`);
}

/** A slug for branch names: lower-case words joined by '-', at most 40 characters. */
export function slugify(title: string): string {
  const s = title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  return s || 'job';
}

/** A title from the first line of the prompt when none is given. */
export function titleFromPrompt(prompt: string): string {
  const first = prompt.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? 'agent';
  return first.length > 80 ? `${first.slice(0, 77)}...` : first;
}
