// Merging finished worktree jobs (docs/merge.md), the job half: which job, whether it may be
// merged, its command checks run on the merged result, the record of the merge (table
// job_merges, event `merged`), the worktree clean-up, and the merge queue (its order and
// `ship`). The git half is merge.ts; the order is queue.ts.
import { existsSync } from 'node:fs';
import type { JobRow } from '../store/jobs.js';
import type { Q } from '../store/sql/tx.js';
import { addEvent, getJob } from '../store/sql/jobs.js';
import { jobIdsWithPrefix, mergesOf, overlapsOfJobs, recordMerge, unmergedBranches, type MergeRow } from '../store/sql/branches.js';
import { InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { isoTime } from '../clock.js';
import { runChecks } from '../services/checks.js';
import { bootstrapWorktree, setupFailure } from '../git/bootstrap.js';
import type { BootstrapConfig } from '../git/bootstrap.js';
import { removeWorktree } from '../git/create.js';
import { errText, firstLine, gitOut, outLines, realPathOrUndefined, withLock } from '../git/exec.js';
import { branchChanges, checkedOutBranch, localBranches, mergeBranch, MergeRefused, mergeLeavingConflicts, type MergeMode } from '../git/merge.js';
import { orderQueue } from './queue.js';
import { fetchWorkerBranch, fetchWorkerBranches } from './workerBranch.js';
import type { Bus } from '../services/bus.js';
import type { QueueEntry, QueueView } from '../contract/merge.js';

export type { QueueEntry, QueueView, MergeRow };

export interface MergeDeps {
  /** The layer (the hub's, or the CLI's read-only one for the queue). */
  sql: Q;
  now(): number;
  /** worktree.copy / setup / detect: the scratch worktree is bootstrapped like a job's before its checks run. */
  worktree: BootstrapConfig;
  /** Environment of the checks (the children's). */
  env: NodeJS.ProcessEnv;
  checkTimeoutMs?: number;
  /** Told of every recorded merge (a `progress` event on the job), so an open floor drops the row from READY TO SHIP at once whatever path merged it. */
  bus: Pick<Bus, 'emit'>;
}

export interface MergeOptions {
  mode?: MergeMode;
  strategy?: 'ours' | 'theirs';
  leaveConflicts?: boolean;
  into?: string;
}

export type JobMergeResult =
  | { merged: true; job_id: string; title: string; branch: string; target: string; commit: string; previous: string; mode: MergeMode; checks: string[]; worktree_removed: boolean; worktree_note?: string; branch_kept: true; message: string }
  | { merged: false; job_id: string; title: string; branch: string; target: string; reason: 'conflict' | 'checks_failed' | 'nothing_to_merge' | 'apply_failed' | 'conflicts_left';
    files?: string[]; failed_checks?: { check: string; detail?: string }[]; finish?: string; abort?: string; message: string };

export interface ShipReport {
  merged: { job_id: string; title: string; branch: string; target: string; commit: string }[];
  failed?: JobMergeResult & { merged: false };
  left: { job_id: string; title: string; branch: string }[];
  /** The order proposed when the ship started. */
  order: string[];
  /** Branches that failed and were handed on (sent back to their agents, or to the person), the ship going on past them. */
  carried?: { job_id: string; branch: string; reason: string; message: string }[];
  message: string;
}

const LIVE = new Set(['queued', 'waiting', 'running', 'frozen', 'needs_input']);

export class MergeService {
  constructor(private readonly deps: MergeDeps) {}

  merges(jobId: string): Promise<MergeRow[]> {
    return mergesOf(this.deps.sql, jobId);
  }

  /** A job by id or unique prefix, or a NotFoundError saying what to do. */
  async resolveJob(idOrPrefix: string): Promise<JobRow> {
    const q = this.deps.sql;
    const exact = await getJob(q, idOrPrefix);
    if (exact) return exact;
    let ids = await jobIdsWithPrefix(q, idOrPrefix, 5);
    if (ids.length === 0 && !idOrPrefix.startsWith('j-')) ids = await jobIdsWithPrefix(q, `j-${idOrPrefix}`, 5); // "7f3a" for j-7f3a9c01, as the CLI accepts
    if (ids.length === 1) return (await getJob(q, ids[0]!))!;
    if (ids.length > 1) throw new InvalidInputError(`job ${JSON.stringify(idOrPrefix)} is ambiguous: it starts ${ids.join(', ')}${ids.length === 5 ? ', ...' : ''}; give more of the id`);
    throw new NotFoundError(`no job ${JSON.stringify(idOrPrefix)}: list jobs with overseer status (or list_agents) and use one of their ids`);
  }

  /** Everything about a job that refuses a merge before anything is touched. */
  private async mergeable(job: JobRow): Promise<{ branch: string; repoRoot: string }> {
    const name = `${job.id} (${job.title})`;
    if (LIVE.has(job.status)) throw new InvalidStateError(`job ${name} is still ${job.status}: wait for it to finish (overseer wait ${job.id}) or cancel it (overseer cancel ${job.id}), then merge`);
    if (!job.worktree || !job.branch || !job.repo_root) throw new InvalidInputError(`job ${name} has no branch to merge: it did not work in a worktree of its own (spawn_agent worktree: true); its changes, if any, are already in ${job.cwd}`);
    const done = (await this.merges(job.id)).at(0);
    if (done) throw alreadyMerged(job, done);
    return { branch: job.branch, repoRoot: job.repo_root };
  }

  /** merge_branch / `overseer merge`. Bad input throws (nothing changed); a conflict or a failed check returns `merged: false`. */
  async mergeJob(idOrPrefix: string, o: MergeOptions = {}): Promise<JobMergeResult> {
    const job = await this.resolveJob(idOrPrefix);
    const { branch, repoRoot } = await this.mergeable(job);
    await fetchWorkerBranch(job); // a worker's job: its branch is on the shared remote (src/branches/workerBranch.ts)
    const root = (await realPathOrUndefined(repoRoot)) ?? repoRoot;
    // Asked again under the repository's lock: a merge of the same job that held it first is recorded by now.
    return withLock(`merge:${root}`, async () => { await this.mergeable(job); return this.mergeLocked(job, branch, root, o); });
  }

  private async mergeLocked(job: JobRow, branch: string, root: string, o: MergeOptions): Promise<JobMergeResult> {
    const mode = o.mode ?? 'merge';
    const checks = (JSON.parse(job.checks_json) as string[]).filter((c) => c.startsWith('command:'));
    const message = `overseer: merge ${branch} (${job.id}: ${job.title})`;
    const base = { job_id: job.id, title: job.title, branch };
    const request = { repoRoot: root, branch, mode, message, ...(o.into ? { into: o.into } : {}), ...(o.strategy ? { strategy: o.strategy } : {}) };
    let outcome;
    try {
      outcome = await mergeBranch({ ...request, ...(checks.length ? { verify: (scratch: string) => this.verify(root, scratch, checks) } : {}) });
    } catch (err) {
      if (err instanceof MergeRefused) throw refusal(err, job);
      throw err;
    }
    const target = outcome.target;
    if (outcome.ok) {
      const now = this.deps.now();
      const rec = await recordMerge(this.deps.sql,
        { job_id: job.id, repo_root: root, branch, target, mode, strategy: o.strategy ?? null, commit_sha: outcome.commit, previous: outcome.previous, checks_json: JSON.stringify(checks), merged_at: now },
        { branch, target, commit: outcome.commit, previous: outcome.previous, mode, ...(o.strategy ? { strategy: o.strategy } : {}), checks });
      // Another hub recorded this job's merge first (its lock is not ours): that merge is the job's.
      if (!rec.recorded) throw alreadyMerged(job, rec.first);
      // merge_branch, merge_queue, `overseer merge`, the lane's ship and a send-back's re-merge all pass here.
      this.deps.bus.emit('progress', { jobId: job.id });
      const folder = await this.removeFolder(job, root);
      const checked = checks.length ? `; its checks passed on the merged result (${checks.map((c) => c.slice(8).trim()).join(', ')})` : '; it has no command checks';
      return { merged: true, ...base, target, commit: outcome.commit, previous: outcome.previous, mode, checks, worktree_removed: folder.removed, ...(folder.note ? { worktree_note: folder.note } : {}), branch_kept: true,
        message: `merged ${branch} (job ${job.id}: ${job.title}) into ${target} at ${outcome.commit.slice(0, 12)} (${mode})${checked}` };
    }
    if (outcome.reason === 'conflict') {
      const list = outcome.files.length ? outcome.files.join(', ') : (outcome.detail ?? 'unknown');
      if (o.leaveConflicts) {
        let left;
        try {
          left = await mergeLeavingConflicts(request);
        } catch (err) {
          if (err instanceof MergeRefused) throw refusal(err, job);
          throw err;
        }
        await addEvent(this.deps.sql, job.id, this.deps.now(), 'merge_conflicts_left', { branch, target, files: left.files, root: left.root });
        return { merged: false, ...base, target, reason: 'conflicts_left', files: left.files, finish: left.finish, abort: left.abort,
          message: `${branch} conflicts with ${target} in ${left.files.join(', ')}; the conflicted merge is left in ${left.root} for you (checks not run). Finish: ${left.finish}. Abort: ${left.abort}. Then merge_branch will say it is already merged or merge what is left.` };
      }
      return { merged: false, ...base, target, reason: 'conflict', files: outcome.files,
        message: `${branch} (job ${job.id}: ${job.title}) conflicts with ${target} in: ${list}. ${target} was not changed. Resolve by hand (leave_conflicts / --leave-conflicts leaves the conflicted merge in your checkout), pick a side (strategy ours|theirs), or rebase the job's branch` };
    }
    if (outcome.reason === 'checks_failed') {
      const what = outcome.failed.map((f) => `${f.check}: ${f.detail ?? 'failed'}`).join('\n');
      return { merged: false, ...base, target, reason: 'checks_failed', failed_checks: outcome.failed,
        message: `the checks of job ${job.id} (${job.title}) failed on ${branch} merged into ${target}, so it was not merged (${target} unchanged):\n${what}` };
    }
    return { merged: false, ...base, target, reason: outcome.reason, message: `${branch} (job ${job.id}) was not merged into ${target}: ${outcome.detail}` };
  }

  /** Bootstrap the scratch worktree like a job's, then run the command checks there. */
  private async verify(root: string, scratch: string, checks: string[]): Promise<{ check: string; detail?: string }[]> {
    const boot = await bootstrapWorktree({ repoRoot: root, worktree: scratch, config: this.deps.worktree, env: this.deps.env });
    if (boot.status === 'failed') return [{ check: 'worktree setup', detail: setupFailure(boot) }];
    const results = await runChecks(checks, { workDir: scratch, sawErrorResult: false, env: this.deps.env, timeoutMs: this.deps.checkTimeoutMs ?? 10 * 60_000 });
    return results.filter((r) => !r.ok).map((r) => ({ check: r.check, ...(r.detail ? { detail: r.detail } : {}) }));
  }

  /** Remove the job's worktree folder if it is still there — unless it holds work the merge did not take (uncommitted or untracked files). */
  private async removeFolder(job: JobRow, root: string): Promise<{ removed: boolean; note?: string }> {
    const dir = job.work_dir;
    if (!dir || !existsSync(dir)) return { removed: false };
    const real = await realPathOrUndefined(dir);
    if (!real || real === root) return { removed: false };
    const left = await gitOut(['status', '--porcelain=v1'], { cwd: real }).catch(() => '');
    if (left.trim() !== '') {
      const note = `worktree ${real} kept: it has changes that are not committed on the branch (${outLines(left).slice(0, 5).map((l) => l.slice(3)).join(', ')}); look at them, then remove it with git worktree remove`;
      await addEvent(this.deps.sql, job.id, this.deps.now(), 'merge_note', { note });
      return { removed: false, note };
    }
    try {
      await removeWorktree(root, real);
      return { removed: !existsSync(real) };
    } catch (err) {
      const note = `worktree removal failed: ${firstLine(errText(err))}`;
      await addEvent(this.deps.sql, job.id, this.deps.now(), 'merge_note', { note });
      return { removed: false, note };
    }
  }

  /** The merge queue: succeeded, unmerged worktree branches, in the proposed order. */
  async queue(o: { into?: string } = {}): Promise<QueueView> {
    const rows = await unmergedBranches(this.deps.sql);
    const unfetched = await fetchWorkerBranches(rows); // workers' branches come from the shared remote first
    const skipped: QueueView['skipped'] = [];
    const byRepo = new Map<string, { target: string; cands: { jobId: string; files: string[]; lines: number; endedAt: number; job: JobRow }[] }>();
    const repos = new Map<string, { target?: string; branches: Set<string> }>();
    const pending: { job: JobRow; root: string; target: string }[] = [];
    for (const job of rows) {
      const why = unfetched.get(job.id);
      if (why) { skipped.push({ job_id: job.id, title: job.title, branch: job.branch, reason: why }); continue; }
      const root = (await realPathOrUndefined(job.repo_root!)) ?? job.repo_root!;
      let repo = repos.get(root);
      if (!repo) {
        repo = { target: o.into ?? (await checkedOutBranch(root)), branches: await localBranches(root) };
        repos.set(root, repo);
      }
      if (!repo.branches.has(job.branch!)) { skipped.push({ job_id: job.id, title: job.title, branch: job.branch, reason: `branch ${job.branch} no longer exists` }); continue; }
      if (!repo.target) { skipped.push({ job_id: job.id, title: job.title, branch: job.branch, reason: `${root} has a detached HEAD: no target branch` }); continue; }
      pending.push({ job, root, target: repo.target });
    }
    // One diff per branch, a few at a time.
    const changes = await mapLimit(pending, 4, (p) => branchChanges(p.root, p.job.branch!, p.target));
    pending.forEach((p, i) => {
      const ch = changes[i]!;
      const { job } = p;
      if (ch.files.length === 0) { skipped.push({ job_id: job.id, title: job.title, branch: job.branch, reason: `adds no change to ${p.target}` }); return; }
      const group = byRepo.get(p.root) ?? { target: p.target, cands: [] };
      byRepo.set(p.root, group);
      group.cands.push({ jobId: job.id, files: ch.files, lines: ch.lines, endedAt: job.ended_at ?? 0, job });
    });
    const ids = rows.map((r) => r.id);
    const guard = await overlapsOfJobs(this.deps.sql, ids);
    const queue: QueueEntry[] = [];
    for (const [root, g] of byRepo) {
      for (const item of orderQueue(g.cands, guard)) {
        const c = item.candidate;
        queue.push({ position: queue.length + 1, job_id: c.jobId, title: c.job.title, branch: c.job.branch!, repo_root: root, target: g.target, files: c.files, lines: c.lines,
          overlaps: item.overlaps.map((x) => ({ job_id: x.jobId, files: x.files })), ended_at: c.job.ended_at ? isoTime(c.job.ended_at) : null });
      }
    }
    return { queue, skipped };
  }

  /**
   * `queue --ship`: merge the head of the queue, recompute, again; stop at the first failure —
   * unless `via.carryOn` takes it (a send-back: the job leaves the queue while its agent works),
   * then go on with the rest. `via.merge` merges one job (default: mergeJob).
   */
  async ship(o: MergeOptions = {}, via: ShipVia = {}): Promise<ShipReport> {
    const mergeOne = via.merge ?? ((id: string, m: MergeOptions) => this.mergeJob(id, m));
    const first = await this.queue({ into: o.into });
    const order = first.queue.map((e) => e.job_id);
    const merged: ShipReport['merged'] = [];
    const carried: NonNullable<ShipReport['carried']> = [];
    const passed = new Set<string>();
    const summary = (): string => [
      merged.length ? `merged ${merged.length} branch${merged.length === 1 ? '' : 'es'}: ${merged.map((m) => m.branch).join(', ')}` : '',
      ...carried.map((c) => `not merged: ${c.branch} (${c.job_id}): ${c.message}`),
    ].filter(Boolean).join('\n');
    for (;;) {
      const q = await this.queue({ into: o.into });
      const head = q.queue.find((e) => !passed.has(e.job_id));
      if (!head) {
        if (!carried.length) return { merged, left: [], order, message: merged.length ? `merged ${merged.length} branch${merged.length === 1 ? '' : 'es'}: ${merged.map((m) => m.branch).join(', ')}; the queue is empty` : 'the queue is empty: no finished, unmerged worktree branch' };
        return { merged, left: [], order, carried, message: `${summary()}\nthe queue has nothing else to merge` };
      }
      let r: JobMergeResult;
      try {
        r = await mergeOne(head.job_id, { ...o, leaveConflicts: false });
      } catch (err) {
        r = { merged: false, job_id: head.job_id, title: head.title, branch: head.branch, target: head.target, reason: 'apply_failed', message: errText(err) };
      }
      if (!r.merged) {
        if (via.carryOn?.(r)) {
          passed.add(r.job_id);
          carried.push({ job_id: r.job_id, branch: r.branch, reason: r.reason, message: r.message });
          continue;
        }
        const left = q.queue.filter((e) => e.job_id !== head.job_id && !passed.has(e.job_id)).map((e) => ({ job_id: e.job_id, title: e.title, branch: e.branch }));
        const done = merged.length ? `merged ${merged.map((m) => `${m.branch} (${m.job_id})`).join(', ')}; ` : 'merged nothing; ';
        const also = carried.length ? `${carried.map((c) => `not merged: ${c.branch} (${c.job_id}): ${c.message}`).join('\n')}\n` : '';
        return { merged, failed: r, left, order, ...(carried.length ? { carried } : {}),
          message: `${also}${done}stopped at ${head.branch} (job ${head.job_id}: ${head.title}): ${r.message}\nleft in the queue: ${left.length ? left.map((l) => `${l.branch} (${l.job_id})`).join(', ') : 'nothing'}` };
      }
      merged.push({ job_id: r.job_id, title: r.title, branch: r.branch, target: r.target, commit: r.commit });
    }
  }
}

/** How a ship merges each branch and which failures it goes on past. */
export interface ShipVia {
  merge?: (jobId: string, o: MergeOptions) => Promise<JobMergeResult>;
  /** true: this failure was handed on (sent back, or to the person); the ship goes on with the rest. */
  carryOn?: (r: JobMergeResult & { merged: false }) => boolean;
}

function alreadyMerged(job: JobRow, done: MergeRow): InvalidStateError {
  return new InvalidStateError(`job ${job.id} (${job.title}) was already merged: ${done.branch} into ${done.target} at ${done.commit_sha.slice(0, 12)} (${isoTime(done.merged_at)})`);
}

function refusal(err: MergeRefused, job: JobRow): Error {
  const msg = `cannot merge job ${job.id} (${job.title}): ${err.message}`;
  if (err.kind === 'not_found') return new NotFoundError(msg);
  if (err.kind === 'invalid_input') return new InvalidInputError(msg);
  return new InvalidStateError(msg);
}

async function mapLimit<T, R>(xs: readonly T[], limit: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(xs.length);
  let next = 0;
  const worker = async () => { while (next < xs.length) { const i = next++; out[i] = await f(xs[i]!); } };
  await Promise.all(Array.from({ length: Math.min(limit, xs.length) }, worker));
  return out;
}
