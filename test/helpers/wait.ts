// Waiting helpers for tests: poll-free where an event exists; where the only signal is the
// world itself (a process gone, a file appearing), a bounded re-check on the hub's bus events
// or a short-interval check with a hard deadline.
import { readdirSync, readFileSync } from 'node:fs';
import type { Hub } from '../../src/hub.js';
import type { JobRow } from '../../src/store/jobs.js';
import { getJob } from '../../src/store/sql/jobs.js';

/** Resolves with the job row (read through the hub's layer) once `pred` holds; re-checked on every job and message event of the hub, one check at a time (an event during a check causes one more). */
export function waitForJob(hub: Pick<Hub, 'ctx'>, jobId: string, pred: (j: JobRow) => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<JobRow> {
  return new Promise((resolve, reject) => {
    let done = false;
    let running = false;
    let again = false;
    const check = async (): Promise<void> => {
      if (done) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          const j = await getJob(hub.ctx.sql.db, jobId);
          if (!done && j && (await pred(j))) {
            cleanup();
            resolve(j);
          }
        } while (again && !done);
      } catch (err) {
        cleanup();
        reject(err);
      } finally {
        running = false;
      }
    };
    const off = hub.ctx.bus.on('job', () => void check());
    const offMsg = hub.ctx.bus.on('message', () => void check());
    const t = setTimeout(() => {
      cleanup();
      void getJob(hub.ctx.sql.db, jobId).then(
        (j) => reject(new Error(`timed out after ${timeoutMs} ms waiting for job ${jobId}; it is ${j?.status} (${j?.error ?? ''})`)),
        (err: unknown) => reject(new Error(`timed out after ${timeoutMs} ms waiting for job ${jobId} (and reading it failed: ${String(err)})`)),
      );
    }, timeoutMs);
    const cleanup = (): void => { done = true; off(); offMsg(); clearTimeout(t); };
    void check();
  });
}

/** Checks `pred` (which may read asynchronously) every `everyMs` until it holds or the deadline passes (for facts with no event, e.g. a pid exiting). */
export async function eventually<T>(what: string, pred: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Is this pid alive (and not a zombie)? */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8') as string;
    return stat.split(') ')[1]?.[0] !== 'Z';
  } catch {
    return true;
  }
}


/**
 * Is every thread of the process stopped? A SIGSTOPped multi-threaded process can show its main
 * thread in D (blocked behind a stopped thread) rather than T, so the threads are checked: some
 * thread is stopped (T/t) and none is running or sleeping (R/S).
 */
export function procStopped(pid: number): boolean {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  const states = tids.map((t) => {
    try {
      return readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8').split(') ')[1]?.[0] ?? '?';
    } catch {
      return '?';
    }
  });
  return states.some((st) => st === 'T' || st === 't') && !states.some((st) => st === 'R' || st === 'S');
}

/** The agent process of a job whose recorded pid leads its process group: the pid itself, or,
 * when the child runs confined, the process under bubblewrap's (one per level: the outer bwrap,
 * the init of its pid namespace, then the agent). */
export function agentProcess(pid: number): number {
  let p = pid;
  while (readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'bwrap') {
    const kids = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    if (kids.length !== 1) throw new Error(`bwrap ${p} has ${kids.length} children, expected 1`);
    p = kids[0]!;
  }
  return p;
}

/**
 * wait_for_agents until every job has ended, calling again after each early return for
 * `attention` (a request, a message, a health warning such as time_high near a short timeout);
 * returns the last result and every attention item seen.
 */
export async function waitEnded(h: { call<T = any>(tool: string, args: Record<string, unknown>): Promise<T> }, ids: string[], timeoutS = 60): Promise<any> {
  const deadline = Date.now() + timeoutS * 1000;
  const attention: unknown[] = [];
  for (;;) {
    const w = await h.call('wait_for_agents', { job_ids: ids, timeout_s: Math.max(1, Math.ceil((deadline - Date.now()) / 1000)) });
    attention.push(...(w.attention ?? []));
    if (w.pending.length === 0 || w.timed_out) return { ...w, attention };
  }
}
