// Which queued jobs start now: priority (high first), then FIFO by sequence, under the
// concurrency cap and the provider limiters (src/limits). Pure: the caller passes the facts,
// gets back ids to launch.

export interface QueuedJob {
  id: string;
  priority: number;
  seq: number;
  provider?: string;
}

/** How many attempts of a provider may start: all, one (a limiter's probe), none (its limit holds). */
export type ProviderRoom = (provider: string) => 'all' | 'one' | 'none';

export function pickRunnable(queued: readonly QueuedJob[], activeCount: number, cap: number, room: ProviderRoom = () => 'all'): string[] {
  let free = cap - activeCount;
  if (free <= 0 || queued.length === 0) return [];
  const left = new Map<string, number>();
  const out: string[] = [];
  for (const j of [...queued].sort((a, b) => b.priority - a.priority || a.seq - b.seq)) {
    if (free <= 0) break;
    const p = j.provider ?? '';
    if (!left.has(p)) left.set(p, { all: Infinity, one: 1, none: 0 }[room(p)]);
    if (left.get(p)! <= 0) continue; // waits for its provider's limit; jobs of other providers go on
    left.set(p, left.get(p)! - 1);
    free--;
    out.push(j.id);
  }
  return out;
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
