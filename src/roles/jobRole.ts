// A job's role, as the hook and the permission policy read it on every call: from the job's row
// (role_json, written once when it was spawned and never changed), kept in memory after the first
// read so a settled call costs no extra statement.
import type { Q } from '../store/sql/tx.js';
import { getJob } from '../store/sql/jobs.js';
import { parseStoredRole, type RoleSpec } from './role.js';

const MAX_CACHED = 10_000;
const cache = new Map<string, RoleSpec | null>();

/** The role of job `jobId` (undefined: an implementer, or no such job). */
export async function roleOfJob(q: Q, jobId: string): Promise<RoleSpec | undefined> {
  const hit = cache.get(jobId);
  if (hit !== undefined) return hit ?? undefined;
  const job = await getJob(q, jobId);
  if (!job) return undefined;
  return remember(jobId, job.role_json);
}

/** The role of a job row already read (and remembered for the next call). */
export function roleOfRow(job: { id: string; role_json?: string | null }): RoleSpec | undefined {
  const hit = cache.get(job.id);
  return hit !== undefined ? hit ?? undefined : remember(job.id, job.role_json);
}

function remember(jobId: string, roleJson: string | null | undefined): RoleSpec | undefined {
  const r = parseStoredRole(roleJson);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(jobId, r ?? null);
  return r;
}
