// Scripted runs (issue 28, docs/scripts.md): a lead's script runs in the sandbox (./sandbox.ts)
// inside the hub, and this service answers its calls. An agent() call is a job of the hub's engine
// (the house cap, the start gate, locks and confinement, the policy: everything a spawn_agent job
// has), created in the same transaction as its journal row (./journal.ts); approve() is a
// person-only request. A new hub continues every run still `running`: the script runs again from
// the top and the journal answers what was already done (src/domain/scriptReplay.ts), running
// jobs are waited on again, the rest runs live.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { RequestService } from '../approvals/service.js';
import type { JobRow } from '../store/jobs.js';
import { settingsDirOf } from '../config.js';
import { isTerminal } from '../domain/job.js';
import { canonicalJson, ScriptReplay, type Divergence, type JournaledCall, type ScriptCallKind } from '../domain/scriptReplay.js';
import { InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { SCRIPT_NAME, ScriptAgentOptions, type RunScriptInput } from '../contract/scripts.js';
import { checkSyntax, runInSandbox, ScriptCallError, type Json, type SandboxHost, type SandboxLimits, DEFAULT_LIMITS } from './sandbox.js';
import { ScriptJournal } from './journal.js';
import { BudgetStore } from '../money/budgetStore.js';
import { findScriptRun, scriptRunView, type ScriptRules } from './view.js';

const LEAD = { role: 'lead' } as const;
const DEFAULT_CONCURRENCY = 16;
const LIMIT_CLASSES = new Set(['rate_limited']);
/** workflow() inside workflow() at most this deep (the top script is 0). */
export const MAX_WORKFLOW_DEPTH = 4;

interface Live { abort: AbortController; done: Promise<void>; stopping: boolean }

/** One execution of a run's script (a start, a new hub's recover, a resume). */
interface Exec {
  runId: string;
  rules: ScriptRules;
  mode: 'recover' | 'resume';
  replay: ScriptReplay;
  /** The journal the replay was built from. */
  journal: JournaledCall[];
  /** Seqs of journaled calls this execution answered from or attached to. */
  used: Set<number>;
  /** Calls the script asked so far, and how many of them the journal answered. */
  asked: number;
  answered: number;
  /** A resume said where it diverged (or that nothing did). */
  noted: boolean;
  slots: Slots;
  /** With a run budget, agents are spawned one at a time in the order the script asked, so they reserve in that order. */
  spawning: Promise<void>;
  /** How many times each workflow() call (scope and arguments) was asked: the n in its nested calls' scope. */
  workflows: Map<string, number>;
  signal: AbortSignal;
}

/** A level of the script: the top (depth 0, scope ''), or a nested workflow() (its calls' scope). */
interface Frame { scope: string; phase: string | null; depth: number }

export class ScriptRuns {
  readonly journal: ScriptJournal;
  private readonly budgets: BudgetStore;
  private readonly live = new Map<string, Live>();

  constructor(
    private readonly ctx: HubContext,
    private readonly jobs: Pick<JobService, 'spawn' | 'cancel' | 'resume'>,
    private readonly requests: Pick<RequestService, 'approval'>,
    private readonly limits: SandboxLimits = DEFAULT_LIMITS,
  ) {
    this.journal = new ScriptJournal(ctx.db);
    this.budgets = new BudgetStore(ctx.db);
  }

  /** Checks the script completely, stores the run with its script, and starts it. Nothing is written for a bad script. */
  async start(i: RunScriptInput): Promise<{ run_id: string; status: 'running'; title: string }> {
    if ((i.script === undefined) === (i.name === undefined)) throw new InvalidInputError('give script (the JavaScript source) or name (a saved script in .overseer/scripts/<name>.js), exactly one of them');
    const source = i.script ?? this.saved(i.name!);
    const problem = await checkSyntax(source);
    if (problem) throw new InvalidInputError(`The script does not parse${whereOf(problem)}: ${problem.name}: ${problem.message}. Nothing was started; fix it and run it again.`);
    const title = i.title ?? metaName(source) ?? i.name ?? 'script';
    const rules: ScriptRules = { name: i.name ?? null, args: i.args as Json | undefined, budget_usd: i.budget_usd ?? null, max_concurrent: i.max_concurrent ?? DEFAULT_CONCURRENCY };
    const id = `r-${this.ctx.ids.token().replace(/[^a-z0-9]/gi, '').slice(0, 8).toLowerCase()}`;
    const now = this.ctx.clock.now();
    this.ctx.db.prepare(`INSERT INTO runs (id, title, file, content, format, rules_json, status, note, deadline_at, created_at, updated_at, ended_at, kind)
      VALUES (?, ?, ?, ?, 'js', ?, 'running', NULL, NULL, ?, ?, NULL, 'script')`).run(id, title, i.name ? this.savedPath(i.name) : null, source, JSON.stringify(rules), now, now);
    this.execute(id, 'recover');
    return { run_id: id, status: 'running', title };
  }

  /** Continues every script run a previous hub left running. */
  async resumeAll(): Promise<void> {
    const rows = this.ctx.db.prepare("SELECT id, rules_json FROM runs WHERE kind = 'script' AND status = 'running'").all() as { id: string; rules_json: string }[];
    for (const r of rows) {
      // The agents the stopped hub left interrupted go on in their sessions; the script waits for them again.
      for (const c of this.journal.calls(r.id)) {
        const j = c.status === 'running' && c.job_id ? this.ctx.store.get(c.job_id) : undefined;
        if (j?.status !== 'interrupted') continue;
        try {
          await this.jobs.resume({ job_id: j.id, message: this.ctx.prompts.get('run-hub-restart').body.trim() }, LEAD);
        } catch (err) {
          this.ctx.log.warn({ run: r.id, job: j.id, err: (err as Error).message }, 'script run: could not continue an interrupted agent');
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
    const run = findScriptRun(this.ctx.db, idOrPrefix);
    if (!run) throw new NotFoundError(`No script run ${JSON.stringify(idOrPrefix)}: list_runs shows the runs.`);
    if (run.status === 'running' || this.live.has(run.id)) throw new InvalidStateError(`Script run ${run.id} is still running: resume_run continues a run that failed or was cancelled. Wait for it (get_run with wait_s), or cancel_run it first.`);
    if (run.status === 'succeeded') throw new InvalidStateError(`Script run ${run.id} succeeded: there is nothing to resume. Start it again with run_script to run it anew.`);
    const rules = JSON.parse(run.rules_json) as ScriptRules;
    const row = this.ctx.db.prepare('SELECT content FROM runs WHERE id = ?').get(run.id) as { content: string };
    const source = rules.name ? this.saved(rules.name) : row.content;
    const problem = await checkSyntax(source);
    if (problem) throw new InvalidInputError(`${rules.name ? this.savedPath(rules.name) : 'The stored script'} does not parse${whereOf(problem)}: ${problem.name}: ${problem.message}. The run was not resumed; fix it and call resume_run again.`);
    // Agents that ended after the run did: their outcome goes into the journal first, so that the resume can reuse it.
    for (const c of this.journal.calls(run.id)) {
      const j = c.status === 'running' && c.job_id ? this.ctx.store.get(c.job_id) : undefined;
      if (!j || !isTerminal(j.status)) continue;
      const o = jobOutcome(j, JSON.parse(c.args_json) as Json[]);
      this.journal.end(run.id, c.seq, { status: o.ok ? 'done' : 'failed', outcome: o.ok ? o.value : o.error, limited: !o.ok && LIMIT_CLASSES.has(j.failure_class ?? ''), at: this.ctx.clock.now() });
    }
    const now = this.ctx.clock.now();
    this.ctx.db.prepare("UPDATE runs SET content = ?, rules_json = ?, status = 'running', note = NULL, updated_at = ?, ended_at = NULL WHERE id = ?")
      .run(source, JSON.stringify({ ...rules, replaying: true } satisfies ScriptRules), now, run.id);
    const edited = source !== row.content ? `; ${this.savedPath(rules.name!)} changed since the last run and was read again` : '';
    this.journal.log(run.id, 'replay', `resumed after it ${run.status}${edited}`, now);
    this.ctx.log.info({ run: run.id, edited: Boolean(edited) }, 'script run resumed');
    this.ctx.bus.emit('run', { runId: run.id, status: 'running' });
    this.execute(run.id, 'resume');
    return this.view(run.id)!;
  }

  /** Cancels the run: no call starts, its running agents are cancelled. */
  async cancel(runId: string, reason: string): Promise<void> {
    const l = this.live.get(runId);
    this.finish(runId, 'cancelled', reason);
    l?.abort.abort();
    for (const c of this.journal.calls(runId)) {
      if (c.status === 'running' && c.job_id) {
        const j = this.ctx.store.get(c.job_id);
        if (j && !isTerminal(j.status)) await this.jobs.cancel({ job_id: j.id, reason: `run ${runId} cancelled: ${reason}`, cascade: true }, LEAD).catch(() => undefined);
      }
    }
    await l?.done;
  }

  /**
   * pause_run: while paused no new agent(), approve() or workflow() call of the run starts (each
   * waits, with a `pause` row in the log); calls already running go on. Kept in the store, so a
   * new hub keeps the run paused. Bus event `run` with status `paused`, or `running` again.
   */
  pause(idOrPrefix: string, paused: boolean): Record<string, unknown> {
    const run = this.running(idOrPrefix, paused ? 'paused' : 'unpaused');
    const now = this.ctx.clock.now();
    const changed = this.ctx.db.prepare('UPDATE runs SET paused = ?, updated_at = ? WHERE id = ? AND paused <> ?').run(paused ? 1 : 0, now, run.id, paused ? 1 : 0).changes;
    if (changed) {
      this.journal.log(run.id, 'pause', paused ? 'paused: no new call starts until the run is unpaused (pause_run paused:false); running calls go on' : 'unpaused: calls start again', now);
      this.ctx.log.info({ run: run.id, paused }, 'script run paused or unpaused');
      this.ctx.bus.emit('run', { runId: run.id, status: paused ? 'paused' : 'running' });
    }
    return this.view(run.id)!;
  }

  /** cancel_run with `call`: cancels that agent() call's agent; the script sees the call throw AgentCancelled (code `cancelled`) and goes on. */
  async cancelCall(idOrPrefix: string, seq: number, reason: string): Promise<Record<string, unknown>> {
    const run = this.running(idOrPrefix, 'have a call cancelled');
    const calls = this.journal.calls(run.id);
    const c = calls.find((x) => x.seq === seq);
    if (!c) throw new NotFoundError(`Script run ${run.id} has no call ${seq}${calls.length ? ` (its calls are 1 to ${calls.length}; get_run lists them)` : ' (it has made no call yet)'}.`);
    if (c.kind !== 'agent') throw new InvalidStateError(`Call ${seq} of run ${run.id} is a ${c.kind}() call: only an agent() call can be cancelled alone (an approval is the person's to answer; for a workflow, cancel the agent calls inside it). cancel_run without call cancels the whole run.`);
    const j = c.job_id ? this.ctx.store.get(c.job_id) : undefined;
    if (c.status !== 'running' || !j || isTerminal(j.status)) throw new InvalidStateError(`Call ${seq} of run ${run.id} has already ended (${c.status}${j ? `, agent ${j.id} ${j.status}` : ''}): there is nothing to cancel.`);
    await this.jobs.cancel({ job_id: j.id, reason: `call ${seq} of run ${run.id} cancelled: ${reason}`, cascade: true }, LEAD);
    this.ctx.log.info({ run: run.id, seq, job: j.id }, 'script run: one call cancelled');
    return this.view(run.id)!;
  }

  /** A running script run, for an action on it; else a clear error. */
  private running(idOrPrefix: string, what: string): { id: string } {
    const run = findScriptRun(this.ctx.db, idOrPrefix);
    if (!run) throw new NotFoundError(`No script run ${JSON.stringify(idOrPrefix)} (only script runs, from run_script, can be ${what}); list_runs shows the runs.`);
    if (run.status !== 'running') throw new InvalidStateError(`Script run ${run.id} is ${run.status}: only a running run can be ${what}.`);
    return run;
  }

  /** Before a call starts live: wait while the run is paused (cancelling the run ends the wait). */
  private async whilePaused(ex: Exec, kind: ScriptCallKind, args: Json[]): Promise<void> {
    const paused = (): boolean => (this.ctx.db.prepare('SELECT paused FROM runs WHERE id = ?').get(ex.runId) as { paused: number } | undefined)?.paused === 1;
    if (!paused()) return;
    this.journal.log(ex.runId, 'pause', `${kind}(${callStart(args)}) waits: the run is paused`, this.ctx.clock.now());
    await new Promise<void>((resolve, reject) => {
      const done = (f: () => void): void => { off(); ex.signal.removeEventListener('abort', onAbort); f(); };
      const onAbort = (): void => done(() => reject(new ScriptCallError('Cancelled', 'the run was cancelled')));
      const off = this.ctx.bus.on('run', (ev) => { if (ev.runId === ex.runId && !paused()) done(resolve); });
      if (ex.signal.aborted) onAbort();
      else ex.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The hub stops: runs stay `running` and the next hub continues them. */
  async close(): Promise<void> {
    for (const l of this.live.values()) { l.stopping = true; l.abort.abort(); }
    await Promise.all([...this.live.values()].map((l) => l.done));
  }

  /** A script run as get_run shows it (undefined: no script run has that id or unique prefix). */
  view(idOrPrefix: string): Record<string, unknown> | undefined {
    return scriptRunView(this.ctx.db, (id) => this.ctx.store.get(id), idOrPrefix);
  }

  hasWork(): boolean {
    return this.live.size > 0;
  }

  private execute(runId: string, mode: 'recover' | 'resume'): void {
    const row = this.ctx.db.prepare('SELECT content, rules_json FROM runs WHERE id = ?').get(runId) as { content: string; rules_json: string };
    const rules = JSON.parse(row.rules_json) as ScriptRules;
    const abort = new AbortController();
    const live: Live = { abort, stopping: false, done: Promise.resolve() };
    const journal = this.journal.replayable(runId);
    const ex: Exec = {
      runId, rules, mode, journal, replay: new ScriptReplay(journal, mode), used: new Set(), asked: 0, answered: 0,
      noted: mode !== 'resume', slots: new Slots(rules.max_concurrent), spawning: Promise.resolve(), workflows: new Map(), signal: abort.signal,
    };
    live.done = runInSandbox({ source: row.content, args: rules.args, host: this.host(ex, { scope: '', phase: null, depth: 0 }), limits: this.limits, signal: abort.signal }).then((o) => {
      if (live.stopping) return;
      this.noteReplay(ex);
      if (o.status === 'returned') this.finish(runId, 'succeeded', null, o.value);
      else if (o.error.name !== 'Cancelled') this.finish(runId, 'failed', `${o.error.name}${o.error.line ? ` (line ${o.error.line})` : ''}: ${o.error.message}`);
    }, (err: unknown) => {
      this.ctx.log.error({ err, run: runId }, 'script run crashed in the hub');
      if (!live.stopping) this.finish(runId, 'failed', `the hub could not run the script: ${(err as Error).message}`);
    }).finally(() => { this.live.delete(runId); });
    this.live.set(runId, live);
  }

  /** What the script (or a nested workflow's script) at `frame` reaches of the hub. */
  private host(ex: Exec, frame: Frame): SandboxHost {
    return {
      call: (kind, args) => this.call(ex, frame, kind, args),
      log: (m) => { this.journal.log(ex.runId, 'log', m, this.ctx.clock.now()); },
      phase: (t) => { frame.phase = t; this.journal.log(ex.runId, 'phase', t, this.ctx.clock.now()); },
      budget: () => this.budget(ex),
    };
  }

  /** One call of the script: answered from the journal, attached to what still carries it, or run live. */
  private async call(ex: Exec, frame: Frame, kind: ScriptCallKind, args: Json[]): Promise<Json> {
    const key = canonicalJson(args);
    const a = ex.replay.next(kind, key, frame.scope);
    ex.asked++;
    let nth = 0;
    if (kind === 'workflow') {
      nth = ex.workflows.get(`${frame.scope}\u0000${key}`) ?? 0;
      ex.workflows.set(`${frame.scope}\u0000${key}`, nth + 1);
    }
    if (a.from === 'journal') {
      ex.used.add(a.entry.seq);
      ex.answered++;
      return outcome(a.entry.status, a.entry.outcome);
    }
    if (a.from === 'job') {
      // An agent still running, or a workflow() call to run again (a new hub's, or any in a
      // resume: its own calls answer from the journal where its maybe edited script asks the same).
      ex.used.add(a.entry.seq);
      if (a.entry.jobId) return this.settle(ex.runId, a.entry.seq, a.entry.jobId, ex.signal, args);
      return this.workflow(ex, frame, args, key, nth, a.entry.seq);
    }
    if (a.diverged) this.noteReplay(ex, a.diverged, ex.asked, args);
    if (kind === 'agent') return this.agent(ex, frame, args, key);
    if (kind === 'approve') return this.approve(ex, frame, args, key);
    return this.workflow(ex, frame, args, key, nth);
  }

  /**
   * workflow(name, args): the saved script .overseer/scripts/<name>.js runs nested in this run
   * (its own sandbox; the same journal, budget, slots and pause), and its return value is the
   * call's. Its calls are journaled under a scope — the caller's scope, then
   * `/<name>:<hash of the call's arguments>#<n-th such call>` — so that they are known again on
   * replay whatever the seqs. `again`: the journaled workflow call this one continues (a new hub
   * runs the stored source; a resume reads the file again).
   */
  private async workflow(ex: Exec, frame: Frame, args: Json[], key: string, nth: number, again?: number): Promise<Json> {
    const [name, wargs] = args;
    if (typeof name !== 'string' || !SCRIPT_NAME.test(name)) throw new ScriptCallError('TypeError', 'workflow(name, args): name is a saved script\'s file name without .js, e.g. workflow("review", {…}) runs .overseer/scripts/review.js');
    const depth = frame.depth + 1;
    if (depth > MAX_WORKFLOW_DEPTH) throw new ScriptCallError('WorkflowDepth', `workflow("${name}"): workflows nest at most ${MAX_WORKFLOW_DEPTH} deep; this one would be ${depth} deep (does a workflow call itself without an end?)`, 'workflow_depth');
    const stored = again !== undefined && ex.mode === 'recover' ? this.journal.calls(ex.runId).find((c) => c.seq === again)?.source : undefined;
    const source = stored ?? await this.nestedSource(name);
    if (again === undefined) await this.whilePaused(ex, 'workflow', args);
    const seq = again ?? this.journal.begin({ run_id: ex.runId, kind: 'workflow', args_json: key, scope: frame.scope, label: `workflow ${name}`, phase: frame.phase, started_at: this.ctx.clock.now(), source });
    if (again !== undefined && !stored) this.journal.reopen(ex.runId, seq, source);
    const inner: Frame = { scope: `${frame.scope}/${name}:${createHash('sha256').update(key).digest('hex').slice(0, 12)}#${nth}`, phase: frame.phase, depth };
    const o = await runInSandbox({ source, args: wargs, host: this.host(ex, inner), limits: this.limits, signal: ex.signal });
    if (o.status === 'returned') {
      this.journal.end(ex.runId, seq, { status: 'done', outcome: o.value ?? null, at: this.ctx.clock.now() });
      return o.value ?? null;
    }
    if (ex.signal.aborted) throw new ScriptCallError('Cancelled', 'the run was cancelled');
    const error = { name: o.error.name, message: `workflow("${name}")${o.error.line ? ` line ${o.error.line}` : ''}: ${o.error.message}`, ...(o.error.code ? { code: o.error.code } : {}) };
    this.journal.end(ex.runId, seq, { status: 'failed', outcome: error, at: this.ctx.clock.now() });
    throw new ScriptCallError(error.name, error.message, error.code);
  }

  /** A saved script for workflow(), read now and checked: a missing or broken one is the caller's catchable error. */
  private async nestedSource(name: string): Promise<string> {
    const file = this.savedPath(name);
    if (!existsSync(file)) throw new ScriptCallError('WorkflowNotFound', `workflow("${name}"): there is no saved script ${file}; save it there, or call one that exists`, 'not_found');
    const source = readFileSync(file, 'utf8');
    const p = await checkSyntax(source);
    if (p) throw new ScriptCallError('SyntaxError', `workflow("${name}"): ${file} does not parse${whereOf(p)}: ${p.message}; nothing of it ran`, 'syntax_error');
    return source;
  }

  /**
   * A resume's `replay` row, once: how many calls the journal answered and where it diverged
   * (or that nothing did). From here on the journal's calls this execution did not use are
   * history (replaced), never answers, also for a new hub that continues the run.
   */
  private noteReplay(ex: Exec, d?: Divergence, at?: number, args?: Json[]): void {
    if (ex.noted) return;
    ex.noted = true;
    const now = this.ctx.clock.now();
    this.journal.replace(ex.runId, ex.journal.filter((e) => !ex.used.has(e.seq)).map((e) => e.seq));
    const text = d
      ? `resume: ${ex.answered} call(s) answered from the journal; diverged at call ${at} of the script, ${d.kind}(${callStart(args ?? [])})`
        + (d.reason === 'failed' ? `, which failed last time (journal call ${d.seq})` : ', new or edited since the last run') + ': it and every call after it run live'
      : `resume: ${ex.answered} call(s) answered from the journal; nothing diverged`;
    this.journal.log(ex.runId, 'replay', text, now);
    const row = this.ctx.db.prepare('SELECT rules_json FROM runs WHERE id = ?').get(ex.runId) as { rules_json: string };
    const { replaying: _, ...rules } = JSON.parse(row.rules_json) as ScriptRules;
    this.ctx.db.prepare('UPDATE runs SET rules_json = ? WHERE id = ?').run(JSON.stringify(rules), ex.runId);
  }

  private async agent(ex: Exec, frame: Frame, args: Json[], key: string): Promise<Json> {
    const { runId, signal } = ex;
    const [prompt, rawOpts] = args;
    if (typeof prompt !== 'string' || !prompt.trim()) throw new ScriptCallError('TypeError', 'agent(prompt, opts): prompt must be a non-empty string');
    const parsed = ScriptAgentOptions.safeParse(rawOpts ?? {});
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      throw new ScriptCallError('TypeError', `agent() option ${i.path.join('.') || '(opts)'}: ${i.message}`);
    }
    const o = parsed.data;
    const release = await ex.slots.take(signal);
    let spawned = (): void => undefined;
    try {
      await this.whilePaused(ex, 'agent', args);
      if (ex.rules.budget_usd !== null) {
        const before = ex.spawning;
        ex.spawning = new Promise((resolve) => { spawned = resolve; });
        await before;
      }
      let seq = 0;
      const r = await this.jobs.spawn({
        prompt, title: o.label ?? prompt.split('\n')[0]!.slice(0, 80), provider: o.provider, model: o.model, worktree: o.worktree, cwd: o.cwd, checks: o.checks,
        timeout_s: o.timeout_s, max_turns: o.max_turns, budget_usd: o.budget_usd, depends_on: [], priority: 0, labels: [`run:${runId}`],
      }, LEAD, {
        ...(o.schema ? { jsonSchema: JSON.stringify(o.schema) } : {}),
        within: (jobId, now) => {
          seq = this.journal.begin({ run_id: runId, kind: 'agent', args_json: key, scope: frame.scope, label: o.label ?? null, phase: o.phase ?? frame.phase, started_at: now });
          this.journal.carriedBy(runId, seq, { job_id: jobId });
        },
      }).catch((e: unknown) => { throw new ScriptCallError(codeOf(e) === 'budget_exceeded' ? 'BudgetExceeded' : 'SpawnRefused', (e as Error).message, codeOf(e)); })
        .finally(spawned);
      return await this.settle(runId, seq, r.job_id, signal, args);
    } finally {
      spawned();
      release();
    }
  }

  private async approve(ex: Exec, frame: Frame, args: Json[], key: string): Promise<Json> {
    const { runId, signal } = ex;
    const [summary, plan] = args;
    if (typeof summary !== 'string' || !summary.trim()) throw new ScriptCallError('TypeError', 'approve(summary, plan): summary must be a non-empty string');
    await this.whilePaused(ex, 'approve', args);
    const seq = this.journal.begin({ run_id: runId, kind: 'approve', args_json: key, scope: frame.scope, label: summary.slice(0, 80), phase: frame.phase, started_at: this.ctx.clock.now() });
    const r = await this.requests.approval(LEAD, { summary, ...(plan && typeof plan === 'object' ? { plan: plan as never } : {}), timeout_s: 24 * 3600, who: 'person' }, signal);
    this.journal.carriedBy(runId, seq, { request_id: r.request_id });
    const approved = r.decision === 'approved';
    this.journal.end(runId, seq, { status: 'done', outcome: approved, at: this.ctx.clock.now() });
    return approved;
  }

  /** Waits until the call's job has ended for good, journals its outcome and gives it to the script. */
  private settle(runId: string, seq: number, jobId: string, signal: AbortSignal, args: Json[]): Promise<Json> {
    return new Promise<Json>((resolve, reject) => {
      const check = (): boolean => {
        const j = this.ctx.store.get(jobId);
        if (!j || !isTerminal(j.status)) return false;
        off();
        const o = jobOutcome(j, args);
        this.journal.end(runId, seq, { status: o.ok ? 'done' : 'failed', outcome: o.ok ? o.value : o.error, limited: !o.ok && LIMIT_CLASSES.has(j.failure_class ?? ''), at: this.ctx.clock.now() });
        if (o.ok) resolve(o.value);
        else reject(new ScriptCallError(o.error.name, o.error.message, o.error.code));
        return true;
      };
      const off = this.ctx.bus.on('job', (ev) => { if (ev.jobId === jobId) check(); });
      signal.addEventListener('abort', () => off(), { once: true });
      check();
    });
  }

  /** `budget` in the script: the run's budget_usd, what its agents (and what they spawned) spent, and what running ones hold reserved. */
  private budget(ex: Exec): { total: number | null; spent: number; reserved: number } {
    const u = this.budgets.use({ kind: 'run', key: ex.runId });
    return { total: ex.rules.budget_usd, spent: round6(u.jobsUsd + u.hubUsd), reserved: round6(u.reservedUsd) };
  }

  private finish(runId: string, status: 'succeeded' | 'failed' | 'cancelled', note: string | null, result?: Json): void {
    const now = this.ctx.clock.now();
    const changed = this.ctx.db.prepare("UPDATE runs SET status = ?, note = ?, updated_at = ?, ended_at = ? WHERE id = ? AND status = 'running'")
      .run(status, result === undefined ? note : JSON.stringify({ result }), now, now, runId).changes;
    if (!changed) return;
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

const round6 = (v: number): number => Math.round(v * 1e6) / 1e6;

function whereOf(p: { line?: number; column?: number }): string {
  return p.line ? ` at line ${p.line}${p.column ? `, column ${p.column}` : ''}` : '';
}

/** A call named for the log: the start of its first argument (the prompt, the summary, the workflow's name). */
function callStart(args: Json[]): string {
  const first = typeof args[0] === 'string' ? args[0] : JSON.stringify(args[0] ?? null);
  return JSON.stringify(first.length > 60 ? `${first.slice(0, 60)}…` : first);
}

/** agent()'s answer from its job: the final text, or with a schema the structured object. */
function jobOutcome(j: JobRow, args: Json[]): { ok: true; value: Json } | { ok: false; error: { name: string; message: string; code?: string } } {
  if (j.status === 'succeeded') {
    const wantsObject = typeof args[1] === 'object' && args[1] !== null && 'schema' in (args[1] as object);
    if (wantsObject && j.structured_json) return { ok: true, value: JSON.parse(j.structured_json) as Json };
    return { ok: true, value: j.result ?? '' };
  }
  if (j.status === 'cancelled') return { ok: false, error: { name: 'AgentCancelled', message: `agent ${j.id} cancelled: ${j.error ?? 'no reason given'}`, code: 'cancelled' } };
  return { ok: false, error: { name: 'AgentFailed', message: `agent ${j.id} ${j.status}: ${j.error ?? j.failure_class ?? 'no reason given'}`, code: j.failure_class ?? j.status } };
}

function outcome(status: string, json: string | null | undefined): Json {
  const v = json ? (JSON.parse(json) as Json) : null;
  if (status === 'done') return v;
  const e = (v ?? {}) as { name?: string; message?: string; code?: string };
  throw new ScriptCallError(e.name ?? 'Error', e.message ?? 'the call failed', e.code);
}

function codeOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown }).code;
  return typeof c === 'string' ? c : undefined;
}

/** `export const meta = { name: '…' }`: the name, when it is a plain string literal. */
function metaName(source: string): string | undefined {
  const m = /export\s+const\s+meta\s*=\s*\{[\s\S]*?\bname\s*:\s*(['"])([^'"\n]{1,200})\1/.exec(source);
  return m?.[2];
}

/** At most `n` calls of a run at once; the rest wait in order. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly n: number) {}
  async take(signal: AbortSignal): Promise<() => void> {
    if (this.used >= this.n) await new Promise<void>((resolve, reject) => {
      this.waiting.push(resolve);
      signal.addEventListener('abort', () => reject(new ScriptCallError('Cancelled', 'the run was cancelled')), { once: true });
    });
    this.used++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      this.waiting.shift()?.();
    };
  }
}

