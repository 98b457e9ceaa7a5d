// A job's changes for the watch's diff view, as lines: src/branches/jobDiff.ts's diff of its work
// directory (or its branch, when the work tree is gone) against its base commit, with new
// untracked files. Reads the job row from the state read-only (SQLite's file or the PostgreSQL database).
import { openStateReadOnly, stateWhere } from '../store/sql/readOnly.js';
import { getJob } from '../store/sql/jobs.js';
import { diffOfJob } from '../branches/jobDiff.js';
import type { StateAt } from './jobLog.js';

export interface JobDiff {
  /** One line saying what is compared with what. */
  title: string;
  lines: string[];
}

/** The diff of job `jobId` of the state `at`. Throws with what is missing. */
export async function jobDiff(at: StateAt, jobId: string): Promise<JobDiff> {
  const where = stateWhere(at);
  const s = await openStateReadOnly(at);
  if (!s) throw new Error(`no state database at ${where}`);
  let j;
  try {
    j = await getJob(s.sql.db, jobId);
  } finally {
    await s.close();
  }
  if (!j) throw new Error(`job ${jobId} is not in ${where}`);
  const d = await diffOfJob(j);
  const empty = !d.stat && !d.files.length;
  const lines = [...(d.stat ? d.stat.split('\n') : []), ...(d.untracked.length ? ['untracked (new):', ...d.untracked.map((f) => `  ${f}`)] : []), '', ...d.files.flatMap((f) => f.patch.split('\n'))];
  return { title: `${d.title}${empty ? ': no changes' : ''}`, lines: empty ? [] : lines };
}
