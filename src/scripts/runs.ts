// Scripted runs (issue 28, docs/scripts.md): a lead's script runs in the sandbox (./sandbox.ts)
// inside the hub, and this service answers its calls. An agent() call is a job of the hub's engine
// (the house cap, the start gate, locks and confinement, the policy: everything a spawn_agent job
// has), created in the same transaction as its journal row (./journal.ts); approve() is a
// person-only request. A new hub continues every run still `running`: the script runs again from
// the top and the journal answers what was already done (src/domain/scriptReplay.ts), running
// jobs are waited on again, the rest runs live.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { RequestService } from '../approvals/service.js';
import type { JobRow } from '../store/jobs.js';
import { settingsDirOf } from '../config.js';
import { isTerminal } from '../domain/job.js';
import { canonicalJson, ScriptReplay, type ScriptCallKind } from '../domain/scriptReplay.js';
import { InvalidInputError } from '../errors.js';
import { ScriptAgentOptions, type RunScriptInput } from '../contract/scripts.js';
import { checkSyntax, runInSandbox, ScriptCallError, type Json, type SandboxHost, type SandboxLimits, DEFAULT_LIMITS } from './sandbox.js';
import { ScriptJournal } from './journal.js';
import type { BundledScripts } from './bundled.js';
import { tx } from '../store/db.js';
import { scriptRunSpent, scriptRunView, type ScriptRules } from './view.js';

const LEAD = { role: 'lead' } as const;
const DEFAULT_CONCURRENCY = 16;
const LIMIT_CLASSES = new Set(['rate_limited']);

interface Live { abort: AbortController; done: Promise<void>; stopping: boolean }

export class ScriptRuns {
  readonly journal: ScriptJournal;
  private readonly live = new Map<string, Live>();

  constructor(
    private readonly ctx: HubContext,
    private readonly jobs: Pick<JobService, 'spawn' | 'cancel' | 'resume'>,
    private readonly requests: Pick<RequestService, 'approval'>,
    /** The hub's own scripts (the implement/review workflow) and their privileged calls. */
    private readonly bundled: BundledScripts,
    private readonly limits: SandboxLimits = DEFAULT_LIMITS,
  ) {
    this.journal = new ScriptJournal(ctx.db);
  }

  /** Checks the script completely, stores the run with its script, and starts it. Nothing is written for a bad script. */
  async start(i: RunScriptInput): Promise<{ run_id: string; status: 'running'; title: string }> {
    if ((i.script === undefined) === (i.name === undefined)) throw new InvalidInputError('give script (the JavaScript source) or name (a saved script in .overseer/scripts/<name>.js), exactly one of them');
    const source = i.script ?? this.saved(i.name!);
    const problem = await checkSyntax(source);
    if (problem) {
      const where = problem.line ? ` at line ${problem.line}${problem.column ? `, column ${problem.column}` : ''}` : '';
      throw new InvalidInputError(`The script does not parse${where}: ${problem.name}: ${problem.message}. Nothing was started; fix it and run it again.`);
    }
    const title = i.title ?? metaName(source) ?? i.name ?? 'script';
    const rules: ScriptRules = { name: i.name ?? null, args: i.args as Json | undefined, budget_usd: i.budget_usd ?? null, max_concurrent: i.max_concurrent ?? DEFAULT_CONCURRENCY };
    const id = `r-${this.ctx.ids.token().replace(/[^a-z0-9]/gi, '').slice(0, 8).toLowerCase()}`;
    const now = this.ctx.clock.now();
    this.ctx.db.prepare(`INSERT INTO runs (id, title, file, content, format, rules_json, status, note, deadline_at, created_at, updated_at, ended_at, kind)
      VALUES (?, ?, ?, ?, 'js', ?, 'running', NULL, NULL, ?, ?, NULL, 'script')`).run(id, title, i.name ? this.savedPath(i.name) : null, source, JSON.stringify(rules), now, now);
    this.execute(id, 'recover');
    return { run_id: id, status: 'running', title };
  }

  /** Starts a run of a bundled script for a hub service (not run_script's input); `first` writes
   * in the same transaction as the run row (a call the script makes first, already carried by a job). */
  startBundled(name: string, o: { title: string; args: Json }, first: (runId: string) => void): string {
    const source = this.bundled.source(name);
    const rules: ScriptRules = { name, args: o.args, budget_usd: null, max_concurrent: DEFAULT_CONCURRENCY, bundled: name };
    const id = `r-${this.ctx.ids.token().replace(/[^a-z0-9]/gi, '').slice(0, 8).toLowerCase()}`;
    const now = this.ctx.clock.now();
    tx(this.ctx.db, () => {
      this.ctx.db.prepare(`INSERT INTO runs (id, title, file, content, format, rules_json, status, note, deadline_at, created_at, updated_at, ended_at, kind)
        VALUES (?, ?, NULL, ?, 'js', ?, 'running', NULL, NULL, ?, ?, NULL, 'script')`).run(id, o.title, source, JSON.stringify(rules), now, now);
      first(id);
    });
    this.execute(id, 'recover');
    return id;
  }

  /** Continues every script run a previous hub left running. */
  async resumeAll(): Promise<void> {
    const rows = this.ctx.db.prepare("SELECT id FROM runs WHERE kind = 'script' AND status = 'running'").all() as { id: string }[];
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
      this.execute(r.id, 'recover');
    }
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
    const replay = new ScriptReplay(this.journal.replayable(runId), mode);
    const slots = new Slots(rules.max_concurrent);
    let phase: string | null = null;
    const host: SandboxHost = {
      call: async (kind, args) => {
        const key = canonicalJson(args);
        const a = replay.next(kind as ScriptCallKind, key);
        if (a.from === 'journal') return outcome(a.entry.status, a.entry.outcome);
        if (this.bundled.owns(kind)) return this.bundled.call(rules.bundled ?? null, { runId, kind, args, key, answer: a, phase, signal: abort.signal, journal: this.journal });
        if (a.from === 'job' && a.entry.jobId) return this.settle(runId, a.entry.seq, a.entry.jobId, abort.signal, args);
        if (kind === 'agent') return this.agent(runId, args, key, phase, slots, abort.signal);
        if (kind === 'approve') return this.approve(runId, args, key, phase, abort.signal);
        throw new ScriptCallError('NotSupported', 'workflow() is not available yet in Overseer scripts: run the other script with run_script');
      },
      log: (m) => { this.journal.log(runId, 'log', m, this.ctx.clock.now()); },
      phase: (t) => { phase = t; this.journal.log(runId, 'phase', t, this.ctx.clock.now()); },
      budget: () => ({ total: rules.budget_usd, spent: this.spent(runId) }),
    };
    live.done = runInSandbox({ source: row.content, args: rules.args, host, limits: this.limits, signal: abort.signal, privileged: rules.bundled !== undefined }).then((o) => {
      if (live.stopping) return;
      if (o.status === 'returned') this.finish(runId, 'succeeded', null, o.value);
      else if (o.error.name !== 'Cancelled') {
        const where = o.error.line ? ` (line ${o.error.line})` : '';
        this.finish(runId, 'failed', `${o.error.name}${where}: ${o.error.message}`);
      }
    }, (err: unknown) => {
      this.ctx.log.error({ err, run: runId }, 'script run crashed in the hub');
      if (!live.stopping) this.finish(runId, 'failed', `the hub could not run the script: ${(err as Error).message}`);
    }).finally(() => { this.live.delete(runId); });
    this.live.set(runId, live);
  }

  private async agent(runId: string, args: Json[], key: string, phase: string | null, slots: Slots, signal: AbortSignal): Promise<Json> {
    const [prompt, rawOpts] = args;
    if (typeof prompt !== 'string' || !prompt.trim()) throw new ScriptCallError('TypeError', 'agent(prompt, opts): prompt must be a non-empty string');
    const parsed = ScriptAgentOptions.safeParse(rawOpts ?? {});
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      throw new ScriptCallError('TypeError', `agent() option ${i.path.join('.') || '(opts)'}: ${i.message}`);
    }
    const o = parsed.data;
    const release = await slots.take(signal);
    try {
      let seq = 0;
      const r = await this.jobs.spawn({
        prompt, title: o.label ?? prompt.split('\n')[0]!.slice(0, 80), provider: o.provider, model: o.model, worktree: o.worktree, cwd: o.cwd, checks: o.checks,
        timeout_s: o.timeout_s, max_turns: o.max_turns, budget_usd: o.budget_usd, depends_on: [], priority: 0, labels: [`run:${runId}`],
      }, LEAD, {
        ...(o.schema ? { jsonSchema: JSON.stringify(o.schema) } : {}),
        within: (jobId, now) => {
          seq = this.journal.begin({ run_id: runId, kind: 'agent', args_json: key, label: o.label ?? null, phase: o.phase ?? phase, started_at: now });
          this.journal.carriedBy(runId, seq, { job_id: jobId });
        },
      }).catch((e: unknown) => { throw new ScriptCallError(codeOf(e) === 'budget_exceeded' ? 'BudgetExceeded' : 'SpawnRefused', (e as Error).message, codeOf(e)); });
      return await this.settle(runId, seq, r.job_id, signal, args);
    } finally {
      release();
    }
  }

  private async approve(runId: string, args: Json[], key: string, phase: string | null, signal: AbortSignal): Promise<Json> {
    const [summary, plan] = args;
    if (typeof summary !== 'string' || !summary.trim()) throw new ScriptCallError('TypeError', 'approve(summary, plan): summary must be a non-empty string');
    const seq = this.journal.begin({ run_id: runId, kind: 'approve', args_json: key, label: summary.slice(0, 80), phase, started_at: this.ctx.clock.now() });
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

  private spent(runId: string): number {
    return scriptRunSpent(this.ctx.db, runId);
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

/** agent()'s answer from its job: the final text, or with a schema the structured object. */
function jobOutcome(j: JobRow, args: Json[]): { ok: true; value: Json } | { ok: false; error: { name: string; message: string; code?: string } } {
  if (j.status === 'succeeded') {
    const wantsObject = typeof args[1] === 'object' && args[1] !== null && 'schema' in (args[1] as object);
    if (wantsObject && j.structured_json) return { ok: true, value: JSON.parse(j.structured_json) as Json };
    return { ok: true, value: j.result ?? '' };
  }
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

