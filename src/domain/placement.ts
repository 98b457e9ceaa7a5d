// Where a job runs (issue 30, docs/workers-plan.md §2 and §4, docs/decisions.md "Placement: labels
// and host"): the hub's machine, or a queue a worker host fetches from. Pure rules: the hub decides
// with them at spawn from the `workers` rows it read in the spawn's transaction, and a worker picks
// the queues it may serve with them. No I/O here.

/** A worker's name (`overseer worker --name`, spawn_agent `host`). */
export const WORKER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
/** A worker's label (`--labels`): no '.' or '_', since a label set is part of a queue's name. */
export const WORKER_LABEL = /^[a-z0-9][a-z0-9-]{0,31}$/;
/** Labels the hub itself puts on jobs it makes (workflow phases): tags, never placement. */
export const HUB_TAGS: ReadonlySet<string> = new Set(['workflow']);

/** The labels that place a job: its labels without a ':' (those are tags: run:<id>, team:api)
 * and without the hub's own tags; sorted and unique. */
export function placementLabels(labels: readonly string[]): string[] {
  return [...new Set(labels.filter((l) => !l.includes(':') && !HUB_TAGS.has(l)))].sort();
}

/** A registered worker as placement sees it (a `workers` row, parsed). */
export interface WorkerSeat {
  name: string;
  labels: readonly string[];
  /** CLI name → version: what it can run. */
  clis: Readonly<Record<string, string>>;
  /** Its lease is held now (state live and heartbeat within lease_ms on the database's clock). */
  live: boolean;
}

/** What a spawn asks for. */
export interface PlacementAsk {
  cli: string;
  host?: string | null | undefined;
  /** The job's labels as given (tags included: placementLabels picks the ones that place). */
  labels: readonly string[];
  /** The job may run away from the hub's machine: a worktree job whose repository has a shared
   * remote (a worker clones it and pushes the branch). */
  portable: boolean;
}

export type Placement =
  | { where: 'hub' }
  | { where: 'queue'; queue: string; host: string | null; labels: string[] }
  | { where: 'refused'; message: string };

/**
 * The rules of the issue: no worker registered → the hub's machine, labels are tags. With workers:
 * `host` names a registered worker (else refused, listing them); placement labels must all be held
 * by one registered worker (else refused, listing each worker's labels); the worker must have the
 * CLI. A job that asks for a host or labels but cannot leave the hub's machine is refused. With
 * neither, a portable job goes to the queue when a live worker has its CLI, else the hub's machine.
 * A worker that is registered but not live still places a job (it waits in the queue for it).
 */
export function place(ask: PlacementAsk, workers: readonly WorkerSeat[]): Placement {
  const labels = placementLabels(ask.labels);
  const host = ask.host ?? null;
  if (workers.length === 0) {
    if (host) return { where: 'refused', message: `host ${JSON.stringify(host)}: no worker host is registered (start one with overseer worker on a machine that reaches the database), so every agent runs on the hub's machine: leave host out` };
    return { where: 'hub' };
  }
  const asked = host !== null || labels.length > 0;
  if (!asked) {
    if (!ask.portable) return { where: 'hub' };
    return workers.some((w) => w.live && ask.cli in w.clis) ? { where: 'queue', queue: queueName(ask.cli, null, []), host: null, labels: [] } : { where: 'hub' };
  }
  const known = describeWorkers(workers);
  if (host !== null && !workers.some((w) => w.name === host)) return { where: 'refused', message: `host ${JSON.stringify(host)} is not a registered worker; the workers are: ${known}` };
  const fit = workers.filter((w) => (host === null || w.name === host) && labels.every((l) => w.labels.includes(l)));
  if (fit.length === 0) {
    const missing = labels.filter((l) => !workers.some((w) => w.labels.includes(l)));
    const what = missing.length ? `no registered worker has the label${missing.length > 1 ? 's' : ''} ${missing.map((m) => JSON.stringify(m)).join(', ')}` : `no registered worker${host ? ` named ${JSON.stringify(host)}` : ''} has all of the labels ${labels.map((m) => JSON.stringify(m)).join(', ')}`;
    return { where: 'refused', message: `${what} (labels with a ":" are only tags); the workers are: ${known}` };
  }
  if (!fit.some((w) => ask.cli in w.clis)) return { where: 'refused', message: `no worker that fits has the ${ask.cli} CLI; the workers are: ${known}` };
  if (!ask.portable) return { where: 'refused', message: 'host and placement labels need an agent that can run on another machine: worktree: true in a git repository whose origin remote the workers can reach (or drop host and the labels without ":")' };
  return { where: 'queue', queue: queueName(ask.cli, host, labels), host, labels };
}

function describeWorkers(workers: readonly WorkerSeat[]): string {
  return workers.map((w) => `${w.name} (${w.live ? 'live' : 'not live'}; labels ${w.labels.length ? w.labels.join(',') : 'none'}; CLIs ${Object.keys(w.clis).join(',') || 'none'})`).join('; ');
}

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
const unhex = (s: string): string => Buffer.from(s, 'hex').toString('utf8');

/** A pg-boss queue name (letters, digits, '_' and '-' only): att_<cli>[__h_<host hex>][__l_<l1>_<l2>…]. */
export function queueName(cli: string, host: string | null, labels: readonly string[]): string {
  let name = `att_${cli}`;
  if (host) name += `__h_${hex(host)}`;
  const ls = [...new Set(labels)].sort();
  if (ls.length) name += `__l_${ls.join('_')}`;
  return name;
}

export interface QueueNeeds { cli: string; host: string | null; labels: string[] }

/** The needs a queue name stands for; undefined for a name that is not ours. */
export function parseQueueName(name: string): QueueNeeds | undefined {
  const m = /^att_([a-z]+)(?:__h_((?:[0-9a-f]{2})+))?(?:__l_([a-z0-9_-]+))?$/.exec(name);
  if (!m) return undefined;
  return { cli: m[1]!, host: m[2] ? unhex(m[2]) : null, labels: m[3] ? m[3].split('_') : [] };
}

/** Whether a worker may fetch from a queue: it has the CLI, it is the host named (if any), and it
 * has every label. A worker without the CLI a job needs never takes it. */
export function serves(w: Pick<WorkerSeat, 'name' | 'labels' | 'clis'>, queue: string): boolean {
  const n = parseQueueName(queue);
  return !!n && n.cli in w.clis && (n.host === null || n.host === w.name) && n.labels.every((l) => w.labels.includes(l));
}

/** The columns of a job that say whether a worker is still publishing its work. */
export interface PublishFacts { worker?: string | null; worktree: number; work_dir: string | null; diff_stat: string | null; git_note: string | null; status: string }

/**
 * A worktree job a worker ran whose end is written but whose branch is not yet committed and
 * pushed (its worker writes diff_stat or git_note when it has: src/worker/repos.ts publish). Until
 * then its branch and diff are not final: a wait does not count it settled. The hub's own jobs are
 * told by the runner (its close runs in this process).
 */
export function awaitingPublish(r: PublishFacts): boolean {
  return !!r.worker && r.worktree === 1 && r.work_dir !== null && r.diff_stat === null && r.git_note === null
    && (r.status === 'succeeded' || r.status === 'failed' || r.status === 'cancelled');
}
