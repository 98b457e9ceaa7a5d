// `overseer worker`'s options, checked before anything connects: a bad value changes nothing and
// says what was wrong and how to fix it.
import { WORKER_LABEL, WORKER_NAME } from '../domain/placement.js';
import { availableParallelism, hostname } from 'node:os';

export interface WorkerOptions {
  /** The worker's name in `overseer hosts` and for placement (`host`); default this machine's name. */
  name: string;
  /** Children it runs at once. */
  capacity: number;
  /** Placement labels: lower-case words a job's `labels` must all be among. */
  labels: string[];
  /** How long a heartbeat holds the lease, ms; the worker beats every sixth of it. */
  leaseMs: number;
}

export interface RawWorkerOptions {
  name?: string;
  capacity?: string;
  labels?: string;
  lease?: string;
}

/** What was wrong with an option, said so that the person can fix it. */
export class WorkerOptionError extends Error {}

const NAME = WORKER_NAME;
const LABEL = WORKER_LABEL;
export const DEFAULT_LEASE_S = 30;

export function parseWorkerOptions(o: RawWorkerOptions): WorkerOptions {
  const name = o.name ?? hostname();
  if (!NAME.test(name)) throw new WorkerOptionError(`--name ${JSON.stringify(name)} is not a worker name: 1–63 letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. --name gpu-box-1)`);
  const capacity = o.capacity === undefined ? availableParallelism() : wholeNumber('--capacity', o.capacity, 1, 1024, 'the number of children this worker runs at once, e.g. --capacity 4');
  const labels = o.labels === undefined ? [] : parseLabels(o.labels);
  const leaseS = o.lease === undefined ? DEFAULT_LEASE_S : seconds('--lease', o.lease, 1, 3600);
  return { name, capacity, labels, leaseMs: Math.round(leaseS * 1000) };
}

function wholeNumber(flag: string, text: string, min: number, max: number, what: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new WorkerOptionError(`${flag} ${JSON.stringify(text)} must be a whole number from ${min} to ${max}: ${what}`);
  return n;
}

function seconds(flag: string, text: string, min: number, max: number): number {
  const n = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= min && n <= max)) throw new WorkerOptionError(`${flag} ${JSON.stringify(text)} must be a number of seconds from ${min} to ${max} (how long a heartbeat holds the worker's lease; default ${DEFAULT_LEASE_S})`);
  return n;
}

function parseLabels(text: string): string[] {
  const labels = text.split(',').map((l) => l.trim()).filter((l) => l !== '');
  const bad = labels.filter((l) => !LABEL.test(l));
  if (bad.length) throw new WorkerOptionError(`--labels: ${bad.map((b) => JSON.stringify(b)).join(', ')} ${bad.length === 1 ? 'is not a label' : 'are not labels'}: lower-case letters, digits or '-', up to 32 each, separated by commas (e.g. --labels gpu,big-disk)`);
  return [...new Set(labels)].sort();
}

/** The backstop poll of the attempt queue, ms (OVERSEER_WORKER_POLL_MS; a hub's NOTIFY wakes the worker at once otherwise). */
export const DEFAULT_POLL_MS = 5000;

export function parsePollMs(text: string | undefined): number {
  if (text === undefined || text.trim() === '') return DEFAULT_POLL_MS;
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= 100 && n <= 3_600_000)) throw new WorkerOptionError(`OVERSEER_WORKER_POLL_MS ${JSON.stringify(text)} must be a whole number of milliseconds from 100 to 3600000 (how often the worker looks at the queue without being woken; default ${DEFAULT_POLL_MS})`);
  return n;
}
