// Scripted runs (issue 28, docs/scripts.md): a lead's script runs in the sandbox (./sandbox.ts)
// inside the hub; this service keeps the runs — start, continue after a hub restart, resume
// after a failure or an edit, cancel, pause, cancel one call — and ./execution.ts answers the
// calls of each execution of a script. A new hub continues every run still `running`: the script
// runs again from the top and the journal answers what was already done
// (src/domain/scriptReplay.ts), running jobs are waited on again, the rest runs live.
import { adopt } from '../store/sql/claims.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { RequestService } from '../approvals/service.js';
import { settingsDirOf } from '../config.js';
import { isTerminal } from '../domain/job.js';
import { InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import type { RunScriptInput } from '../contract/scripts.js';
import { type Json, type SandboxLimits, DEFAULT_LIMITS } from './sandbox.js';
import { checkScript } from './check.js';
import { scriptRunView, type ScriptRules } from './view.js';
import { jobOutcome, LIMIT_CLASSES, ScriptExecution, whereOf } from './execution.js';
import type { BundledScripts } from './bundled.js';
import type { Q } from '../store/sql/tx.js';
import { getJob } from '../store/sql/jobs.js';
import { addLog, callsOf, endCall, endScriptRun, findScriptRun, insertScriptRun, reopenScriptRun, runningScriptRuns, scriptRun, setPaused } from '../store/sql/scripts.js';

const LEAD = { role: 'lead' } as const;
const DEFAULT_CONCURRENCY = 16;

/** A run executing in this hub; `spawning`: its agent() calls between the spawn and its job in the journal. */
interface Live { abort: AbortController; done: Promise<void>; stopping: boolean; spawning: Set<Promise<unknown>> }

export class ScriptRuns {
  private readonly live = new Map<string, Live>();

  constructor(
    private readonly ctx: HubContext,
    private readonly jobs: Pick<JobService, 'spawn' | 'cancel' | 'resume'>,
    private readonly requests: Pick<RequestService, 'openForRun' | 'approved' | 'cancel'>,
    /** The hub's own scripts (the implement/review workflow) and their privileged calls. */
    private readonly bundled: BundledScripts,
    /** This hub (docs/store-plan.md §3.4): the driver of the runs it starts; it takes up only its own and adoptable ones. */
    private readonly hubId: string,
    private readonly limits: SandboxLimits = DEFAULT_LIMITS,
  ) {}

  /** Checks the script completely, stores the run with its script, and starts it. Nothing is written for a bad script. */
  async start(i: RunScriptInput): Promise<{ run_id: string; status: 'running'; title: string }> {
    if ((i.script === undefined) === (i.name === undefined)) throw new InvalidInputError('give script (the JavaScript source) or name (a saved script in .overseer/scripts/<name>.js), exactly one of them');
    const source = i.script ?? this.saved(i.name!);
    const problem = await checkScript(source);
    if (problem) throw new InvalidInputError(`The script is refused${whereOf(problem)}: ${problem.name}: ${problem.message}. Nothing was started; fix it and run it again.`);
    const title = i.title ?? metaName(source) ?? i.name ?? 'script';
    const rules: ScriptRules = { name: i.name ?? null, args: i.args as Json | undefined, budget_usd: i.budget_usd ?? null, max_concurrent: i.max_concurrent ?? DEFAULT_CONCURRENCY };
    const id = this.newRunId();
    await insertScriptRun(this.q, { id, title, file: i.name ? this.savedPath(i.name) : null, content: source, rules_json: JSON.stringify(rules), now: this.ctx.clock.now(), hub_id: this.hubId });
    this.execute(id, 'recover');
    return { run_id: id, status: 'running', title };
  }

  /**
   * A run of a bundled script for a hub service (not run_script's input), in two halves: `write`
   * inserts the run's row in the caller's transaction `trx` (the workflow writes it in its first
   * phase job's own transaction, with the call that job carries: nothing is left of the run when
   * the job is not made), and `start` runs it once that transaction has committed.
   */
  bundledRun(name: string, o: { title: string; args: Json }): { runId: string; write: (trx: Q) => Promise<void>; start: () => void } {
    const source = this.bundled.source(name);
    const rules: ScriptRules = { name, args: o.args, budget_usd: null, max_concurrent: DEFAULT_CONCURRENCY, bundled: name };
    const runId = this.newRunId();
    return {
      runId,
      write: (trx) => insertScriptRun(trx, { id: runId, title: o.title, file: null, content: source, rules_json: JSON.stringify(rules), now: this.ctx.clock.now(), hub_id: this.hubId }),
      start: () => { this.execute(runId, 'recover'); },
    };
  }

  /** A new script run's id. */
  private newRunId(): string {
    return `r-${this.ctx.ids.token().replace(/[^a-z0-9]/gi, '').slice(0, 8).toLowerCase()}`;
  }

  private get q(): Q {
    return this.ctx.sql.db;
  }

  /** Continues every script run a previous hub left running. */
  async resumeAll(): Promise<void> {
    for (const r of await runningScriptRuns(this.q)) {
      if (this.live.has(r.id)) continue; // driven here already (called again to adopt a dead hub's runs)
      // Another live hub's run is driven there; an unowned one or a dead or stopped hub's is taken over here, once.
      if (r.hub_id !== this.hubId && !(await adopt(this.q, 'runs', r.id, this.hubId))) continue;
      // The agents the stopped hub left interrupted go on in their sessions; the script waits for them again.
      for (const c of await callsOf(this.q, r.id)) {
        const j = c.status === 'running' && c.job_id ? await getJob(this.q, c.job_id) : undefined;
        if (j?.status !== 'interrupted') continue;
        try {
          await this.jobs.resume({ job_id: j.id, message: this.ctx.prompts.get('run-hub-restart').body.trim() }, LEAD);
        } catch (err) {
          // It cannot go on (e.g. its session is gone, a budget): the call fails, as the script can see and catch, instead of waiting for ever.
          const message = `agent ${j.id} was interrupted when the hub stopped and could not be continued: ${(err as Error).message}`;
          this.ctx.log.warn({ run: r.id, job: j.id, err: (err as Error).message }, 'script run: could not continue an interrupted agent');
          await endCall(this.q, r.id, c.seq, { status: 'failed', outcome: { name: 'AgentFailed', message, code: 'interrupted' }, at: this.ctx.clock.now() });
        }
      }
      // A resume the stopped hub had not yet seen diverge goes on as a resume.
      this.execute(r.id, (JSON.parse(r.rules_json) as ScriptRules).replaying ? 'resume' : 'recover');
    }
  }

  /**
   * resume_run of a failed or cancelled script run: the script is read again (a saved one from
   * its file as it is now, an inline one as stored) and runs from the top; the journal answers
   * the longest unchanged prefix (src/domain/scriptReplay.ts, 'resume'), and a `replay` row of
   * the log says where it diverged. A bad script changes nothing.
   */
  async resume(idOrPrefix: string): Promise<Record<string, unknown>> {
    const run = await findScriptRun(this.q, idOrPrefix);
    if (!run) throw new NotFoundError(`No script run ${JSON.stringify(idOrPrefix)}: list_runs shows the runs.`);
    if (run.status === 'running' || this.live.has(run.id)) throw new InvalidStateError(`Script run ${run.id} is still running: resume_run continues a run that failed or was cancelled. Wait for it (get_run with wait_s), or cancel_run it first.`);
    if (run.status === 'succeeded') throw new InvalidStateError(`Script run ${run.id} succeeded: there is nothing to resume. Start it again with run_script to run it anew.`);
    const rules = JSON.parse(run.rules_json) as ScriptRules;
    if (rules.bundled) throw new InvalidStateError(`Script run ${run.id} is the hub's ${rules.bundled} script driving a workflow: resume the workflow with resume_workflow (list_workflows shows it), which starts a new run of it.`);
    const source = rules.name ? this.saved(rules.name) : run.content;
    const problem = await checkScript(source);
    if (problem) throw new InvalidInputError(`${rules.name ? this.savedPath(rules.name) : 'The stored script'} is refused${whereOf(problem)}: ${problem.name}: ${problem.message}. The run was not resumed; fix it and call resume_run again.`);
    // Agents that ended after the run did: their outcome goes into the journal first, so that the resume can reuse it.
    for (const c of await callsOf(this.q, run.id)) {
      const j = c.status === 'running' && c.job_id ? await getJob(this.q, c.job_id) : undefined;
      if (!j || !isTerminal(j.status)) continue;
      const o = jobOutcome(j, JSON.parse(c.args_json) as Json[]);
      await endCall(this.q, run.id, c.seq, { status: o.ok ? 'done' : 'failed', outcome: o.ok ? o.value : o.error, limited: !o.ok && LIMIT_CLASSES.has(j.failure_class ?? ''), at: this.ctx.clock.now() });
    }
    const now = this.ctx.clock.now();
    // Only from failed or cancelled: of two resumes at once (two hubs, the dashboard and the lead) one runs it.
    if (!(await reopenScriptRun(this.q, run.id, source, JSON.stringify({ ...rules, replaying: true } satisfies ScriptRules), now))) {
      throw new InvalidStateError(`Script run ${run.id} was resumed meanwhile (it is running again): get_run shows it.`);
    }
    const edited = source !== run.content ? `; ${this.savedPath(rules.name!)} changed since the last run and was read again` : '';
    await addLog(this.q, run.id, 'replay', `resumed after it ${run.status}${edited}`, now);
    this.ctx.log.info({ run: run.id, edited: Boolean(edited) }, 'script run resumed');
    this.ctx.bus.emit('run', { runId: run.id, status: 'running' });
    this.execute(run.id, 'resume');
    return (await this.view(run.id))!;
  }

  /** Cancels the run: no call starts, its running agents are cancelled. */
  async cancel(runId: string, reason: string): Promise<void> {
    const l = this.live.get(runId);
    await this.finish(runId, 'cancelled', reason);
    await this.endAgents(runId, l, `run ${runId} cancelled: ${reason}`);
    await l?.done;
  }

  /** The run has ended (cancelled, or failed: nothing reads its answers): no call starts, and its running agents,
   * those being spawned right now included, are cancelled. */
  private async endAgents(runId: string, l: Live | undefined, reason: string): Promise<void> {
    l?.abort.abort();
    if (l) await Promise.all(l.spawning);
    for (const c of await callsOf(this.q, runId)) {
      if (c.status !== 'running') continue;
      if (c.request_id) await this.withdraw(c.request_id, reason);
      if (c.job_id) {
        const j = await getJob(this.q, c.job_id);
        if (j && !isTerminal(j.status)) await this.jobs.cancel({ job_id: j.id, reason, cascade: true }, LEAD).catch(() => undefined);
      }
    }
  }

  /** An approve() the run no longer waits for leaves the person's floor. */
  private async withdraw(requestId: string, reason: string): Promise<void> {
    await this.requests.cancel(requestId, reason).catch((err: unknown) => this.ctx.log.warn({ err, request: requestId }, 'script run: could not withdraw an approval'));
  }

  /**
   * pause_run: while paused no new agent(), approve() or workflow() call of the run starts (each
   * waits, with a `pause` row in the log); calls already running go on. Kept in the store, so a
   * new hub keeps the run paused. Bus event `run` with status `paused`, or `running` again.
   */
  async pause(idOrPrefix: string, paused: boolean): Promise<Record<string, unknown>> {
    const run = await this.running(idOrPrefix, paused ? 'paused' : 'unpaused');
    const now = this.ctx.clock.now();
    // Only a running run, only a change: of two pauses at once one writes the log row and the event.
    if (await setPaused(this.q, run.id, paused, now)) {
      await addLog(this.q, run.id, 'pause', paused ? 'paused: no new call starts until the run is unpaused (pause_run paused:false); running calls go on' : 'unpaused: calls start again', now);
      this.ctx.log.info({ run: run.id, paused }, 'script run paused or unpaused');
      this.ctx.bus.emit('run', { runId: run.id, status: paused ? 'paused' : 'running' });
    } else if ((await scriptRun(this.q, run.id))?.status !== 'running') {
      throw new InvalidStateError(`Script run ${run.id} has ended meanwhile: only a running run can be ${paused ? 'paused' : 'unpaused'}.`);
    }
    return (await this.view(run.id))!;
  }

  /** cancel_run with `call`: cancels that agent() call's agent; the script sees the call throw AgentCancelled (code `cancelled`) and goes on. */
  async cancelCall(idOrPrefix: string, seq: number, reason: string): Promise<Record<string, unknown>> {
    const run = await this.running(idOrPrefix, 'have a call cancelled');
    const calls = await callsOf(this.q, run.id);
    const c = calls.find((x) => x.seq === seq);
    if (!c) throw new NotFoundError(`Script run ${run.id} has no call ${seq}${calls.length ? ` (its calls are 1 to ${calls.length}; get_run lists them)` : ' (it has made no call yet)'}.`);
    if (c.kind !== 'agent') throw new InvalidStateError(`Call ${seq} of run ${run.id} is a ${c.kind}() call: only an agent() call can be cancelled alone (an approval is the person's to answer; for a workflow, cancel the agent calls inside it). cancel_run without call cancels the whole run.`);
    const j = c.job_id ? await getJob(this.q, c.job_id) : undefined;
    if (c.status !== 'running' || !j || isTerminal(j.status)) throw new InvalidStateError(`Call ${seq} of run ${run.id} has already ended (${c.status}${j ? `, agent ${j.id} ${j.status}` : ''}): there is nothing to cancel.`);
    await this.jobs.cancel({ job_id: j.id, reason: `call ${seq} of run ${run.id} cancelled: ${reason}`, cascade: true }, LEAD);
    this.ctx.log.info({ run: run.id, seq, job: j.id }, 'script run: one call cancelled');
    return (await this.view(run.id))!;
  }

  /** A running script run, for an action on it; else a clear error. */
  private async running(idOrPrefix: string, what: string): Promise<{ id: string }> {
    const run = await findScriptRun(this.q, idOrPrefix);
    if (!run) throw new NotFoundError(`No script run ${JSON.stringify(idOrPrefix)} (only script runs, from run_script, can be ${what}); list_runs shows the runs.`);
    if (run.status !== 'running') throw new InvalidStateError(`Script run ${run.id} is ${run.status}: only a running run can be ${what}.`);
    return run;
  }

  /** The hub stops: runs stay `running` and the next hub continues them. */
  async close(): Promise<void> {
    for (const l of this.live.values()) { l.stopping = true; l.abort.abort(); }
    await Promise.all([...this.live.values()].map((l) => l.done));
  }

  /** A script run as get_run shows it (undefined: no script run has that id or unique prefix). */
  view(idOrPrefix: string): Promise<Record<string, unknown> | undefined> {
    return scriptRunView(this.q, idOrPrefix);
  }

  hasWork(): boolean {
    return this.live.size > 0;
  }

  /** Runs the run's script in this hub (live at once: a cancel or a close meanwhile finds it); its row is read first. */
  private execute(runId: string, mode: 'recover' | 'resume'): void {
    const abort = new AbortController();
    const deps = { ctx: this.ctx, jobs: this.jobs, requests: this.requests, limits: this.limits, savedPath: (n: string) => this.savedPath(n), bundled: this.bundled };
    const spawning = new Set<Promise<unknown>>();
    const live: Live = { abort, stopping: false, done: Promise.resolve(), spawning };
    live.done = (async () => {
      const row = await scriptRun(this.q, runId);
      if (!row) throw new Error(`internal: script run ${runId} has no row`);
      const ex = new ScriptExecution(deps, runId, JSON.parse(row.rules_json) as ScriptRules, mode, abort.signal, spawning);
      return ex.run(row.content);
    })().then(async (o) => {
      if (live.stopping) return;
      if (o.status === 'returned') await this.finish(runId, 'succeeded', null, o.value);
      else if (o.error.name !== 'Cancelled') {
        await this.finish(runId, 'failed', `${o.error.name}${o.error.line ? ` (line ${o.error.line})` : ''}: ${o.error.message}`);
        return this.endAgents(runId, live, `run ${runId} failed: ${o.error.name}`);
      }
    }, async (err: unknown) => {
      this.ctx.log.error({ err, run: runId }, 'script run crashed in the hub');
      if (live.stopping) return;
      await this.finish(runId, 'failed', `the hub could not run the script: ${(err as Error).message}`);
      return this.endAgents(runId, live, `run ${runId} failed in the hub`);
    }).catch((err: unknown) => { this.ctx.log.error({ err, run: runId }, 'script run: its end could not be recorded'); })
      .finally(() => { this.live.delete(runId); });
    this.live.set(runId, live);
  }

  /** The run ends, once: only a running run (a cancel and the script's own end at once: the first wins). */
  private async finish(runId: string, status: 'succeeded' | 'failed' | 'cancelled', note: string | null, result?: Json): Promise<void> {
    const now = this.ctx.clock.now();
    if (!(await endScriptRun(this.q, runId, status, result === undefined ? note : JSON.stringify({ result }), now))) return;
    this.ctx.log.info({ run: runId, status }, 'script run ended');
    this.ctx.bus.emit('run', { runId, status });
  }

  private savedPath(name: string): string {
    return join(settingsDirOf(this.ctx.config), 'scripts', `${name}.js`);
  }

  private saved(name: string): string {
    const file = this.savedPath(name);
    if (!existsSync(file)) throw new InvalidInputError(`no saved script ${JSON.stringify(name)}: ${file} does not exist. Save it there, or pass the source as script.`);
    return readFileSync(file, 'utf8');
  }
}

/** `export const meta = { name: '…' }`: the name, when it is a plain string literal. */
function metaName(source: string): string | undefined {
  const m = /export\s+const\s+meta\s*=\s*\{[\s\S]*?\bname\s*:\s*(['"])([^'"\n]{1,200})\1/.exec(source);
  return m?.[2];
}
