// READY TO SHIP (issue 31 point 1): finished worktree jobs whose branch is not merged and that
// the person has not dismissed — the rows the floor reads for the lane, and its two verbs that
// change something. `ship` merges through the merge queue's own code (MergeService.mergeJob: the
// same call as merge_branch and `overseer merge`, its command checks run on the merged result)
// after refusing a job whose completion checks failed; `dismiss` keeps the branch and takes the
// job out of the lane (an event `ship_dismissed`, persisted with the job's events: a job that ends
// again later, after a resume, comes back). Neither is a second merge path.
import { sql } from 'kysely';
import type { JobRow } from '../store/jobs.js';
import type { OverlapRow } from '../store/overlaps.js';
import type { Q } from '../store/sql/tx.js';
import { addEvent } from '../store/sql/jobs.js';
import { mergesOf } from '../store/sql/branches.js';
import { sendBacksOf, type SendBackRow } from '../store/sql/sendBacks.js';
import type { Bus } from '../services/bus.js';
import type { JobMergeResult, MergeService } from '../branches/mergeJobs.js';
import type { SendBackOutcome } from '../branches/sendBack.js';
import { InvalidInputError, InvalidStateError } from '../errors.js';

/** The event that takes a job out of the lane. */
export const DISMISSED = 'ship_dismissed';

/** Most rows the lane shows (oldest first). */
export const SHIP_LIMIT = 100;

/** The lane's rows: its jobs, the conflict guard's overlaps of them (open or cleared), and the other side of each overlap. */
export interface ShipRows {
  jobs: JobRow[];
  overlaps: OverlapRow[];
  /** The other jobs of those overlaps: their title, status and whether their branch is merged. */
  others: { id: string; title: string; status: string; merged: number | string }[];
  /** Their failed merges and send-back rounds (table job_send_backs), for the jobs that have one. */
  sendBacks?: SendBackRow[];
}

/** The lane's condition on a job row (`j`), the same in the read and in the verbs. */
const LANE = sql`j.worktree = 1 AND j.branch IS NOT NULL AND j.repo_root IS NOT NULL
  AND (j.status = 'succeeded' OR (j.status = 'failed' AND j.failure_class = 'check_failed'))
  AND NOT EXISTS (SELECT 1 FROM job_merges m WHERE m.job_id = j.id)
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.job_id = j.id AND e.kind = ${DISMISSED} AND e.at >= COALESCE(j.ended_at, 0))`;

/** The rows of READY TO SHIP (`project`: only that project's). Three statements whatever the number of jobs. */
export async function readShipRows(q: Q, o: { project?: string | undefined } = {}): Promise<ShipRows> {
  const project = o.project !== undefined ? sql` AND j.project = ${o.project}` : sql``;
  const jobs = (await sql<JobRow>`SELECT j.* FROM jobs j WHERE ${LANE}${project} ORDER BY j.seq LIMIT ${SHIP_LIMIT}`.execute(q)).rows;
  if (!jobs.length) return { jobs, overlaps: [], others: [], sendBacks: [] };
  const ids = jobs.map((j) => j.id);
  const overlaps = await q.selectFrom('overlaps').selectAll().where((w) => w.or([w('job_a', 'in', ids), w('job_b', 'in', ids)])).orderBy('id').execute() as OverlapRow[];
  const inLane = new Set(ids);
  const otherIds = [...new Set(overlaps.flatMap((r) => [r.job_a, r.job_b]).filter((id) => !inLane.has(id)))];
  const others = otherIds.length
    ? (await sql<ShipRows['others'][number]>`SELECT j.id, j.title, j.status, (SELECT COUNT(*) FROM job_merges m WHERE m.job_id = j.id) AS merged FROM jobs j WHERE j.id IN (${sql.join(otherIds)})`.execute(q)).rows
    : [];
  const sendBacks = [...(await sendBacksOf(q, ids)).values()];
  return { jobs, overlaps, others, sendBacks };
}

/** Is this job in the lane now? (the read's condition, for one job) */
async function inLane(q: Q, jobId: string): Promise<boolean> {
  return (await sql<{ id: string }>`SELECT j.id FROM jobs j WHERE j.id = ${jobId} AND ${LANE}`.execute(q)).rows.length > 0;
}

/** The first line of a failed job's error (`completion checks failed: …`). */
const firstLine = (s: string | null): string => (s ?? '').split('\n')[0]!.trim();

/** The lane's verbs, as the watch and the dashboard call them through the hub (src/floor/http.ts). */
/** The send-back service's verb the lane calls (src/branches/sendBack.ts: the same code as the send_back tool). */
export interface SendBackVerb {
  sendBack(idOrPrefix: string): Promise<SendBackOutcome & { job_id: string }>;
  /** The merge through the send-back service: a failed merge is recorded (the row can send it back), never sent back by itself here. */
  merge(idOrPrefix: string, o: { onFailure: 'stop' }): Promise<JobMergeResult>;
}

export class ShipLane {
  constructor(private readonly q: Q, private readonly merges: MergeService, private readonly sendBacks: SendBackVerb, private readonly bus: Bus, private readonly now: () => number) {}

  /** Why a job is not in the lane, as an error saying what to do; nothing when it is. */
  private async refuseOutOfLane(job: JobRow, verb: 'ship' | 'dismiss' | 'send back'): Promise<void> {
    const name = `job ${job.id} (${job.title})`;
    if (!job.worktree || !job.branch || !job.repo_root) throw new InvalidInputError(`cannot ${verb} ${name}: it did not work on a branch of its own (spawn_agent worktree: true), so there is nothing to ${verb}`);
    const merged = (await mergesOf(this.q, job.id)).at(0);
    if (merged) throw new InvalidStateError(`cannot ${verb} ${name}: ${merged.branch} was already merged into ${merged.target} at ${merged.commit_sha.slice(0, 12)}`);
    const finished = job.status === 'succeeded' || (job.status === 'failed' && job.failure_class === 'check_failed');
    if (!finished) throw new InvalidStateError(`cannot ${verb} ${name}: it is ${job.status}${job.failure_class ? ` (${job.failure_class})` : ''}, and only a finished job is ready to ship; wait for it (overseer wait ${job.id}) or look at it (overseer logs ${job.id})`);
    if (!(await inLane(this.q, job.id))) throw new InvalidStateError(`cannot ${verb} ${name}: it was dismissed from READY TO SHIP; its branch ${job.branch} is kept — merge it with overseer merge ${job.id} if you meant to`);
  }

  /**
   * Merge the job's branch into its repository's checked-out branch through the merge queue's
   * code (its command checks run on the merged result). Refused, with nothing merged, when its
   * completion checks failed or it is not in the lane. A conflict or failed check on the merged
   * result comes back as `merged: false` with its reason, the target unchanged.
   */
  async ship(idOrPrefix: string): Promise<JobMergeResult> {
    const job = await this.merges.resolveJob(idOrPrefix);
    await this.refuseOutOfLane(job, 'ship');
    if (job.failure_class === 'check_failed') {
      throw new InvalidStateError(`refused to ship job ${job.id} (${job.title}): its checks failed (${firstLine(job.error) || 'check_failed'}), and a branch whose checks did not pass is never merged. Nothing was merged; fix the branch (resume the agent with the failure, or work in ${job.work_dir ?? job.branch}) and let its checks pass, or dismiss it`);
    }
    try {
      return await this.sendBacks.merge(job.id, { onFailure: 'stop' });
    } finally {
      this.bus.emit('progress', { jobId: job.id });
    }
  }

  /**
   * Send the job's last failed merge (checks failed on the merged result, or a conflict) back to
   * its own agent — the send_back tool's code: its worktree, its session, the failure in its
   * message; at the bound the person is asked instead. Refused, nothing changed, out of the lane or
   * with no failed merge on record.
   */
  async sendBack(idOrPrefix: string): Promise<SendBackOutcome & { job_id: string }> {
    const job = await this.merges.resolveJob(idOrPrefix);
    await this.refuseOutOfLane(job, 'send back');
    try {
      return await this.sendBacks.sendBack(job.id);
    } finally {
      this.bus.emit('progress', { jobId: job.id });
    }
  }

  /** Take the job out of the lane, keeping its branch. */
  async dismiss(idOrPrefix: string): Promise<{ job_id: string; title: string; branch: string; dismissed: true; message: string }> {
    const job = await this.merges.resolveJob(idOrPrefix);
    await this.refuseOutOfLane(job, 'dismiss');
    await addEvent(this.q, job.id, this.now(), DISMISSED, { branch: job.branch });
    this.bus.emit('progress', { jobId: job.id });
    return { job_id: job.id, title: job.title, branch: job.branch!, dismissed: true,
      message: `dismissed job ${job.id} (${job.title}) from READY TO SHIP; its branch ${job.branch} is kept (overseer merge ${job.id} still merges it)` };
  }
}
