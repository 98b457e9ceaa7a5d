// Taking over an agent (issue 13 point 5, docs/attach.md): the hub's side of `overseer attach`.
// attach: stop the job keeping its session (pause_agent mode stop), make sure its work tree is
// there, give it a fresh token, mark it taken over, and hand back the interactive command.
// detach: the person is done; the job is handed back (resumed headless on its session),
// finished with the person's result, or left stopped.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { JobRow } from '../store/jobs.js';
import type { AgentSummary } from '../services/summary.js';
import { batch } from '../store/sql/tx.js';
import { attemptInsert, attemptsOf, eventInsert, getJob, jobUpdate, lastAttempt, updateJob, updateWithEvent } from '../store/sql/jobs.js';
import { hashToken, type Runner } from '../services/runner.js';
import { hookSettings } from '../launch/claude/launcher.js';
import { realTarget } from '../services/realPaths.js';
import { attachWorktree } from '../git/attach.js';
import { InvalidStateError } from '../errors.js';
import { errorMessage } from '../errors.js';
import { isActive, isPending, isTerminal, type JobStatus } from '../domain/job.js';
import { interactiveClaude, interactiveCodex, overseerEnv } from './command.js';
import { TAKEN_OVER, type Attachments } from './attachments.js';
import { launchRole } from '../roles/index.js';
import { ConfineError } from '../confine/jail.js';
import type { CommandConfiner } from '../confine/launcher.js';
import type { AgentLauncher } from '../launch/types.js';
import type { AttachResult } from '../contract/takeover.js';

export type { AttachResult };

const LEAD = { role: 'lead' } as const;

export type Then = 'resume' | 'finish' | 'leave';

export class TakeoverService {
  /**
   * `attached`: jobs a person has taken over (since when): the hub stays up for them; JobService
   * reads it too. `runner`: settles a job the person finished, as any attempt's end. `confiner`:
   * the hub's confinement of its children (src/confine), applied to the person's command too.
   */
  constructor(
    private readonly ctx: HubContext, private readonly jobs: JobService, private readonly runner: Pick<Runner, 'endAttempt'>,
    private readonly attached: Attachments, private readonly confiner: CommandConfiner,
  ) {}

  /** The jobs a person took over under an earlier hub (their mark outlives it): read once, at the hub's start. */
  load(): Promise<void> {
    return this.attached.load(this.ctx.sql.db, () => this.ctx.clock.now());
  }

  /** A person works on at least one agent's session. */
  active(): boolean {
    return this.attached.size > 0;
  }

  isAttached(jobId: string): boolean {
    return this.attached.has(jobId);
  }

  async attach(jobId: string): Promise<AttachResult> {
    const { ctx } = this;
    let j = await this.jobs.visibleJob(jobId, LEAD);
    const sessionId = await this.sessionOf(j);
    if (this.attached.has(j.id)) {
      throw new InvalidStateError(`Job ${j.id} is already taken over by a person (since ${new Date(this.attached.get(j.id)!).toISOString()}). Finish that session first (overseer attach asks what becomes of the job when it exits); if it was abandoned, the lead's detach_agent { job_id: "${j.id}", then: "resume" | "leave" } gives it back.`);
    }
    const launcher = ctx.launchers[j.provider as 'claude' | 'codex'];
    if (!launcher) throw new InvalidStateError(`Job ${j.id} runs on ${j.provider}, which this hub has no launcher for.`);
    const bin = launcher.resolveBin();
    if (!bin) throw new InvalidStateError(`Cannot find the ${j.provider} binary to open job ${j.id}'s session: ${launcher.binHint}`);
    // The work tree before stopping anything: a job whose worktree is gone and cannot come back stays as it is.
    const workDir = j.work_dir ?? j.cwd;
    let reattached = false;
    if (!existsSync(workDir)) {
      if (j.worktree !== 1 || !j.branch || !j.repo_root || !j.base_commit) {
        throw new InvalidStateError(`Job ${j.id}'s working directory ${workDir} no longer exists, so its session cannot be opened there. Recreate the directory (or check out its project again) and retry.`);
      }
      try {
        await attachWorktree({ repoRoot: j.repo_root, path: workDir, branch: j.branch, baseCommit: j.base_commit });
        reattached = true;
      } catch (err) {
        throw new InvalidStateError(`Job ${j.id}'s worktree ${workDir} is gone and could not be re-attached from branch ${j.branch}: ${errorMessage(err)}. Check that the branch still exists (git branch --list ${j.branch}).`);
      }
    }
    // The person's command before stopping anything: a job that cannot be confined stays as it is.
    const token = ctx.ids.token();
    const command = this.command(j, workDir, sessionId, token, launcher, bin);
    const was = j.status;
    if (isActive(j.status as JobStatus)) await this.jobs.pause({ job_id: j.id, mode: 'stop' } as never, LEAD);
    j = (await getJob(ctx.sql.db, j.id))!;
    if (isActive(j.status as JobStatus) || isPending(j.status as JobStatus)) {
      throw new InvalidStateError(`Job ${j.id} is ${j.status} again (something resumed it meanwhile): nothing was taken over. Try again.`);
    }
    const now = ctx.clock.now();
    await updateWithEvent(ctx.sql.db, j.id, { token_hash: hashToken(token), status_message: TAKEN_OVER }, now, 'attached', { was, session_id: sessionId, ...(reattached ? { reattached_worktree: workDir } : {}) });
    this.attached.set(j.id, now);
    ctx.bus.emit('job', { jobId: j.id, status: j.status });
    return {
      job_id: j.id, title: j.title, provider: j.provider, session_id: sessionId, was, work_dir: workDir, reattached_worktree: reattached,
      ...(j.role && j.role !== 'implementer' ? { role: j.role } : {}), command,
    };
  }

  /**
   * The interactive command: the launcher's own, with the job's role as the runner passes it
   * (plan mode, a read-only tree and sandbox, the tools it never gets), confined as the agent's
   * runs are (the same builder): a reviewer's tree is read-only for the person's session too.
   */
  private command(j: JobRow, workDir: string, sessionId: string, token: string, launcher: AgentLauncher, bin: string): AttachResult['command'] {
    const { ctx } = this;
    const cmd = launcher.build({
      jobId: j.id, message: '', cwd: workDir, model: j.model && j.model !== 'auto' ? j.model : undefined, sessionId, resume: true,
      mcpUrl: ctx.mcpUrl(), token, appendSystemPrompt: this.preamble(j, workDir),
      settings: hookSettings(ctx.mcpUrl(), { readDenied: [realTarget(ctx.config.home, '/') ?? ctx.config.home], writeDenied: [join(realTarget(workDir, '/') ?? workDir, '.claude')] }),
      role: launchRole(j), env: ctx.childEnv, mcpTimeoutMs: (ctx.config.maxWaitS + 120) * 1000,
    }, bin);
    const args = j.provider === 'codex' ? interactiveCodex(cmd, sessionId) : interactiveClaude(cmd);
    let run;
    try {
      run = this.confiner.command({ ...cmd, args });
    } catch (err) {
      if (!(err instanceof ConfineError)) throw err;
      throw new InvalidStateError(`Job ${j.id}'s session cannot be opened confined as its runs are: ${err.message}. Nothing was taken over.`);
    }
    return { bin: run.bin, args: run.args, cwd: cmd.cwd, env: overseerEnv(cmd.env) };
  }

  /** The person is done. `message` (resume) is what the agent reads first; `result`/`outcome` (finish) settle the job. */
  async detach(i: { job_id: string; then: Then; message?: string; result?: string; outcome?: 'success' | 'failure' }): Promise<AgentSummary> {
    const { ctx } = this;
    const j = await this.jobs.visibleJob(i.job_id, LEAD);
    if (isActive(j.status as JobStatus) || isPending(j.status as JobStatus)) {
      throw new InvalidStateError(`Job ${j.id} is ${j.status}: it is not taken over (someone resumed it). Nothing was changed.`);
    }
    if (i.then === 'finish' && !i.result?.trim()) throw new InvalidStateError('then: "finish" needs a result: say what was done (and outcome success|failure).');
    const since = this.attached.get(j.id);
    const now = ctx.clock.now();
    await updateWithEvent(ctx.sql.db, j.id, { token_hash: null, status_message: null }, now, 'detached', { then: i.then, ...(since !== undefined ? { minutes: Math.round((now - since) / 60_000) } : {}) });
    this.attached.delete(j.id);
    // Whatever the person's session locked as the agent is released with it, before going on.
    await ctx.bus.emitSettled('job', { jobId: j.id, status: j.status }, (err) => ctx.log.error({ err, jobId: j.id }, 'a reaction to a detach failed'));
    if (i.then === 'resume') {
      return this.jobs.resume({ job_id: j.id, message: i.message ?? ctx.prompts.render('takeover-handback', {}) } as never, LEAD);
    }
    if (i.then === 'finish') await this.finish(j, i.result!.trim(), i.outcome ?? 'success');
    return this.jobs.summary(j.id);
  }

  /** Settle the job with the person's result as an attempt of kind `takeover`, through the runner (checks, worktree, dependents). */
  private async finish(j: JobRow, result: string, outcome: 'success' | 'failure'): Promise<void> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const q = ctx.sql.db;
    const n = ((await lastAttempt(q, j.id))?.n ?? 0) + 1;
    await batch(q, [
      // retry 'none' for this settling only: a person's failure verdict is final, not a retryable failure.
      jobUpdate(q, j.id, { status: 'running', result, outcome, progress: 1, ended_at: null, retry: 'none' }, now),
      attemptInsert(q, {
        job_id: j.id, n, kind: 'takeover', status: 'running', started_at: this.attached.get(j.id) ?? now, ended_at: null, session_id: j.session_id, pid: null,
        exit_code: null, signal: null, turns: 0, cost_usd: 0, failure_class: null, error: null, diagnosis: null, transcript: '', stderr: null,
      }),
      eventInsert(q, j.id, now, 'finish', { outcome, by: 'person' }),
    ]);
    await this.runner.endAttempt(j.id, n, outcome === 'success'
      ? { ok: true, resultText: result }
      : { ok: false, failureClass: 'reported_failure', error: `a person finished it as a failure: ${result}` })
      .finally(() => updateJob(q, j.id, { retry: j.retry }, ctx.clock.now()));
  }

  private async sessionOf(j: JobRow): Promise<string> {
    const started = (await attemptsOf(this.ctx.sql.db, j.id)).some((a) => a.session_id !== null);
    if (!started || !j.session_id) {
      throw new InvalidStateError(`Job ${j.id} has no session yet (${j.status}: it never started a conversation), so there is nothing to take over. Wait until it runs${isTerminal(j.status as JobStatus) ? '' : ' (overseer status)'}, or cancel it and do the work yourself.`);
    }
    return j.session_id;
  }

  private preamble(j: JobRow, workDir: string): string {
    return this.ctx.prompts.render('child-preamble', {
      job_id: j.id, title: j.title,
      parent_line: j.parent_id ? `You were spawned by agent \`${j.parent_id}\`.` : 'You were spawned by the lead.',
      work_dir: workDir, branch_line: j.branch ? ` (git branch \`${j.branch}\`)` : '',
      depth_left: Math.max(0, this.ctx.config.maxDepth - j.depth),
    });
  }
}
