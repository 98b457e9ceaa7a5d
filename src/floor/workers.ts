// The worker hosts on the floor (issue 30, docs/workers-plan.md §5): which host each row shows,
// and the health warnings about workers, as NEEDS YOU items. Pure, like the model.
//   worker_lost    a worker whose lease ran out (a live row whose heartbeat is older than its
//                  lease) or that a hub marked lost: its machine stopped or its network is cut.
//                  It goes when the worker registers again (live) or stops cleanly; a worker that
//                  never comes back stops being shown after the failed window (24 h by default).
//   worker_fenced  a worker that registered again under a new lease epoch while jobs its old
//                  epoch claimed still show running: those children were cut off with it. It goes
//                  when those jobs are settled (interrupted and requeued, or ended) or the worker stops.
import type { JobRow } from '../store/jobs.js';
import type { NeedsYouItem } from './types.js';

/** A worker's row as the floor reads it (src/store/sql/workers.ts listWorkers). */
export interface FloorWorkerRow {
  name: string;
  host: string;
  /** As of now: `lost` also for a live row whose lease ran out. */
  state: 'live' | 'stopped' | 'lost';
  epoch: number;
  lease_ms: number;
  /** ms since its last heartbeat (the database's clock). */
  age_ms: number;
  heartbeat_at: number;
}

const ACTIVE = new Set(['running', 'needs_input', 'frozen']);

const secs = (ms: number): string => (ms < 120_000 ? `${Math.round(ms / 1000)}s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)}m` : `${(ms / 3_600_000).toFixed(1)}h`);

/** The host a job's row shows: its worker, else its hub's host, else this machine. */
export function rowHost(j: Pick<JobRow, 'worker' | 'hub_id'>, hubHosts: ReadonlyMap<string, string>, local: string): string {
  return j.worker || (j.hub_id ? hubHosts.get(j.hub_id) : undefined) || local;
}

/** Show a host on each row: the crew has workers, or its rows ran on more than one host. */
export function showHost(workers: readonly FloorWorkerRow[], hosts: readonly string[]): boolean {
  return workers.length > 0 || new Set(hosts).size > 1;
}

/** NEEDS YOU items for lost and fenced workers, by worker name. */
export function workerNeeds(workers: readonly FloorWorkerRow[], jobs: readonly JobRow[], now: number, windowMs: number): NeedsYouItem[] {
  const out: NeedsYouItem[] = [];
  for (const w of [...workers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const title = `worker ${w.name}${w.host && w.host !== w.name ? ` on ${w.host}` : ''}`;
    if (w.state === 'lost') {
      if (w.age_ms > windowMs) continue;
      out.push({
        kind: 'worker_lost', key: `worker:${w.name}`, job_id: null, title,
        text: `lost: no heartbeat since ${new Date(w.heartbeat_at).toISOString().slice(11, 19)} UTC (its lease is ${secs(w.lease_ms)}) — its machine stopped or its network is cut; `
          + 'the agents it ran are interrupted and requeued for another worker by their retry policy. '
          + `Bring it back (start \`overseer worker --name ${w.name}\` on that machine again) or leave it: it is left out of placement while lost`,
        at: w.heartbeat_at, command: 'overseer hosts',
      });
      continue;
    }
    if (w.state !== 'live') continue;
    const stale = jobs.filter((j) => j.worker === w.name && ACTIVE.has(j.status) && j.worker_epoch != null && Number(j.worker_epoch) < w.epoch);
    if (!stale.length) continue;
    const ids = stale.map((j) => j.id);
    out.push({
      kind: 'worker_fenced', key: `fenced:${w.name}`, job_id: ids[0]!, title,
      text: `fenced: it registered again (lease epoch ${w.epoch}) while ${ids.length} agent(s) of its earlier epoch still show running (${ids.join(', ')}) — `
        + 'it was cut off past its lease, so their processes were stopped and nothing they do now is recorded; '
        + 'a hub requeues them when it settles the lost worker. If they stay, cancel them (overseer cancel <id>) and spawn again',
      at: Math.min(...stale.map((j) => j.started_at ?? j.updated_at)), command: `overseer logs ${ids[0]}`,
    });
  }
  return out;
}
