// The run engine (docs/dispatch.md): a validated dispatch file becomes a run whose tasks get
// jobs through JobService, as the lead, each once its dependencies have succeeded (depends_on
// maps to their job ids), while the run has a free slot (concurrency) and money left (budget),
// until its deadline (timeout). Driven by the bus's job events; state in runs/run_tasks, so a
// new hub picks running runs up where the old one left them. With many hubs on one database a run
// is driven by one hub (runs.hub_id): the one that dispatched or resumed it, or adopted it when
// its hub died (docs/decisions.md "Runs, workflows and debates across hubs").
import { readFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { Budgets } from '../money/budgets.js';
import type { JobRow } from '../store/jobs.js';
import { attemptsOf } from '../store/sql/jobs.js';
import { adopt } from '../store/sql/claims.js';
import type { Q } from '../store/sql/tx.js';
import { claimTask, getRun, reopenRun, insertRun, jobsById, listRuns, runIds, runOfJob, runTasks, runningRuns, setTask, updateRun } from '../store/sql/runs.js';
import { settingsDirOf } from '../config.js';
import { isoTime } from '../clock.js';
import { isTerminal, type JobStatus } from '../domain/job.js';
import { renderPrompt } from '../prompts/load.js';
import { InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { checkDispatch, formatOf, formatProblems, type DispatchFormat, type TaskSpec } from './file.js';
import { rulesOf, type RunRow, type RunStatus, type RunTaskRow } from './store.js';

export interface DispatchRequest {
  file?: string;
  content?: string;
  format?: DispatchFormat;
  title?: string;
}

const LEAD = { role: 'lead' } as const;
const round = (n: number): number => Math.round(n * 1e6) / 1e6;

/** A task's job could not be recorded: another pass claimed the task first (its job was rolled back). */
class TaskTaken extends InvalidStateError {}

/** Every job a run's tasks have had, by id. */
const jobIdsOf = (tasks: readonly RunTaskRow[]): string[] => tasks.flatMap((t) => JSON.parse(t.job_ids_json) as string[]);

export class RunService {
  /** The runs this hub drives that are running (hasWork must answer at once: the hub's idle check is synchronous). */
  private readonly live = new Set<string>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private detach?: () => void;

  /** `budgets`: what a task is estimated to cost (a run's total before it starts). */
  /** `hubId`: this hub, the driver of the runs it dispatches or adopts (docs/store-plan.md §3.4). */
  constructor(private readonly ctx: HubContext, private readonly jobs: JobService, private readonly budgets: Budgets, private readonly hubId: string) {}

  private get q() {
    return this.ctx.sql.db;
  }

  // ---- life cycle ------------------------------------------------------------------------

  /**
   * Follow job events; pick up the runs this hub drives (its predecessors' on this state
   * directory became its own in the start reconcile) and the adoptable ones (unowned, or their
   * hub dead or stopped: `adopt`). Another live hub's run is driven there, never here.
   */
  async start(): Promise<void> {
    // remote: a task's job may run on another hub than the run's (an interrupted or queued job of
    // a dead hub is unowned and any hub may claim it), so its end can arrive from there; only the
    // runs this hub drives (`live`) move (docs/store-plan.md §3.1, §3.4).
    this.detach = this.ctx.bus.on('job', ({ jobId }) => {
      if (!this.live.size) return;
      void runOfJob(this.q, jobId).then((runId) => { if (runId && this.live.has(runId)) void this.pump(runId); }, (err: unknown) => this.ctx.log.error({ err, jobId }, 'run: could not read the run of a job'));
    }, { remote: true, resync: () => { for (const id of this.live) void this.pump(id); } });
    // remote: cancel_run of a run this hub drives may come from a lead on another hub; the pass finds it ended and lets it go.
    const offRun = this.ctx.bus.on('run', ({ runId, status }) => {
      if (status !== 'running' && this.live.has(runId)) void this.pump(runId);
    }, { remote: true, resync: null });
    const offJob = this.detach;
    this.detach = () => { offJob(); offRun(); };
    await this.takeUp(true);
  }

  /** Runs whose hub died, found by this hub (src/services/hubReconcile.ts), or left unowned: adopted, once, and driven on. */
  adopt(): Promise<string[]> {
    return this.takeUp(false);
  }

  /** `own`: at start, this hub's own running runs too. A run is taken up as a restarted hub does: interrupted jobs continue, the deadline is armed, a pass. */
  private async takeUp(own: boolean): Promise<string[]> {
    const taken: string[] = [];
    for (const run of await runningRuns(this.q)) {
      if (this.live.has(run.id)) continue;
      if (run.hub_id === this.hubId ? !own : !(await adopt(this.q, 'runs', run.id, this.hubId))) continue;
      if (run.hub_id !== this.hubId) this.ctx.log.info({ run: run.id, from: run.hub_id }, 'run adopted');
      taken.push(run.id);
      this.live.add(run.id);
      const tasks = await runTasks(this.q, run.id);
      const jobs = await jobsById(this.q, jobIdsOf(tasks));
      for (const t of tasks) {
        const j = t.state === 'started' && t.job_id ? jobs.get(t.job_id) : undefined;
        if (j?.status === 'interrupted') {
          try {
            await this.jobs.resume({ job_id: j.id, message: this.ctx.prompts.get('run-hub-restart').body.trim() }, LEAD);
          } catch (err) {
            this.ctx.log.warn({ run: run.id, job: j.id, err: (err as Error).message }, 'run: could not continue an interrupted job');
          }
        }
      }
      this.arm(run);
      await this.pump(run.id);
    }
    return taken;
  }

  close(): void {
    this.detach?.();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** A run still has work: a background hub must not exit idle. */
  hasWork(): boolean {
    return this.live.size > 0;
  }

  // ---- dispatch ----------------------------------------------------------------------------

  /** Validate the file completely, then create the run and start its first tasks. Problems: InvalidInputError listing each with its line; nothing is written. */
  async dispatch(req: DispatchRequest): Promise<Record<string, unknown>> {
    const { ctx } = this;
    if ((req.file === undefined) === (req.content === undefined)) throw new InvalidInputError('give file (a path to a .toml or .yaml dispatch file) or content (its text), exactly one of them');
    let file: string | null = null;
    let content: string;
    if (req.file !== undefined) {
      file = isAbsolute(req.file) ? resolve(req.file) : resolve(ctx.projectDir, req.file);
      if (!existsSync(file)) throw new InvalidInputError(`dispatch file ${JSON.stringify(req.file)} does not exist (resolved to ${file}). Pass an existing .toml or .yaml file, or its text as content.`);
      content = readFileSync(file, 'utf8');
    } else content = req.content!;
    const format = req.format ?? (file ? formatOf(file) : undefined);
    if (!format) throw new InvalidInputError(`cannot tell the format of ${file ? JSON.stringify(file) : 'content'}: name the file *.toml, *.yaml or *.yml, or pass format "toml" or "yaml"`);
    const { spec, problems } = checkDispatch(content, format, { baseDir: file ? dirname(file) : ctx.projectDir, templatesDir: join(settingsDirOf(ctx.config), 'templates') });
    if (!spec) {
      throw new InvalidInputError(`The dispatch file has ${problems.length} problem(s); nothing was started. Fix them and dispatch again (overseer validate <file> lists them too):\n${formatProblems(file ?? '<content>', problems)}`);
    }
    const id = await this.newRunId();
    const now = ctx.clock.now();
    const title = req.title ?? spec.rules.title ?? (file ? file.split('/').pop()! : `run of ${spec.tasks.length} task(s)`);
    const run = { id, title, file, content, format, rules_json: JSON.stringify(spec.rules), status: 'running' as const, deadline_at: spec.rules.timeout_s ? now + spec.rules.timeout_s * 1000 : null, created_at: now, hub_id: this.hubId };
    await insertRun(this.q, run, spec.tasks);
    this.live.add(id);
    ctx.log.info({ run: id, tasks: spec.tasks.length, file }, 'run dispatched');
    this.arm((await getRun(this.q, id))!);
    await this.pump(id);
    return this.view(id);
  }

  private async newRunId(): Promise<string> {
    for (let i = 0; i < 10; i++) {
      const id = `r-${this.ctx.ids.jobId().replace(/^j-/, '')}`;
      if (!(await getRun(this.q, id))) return id;
    }
    throw new Error('could not generate a unique run id');
  }

  // ---- the engine --------------------------------------------------------------------------

  /** Advance a run; calls for one run are serialized (a call during a pass makes one more pass). */
  pump(runId: string): Promise<void> {
    if (this.chains.has(runId)) {
      this.again.add(runId);
      return this.chains.get(runId)!;
    }
    const p = (async () => {
      do {
        this.again.delete(runId);
        try {
          await this.pass(runId);
        } catch (err) {
          this.ctx.log.error({ run: runId, err }, 'run: pass failed');
        }
      } while (this.again.has(runId));
    })().finally(() => this.chains.delete(runId));
    this.chains.set(runId, p);
    return p;
  }

  private async pass(runId: string): Promise<void> {
    const { ctx } = this;
    const run = await getRun(this.q, runId);
    if (!run || run.status !== 'running') {
      this.letGo(runId); // ended elsewhere (cancel_run on another hub): nothing left to drive here
      return;
    }
    if (run.deadline_at !== null && ctx.clock.now() >= run.deadline_at) return this.timeOut(run);
    const rules = rulesOf(run);
    const tasks = await runTasks(this.q, runId);
    // The jobs as this pass found them; one it starts is open (not in the map) until the next pass reads it.
    const jobs = await jobsById(this.q, jobIdsOf(tasks));
    const byId = new Map(tasks.map((t) => [t.task_id, t]));
    const jobOf = (t: RunTaskRow): JobRow | undefined => (t.state === 'started' && t.job_id ? jobs.get(t.job_id) : undefined);
    const outcome = (t: RunTaskRow): 'ok' | 'bad' | 'open' => {
      if (t.state === 'skipped' || t.state === 'error') return 'bad';
      const j = jobOf(t);
      if (!j) return 'open';
      return j.status === 'succeeded' ? 'ok' : isTerminal(j.status as JobStatus) ? 'bad' : 'open';
    };
    let live = tasks.filter((t) => { const j = jobOf(t); return j && !isTerminal(j.status as JobStatus); }).length;
    let spent = await this.spent(tasks, jobs);
    let stopNote = run.note;
    // Skip what can never run; start what is ready while a slot and money are left.
    let changed = true;
    while (changed) {
      changed = false;
      for (const t of tasks) {
        if (t.state !== 'pending') continue;
        const spec = JSON.parse(t.spec_json) as TaskSpec;
        const deps = spec.depends_on.map((d) => byId.get(d)!);
        const bad = deps.find((d) => outcome(d) === 'bad');
        if (bad) {
          const why = bad.state === 'started' ? `its job ${bad.job_id} ${jobs.get(bad.job_id!)?.status}` : bad.state;
          t.state = 'skipped';
          t.error = `dependency ${bad.task_id} did not succeed (${why})`;
          await setTask(this.q, runId, t.task_id, { state: 'skipped', error: t.error });
          changed = true;
          continue;
        }
        if (deps.some((d) => outcome(d) !== 'ok')) continue;
        if (stopNote) continue;
        if (rules.concurrency !== undefined && live >= rules.concurrency) continue;
        if (rules.budget_usd !== undefined) {
          const ask = await this.estimate(spec);
          if (spent + ask > rules.budget_usd) {
            stopNote = this.budgetNote(run, rules.budget_usd, spent, ask, t.task_id, tasks, jobs);
            await updateRun(this.q, runId, { note: stopNote }, ctx.clock.now());
            ctx.log.warn({ run: runId, note: stopNote }, 'run: budget reached, no new task starts');
            continue;
          }
        }
        const { id: _id, depends_on: _deps, ...input } = spec;
        try {
          // The task is claimed in the job's own transaction: a pass that finds it claimed already makes no job.
          const r = await this.jobs.spawn({
            ...input,
            depends_on: deps.map((d) => d.job_id!),
            labels: [...new Set([...(spec.labels ?? []), `run:${runId}`])],
          } as Parameters<JobService['spawn']>[0], LEAD, {
            within: async (jobId, _now, trx) => {
              if (!(await claimTask(trx, runId, t.task_id, jobId))) throw new TaskTaken(`task ${t.task_id} of run ${runId} has its job already`);
            },
          });
          const ids = [...(JSON.parse(t.job_ids_json) as string[]), r.job_id];
          Object.assign(t, { state: 'started', job_id: r.job_id, job_ids_json: JSON.stringify(ids), error: null });
          live++;
          spent += await this.estimate(spec);
        } catch (err) {
          if (err instanceof TaskTaken) {
            this.again.add(runId); // what this pass read is stale: the next pass reads again
            return;
          }
          t.state = 'error';
          t.error = `its job could not be created: ${(err as Error).message}`;
          await setTask(this.q, runId, t.task_id, { state: 'error', error: t.error });
        }
        changed = true;
      }
    }
    if (live > 0) return;
    // Nothing live: the run has ended if nothing can start any more.
    const open = tasks.filter((t) => t.state === 'pending');
    const startable = open.some((t) => (JSON.parse(t.spec_json) as TaskSpec).depends_on.every((d) => outcome(byId.get(d)!) === 'ok'));
    if (startable && !stopNote) return;
    const allOk = tasks.every((t) => outcome(t) === 'ok');
    const status: RunStatus = allOk ? 'succeeded' : stopNote ? 'stopped' : 'failed';
    await this.end(run, status, stopNote ? `${stopNote.replace(/; left running:.*$/, '')}; tasks never started: ${open.map((t) => t.task_id).join(', ') || 'none'}` : null);
  }

  /** What the run has spent, plus what its live jobs may still spend (their budget_usd or estimate, less what they spent). */
  private async spent(tasks: RunTaskRow[], jobs: Map<string, JobRow>): Promise<number> {
    let s = 0;
    for (const t of tasks) {
      for (const id of JSON.parse(t.job_ids_json) as string[]) {
        const j = jobs.get(id);
        if (!j) continue;
        const live = t.job_id === id && !isTerminal(j.status as JobStatus);
        s += live ? Math.max(j.cost_usd, await this.estimate(JSON.parse(t.spec_json) as TaskSpec)) : j.cost_usd;
      }
    }
    return s;
  }

  private async estimate(spec: TaskSpec): Promise<number> {
    if (typeof spec.budget_usd === 'number') return spec.budget_usd;
    try {
      return (await this.budgets.estimate({ provider: spec.provider ?? 'claude', model: spec.model ?? null, template: spec.template ?? null, budgetUsd: null })).usd;
    } catch {
      return 0;
    }
  }

  private budgetNote(run: RunRow, limit: number, spent: number, ask: number, next: string, tasks: RunTaskRow[], jobs: Map<string, JobRow>): string {
    // A job this pass started is not in `jobs` yet: it is live.
    const left = tasks.filter((t) => t.state === 'started' && t.job_id && !isTerminal((jobs.get(t.job_id)?.status ?? 'queued') as JobStatus)).map((t) => `${t.task_id} (${t.job_id})`);
    return `run budget reached (the run's budget_usd $${round(limit)}): spent or held by live jobs $${round(spent)}, task ${next} would need about $${round(ask)}; no new task starts; left running: ${left.join(', ') || 'nothing'}`;
  }

  private async end(run: RunRow, status: RunStatus, note: string | null): Promise<void> {
    const now = this.ctx.clock.now();
    await updateRun(this.q, run.id, { status, note, ended_at: now }, now);
    this.letGo(run.id);
    this.ctx.log.info({ run: run.id, status, note }, 'run ended');
    this.ctx.bus.emit('run', { runId: run.id, status });
  }

  /** This hub no longer drives the run: it has ended. */
  private letGo(runId: string): void {
    this.live.delete(runId);
    clearTimeout(this.timers.get(runId));
    this.timers.delete(runId);
  }

  /** A timer for the run's deadline (the engine also checks it on every pass). */
  private arm(run: RunRow): void {
    clearTimeout(this.timers.get(run.id));
    if (run.deadline_at === null || run.status !== 'running') return;
    const ms = Math.max(0, run.deadline_at - this.ctx.clock.now());
    this.timers.set(run.id, setTimeout(() => void this.pump(run.id), Math.min(ms, 2 ** 31 - 1)).unref());
  }

  private async timeOut(run: RunRow): Promise<void> {
    const tasks = await runTasks(this.q, run.id);
    const jobs = await jobsById(this.q, jobIdsOf(tasks));
    const live = tasks.filter((t) => t.state === 'started' && t.job_id && !isTerminal(jobs.get(t.job_id)!.status as JobStatus));
    const never = tasks.filter((t) => t.state === 'pending').map((t) => t.task_id);
    const note = `run timeout reached (timeout_s ${rulesOf(run).timeout_s}): cancelled ${live.map((t) => `${t.task_id} (${t.job_id})`).join(', ') || 'nothing'}; tasks never started: ${never.join(', ') || 'none'}`;
    // Ended first, so the cancellations' job events do not start anything.
    await this.end(run, 'timed_out', note);
    for (const t of live) {
      try { await this.jobs.cancel({ job_id: t.job_id!, reason: `run ${run.id} timed out`, cascade: true }, LEAD); } catch (err) { this.ctx.log.warn({ run: run.id, err: (err as Error).message }, 'run: cancel at timeout failed'); }
    }
  }

  /** cancel_run: no task starts any more and the live jobs are cancelled; what finished stays. */
  async cancel(runId: string, reason: string): Promise<Record<string, unknown>> {
    const run = await this.run(runId);
    if (run.status !== 'running') throw new InvalidStateError(`Run ${run.id} has already ended (${run.status}); nothing to cancel.`);
    await this.end(run, 'cancelled', reason);
    const tasks = await runTasks(this.q, run.id);
    const jobs = await jobsById(this.q, jobIdsOf(tasks));
    for (const t of tasks) {
      const j = t.state === 'started' && t.job_id ? jobs.get(t.job_id) : undefined;
      if (j && !isTerminal(j.status as JobStatus)) await this.jobs.cancel({ job_id: j.id, reason: `run ${run.id} cancelled: ${reason}`, cascade: true }, LEAD).catch(() => undefined);
    }
    return this.view(run.id);
  }

  // ---- resume ------------------------------------------------------------------------------

  /** Re-run what did not succeed: failed jobs with a session continue it; tasks that never started get new jobs. */
  async resume(runId: string): Promise<Record<string, unknown>> {
    const { ctx } = this;
    const run = await this.run(runId);
    if (run.status === 'running') throw new InvalidStateError(`Run ${run.id} is still running; resume it once it has ended (get_run shows its tasks).`);
    const tasks = await runTasks(this.q, run.id);
    const jobs = await jobsById(this.q, jobIdsOf(tasks));
    const continueJobs: { task: RunTaskRow; job: JobRow }[] = [];
    for (const t of tasks) {
      const j = t.state === 'started' && t.job_id ? jobs.get(t.job_id) : undefined;
      if (j?.status === 'succeeded') continue;
      if (j && isTerminal(j.status as JobStatus) && (await attemptsOf(this.q, j.id)).length > 0) continueJobs.push({ task: t, job: j });
    }
    if (tasks.every((t) => t.state === 'started' && jobs.get(t.job_id!)?.status === 'succeeded')) {
      throw new InvalidStateError(`Every task of run ${run.id} succeeded: nothing to resume.`);
    }
    const now = ctx.clock.now();
    const rules = rulesOf(run);
    const reset = tasks.filter((t) => {
      const j = t.state === 'started' && t.job_id ? jobs.get(t.job_id) : undefined;
      return !(j?.status === 'succeeded' || continueJobs.some((c) => c.task.task_id === t.task_id) || (j && !isTerminal(j.status as JobStatus)));
    });
    // This hub drives it from now on, whichever drove it before it ended; of two resumes at once, one.
    if (!(await reopenRun(this.q, run.id, reset.map((t) => t.task_id), rules.timeout_s ? now + rules.timeout_s * 1000 : null, now, this.hubId))) {
      throw new InvalidStateError(`Run ${run.id} is running again already (resumed meanwhile); get_run shows it.`);
    }
    this.live.add(run.id);
    const tpl = ctx.prompts.get('run-resume');
    for (const { job } of continueJobs) {
      const message = renderPrompt(tpl, { status: job.status, error: failureOf(job) }).trim();
      try {
        await this.jobs.resume({ job_id: job.id, message }, LEAD);
      } catch (err) {
        // Could not continue it (e.g. a budget): the task gets a new job instead.
        await setTask(this.q, run.id, continueJobs.find((c) => c.job.id === job.id)!.task.task_id, { state: 'pending', job_id: null, error: `could not continue ${job.id}: ${(err as Error).message}` });
      }
    }
    this.arm((await getRun(this.q, run.id))!);
    await this.pump(run.id);
    return this.view(run.id);
  }

  // ---- views -------------------------------------------------------------------------------

  async run(id: string): Promise<RunRow> {
    const m = await runIds(this.q, id);
    const r = (await getRun(this.q, id)) ?? (m.length === 1 ? await getRun(this.q, m[0]!) : undefined);
    if (!r) {
      const known = await runIds(this.q);
      throw new NotFoundError(`No run ${JSON.stringify(id)}.${known.length ? ` Recent runs: ${known.slice(0, 10).join(', ')}.` : ' No runs exist yet.'} Use list_runs to see them.`);
    }
    return r;
  }

  async view(id: string): Promise<Record<string, unknown>> {
    return readRunView(this.q, await this.run(id));
  }

  async list(limit = 50): Promise<{ runs: Record<string, unknown>[] }> {
    const runs: Record<string, unknown>[] = [];
    for (const r of await listRuns(this.q, limit)) {
      const v = await readRunView(this.q, r);
      delete v.tasks;
      runs.push(v);
    }
    return { runs };
  }
}

/** A run's view read through the layer: its tasks and their jobs (the CLI reads it over its read-only handle). */
export async function readRunView(q: Q, r: RunRow): Promise<Record<string, unknown>> {
  const tasks = await runTasks(q, r.id);
  const jobs = await jobsById(q, jobIdsOf(tasks));
  return runView(r, tasks, (id) => jobs.get(id));
}

/** A run as the tools and the CLI show it: status, counts, cost, and each task with its job. */
export function runView(r: RunRow, tasks: RunTaskRow[], job: (id: string) => JobRow | undefined): Record<string, unknown> {
  const counts: Record<string, number> = {};
  let cost = 0;
  const views = tasks.map((t) => {
    const j = t.job_id ? job(t.job_id) : undefined;
    const ids = JSON.parse(t.job_ids_json) as string[];
    for (const id of ids) cost += job(id)?.cost_usd ?? 0;
    const status = t.state === 'started' ? (j?.status ?? 'unknown') : t.state === 'pending' ? 'not_started' : t.state;
    counts[status] = (counts[status] ?? 0) + 1;
    const spec = JSON.parse(t.spec_json) as TaskSpec;
    return {
      task_id: t.task_id, ...(spec.title ? { title: spec.title } : {}), status, ...(t.job_id ? { job_id: t.job_id } : {}), ...(ids.length > 1 ? { job_ids: ids } : {}),
      ...(spec.depends_on.length ? { depends_on: spec.depends_on } : {}),
      ...(t.error ? { error: t.error } : j && j.status !== 'succeeded' && (j.error || j.result) ? { error: failureOf(j).slice(0, 500) } : {}),
      ...(j ? { cost_usd: round(j.cost_usd) } : {}),
    };
  });
  return {
    run_id: r.id, title: r.title, status: r.status, file: r.file, format: r.format, rules: rulesOf(r),
    ...(r.note ? { note: r.note } : {}),
    created_at: isoTime(r.created_at), ...(r.ended_at ? { ended_at: isoTime(r.ended_at) } : {}), ...(r.deadline_at && r.status === 'running' ? { deadline_at: isoTime(r.deadline_at) } : {}),
    counts, cost_usd: round(cost), tasks: views,
  };
}

/** Why a job did not succeed: its error, and the agent's own report when it gave one. */
function failureOf(j: JobRow): string {
  const parts = [j.error, j.result].filter((x): x is string => !!x);
  return parts.length ? parts.join(': ') : (j.failure_class ?? 'no error was recorded');
}
