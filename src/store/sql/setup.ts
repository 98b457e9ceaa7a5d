// What worktree preparation records per job (table job_setup, beside the job row; the shapes are
// in src/store/setup.ts) over the layer (issue 29 step 3): one column set at a time, the row made
// by the first (INSERT … ON CONFLICT (job_id) DO UPDATE of that column, on both databases).
import type { Q } from './tx.js';
import type { BootstrapReport, StackRecord } from '../setup.js';

type Column = 'skip' | 'report_json' | 'base' | 'stack_json';

function putStatement(q: Q, jobId: string, column: Column, value: string | number, now: number) {
  return q.insertInto('job_setup').values({ job_id: jobId, [column]: value, updated_at: now })
    .onConflict((oc) => oc.column('job_id').doUpdateSet({ [column]: value, updated_at: now }));
}

async function put(q: Q, jobId: string, column: Column, value: string | number, now: number): Promise<void> {
  await putStatement(q, jobId, column, value, now).execute();
}

async function read(q: Q, jobId: string, column: Column): Promise<string | number | null> {
  const r = await q.selectFrom('job_setup').select(column).where('job_id', '=', jobId).executeTakeFirst();
  return (r as Record<Column, string | number | null> | undefined)?.[column] ?? null;
}

/** Record that the job's worktree is not bootstrapped (spawn_agent's skip_bootstrap). */
export const setSetupSkip = (q: Q, jobId: string, now: number): Promise<void> => put(q, jobId, 'skip', 1, now);
export const setupSkipped = async (q: Q, jobId: string): Promise<boolean> => Number(await read(q, jobId, 'skip')) === 1;

/** The report of the worktree's last bootstrap. */
export const recordSetup = (q: Q, jobId: string, report: BootstrapReport, now: number): Promise<void> => put(q, jobId, 'report_json', JSON.stringify(report), now);
/** recordSetup as a statement not yet run (for `batch`: the report lands with the job's setup event). */
export const setupRecordStatement = (q: Q, jobId: string, report: BootstrapReport, now: number) => putStatement(q, jobId, 'report_json', JSON.stringify(report), now);
export async function setupReport(q: Q, jobId: string): Promise<BootstrapReport | undefined> {
  const r = await read(q, jobId, 'report_json');
  return typeof r === 'string' ? JSON.parse(r) as BootstrapReport : undefined;
}

/** What the job's worktree starts from (`job:<id>` or `branch:<name>`), set at spawn. */
export const setSetupBase = (q: Q, jobId: string, base: string, now: number): Promise<void> => put(q, jobId, 'base', base, now);
export async function setupBase(q: Q, jobId: string): Promise<string | null> {
  const r = await read(q, jobId, 'base');
  return typeof r === 'string' ? r : null;
}

/** What the worktree's branch was made from, once it was. */
export const setSetupStack = (q: Q, jobId: string, stack: StackRecord, now: number): Promise<void> => put(q, jobId, 'stack_json', JSON.stringify(stack), now);
export async function setupStack(q: Q, jobId: string): Promise<StackRecord | undefined> {
  const r = await read(q, jobId, 'stack_json');
  return typeof r === 'string' ? JSON.parse(r) as StackRecord : undefined;
}
