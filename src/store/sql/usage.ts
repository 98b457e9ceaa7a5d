// The hub's own model calls (retry diagnosis, KB triage, model choice) over the Kysely layer: one
// priced row each, linked to the job it served (src/money/usageStore.ts has the row's types), and
// the model runs the usage report groups (src/money/usageReport.ts), on SQLite and PostgreSQL.
import { sql } from 'kysely';
import type { Q } from './tx.js';

/** One model run's usage (src/money/usageStore.ts RunUsage): `costUsd` null when it could not be known. */
export interface UsageIn {
  jobId: string | null;
  attempt?: number;
  kind: 'diagnosis' | 'triage' | 'classification';
  usage: { model?: string; costUsd: number | null; tokens: { input: number; output: number; cachedInput?: number; cacheCreation?: number } };
  now: number;
}

/** One row, linked to its job when that job exists (a run for a job id that names none is the hub's, job_id null); one statement. */
export async function addUsage(q: Q, r: UsageIn): Promise<void> {
  const t = r.usage.tokens;
  const jobId = r.jobId;
  await q.insertInto('usage').values({
    job_id: jobId === null ? null : (eb) => eb.selectFrom('jobs').select('jobs.id').where('jobs.id', '=', jobId), attempt: r.attempt ?? null, kind: r.kind, model: r.usage.model ?? null,
    input_tokens: t.input, output_tokens: t.output, cache_read_tokens: t.cachedInput ?? 0, cache_creation_tokens: t.cacheCreation ?? 0,
    cost_usd: r.usage.costUsd ?? 0, cost_unknown: r.usage.costUsd === null ? 1 : 0, created_at: r.now,
  }).execute();
}

/** The hub's own model calls for one job, in order (get_agent's hub usage). */
export async function usageOfJob(q: Q, jobId: string) {
  return q.selectFrom('usage').selectAll().where('job_id', '=', jobId).orderBy('id').execute();
}

/** One model run as the usage report groups it: an agent attempt or a run of the hub's own, with its job's facts. */
export interface UsageRun {
  kind: 'agent' | 'diagnosis' | 'triage' | 'classification';
  job_id: string | null;
  model: string | null;
  provider: string | null;
  labels_json: string | null;
  workflow_id: string | null;
  workflow_title: string | null;
  template: string | null;
  project: string | null;
  at: number;
  cost_usd: number;
  cost_unknown: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
}

/** Every model run since `since` (ms), of one project or all (src/money/usageReport.ts groups them). */
export async function usageRuns(q: Q, since: number, project: string | null): Promise<UsageRun[]> {
  const ofProject = project === null ? sql`` : sql`AND j.project = ${project}`;
  return (await sql<UsageRun>`
    SELECT 'agent' AS kind, a.job_id, j.model, j.provider, j.labels_json, j.workflow_id, w.title AS workflow_title, j.template, j.project, a.started_at AS at,
           a.cost_usd, a.cost_unknown, a.input_tokens, a.output_tokens, a.cache_read_tokens, a.cache_creation_tokens
      FROM attempts a JOIN jobs j ON j.id = a.job_id LEFT JOIN workflows w ON w.id = j.workflow_id
     WHERE a.started_at >= ${since} ${ofProject}
    UNION ALL
    SELECT u.kind, u.job_id, COALESCE(u.model, j.model), 'claude', j.labels_json, j.workflow_id, w.title, j.template, j.project, u.created_at,
           u.cost_usd, u.cost_unknown, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_creation_tokens
      FROM usage u LEFT JOIN jobs j ON j.id = u.job_id LEFT JOIN workflows w ON w.id = j.workflow_id
     WHERE u.created_at >= ${since} ${ofProject}`.execute(q)).rows;
}
