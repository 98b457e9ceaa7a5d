// Debates on the job engine: every turn of a side (each round's answer, the post-action, the
// review and the response) is an ordinary job created through JobService with a --json-schema
// where the hub needs structure. The debate advances when one of its jobs settles (bus `job`
// events), one step at a time per debate; logic.ts decides the step from the stored turns, so a
// restarted hub picks up where it was (reconcile).
import { SerialChains } from '../serial.js';
import { assertProjectOpen } from '../projects/service.js';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Caller, HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { NoteService } from '../services/notes.js';
import { isSettled } from '../domain/job.js';
import { errorMessage, ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { getJob } from '../store/sql/jobs.js';
import {
  deleteDebate, endDebate, getDebate, insertDebate, listDebates, recentDebateIds, recordTurn, runningDebates, settleTurn, turnByJob, turnsOf, type TurnResult,
} from '../store/sql/debates.js';
import { adopt, drives } from '../store/sql/claims.js';
import { placeRun, removeWorktree } from '../git/worktree.js';
import { gitOut } from '../git/exec.js';
import type { CancelInput } from '../contract/agents.js';
import type { ListDebatesInput, StartDebateInput } from '../contract/debates.js';
import {
  ANSWER_SCHEMA, OPENING_SCHEMA, REVIEW_SCHEMA, decide, loopOutcome, needsVerdict, parseAnswer, parseReview, sideName,
  type DebateShape, type Outcome, type Side, type TurnKey,
} from './logic.js';
import { turnFacts, type DebateRow, type TurnRow } from './store.js';
import { finalNote, noteKeys, postActionPrompt, postNote, responsePrompt, reviewPrompt, roundNote, roundPrompt, sidesOf, workDirOf } from './texts.js';
import { readDebateView, type DebateView } from './view.js';

/** A turn's job could not be recorded: another advance gave the turn its job first (this one was rolled back). */
class TurnTaken extends InvalidStateError {}

const shapeOf = (d: DebateRow): DebateShape => ({
  maxRounds: d.max_rounds, loops: d.loops, postAction: d.post_action !== null, postActionSide: d.post_action_side as Side, verify: d.verify === 1,
});

export class DebateService {
  /** reconcile's read of the running debates, until their steps are queued (drain waits for it too). */
  private reconciling: Promise<unknown> = Promise.resolve();
  private readonly chains = new SerialChains(async (id, err) => {
    this.ctx.log.error({ err, debate: id }, 'debate step failed');
    await this.fail(id, `internal error while advancing the debate: ${errorMessage(err)}`).catch((e: unknown) => this.ctx.log.error({ err: e, debate: id }, 'could not fail the debate'));
  });

  /** `hubId`: this hub, the driver of the debates it starts or adopts (docs/store-plan.md §3.4). */
  constructor(private readonly ctx: HubContext, private readonly jobs: JobService, private readonly notes: NoteService, private readonly hubId: string) {
    // remote: a turn's job may run on another hub than the debate's (a dead hub's interrupted or
    // queued job is unowned, any hub may claim it), so its end can arrive from there; only the
    // debates this hub drives advance here (their steps are compare-and-set besides).
    ctx.bus.on('job', (e) => {
      if (!isSettled(e.status as never)) return;
      void (async () => {
        const t = await turnByJob(this.q, e.jobId);
        if (t && (await drives(this.q, 'debates', t.debate_id, this.hubId))) void this.serial(t.debate_id, () => this.onJobSettled(e.jobId));
      })().catch((err: unknown) => ctx.log.error({ err, jobId: e.jobId }, 'debate: could not read the turn of a job'));
    }, { remote: true, resync: () => this.catchUp() });
  }

  private get q() {
    return this.ctx.sql.db;
  }

  private changed(id: string, status: string): void {
    this.ctx.bus.emit('debate', { debateId: id, status });
  }

  /** Run fn after everything already queued for this debate; an internal error fails the debate. */
  private serial(id: string, fn: () => Promise<void>): Promise<void> {
    return this.chains.run(id, fn);
  }

  /** Wait until queued work on a debate is done (tests, cancel). */
  idle(id: string): Promise<void> {
    return this.chains.idle(id);
  }

  /** Wait until no debate has queued work (hub shutdown, before the database closes). */
  async drain(): Promise<void> {
    await this.reconciling;
    await this.chains.drain();
  }

  async debate(id: string): Promise<DebateRow> {
    const d = await getDebate(this.q, id);
    if (!d) {
      const near = await recentDebateIds(this.q);
      throw new NotFoundError(`No debate ${JSON.stringify(id)}.${near.length ? ` Recent debates: ${near.join(', ')}.` : ' No debates exist yet.'} Use list_debates.`);
    }
    return d;
  }

  // ---- tools ---------------------------------------------------------------------------

  async start(i: StartDebateInput, caller: Caller): Promise<{ debate_id: string; status: string; job_ids: string[]; branch: string | null }> {
    if (caller.role !== 'lead') throw new ForbiddenError('start_debate is the lead\'s: agents do not start debates.');
    const cwd = i.cwd === undefined ? this.ctx.projectDir : isAbsolute(i.cwd) ? resolve(i.cwd) : resolve(this.ctx.projectDir, i.cwd);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new InvalidInputError(`cwd ${JSON.stringify(i.cwd)} does not exist or is not a directory (resolved to ${cwd}). Pass an existing directory.`);
    i.sides.forEach((s, n) => {
      if (!this.ctx.launchers[s.provider]) throw new InvalidInputError(`sides[${n}].provider ${JSON.stringify(s.provider)} is not available in this hub. Use "claude"${this.ctx.launchers.codex ? ' or "codex"' : ''}.`);
    });
    if (i.project !== undefined) await assertProjectOpen(this.ctx.sql.db, i.project);
    const id = `d-${randomBytes(4).toString('hex')}`;
    const title = i.title ?? (i.task.split('\n').find((l) => l.trim())?.trim().slice(0, 80) ?? 'debate');
    const { repoRoot, worktreePath, branch, baseCommit } = await placeRun({ cwd, worktree: i.worktree, id, prefix: 'debate', title, worktreesDir: this.ctx.config.worktreesDir });
    try {
      const now = this.ctx.clock.now();
      await insertDebate(this.q, {
        id, title, task: i.task, status: 'running', cwd, repo_root: repoRoot, worktree_path: worktreePath, branch, base_commit: baseCommit,
        sides_json: JSON.stringify(i.sides), max_rounds: i.max_rounds, loops: i.loops, post_action: i.post_action ?? null,
        post_action_side: i.post_action_side ?? 0, verify: i.verify ? 1 : 0, error: null, project: i.project ?? null, created_at: now, ended_at: null, hub_id: this.hubId,
      });
      this.changed(id, 'running');
      // The first round's two jobs, through the same step as every later one.
      const d = await this.debate(id);
      const step = decide(shapeOf(d), []);
      const jobIds: string[] = [];
      // In the debate's chain, as every later step: a turn that settles at once is taken up after both are recorded.
      let failure: unknown;
      await this.serial(id, async () => {
        try {
          if (step.kind === 'spawn') for (const k of step.turns) jobIds.push((await this.spawnTurn(d, k))!);
        } catch (err) {
          failure = err;
        }
      });
      if (failure) throw failure;
      return { debate_id: id, status: 'running', job_ids: jobIds, branch };
    } catch (err) {
      // Nothing half-created: no orphan job, row, worktree or branch.
      for (const t of await turnsOf(this.q, id)) await this.jobs.cancel({ job_id: t.job_id, cascade: true, reason: 'debate could not start' } as CancelInput, { role: 'lead' }).catch(() => undefined);
      await deleteDebate(this.q, id);
      if (worktreePath && repoRoot) {
        await removeWorktree(repoRoot, worktreePath).catch(() => undefined);
        await gitOut(['branch', '-D', branch!], { cwd: repoRoot }).catch(() => undefined);
      }
      throw err;
    }
  }

  async get(id: string): Promise<DebateView> {
    return readDebateView(this.q, await this.debate(id));
  }

  async list(i: ListDebatesInput): Promise<{ debates: Omit<DebateView, 'rounds' | 'post' | 'task'>[] }> {
    const debates: Omit<DebateView, 'rounds' | 'post' | 'task'>[] = [];
    for (const d of await listDebates(this.q, i.status, i.limit)) {
      const { rounds: _r, post: _p, task: _t, ...rest } = await readDebateView(this.q, d);
      debates.push(rest);
    }
    return { debates };
  }

  async cancel(id: string, caller: Caller): Promise<DebateView> {
    if (caller.role !== 'lead') throw new ForbiddenError('cancel_debate is the lead\'s.');
    const d = await this.debate(id);
    if (d.status !== 'running') return this.get(id);
    if (await endDebate(this.q, id, { status: 'cancelled', error: 'cancelled by the lead' }, this.ctx.clock.now())) this.changed(id, 'cancelled');
    await this.stopTurns(id, 'debate cancelled');
    await this.idle(id);
    await this.closeWorktree(await this.debate(id));
    return this.get(id);
  }

  /** At hub start: every running debate this hub drives (its predecessors' became its own) or may
   * adopt takes up what happened while no hub ran. Resolves once their steps are queued. */
  reconcile(): Promise<void> {
    return this.takeUp(true);
  }

  /** Debates whose hub died (found by this hub: src/services/hubReconcile.ts) or left unowned: adopted, once, and taken up as at a start. */
  adopt(): Promise<void> {
    return this.takeUp(false);
  }

  /** Events may have been lost (the relay reconnected): the turns of this hub's debates whose jobs ended meanwhile are taken up, as their events would have been. */
  private async catchUp(): Promise<void> {
    try {
      for (const d of await runningDebates(this.q)) {
        if (d.hub_id !== this.hubId) continue;
        for (const t of (await turnsOf(this.q, d.id)).filter((x) => x.status === 'running')) {
          const j = await getJob(this.q, t.job_id);
          if (j && isSettled(j.status)) void this.serial(d.id, () => this.onJobSettled(j.id));
        }
      }
    } catch (err) {
      this.ctx.log.error({ err }, 'debates: could not catch up after lost events');
    }
  }

  private takeUp(own: boolean): Promise<void> {
    const p = this.reconciling.then(() => this.reconcileAll(own)).then(() => undefined, (err: unknown) => this.ctx.log.error({ err }, 'debates: could not take up the running debates'));
    this.reconciling = p;
    return p;
  }

  /** `own`: this hub's own running debates too (a start, or a resync after lost events), else only the adopted ones. */
  private async reconcileAll(own: boolean): Promise<string[]> {
    const touched: string[] = [];
    for (const d of await runningDebates(this.q)) {
      if (d.hub_id === this.hubId ? !own : !(await adopt(this.q, 'debates', d.id, this.hubId))) continue;
      if (d.hub_id !== this.hubId) this.ctx.log.info({ debate: d.id, from: d.hub_id }, 'debate adopted');
      touched.push(d.id);
      void this.serial(d.id, async () => {
        for (const t of (await turnsOf(this.q, d.id)).filter((x) => x.status === 'running')) {
          const j = await getJob(this.q, t.job_id);
          if (j && !isSettled(j.status)) continue; // queued: the scheduler runs it
          if (!j || j.status === 'interrupted') {
            // Its process died with the hub: the turn runs again as a new job (only while it still has the old one).
            await this.spawnTurn(await this.debate(d.id), { loop: t.loop, kind: t.kind, round: t.round, side: t.side }, undefined, t.job_id);
            continue;
          }
          await this.onJobSettled(j.id, false); // it ended while the hub was down: take its result
        }
        await this.advance(d.id);
      });
    }
    return touched;
  }

  // ---- the engine ----------------------------------------------------------------------

  /** A turn's job settled: store what it answered (or why it failed), write notes, go on. */
  private async onJobSettled(jobId: string, go = true): Promise<void> {
    const t = await turnByJob(this.q, jobId);
    if (!t || t.status !== 'running') return;
    const d = await getDebate(this.q, t.debate_id);
    if (!d || d.status !== 'running') return;
    const job = (await getJob(this.q, jobId))!;
    if (job.status === 'interrupted') return; // hub stopping or a pause: the restart (or a resume of the job) goes on
    const now = this.ctx.clock.now();
    const who = `side ${sideName(t.side)}'s ${t.kind === 'answer' ? `round ${t.round} answer` : t.kind.replace('_', '-')}${d.loops > 1 ? ` (loop ${t.loop})` : ''} (job ${jobId})`;
    let r: TurnResult;
    if (job.status !== 'succeeded') {
      r = { status: 'failed', error: `${who} ${job.status}${job.failure_class ? ` (${job.failure_class})` : ''}: ${job.error ?? 'no error recorded'}` };
    } else {
      const structured: unknown = job.structured_json ? JSON.parse(job.structured_json) : undefined;
      if (t.kind === 'answer') {
        const a = parseAnswer(structured, needsVerdict(t.loop, t.round));
        r = 'problem' in a
          ? { status: 'failed', error: `${who} succeeded but ${a.problem}` }
          : { status: 'done', position: a.position, reasoning: a.reasoning, verdict: a.verdict ?? null, open_points: a.open_points ? JSON.stringify(a.open_points) : null };
      } else if (t.kind === 'review') {
        const rv = parseReview(structured);
        r = 'problem' in rv ? { status: 'failed', error: `${who} succeeded but ${rv.problem}` } : { status: 'done', verdict: rv.assessment, text: rv.notes };
      } else {
        r = { status: 'done', text: (job.result ?? '').trim() };
      }
    }
    // Recorded once: another hub (or call) that took this answer up first has gone on from it.
    if (!(await settleTurn(this.q, jobId, r, now))) return;
    await this.writeTurnNotes(d, (await turnByJob(this.q, jobId))!);
    if (go) await this.advance(d.id);
  }

  private async writeTurnNotes(d: DebateRow, t: TurnRow): Promise<void> {
    if (t.status !== 'done') return;
    const keys = noteKeys(d.id, t.loop);
    if (t.kind !== 'answer') {
      await this.notes.put(keys.post(t.kind), postNote(d, t), `debate:${d.id}`);
      return;
    }
    const facts = (await turnsOf(this.q, d.id)).map(turnFacts);
    const round = facts.filter((x) => x.kind === 'answer' && x.loop === t.loop && x.round === t.round);
    if (round.length === 2 && round.every((x) => x.status === 'done')) await this.notes.put(keys.round(t.round), roundNote(d, facts, t.loop, t.round), `debate:${d.id}`);
  }

  /** Take the next step logic.ts decides from the stored turns. */
  private async advance(id: string): Promise<void> {
    const d = await getDebate(this.q, id);
    if (!d || d.status !== 'running') return;
    const turns = await turnsOf(this.q, id);
    const step = decide(shapeOf(d), turns.map(turnFacts));
    switch (step.kind) {
      case 'wait':
        return;
      case 'failed': {
        const t = turns.find((x) => x.loop === step.turn.loop && x.kind === step.turn.kind && x.round === step.turn.round && x.side === step.turn.side);
        await this.fail(id, t?.error ?? 'a turn failed');
        return;
      }
      case 'spawn':
        try {
          for (const k of step.turns) {
            const diff = k.kind === 'review' ? await this.diff(d) : undefined;
            await this.spawnTurn(await this.debate(id), k, diff);
          }
        } catch (err) {
          await this.fail(id, `could not start the next turn: ${errorMessage(err)}`);
        }
        return;
      case 'done': {
        await this.closeWorktree(d);
        const now = this.ctx.clock.now();
        await this.notes.put(noteKeys(id, 1).final, finalNote(d, turns, turns.map(turnFacts), step.outcome, step.loops), `debate:${id}`);
        if (await endDebate(this.q, id, { status: step.outcome }, now)) this.changed(id, step.outcome);
      }
    }
  }

  /**
   * Create one turn's job and record it in the job's transaction (`replacing`: the interrupted job
   * a turn had). Undefined when another advance recorded the turn first: no second job is made.
   */
  private async spawnTurn(d: DebateRow, k: TurnKey, diff?: string, replacing?: string): Promise<string | undefined> {
    const p = this.ctx.prompts;
    const rows = await turnsOf(this.q, d.id);
    const facts = rows.map(turnFacts);
    const spec = sidesOf(d)[k.side];
    let prompt: string;
    let schema: object | null = null;
    let label: string;
    if (k.kind === 'answer') {
      prompt = roundPrompt(p, d, facts, k.loop, k.round, k.side);
      schema = needsVerdict(k.loop, k.round) ? ANSWER_SCHEMA : OPENING_SCHEMA;
      label = `round ${k.round}`;
    } else if (k.kind === 'post_action') {
      prompt = postActionPrompt(p, d, facts, k.loop, loopOutcome(shapeOf(d), facts, k.loop) as Outcome);
      label = 'post-action';
    } else if (k.kind === 'review') {
      prompt = reviewPrompt(p, d, rows, facts, k.loop, diff);
      schema = REVIEW_SCHEMA;
      label = 'review';
    } else {
      prompt = responsePrompt(p, d, rows, k.loop);
      label = 'response';
    }
    const workDir = workDirOf(d);
    try {
      const r = await this.jobs.create({
        parent_id: null, depth: 1, title: `${d.id} ${d.loops > 1 ? `loop ${k.loop} ` : ''}${label} side ${sideName(k.side)}`, prompt,
        provider: spec.provider, model: spec.model ?? null, cwd: workDir, work_dir: workDir, repo_root: d.repo_root, worktree: 0, branch: d.branch,
        base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null, checks_json: '[]',
        retry: 'none', labels_json: JSON.stringify(['debate', `debate:${d.id}`]), depends_on_json: '[]', workflow_id: null, phase: null, cycle: null,
        json_schema: schema ? JSON.stringify(schema) : null, project: d.project ?? null,
      }, `debate ${d.id}`, {
        within: async (jobId, now, trx) => {
          if (!(await recordTurn(trx, { debate_id: d.id, ...k }, jobId, now, replacing))) throw new TurnTaken(`turn ${JSON.stringify(k)} of debate ${d.id} has its job already`);
        },
      });
      return r.job_id;
    } catch (err) {
      if (err instanceof TurnTaken) return undefined;
      throw err;
    }
  }

  /** With a worktree: the hub commits what the post-action left, then the branch's diff against its base. */
  private async diff(d: DebateRow): Promise<string | undefined> {
    if (!d.worktree_path || !d.base_commit) return undefined;
    await commitLeftovers(d.worktree_path, `overseer debate ${d.id}: post-action`);
    return gitOut(['diff', `${d.base_commit}..HEAD`], { cwd: d.worktree_path }).catch((err: unknown) => `(the diff could not be read: ${errorMessage(err)})`);
  }

  /** The debate's worktree, when it has one: leftovers committed on its branch, the folder removed (the branch stays). */
  private async closeWorktree(d: DebateRow): Promise<void> {
    if (!d.worktree_path || !d.repo_root || !existsSync(d.worktree_path)) return;
    await commitLeftovers(d.worktree_path, `overseer debate ${d.id}: ${d.title}`.slice(0, 200));
    await removeWorktree(d.repo_root, d.worktree_path).catch((err: unknown) => this.ctx.log.warn({ err, debate: d.id }, 'could not remove the debate worktree'));
  }

  /** Fail a running debate with its reason: its other running jobs are stopped, the final note says why. */
  private async fail(id: string, reason: string): Promise<void> {
    const d = await getDebate(this.q, id);
    if (!d || d.status !== 'running') return;
    const now = this.ctx.clock.now();
    if (!(await endDebate(this.q, id, { status: 'failed', error: reason }, now))) return; // ended meanwhile (cancelled, another hub)
    this.changed(id, 'failed');
    this.ctx.log.warn({ debate: id, reason }, 'debate failed');
    await this.stopTurns(id, 'debate failed');
    const turns = await turnsOf(this.q, id);
    await this.notes.put(noteKeys(id, 1).final, finalNote(d, turns, turns.map(turnFacts), 'failed', [], reason), `debate:${id}`);
    await this.closeWorktree(d);
  }

  private async stopTurns(id: string, reason: string): Promise<void> {
    for (const t of await turnsOf(this.q, id)) {
      const j = await getJob(this.q, t.job_id);
      if (j && !isSettled(j.status)) await this.jobs.cancel({ job_id: j.id, cascade: true, reason } as CancelInput, { role: 'lead' }).catch(() => undefined);
    }
  }
}

/** `git add -A && git commit` when anything is uncommitted. */
async function commitLeftovers(dir: string, message: string): Promise<void> {
  try {
    if (!(await gitOut(['status', '--porcelain'], { cwd: dir })).trim()) return;
    await gitOut(['add', '-A'], { cwd: dir });
    await gitOut(['-c', 'user.name=Overseer', '-c', 'user.email=overseer@localhost', '-c', 'core.hooksPath=/dev/null', 'commit', '--no-verify', '-q', '-m', message], { cwd: dir });
  } catch { /* nothing to commit, or not a repository any more: the diff says what is there */ }
}
