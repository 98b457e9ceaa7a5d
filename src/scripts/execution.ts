// One execution of a script run's script (src/scripts/runs.ts starts it: a new run, a new hub's
// recover, a resume): the sandbox's host, and the answer to every call the script makes. A call
// is looked up in the journal first (src/domain/scriptReplay.ts): answered from it, attached to
// what still carries it (an agent's job, a workflow() call's nested script), or run live — an
// agent() is a job of the hub's engine created in the same transaction as its journal row, an
// approve() a person-only request, a workflow() a saved script run nested in its own sandbox.
// Live calls wait while the run is paused and, with a run budget, spawn in the order asked.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { RequestService } from '../approvals/service.js';
import type { JobRow } from '../store/jobs.js';
import { useOf } from '../store/sql/budgets.js';
import type { Q } from '../store/sql/tx.js';
import { getJob } from '../store/sql/jobs.js';
import { addLog, beginCall, callsOf, endCall, isPaused, logOf, reopenCall, replaceCalls, rulesOf, setRules } from '../store/sql/scripts.js';
import { waitUntil } from '../services/wait.js';
import { isTerminal } from '../domain/job.js';
import { canonicalJson, ScriptReplay, type Divergence, type JournaledCall, type ScriptCallKind } from '../domain/scriptReplay.js';
import { SCRIPT_NAME, ScriptAgentOptions } from '../contract/scripts.js';
import { runInSandbox, ScriptCallError, type Json, type SandboxHost, type SandboxLimits, type SandboxOutcome } from './sandbox.js';
import { replayable } from './journal.js';
import { checkScript } from './check.js';
import type { BundledScripts } from './bundled.js';
import type { ScriptRules } from './view.js';

const LEAD = { role: 'lead' } as const;
/** Failure classes that are not the call's fault: a resume runs such a call again without ending reuse. */
export const LIMIT_CLASSES = new Set(['rate_limited']);
/** workflow() inside workflow() at most this deep (the top script is 0). */
export const MAX_WORKFLOW_DEPTH = 4;

/** What an execution uses of the hub (ScriptRuns passes its own). */
export interface ExecutionDeps {
  ctx: HubContext;
  jobs: Pick<JobService, 'spawn' | 'cancel' | 'resume'>;
  requests: Pick<RequestService, 'openForRun' | 'approved' | 'cancel'>;
  limits: SandboxLimits;
  /** .overseer/scripts/<name>.js */
  savedPath: (name: string) => string;
  /** The hub's bundled scripts, which answer their own privileged calls (src/scripts/bundled.ts). */
  bundled: BundledScripts;
}

/** A level of the script: the top (depth 0, scope ''), or a nested workflow() (its calls' scope). */
interface Frame { scope: string; phase: string | null; depth: number }

export class ScriptExecution {
  private replay!: ScriptReplay;
  /** The journal the replay was built from. */
  private replayed: JournaledCall[] = [];
  /** Seqs of journaled calls this execution answered from or attached to. */
  private readonly used = new Set<number>();
  /** Calls the script asked so far, and how many of them the journal answered. */
  private asked = 0;
  private answered = 0;
  /** A resume said where it diverged (or that nothing did). */
  private noted: boolean;
  private readonly slots: Slots;
  /** With a run budget, agents are spawned one at a time in the order the script asked, so they reserve in that order. */
  private spawning: Promise<void> = Promise.resolve();
  /** How many times each workflow() call (scope and arguments) was asked: the n in its nested calls' scope. */
  private readonly workflows = new Map<string, number>();
  /** The script's log lines an earlier execution wrote, and how many of them this one repeated so far (they are not written twice). */
  private earlierLog: { kind: string; text: string }[] = [];
  private echoed = 0;
  /** The script's log lines, written one after the other (log() and phase() do not wait for them). */
  private logged: Promise<void> = Promise.resolve();
  private readonly q: Q;

  constructor(
    private readonly d: ExecutionDeps,
    readonly runId: string,
    private readonly rules: ScriptRules,
    readonly mode: 'recover' | 'resume',
    private readonly signal: AbortSignal,
    /** agent() calls between their spawn and their job in the journal: a run that ends waits for them before it cancels its agents. */
    readonly inFlight = new Set<Promise<unknown>>(),
  ) {
    this.q = d.ctx.sql.db;
    this.noted = mode !== 'resume';
    this.slots = new Slots(rules.max_concurrent);
  }

  /** Runs the script to its end (then a resume's replay row is written if it was not yet). The journal is read first. */
  async run(source: string): Promise<SandboxOutcome> {
    this.replayed = await replayable(this.q, this.runId);
    this.replay = new ScriptReplay(this.replayed, this.mode);
    this.earlierLog = (await logOf(this.q, this.runId, Number.MAX_SAFE_INTEGER)).filter((l) => l.kind === 'log' || l.kind === 'phase');
    const o = await runInSandbox({ source, args: this.rules.args, host: this.host({ scope: '', phase: null, depth: 0 }), limits: this.d.limits, signal: this.signal, privileged: this.rules.bundled !== undefined });
    if (!this.signal.aborted) await this.noteReplay();
    await this.logged;
    return o;
  }

  /** What the script (or a nested workflow's script) at `frame` reaches of the hub. */
  private host(frame: Frame): SandboxHost {
    return {
      call: (kind, args) => this.call(frame, kind as ScriptCallKind, args),
      log: (m) => { this.say('log', m); },
      phase: (t) => { frame.phase = t; this.say('phase', t); },
      budget: () => this.budget(),
    };
  }

  /** A log() or phase() line. The script runs again from the top after a restart or a resume: the lines an earlier execution wrote are not written twice, up to the first that differs. */
  private say(kind: 'log' | 'phase', text: string): void {
    const e = this.earlierLog[this.echoed];
    if (e?.kind === kind && e.text === text) { this.echoed++; return; }
    this.echoed = this.earlierLog.length;
    this.log(kind, text);
  }

  /** A line of the run's log, after the lines before it (their order is their number). */
  private log(kind: 'log' | 'phase' | 'replay' | 'pause', text: string): Promise<void> {
    const at = this.d.ctx.clock.now();
    this.logged = this.logged.then(() => addLog(this.q, this.runId, kind, text, at))
      .catch((err: unknown) => this.d.ctx.log.error({ err, run: this.runId }, 'script run: a log line could not be written'));
    return this.logged;
  }

  /** One call of the script: answered from the journal, attached to what still carries it, or run live. */
  private async call(frame: Frame, kind: ScriptCallKind, args: Json[]): Promise<Json> {
    const key = canonicalJson(args);
    const a = this.replay.next(kind, key, frame.scope);
    this.asked++;
    let nth = 0;
    if (kind === 'workflow') {
      nth = this.workflows.get(`${frame.scope}\u0000${key}`) ?? 0;
      this.workflows.set(`${frame.scope}\u0000${key}`, nth + 1);
    }
    if (a.from === 'journal') {
      this.used.add(a.entry.seq);
      this.answered++;
      return outcome(a.entry.status, a.entry.outcome);
    }
    if (kind !== 'agent' && kind !== 'approve' && kind !== 'workflow') {
      // A bundled script's privileged call (wf.phase …): its owner answers it, for that script's runs only.
      if (a.from === 'live') await this.whilePaused(kind, args);
      return this.d.bundled.call(this.rules.bundled ?? null, { runId: this.runId, kind, args, key, answer: a, phase: frame.phase, signal: this.signal });
    }
    if (a.from === 'job') {
      // An agent still running, or a workflow() call to run again (a new hub's, or any in a
      // resume: its own calls answer from the journal where its maybe edited script asks the same).
      this.used.add(a.entry.seq);
      if (a.entry.kind === 'approve' && a.entry.requestId) return this.decided(a.entry.seq, a.entry.requestId);
      if (a.entry.jobId) return this.settle(this.runId, a.entry.seq, a.entry.jobId, this.signal, args);
      return this.workflow(frame, args, key, nth, a.entry.seq);
    }
    if (a.diverged) await this.noteReplay(a.diverged, this.asked, args);
    if (kind === 'agent') return this.agent(frame, args, key);
    if (kind === 'approve') return this.approve(frame, args, key);
    return this.workflow(frame, args, key, nth);
  }

  /**
   * workflow(name, args): the saved script .overseer/scripts/<name>.js runs nested in this run
   * (its own sandbox; the same journal, budget, slots and pause), and its return value is the
   * call's. Its calls are journaled under a scope — the caller's scope, then
   * `/<name>:<hash of the call's arguments>#<n-th such call>` — so that they are known again on
   * replay whatever the seqs. `again`: the journaled workflow call this one continues (a new hub
   * runs the stored source; a resume reads the file again).
   */
  private async workflow(frame: Frame, args: Json[], key: string, nth: number, again?: number): Promise<Json> {
    const [name, wargs] = args;
    if (typeof name !== 'string' || !SCRIPT_NAME.test(name)) throw new ScriptCallError('TypeError', 'workflow(name, args): name is a saved script\'s file name without .js, e.g. workflow("review", {…}) runs .overseer/scripts/review.js');
    const depth = frame.depth + 1;
    if (depth > MAX_WORKFLOW_DEPTH) throw new ScriptCallError('WorkflowDepth', `workflow("${name}"): workflows nest at most ${MAX_WORKFLOW_DEPTH} deep; this one would be ${depth} deep (does a workflow call itself without an end?)`, 'workflow_depth');
    const stored = again !== undefined && this.mode === 'recover' ? (await callsOf(this.q, this.runId)).find((c) => c.seq === again)?.source ?? undefined : undefined;
    const source = stored ?? await this.nestedSource(name);
    if (again === undefined) await this.whilePaused('workflow', args);
    const seq = again ?? await beginCall(this.q, { run_id: this.runId, kind: 'workflow', args_json: key, scope: frame.scope, label: `workflow ${name}`, phase: frame.phase, started_at: this.d.ctx.clock.now(), source });
    if (again !== undefined && !stored) await reopenCall(this.q, this.runId, seq, source);
    const inner: Frame = { scope: `${frame.scope}/${name}:${createHash('sha256').update(key).digest('hex').slice(0, 12)}#${nth}`, phase: frame.phase, depth };
    const o = await runInSandbox({ source, args: wargs, host: this.host(inner), limits: this.d.limits, signal: this.signal });
    if (o.status === 'returned') {
      await endCall(this.q, this.runId, seq, { status: 'done', outcome: o.value ?? null, at: this.d.ctx.clock.now() });
      return o.value ?? null;
    }
    if (this.signal.aborted) throw new ScriptCallError('Cancelled', 'the run was cancelled');
    const error = { name: o.error.name, message: `workflow("${name}")${o.error.line ? ` line ${o.error.line}` : ''}: ${o.error.message}`, ...(o.error.code ? { code: o.error.code } : {}) };
    await endCall(this.q, this.runId, seq, { status: 'failed', outcome: error, at: this.d.ctx.clock.now() });
    throw new ScriptCallError(error.name, error.message, error.code);
  }

  /** A saved script for workflow(), read now and checked: a missing or broken one is the caller's catchable error. */
  private async nestedSource(name: string): Promise<string> {
    const file = this.d.savedPath(name);
    if (!existsSync(file)) throw new ScriptCallError('WorkflowNotFound', `workflow("${name}"): there is no saved script ${file}; save it there, or call one that exists`, 'not_found');
    const source = readFileSync(file, 'utf8');
    const p = await checkScript(source);
    if (p) throw new ScriptCallError(p.name === 'SyntaxError' ? 'SyntaxError' : 'ScriptRefused', `workflow("${name}"): ${file} is refused${whereOf(p)}: ${p.name}: ${p.message}; nothing of it ran`, 'syntax_error');
    return source;
  }

  /**
   * A resume's `replay` row, once: how many calls the journal answered and where it diverged
   * (or that nothing did). From here on the journal's calls this execution did not use are
   * history (replaced), never answers, also for a new hub that continues the run.
   */
  private async noteReplay(d?: Divergence, at?: number, args?: Json[]): Promise<void> {
    if (this.noted) return;
    this.noted = true;
    const now = this.d.ctx.clock.now();
    const unused = this.replayed.filter((e) => !this.used.has(e.seq));
    await replaceCalls(this.q, this.runId, unused.map((e) => e.seq), now);
    // An agent the run had left running that the resumed script will not wait for any more.
    for (const e of unused) {
      const j = e.status === 'running' && e.jobId ? await getJob(this.q, e.jobId) : undefined;
      if (j && !isTerminal(j.status)) void this.d.jobs.cancel({ job_id: j.id, reason: `run ${this.runId} was resumed and no longer waits for call ${e.seq}`, cascade: true }, LEAD).catch(() => undefined);
      if (e.status === 'running' && e.requestId) void this.d.requests.cancel(e.requestId, `run ${this.runId} was resumed and no longer waits for call ${e.seq}`).catch(() => undefined);
    }
    const text = d
      ? `resume: ${this.answered} call(s) answered from the journal; diverged at call ${at} of the script, ${d.kind}(${callStart(args ?? [])})`
        + (d.reason === 'failed' ? `, which failed last time (journal call ${d.seq})` : ', new or edited since the last run') + ': it and every call after it run live'
      : `resume: ${this.answered} call(s) answered from the journal; nothing diverged`;
    await this.log('replay', text);
    const row = await rulesOf(this.q, this.runId);
    if (!row) return;
    const { replaying: _, ...rules } = JSON.parse(row.rules_json) as ScriptRules;
    await setRules(this.q, this.runId, JSON.stringify(rules));
  }

  private async agent(frame: Frame, args: Json[], key: string): Promise<Json> {
    const { runId, signal } = this;
    const [prompt, rawOpts] = args;
    if (typeof prompt !== 'string' || !prompt.trim()) throw new ScriptCallError('TypeError', 'agent(prompt, opts): prompt must be a non-empty string');
    const parsed = ScriptAgentOptions.safeParse(rawOpts ?? {});
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      throw new ScriptCallError('TypeError', `agent() option ${i.path.join('.') || '(opts)'}: ${i.message}`);
    }
    const o = parsed.data;
    // Under a run budget, calls reserve in the order the script made them: each takes its place in
    // the chain before its first await. Taken after them (the slot, the pause check), a later call
    // could overtake an earlier one on PostgreSQL, where those reads run on the pool's separate
    // connections and finish in any order (SQLite's one connection answered them in turn).
    let spawned = (): void => undefined;
    let before: Promise<void> = Promise.resolve();
    if (this.rules.budget_usd !== null) {
      before = this.spawning;
      this.spawning = new Promise((resolve) => { spawned = resolve; });
    }
    let release = (): void => undefined;
    try {
      release = await this.slots.take(signal);
      await this.whilePaused('agent', args);
      if (signal.aborted) throw new ScriptCallError('Cancelled', 'the run has ended');
      await before;
      let seq = 0;
      const spawn = this.d.jobs.spawn({
        prompt, title: o.label ?? prompt.split('\n')[0]!.slice(0, 80), provider: o.provider, model: o.model, worktree: o.worktree, cwd: o.cwd, checks: o.checks,
        timeout_s: o.timeout_s, max_turns: o.max_turns, budget_usd: o.budget_usd, role: o.role, depends_on: [], priority: 0, labels: [...new Set([...(o.labels ?? []), `run:${runId}`])], host: o.host,
      }, LEAD, {
        ...(o.schema ? { jsonSchema: JSON.stringify(o.schema) } : {}),
        // The call's row in the job's own transaction: a job of the run is never without its call, nor a call without its job.
        within: async (jobId, now, trx) => {
          seq = await beginCall(trx, { run_id: runId, kind: 'agent', args_json: key, scope: frame.scope, label: o.label ?? null, phase: o.phase ?? frame.phase, started_at: now, job_id: jobId });
        },
      }).catch((e: unknown) => { throw new ScriptCallError(codeOf(e) === 'budget_exceeded' ? 'BudgetExceeded' : 'SpawnRefused', (e as Error).message, codeOf(e)); })
        .finally(spawned);
      const tracked = spawn.then(() => undefined, () => undefined);
      this.inFlight.add(tracked);
      const r = await spawn.finally(() => this.inFlight.delete(tracked));
      return await this.settle(runId, seq, r.job_id, signal, args);
    } finally {
      spawned();
      release();
    }
  }

  private async approve(frame: Frame, args: Json[], key: string): Promise<Json> {
    const { runId } = this;
    const [summary, plan] = args;
    if (typeof summary !== 'string' || !summary.trim()) throw new ScriptCallError('TypeError', 'approve(summary, plan): summary must be a non-empty string');
    await this.whilePaused('approve', args);
    let seq = 0;
    const id = await this.d.requests.openForRun(runId, { summary, ...(plan && typeof plan === 'object' ? { plan } : {}) }, async (requestId, trx) => {
      seq = await beginCall(trx, { run_id: runId, kind: 'approve', args_json: key, scope: frame.scope, label: summary.slice(0, 80), phase: frame.phase, started_at: this.d.ctx.clock.now(), request_id: requestId });
    });
    return this.decided(seq, id);
  }

  /** The person's answer to an approve() call's request (a new hub waits for the same request again). */
  private async decided(seq: number, requestId: string): Promise<Json> {
    const approved = await this.d.requests.approved(requestId, this.signal);
    if (approved === undefined) throw new ScriptCallError('Cancelled', 'the run has ended');
    await endCall(this.q, this.runId, seq, { status: 'done', outcome: approved, at: this.d.ctx.clock.now() });
    return approved;
  }

  /** Waits until the call's job has ended for good, journals its outcome and gives it to the script. */
  private async settle(runId: string, seq: number, jobId: string, signal: AbortSignal, args: Json[]): Promise<Json> {
    const j = await this.jobEnd(jobId, signal);
    // The run stopped (cancelled, the hub closing): the sandbox no longer waits for this answer.
    if (!j) return new Promise<never>(() => undefined);
    const o = jobOutcome(j, args);
    await endCall(this.q, runId, seq, { status: o.ok ? 'done' : 'failed', outcome: o.ok ? o.value : o.error, limited: !o.ok && LIMIT_CLASSES.has(j.failure_class ?? ''), at: this.d.ctx.clock.now() });
    if (o.ok) return o.value;
    throw new ScriptCallError(o.error.name, o.error.message, o.error.code);
  }

  /** The job once it has ended (undefined: `signal` aborted first). One listener per waiting call, for
   * its own job's events only, removed when it settles (a run of 1,000 calls keeps none); one read at
   * a time, and one more after it when an event came meanwhile. */
  private jobEnd(jobId: string, signal: AbortSignal): Promise<JobRow | undefined> {
    return new Promise((resolve) => {
      let reading = false;
      let again = false;
      let settled = false;
      const finish = (j: JobRow | undefined): void => {
        if (settled) return;
        settled = true;
        off();
        signal.removeEventListener('abort', onAbort);
        resolve(j);
      };
      const onAbort = (): void => finish(undefined);
      const check = async (): Promise<void> => {
        if (reading) { again = true; return; }
        reading = true;
        try {
          do {
            again = false;
            const j = await getJob(this.q, jobId);
            if (j && isTerminal(j.status)) finish(j);
          } while (again && !settled);
        } catch (err) {
          this.d.ctx.log.error({ err, job: jobId, run: this.runId }, 'script run: could not read an agent of the run');
        } finally {
          reading = false;
        }
      };
      const off = this.d.ctx.bus.on('job', (ev) => { if (ev.jobId === jobId) void check(); }, { remote: true, resync: () => void check() });
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      void check();
    });
  }

  /** `budget` in the script: the run's budget_usd, what its agents (and what they spawned) spent, and what running ones hold reserved. */
  private async budget(): Promise<{ total: number | null; spent: number; reserved: number }> {
    const u = await useOf(this.q, { kind: 'run', key: this.runId });
    return { total: this.rules.budget_usd, spent: round6(u.jobsUsd + u.hubUsd), reserved: round6(u.reservedUsd) };
  }

  /** Before a call starts live: wait while the run is paused (cancelling the run ends the wait). */
  private async whilePaused(kind: ScriptCallKind, args: Json[]): Promise<void> {
    if (!(await isPaused(this.q, this.runId))) return;
    await this.log('pause', `${kind}(${callStart(args)}) waits: the run is paused`);
    const r = await waitUntil({
      bus: this.d.ctx.bus, events: ['run'], signal: this.signal, timeoutMs: 2 ** 31 - 1,
      check: async () => ((await isPaused(this.q, this.runId)) ? undefined : true),
    });
    if (!r.ok) throw new ScriptCallError('Cancelled', 'the run was cancelled');
  }
}

const round6 = (v: number): number => Math.round(v * 1e6) / 1e6;

export function whereOf(p: { line?: number; column?: number }): string {
  return p.line ? ` at line ${p.line}${p.column ? `, column ${p.column}` : ''}` : '';
}

/** A call named for the log: the start of its first argument (the prompt, the summary, the workflow's name). */
function callStart(args: Json[]): string {
  const first = typeof args[0] === 'string' ? args[0] : JSON.stringify(args[0] ?? null);
  return JSON.stringify(first.length > 60 ? `${first.slice(0, 60)}…` : first);
}

/** agent()'s answer from its job: the final text, or with a schema the structured object. */
export function jobOutcome(j: JobRow, args: Json[]): { ok: true; value: Json } | { ok: false; error: { name: string; message: string; code?: string } } {
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

/** At most `n` calls of a run at once; the rest wait in order. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly n: number) {}
  async take(signal: AbortSignal): Promise<() => void> {
    if (this.used >= this.n) await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(new ScriptCallError('Cancelled', 'the run was cancelled'));
      this.waiting.push(() => { signal.removeEventListener('abort', onAbort); resolve(); });
      signal.addEventListener('abort', onAbort, { once: true });
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

