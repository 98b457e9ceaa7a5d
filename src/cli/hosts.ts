// `overseer hosts [--json]`: the worker hosts of the crew (issue 30): name, capacity, running,
// heartbeat age, labels, state (live, stopped, or lost: its lease ran out), read from the state
// database (read-only: works with or without a running hub).
import { activeWorkerJobs, listWorkers, runningOf, type HostView, type WorkerJobs } from '../store/sql/workers.js';
import { CliError } from './errors.js';
import { openState } from './state.js';

export interface HostJson {
  name: string;
  host: string;
  capacity: number;
  /** Agents it runs now: jobs holding a slot (running, needs_input, frozen) that its current lease epoch claimed. */
  running: number;
  heartbeat_age_s: number;
  labels: string[];
  clis: Record<string, string>;
  state: HostView['state'];
  epoch: number;
  lease_s: number;
  pid: number;
  version: string;
}

export async function runHosts(o: { json?: boolean }): Promise<void> {
  const s = await openState();
  try {
    let views: HostView[];
    let jobs: WorkerJobs[];
    try {
      views = await listWorkers(s.sql.db, s.sql.dialect);
      jobs = await activeWorkerJobs(s.sql.db);
    } catch (err) {
      throw new CliError(`The state at ${s.home} has no workers table yet (${(err as Error).message}): a hub of this version adds it when it starts.`);
    }
    const hosts = views.map((v) => toJson(v, runningOf(v, jobs)));
    process.stdout.write(o.json ? `${JSON.stringify(hosts, null, 2)}\n` : hostsText(hosts));
  } finally {
    await s.close();
  }
}

function toJson(v: HostView, running: number): HostJson {
  const r = v.row;
  return {
    name: r.name, host: r.host, capacity: Number(r.capacity), running, heartbeat_age_s: Math.round(v.ageMs / 100) / 10,
    labels: JSON.parse(r.labels_json) as string[], clis: JSON.parse(r.clis_json) as Record<string, string>, state: v.state,
    epoch: Number(r.epoch), lease_s: Number(r.lease_ms) / 1000, pid: Number(r.pid), version: r.version,
  };
}

export function hostsText(hosts: HostJson[]): string {
  if (!hosts.length) return 'No worker hosts: every agent runs on its hub\'s machine. Start one with `overseer worker` (it needs OVERSEER_DATABASE_URL).\n';
  const head = ['NAME', 'HOST', 'CAPACITY', 'RUNNING', 'HEARTBEAT', 'LABELS', 'STATE'];
  const rows = hosts.map((h) => [h.name, h.host, String(h.capacity), String(h.running), `${h.heartbeat_age_s.toFixed(1)}s ago`, h.labels.join(',') || '-', h.state]);
  const widths = head.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}
