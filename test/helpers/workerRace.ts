// Racers in worker threads (test/helpers/runsRacer.ts, claimRacer.ts), each on a connection of its
// own, released at one moment: each gets `data` with `me` (its name) and `start` (a shared flag
// it waits on), posts {ready: true} once it is set up, then {me, won} when done.
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';

/** Start one worker per name on `script`, wait until all are ready, release them together, wait
 *  until all have exited; what each said it won, by name (a name absent: it said nothing). */
export async function raceWorkers(script: string, names: readonly string[], data: Record<string, unknown>): Promise<Map<string, string[]>> {
  const start = new SharedArrayBuffer(4);
  const racer = pathToFileURL(script).href;
  const code = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(racer)}); });`;
  const workers = names.map((me) => new Worker(code, { eval: true, workerData: { ...data, start, me } }));
  const won = new Map<string, string[]>();
  const exited = workers.map((w) => new Promise((r) => w.on('exit', r)));
  await Promise.all(workers.map((w) => new Promise<void>((resolve, reject) => {
    let ready = false;
    w.on('message', (m: { ready?: boolean; me?: string; won?: string[] }) => { if (m.ready) { ready = true; resolve(); } else won.set(m.me!, m.won!); });
    w.on('error', reject);
    w.on('exit', (c) => { if (!ready) reject(new Error(`worker exited ${c} before it was ready`)); });
  })));
  Atomics.store(new Int32Array(start), 0, 1);
  Atomics.notify(new Int32Array(start), 0);
  await Promise.all(exited);
  return won;
}
