// Which queued jobs start now: priority (high first), then FIFO by sequence, under the
// concurrency cap. Pure: the caller passes the facts, gets back ids to launch.

export interface QueuedJob {
  id: string;
  priority: number;
  seq: number;
}

export function pickRunnable(queued: readonly QueuedJob[], activeCount: number, cap: number): string[] {
  const free = cap - activeCount;
  if (free <= 0 || queued.length === 0) return [];
  return [...queued]
    .sort((a, b) => b.priority - a.priority || a.seq - b.seq)
    .slice(0, free)
    .map((j) => j.id);
}

export type DepState = 'ready' | 'blocked' | { failed: string; status: string };

/**
 * Whether a job's dependencies let it run: all succeeded → ready; any failed or cancelled
 * → failed (naming the first); anything else (pending, running, interrupted) → blocked.
 */
export function dependencyState(deps: readonly { id: string; status: string }[]): DepState {
  for (const d of deps) {
    if (d.status === 'failed' || d.status === 'cancelled') return { failed: d.id, status: d.status };
  }
  return deps.every((d) => d.status === 'succeeded') ? 'ready' : 'blocked';
}
