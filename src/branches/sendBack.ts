// Work goes back to its owner (issue 31 point 2, docs/decisions.md "Send back"). A merge whose
// checks fail or that conflicts with its target is recorded (table job_send_backs); with
// on_failure "send_back" (or `overseer send-back <job>`) the job's own agent is resumed in its own
// worktree, on its session, with the failing checks' output or the conflicting files — the
// target merged into its branch first, a conflict left for it to resolve. When that agent
// finishes, its branch is merged again with the same options (checks first: never a merge of a
// branch whose checks failed). Bounded: after `rounds` send-backs the next failure asks the
// person (a request on the floor's NEEDS YOU) and nothing more happens by itself.
import { existsSync } from 'node:fs';
import type { Bus } from '../services/bus.js';
import type { Logger } from '../log.js';
import type { PromptLibrary } from '../prompts/load.js';
import type { JobRow } from '../store/jobs.js';
import type { Q } from '../store/sql/tx.js';
import { addEvent, getJob } from '../store/sql/jobs.js';
import { getSendBack, giveBackRound, moveSendBack, outButEnded, recordFailure, takeRound, type SendBackReason, type SendBackRow } from '../store/sql/sendBacks.js';
import { InvalidInputError, InvalidStateError, NotFoundError, errorMessage } from '../errors.js';
import { attachWorktree } from '../git/attach.js';
import { bootstrapWorktree, setupFailure, type BootstrapConfig } from '../git/bootstrap.js';
import { abortWorktreeMerge, branchExists, leftoverMarkers, mergeTargetIntoWorktree } from '../git/merge.js';
import { realPathOrUndefined } from '../git/exec.js';
import type { JobMergeResult, MergeOptions, MergeService, ShipReport } from './mergeJobs.js';

export type OnFailure = 'stop' | 'send_back';

/** What a send-back did: the agent resumed (round of max), or the bound was reached and the person asked. */
export type SendBackOutcome =
  | { sent: true; round: number; max: number; reason: SendBackReason; files?: string[]; message: string }
  | { sent: false; round: number; max: number; reason: SendBackReason; request_id: string; message: string };

export type MergeWithSendBack = JobMergeResult & { send_back?: SendBackOutcome; send_back_error?: string };

export interface SendBackDeps {
  sql: Q;
  now(): number;
  bus: Bus;
  log: Logger;
  prompts: PromptLibrary;
  merges: MergeService;
  /** The job engine's resume (a resumed job reserves budget again and is queued with this message). */
  resume(jobId: string, message: string): Promise<unknown>;
  /** Open a request to the person about the job (it does not block). */
  ask(jobId: string, summary: string, plan: Record<string, unknown>): Promise<string>;
  /** Is the job's worktree still being committed and closed after its end (its `job` event follows)? */
  closing(jobId: string): boolean;
  /** config.sendBackRounds and config.mergeOnFailure. */
  rounds: number;
  onFailure: OnFailure;
  /** A worktree attached again is bootstrapped like a job's. */
  worktree: BootstrapConfig;
  env: NodeJS.ProcessEnv;
}

/** The failing check's output in a message: each at most this many characters (its end). */
const OUTPUT_CAP = 3000;
const SENDABLE = new Set(['checks_failed', 'conflict']);

export class SendBackService {
  /** Re-merges of sent-back jobs that finished, in flight (the hub awaits them when it stops). */
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly d: SendBackDeps) {
    // A sent-back job's end: merge it again (it succeeded), or stop sending it back (it did not).
    d.bus.on('job', (e) => {
      if (this.stopped || !['succeeded', 'failed', 'cancelled'].includes(e.status)) return;
      this.track(this.ended(e.jobId, e.status).catch((err: unknown) => d.log.error({ err, jobId: e.jobId }, 'a sent-back job\'s re-merge failed')));
    });
  }

  /** merge_branch / `overseer merge`, with what to do when it fails. */
  async merge(idOrPrefix: string, o: MergeOptions & { onFailure?: OnFailure } = {}): Promise<MergeWithSendBack> {
    const r = await this.d.merges.mergeJob(idOrPrefix, o);
    return this.after(r, o, o.onFailure ?? this.d.onFailure);
  }

  /** merge_queue ship: a failure that is sent back (or handed to the person) does not stop the others. */
  ship(o: MergeOptions & { onFailure?: OnFailure } = {}): Promise<ShipReport> {
    const onFailure = o.onFailure ?? this.d.onFailure;
    return this.d.merges.ship(o, {
      merge: (id, m) => this.merge(id, { ...m, onFailure }),
      carryOn: (r) => onFailure === 'send_back' && !!(r as MergeWithSendBack).send_back,
    });
  }

  /** `overseer send-back <job>` / the send_back tool: send back the job's last failed merge. */
  async sendBack(idOrPrefix: string): Promise<SendBackOutcome & { job_id: string }> {
    const job = await this.d.merges.resolveJob(idOrPrefix);
    const row = await getSendBack(this.d.sql, job.id);
    this.refuse(job, row);
    return { job_id: job.id, ...(await this.send(job, row!)) };
  }

  /**
   * At the hub's start: a sent-back job that ended while no hub listened (this one stopped between
   * its end and its re-merge) is merged again now — claimed by the same conditional update, so
   * with many hubs starting, one merges it.
   */
  start(): void {
    const p = outButEnded(this.d.sql).then(async (ended) => {
      // A job whose worktree is still being closed is merged when its end is heard, not before its leftovers are committed.
      for (const e of ended) if (!this.stopped && !this.d.closing(e.job_id)) await this.ended(e.job_id, e.status);
    }).catch((err: unknown) => this.d.log.error({ err }, 'merging again the sent-back jobs that ended while the hub was down failed'));
    this.track(p);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** Stop starting re-merges; wait for those in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.inFlight]);
  }

  private async after(r: JobMergeResult, o: MergeOptions, onFailure: OnFailure): Promise<MergeWithSendBack> {
    const q = this.d.sql;
    if (r.merged) {
      await moveSendBack(q, r.job_id, ['failed', 'merging', 'asked'], 'merged', this.d.now());
      return r;
    }
    if (!SENDABLE.has(r.reason)) return r;
    const detail = { target: r.target, ...(r.files ? { files: r.files } : {}), ...(r.failed_checks ? { failed_checks: r.failed_checks.map((c) => ({ check: c.check, ...(c.detail ? { detail: tail(c.detail) } : {}) })) } : {}) };
    const options = { mode: o.mode ?? 'merge', ...(o.strategy ? { strategy: o.strategy } : {}), ...(o.into ? { into: o.into } : {}) };
    await recordFailure(q, r.job_id, { reason: r.reason as SendBackReason, detail, options, maxRounds: this.d.rounds, now: this.d.now() });
    this.d.bus.emit('progress', { jobId: r.job_id }); // the floor's READY TO SHIP row shows the failed merge
    if (onFailure !== 'send_back') return r;
    const job = (await getJob(q, r.job_id))!;
    try {
      const out = await this.send(job, (await getSendBack(q, job.id))!);
      return { ...r, send_back: out, message: `${r.message}\n${out.message}` };
    } catch (err) {
      // The merge's answer stands (not merged); why it could not go back is said with it.
      const why = errorMessage(err);
      return { ...r, send_back_error: why, message: `${r.message}\nit was not sent back: ${why}` };
    }
  }

  /** Why this job cannot be sent back now (throws; nothing changed). */
  private refuse(job: JobRow, row: SendBackRow | undefined): void {
    const name = `${job.id} (${job.title})`;
    if (!job.worktree || !job.branch || !job.repo_root || !job.work_dir) throw new InvalidInputError(`job ${name} did not work in a worktree of its own, so it has no branch to send back: message_agent or resume_agent it instead`);
    if (job.status !== 'succeeded') {
      if (['queued', 'waiting', 'running', 'frozen', 'needs_input'].includes(job.status)) throw new InvalidStateError(`job ${name} is still ${job.status}: it can be sent back after a merge of its finished branch failed (overseer wait ${job.id}, then overseer merge ${job.id})`);
      throw new InvalidStateError(`job ${name} ${job.status}: only a job that succeeded has a branch to merge and send back; resume_agent it to continue its work`);
    }
    if (!row || row.status === 'merged') throw new InvalidStateError(`job ${name} has no failed merge to send back${row ? ' (its branch was merged)' : ''}: merge it first (overseer merge ${job.id}); send-back returns a branch whose checks failed or that conflicts`);
    if (row.status === 'out' || row.status === 'merging') throw new InvalidStateError(`job ${name} is already sent back (round ${row.round} of ${row.max_rounds}): wait for its agent to finish; its branch is merged again then`);
  }

  /** Take a round (or ask the person at the bound), prepare the worktree, resume the agent. */
  private async send(job: JobRow, row: SendBackRow): Promise<SendBackOutcome> {
    const q = this.d.sql;
    const reason = row.reason;
    const detail = JSON.parse(row.detail_json) as { target: string; files?: string[]; failed_checks?: { check: string; detail?: string }[] };
    await this.gone(job);
    const now = this.d.now();
    const round = await takeRound(q, job.id, now);
    if (round === undefined) {
      const fresh = (await getSendBack(q, job.id))!;
      if (fresh.status === 'asked' && fresh.request_id) return { sent: false, round: fresh.round, max: fresh.max_rounds, reason, request_id: fresh.request_id, message: `job ${job.id} was sent back ${fresh.round} time(s), the bound: the person was asked already (request ${fresh.request_id})` };
      if (fresh.status !== 'failed') throw new InvalidStateError(`job ${job.id}'s send-back changed meanwhile (now ${fresh.status}): look at it with get_agent`);
      return this.askPerson(job, fresh, detail);
    }
    const max = row.max_rounds;
    let prepared: { files?: string[]; note: string } | undefined;
    try {
      prepared = await this.prepare(job, detail.target);
      const message = this.message(job, reason, round, max, detail, prepared);
      await this.d.resume(job.id, message);
    } catch (err) {
      await giveBackRound(q, job.id, this.d.now());
      if (prepared && job.work_dir) await abortWorktreeMerge(job.work_dir);
      throw err;
    }
    const files = prepared.files;
    await addEvent(q, job.id, this.d.now(), 'sent_back', { round, max, reason, target: detail.target, ...(files ? { files } : {}), ...(detail.failed_checks ? { checks: detail.failed_checks.map((c) => c.check) } : {}) });
    const what = files ? `the conflicts in ${files.join(', ')} are left in its worktree for it` : reason === 'conflict' ? `${detail.target} merged into its branch cleanly now` : 'with the failing checks\' output';
    return { sent: true, round, max, reason, ...(files ? { files } : {}), message: `sent back to its agent (round ${round} of ${max}): ${what}; when it finishes, its branch is merged again` };
  }

  /** The job's branch (and repository) must still be there: its worktree is attached again from it. */
  private async gone(job: JobRow): Promise<void> {
    const root = await realPathOrUndefined(job.repo_root!);
    if (!root || !existsSync(root)) throw new NotFoundError(`job ${job.id}'s repository ${job.repo_root} is gone: nothing to send back; spawn the task again in the repository where it lives now`);
    if (!(await branchExists(root, job.branch!))) {
      throw new NotFoundError(`job ${job.id}'s worktree was removed together with its branch ${job.branch} (not in ${root} any more): there is nothing to send back to its agent. Spawn the task again (spawn_agent worktree: true), or restore the branch (git branch ${job.branch} <commit>) and send it back again`);
    }
  }

  /** Attach the job's worktree (bootstrapped when new) and merge the target into it: a clean merge committed, a conflict left. */
  private async prepare(job: JobRow, target: string): Promise<{ files?: string[]; note: string }> {
    const path = job.work_dir!;
    const fresh = !existsSync(path);
    await attachWorktree({ repoRoot: job.repo_root!, path, branch: job.branch!, baseCommit: job.base_commit ?? '' });
    if (fresh) {
      const boot = await bootstrapWorktree({ repoRoot: job.repo_root!, worktree: path, config: this.d.worktree, env: this.d.env });
      if (boot.status === 'failed') throw new InvalidStateError(`job ${job.id}'s worktree was attached again at ${path} but its setup failed: ${setupFailure(boot)}; fix the setup (config worktree.setup), then send it back again`);
    }
    const m = await mergeTargetIntoWorktree(path, target, `overseer: merge ${target} into ${job.branch} (send back of ${job.id})`);
    if (m.state === 'conflicts') return { files: m.files, note: '' };
    return { note: m.state === 'merged' ? `Overseer merged ${target} into your branch first (a merge commit), so your tree is what the checks ran on.` : `Your branch already contains ${target}: your tree is what the checks ran on.` };
  }

  private message(job: JobRow, reason: SendBackReason, round: number, max: number, detail: { target: string; failed_checks?: { check: string; detail?: string }[] }, p: { files?: string[]; note: string }): string {
    const base = { branch: job.branch!, target: detail.target, round, max };
    if (p.files) return this.d.prompts.render('send-back-conflict', { ...base, files: p.files.map((f) => `- ${f}`).join('\n') });
    const failures = reason === 'checks_failed' && detail.failed_checks?.length
      ? detail.failed_checks.map((c) => `- ${c.check.replace(/^command:\s*/, '')}:\n\`\`\`\n${c.detail ?? '(no output)'}\n\`\`\``).join('\n')
      : `- the branch conflicted with ${detail.target} last time; it merges cleanly now, so check that your work still does what it should with ${detail.target}'s changes`;
    return this.d.prompts.render('send-back-checks', { ...base, target_note: p.note, failures });
  }

  private async askPerson(job: JobRow, row: SendBackRow, detail: { target: string; files?: string[]; failed_checks?: { check: string; detail?: string }[] }): Promise<SendBackOutcome> {
    const what = row.reason === 'conflict' ? `it conflicts with ${detail.target} in ${(detail.files ?? []).join(', ') || 'its files'}` : `its checks fail (${(detail.failed_checks ?? []).map((c) => c.check.replace(/^command:\s*/, '')).join(', ')})`;
    const summary = `${job.branch} (job ${job.id}: ${job.title}) still does not merge into ${detail.target} after ${row.round} round(s) sent back to its agent: ${what}. Decide: fix it yourself and merge (overseer merge ${job.id}), resolve in your checkout (overseer merge ${job.id} --leave-conflicts), or leave it unmerged.`;
    const requestId = await this.d.ask(job.id, summary, { job_id: job.id, branch: job.branch, rounds: row.round, reason: row.reason, ...detail });
    const now = this.d.now();
    if (!(await moveSendBack(this.d.sql, job.id, ['failed'], 'asked', now, { request_id: requestId }))) throw new InvalidStateError(`job ${job.id}'s send-back changed meanwhile: look at it with get_agent`);
    await addEvent(this.d.sql, job.id, now, 'send_back_bound', { rounds: row.round, max: row.max_rounds, reason: row.reason, request_id: requestId });
    return { sent: false, round: row.round, max: row.max_rounds, reason: row.reason, request_id: requestId, message: `not sent back: it went back ${row.round} time(s), the bound (sendBackRounds ${row.max_rounds}); the person is asked to decide (request ${requestId})` };
  }

  /**
   * The refused merge of a sent-back branch that still adds conflict markers (`git diff --check`
   * against its target), as a failed check; undefined when it has none. A job that is not a
   * worktree job any more, or a branch git cannot read, goes to the merge, which says why.
   */
  private async markersLeft(jobId: string, row: SendBackRow): Promise<(JobMergeResult & { merged: false }) | undefined> {
    const job = await getJob(this.d.sql, jobId);
    if (!job?.branch || !job.repo_root) return undefined;
    const target = (JSON.parse(row.detail_json) as { target?: string }).target;
    if (!target) return undefined;
    const root = (await realPathOrUndefined(job.repo_root)) ?? job.repo_root;
    let found;
    try {
      found = await leftoverMarkers(root, job.branch, target);
    } catch {
      return undefined;
    }
    if (!found.length) return undefined;
    const files = [...new Set(found.map((m) => m.file))];
    const shown = found.slice(0, MARKERS_SHOWN).map((m) => `${m.file}:${m.line}: ${m.text}`).join('\n');
    const detail = `${shown}${found.length > MARKERS_SHOWN ? `\n… and ${found.length - MARKERS_SHOWN} more` : ''}\nRemove every conflict marker line (<<<<<<<, =======, >>>>>>>), keeping the right content from both sides, and commit.`;
    await addEvent(this.d.sql, jobId, this.d.now(), 'merge_refused_markers', { round: row.round, target, files });
    return {
      merged: false, job_id: job.id, title: job.title, branch: job.branch, target, reason: 'checks_failed',
      failed_checks: [{ check: MARKERS_CHECK, detail }],
      message: `not merged: ${job.branch} (job ${job.id}: ${job.title}) still holds conflict markers in ${files.join(', ')} (${found.length} line${found.length === 1 ? '' : 's'}); a branch with conflict markers is never merged`,
    };
  }

  /** A job ended: if it was sent back, merge it again (it succeeded) or stop there (it did not). */
  private async ended(jobId: string, status: string): Promise<void> {
    const q = this.d.sql;
    const row = await getSendBack(q, jobId);
    if (!row || row.status !== 'out') return;
    const now = this.d.now();
    if (status !== 'succeeded') {
      if (await moveSendBack(q, jobId, ['out'], 'stopped', now)) await addEvent(q, jobId, now, 'send_back_stopped', { round: row.round, status });
      return;
    }
    // One hub merges it: the one whose update moved the row.
    if (!(await moveSendBack(q, jobId, ['out'], 'merging', now))) return;
    const options = JSON.parse(row.options_json) as MergeOptions;
    let r: MergeWithSendBack;
    try {
      // Conflict markers left in the branch: never merged, checks or not — the next round (or the person at the bound).
      const left = await this.markersLeft(jobId, row);
      r = left ? await this.after(left, options, 'send_back') : await this.merge(jobId, { ...options, onFailure: 'send_back' });
    } catch (err) {
      await moveSendBack(q, jobId, ['merging'], 'stopped', this.d.now());
      await addEvent(q, jobId, this.d.now(), 'send_back_stopped', { round: row.round, error: errorMessage(err) });
      return;
    }
    if (!r.merged && r.send_back_error) {
      await addEvent(q, jobId, this.d.now(), 'send_back_stopped', { round: row.round, reason: r.reason, error: r.send_back_error });
    } else if (!r.merged && !SENDABLE.has(r.reason)) {
      await moveSendBack(q, jobId, ['merging'], 'stopped', this.d.now());
      await addEvent(q, jobId, this.d.now(), 'send_back_stopped', { round: row.round, reason: r.reason, message: r.message });
    }
  }
}

/** How many marker lines a refusal names (the rest are counted). */
const MARKERS_SHOWN = 20;

/** The check a branch with conflict markers fails (as a send-back's failing check). */
export const MARKERS_CHECK = 'no conflict markers left (git diff --check)';

/** The end of a check's output, bounded. */
function tail(s: string): string {
  return s.length <= OUTPUT_CAP ? s : `…${s.slice(-OUTPUT_CAP)}`;
}
