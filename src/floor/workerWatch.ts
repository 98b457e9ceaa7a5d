// A worker's lease runs out without anybody writing anything: no bus event says so. While a floor
// stream is open, this reads the workers' state every few seconds and says when what the floor
// shows of them changed (a worker lost, back, stopped, fenced or no longer fenced), so watch and
// the dashboard redraw with the warning (src/floor/workers.ts) without waiting for another change.
// Two small statements per period, only while someone watches.
import type { SqlDb } from '../store/sql/open.js';
import type { Logger } from '../log.js';
import { activeWorkerJobs, listWorkers } from '../store/sql/workers.js';

/** Default period of the check, ms: a sixth of the default 30 s lease, as the workers' own beat. */
export const WORKER_WATCH_MS = 5000;

/** What the floor shows of the workers, as one comparable string: each one's state as of now and its jobs per epoch. */
export async function workersSignature(s: SqlDb): Promise<string> {
  const workers = await listWorkers(s.db, s.dialect);
  if (!workers.length) return '';
  const jobs = await activeWorkerJobs(s.db);
  return JSON.stringify([workers.map((w) => [w.row.name, w.state, Number(w.row.epoch)]), jobs.map((j) => [j.worker, j.epoch, j.n])]);
}

/** Calls `onChange` when the signature moved since the last check; the first check only sets it. Returns stop. */
export function watchWorkers(s: SqlDb, everyMs: number, onChange: () => void, log: Logger): () => void {
  let last: string | undefined;
  let busy = false;
  let stopped = false;
  const check = async (): Promise<void> => {
    if (busy || stopped) return;
    busy = true;
    try {
      const now = await workersSignature(s);
      if (!stopped && last !== undefined && now !== last) onChange();
      last = now;
    } catch (err) {
      if (!stopped) log.debug({ err }, 'could not read the workers for the floor');
    } finally {
      busy = false;
    }
  };
  void check();
  const timer = setInterval(() => void check(), everyMs);
  timer.unref();
  return () => { stopped = true; clearInterval(timer); };
}
