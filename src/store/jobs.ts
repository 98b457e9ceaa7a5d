// Job, attempt, event and message rows: their types (read by the layer, src/store/sql/jobs.ts),
// and `JobStore`, synchronous better-sqlite3 statements that nothing in the hub reads any more
// (issue 29, docs/store-plan.md §3a). What is left of it serves the tests' fixtures and their
// synchronous reads (`hub.ctx.store`); it goes when the tests run on PostgreSQL too (step 8).
import type { Db } from './db.js';
import type { FailureClass, JobStatus } from '../domain/job.js';

/** Bumped on every write of a job's token_hash (a token given or revoked): src/server/tokenAuth.ts
 * remembers which token is whose only while it has not moved. Every token write goes through
 * updateJob / claimJob of src/store/sql/jobs.ts (runner, reconcile, takeover). One counter for the
 * process: a bump for another database only costs one more lookup. */
let epoch = 0;
export const tokenEpoch = (): number => epoch;
export const bumpTokenEpoch = (): void => { epoch++; };

export interface JobRow {
  id: string;
  seq: number;
  parent_id: string | null;
  depth: number;
  title: string;
  prompt: string;
  provider: string;
  model: string | null;
  cwd: string;
  work_dir: string | null;
  repo_root: string | null;
  worktree: number;
  branch: string | null;
  base_commit: string | null;
  priority: number;
  max_turns: number | null;
  budget_usd: number | null;
  timeout_s: number | null;
  context_json: string | null;
  template: string | null;
  checks_json: string;
  retry: 'none' | 'same' | 'analyze';
  labels_json: string;
  depends_on_json: string;
  status: JobStatus;
  status_message: string | null;
  progress: number | null;
  result: string | null;
  outcome: string | null;
  error: string | null;
  failure_class: FailureClass | null;
  session_id: string | null;
  turns: number;
  cost_usd: number;
  pid: number | null;
  pr_url: string | null;
  diff_stat: string | null;
  git_note: string | null;
  token_hash: string | null;
  /** The hub that runs it (migration 27): many hubs on one database; set by the claim. */
  hub_id?: string | null;
  resume_message: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
  workflow_id: string | null;
  phase: string | null;
  cycle: number | null;
  json_schema: string | null;
  structured_json: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_unknown: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  thread_usage_json: string | null;
  lock_violations_json: string | null;
  /** Last output from the child (ms), written by the health monitor; null before the first. */
  last_event_at: number | null;
  /** What the child last did (a tool call, a line of text), written with last_event_at. */
  last_activity: string | null;
  /** Model auto-choice (src/models/choice.ts): tier, reason, classifier, fallback; null unless spawned with model "auto". */
  model_choice_json?: string | null;
  /** Schedules (src/runs/schedules.ts): the job stays `waiting` until this time (ms); null/absent: no time set. */
  not_before?: number | null;
  /** The schedule this job is an occurrence of, and its number in the series (from 1). */
  schedule_id?: string | null;
  occurrence?: number | null;
  /** The project the job belongs to (src/projects); null: none. */
  project?: string | null;
}

export type NewJob = Omit<JobRow, 'seq' | 'created_at' | 'structured_json' | 'input_tokens' | 'output_tokens' | 'cost_unknown' | 'cache_read_tokens' | 'cache_creation_tokens' | 'thread_usage_json' | 'lock_violations_json' | 'last_event_at' | 'last_activity' | 'status_message' | 'progress' | 'result' | 'outcome' | 'error' | 'failure_class' | 'turns' | 'cost_usd' | 'pid' | 'pr_url' | 'diff_stat' | 'git_note' | 'resume_message' | 'started_at' | 'ended_at' | 'updated_at' | 'session_id' | 'project'> & { session_id: string; project?: string | null };

export interface AttemptRow {
  job_id: string;
  n: number;
  kind: 'initial' | 'retry' | 'resume' | 'takeover';
  status: string;
  started_at: number;
  ended_at: number | null;
  session_id: string | null;
  pid: number | null;
  exit_code: number | null;
  signal: string | null;
  turns: number;
  cost_usd: number;
  failure_class: string | null;
  error: string | null;
  diagnosis: string | null;
  transcript: string;
  input_tokens?: number;
  output_tokens?: number;
  cost_unknown?: number;
  cache_read_tokens?: number;
  cache_creation_tokens?: number;
  /** The child's stderr file (bounded), when kept. */
  stderr?: string | null;
}

export interface MessageRow {
  id: number;
  from_id: string;
  to_id: string;
  text: string;
  created_at: number;
  delivered_at: number | null;
  read_at: number | null;
}

export class JobStore {
  constructor(readonly db: Db) {}

  /** mixed period: until step 7 (JobService.createSync; tests' fixtures). */
  insertJob(j: NewJob, now: number): void {
    const seq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS s FROM jobs').get() as { s: number }).s;
    this.db
      .prepare(
        `INSERT INTO jobs (id, seq, parent_id, depth, title, prompt, provider, model, cwd, work_dir, repo_root, worktree, branch, base_commit,
          priority, max_turns, budget_usd, timeout_s, context_json, template, checks_json, retry, labels_json, depends_on_json, status,
          session_id, token_hash, created_at, updated_at, workflow_id, phase, cycle, json_schema, project)
         VALUES (@id, @seq, @parent_id, @depth, @title, @prompt, @provider, @model, @cwd, @work_dir, @repo_root, @worktree, @branch, @base_commit,
          @priority, @max_turns, @budget_usd, @timeout_s, @context_json, @template, @checks_json, @retry, @labels_json, @depends_on_json, @status,
          @session_id, @token_hash, @created_at, @created_at, @workflow_id, @phase, @cycle, @json_schema, @project)`,
      )
      .run({ ...j, project: j.project ?? null, seq, created_at: now });
    const dep = this.db.prepare('INSERT INTO job_deps (job_id, dep_id) VALUES (?, ?)');
    for (const d of JSON.parse(j.depends_on_json) as string[]) dep.run(j.id, d);
  }

  get(id: string): JobRow | undefined {
    return this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
  }

  /** Update columns of a job; `updated_at` is always set. */
  update(id: string, fields: Partial<JobRow>, now: number): void {
    if ('token_hash' in fields) bumpTokenEpoch();
    const keys = Object.keys(fields).filter((k) => k !== 'id');
    const sets = [...keys.map((k) => `${k} = @${k}`), 'updated_at = @__now'].join(', ');
    this.db.prepare(`UPDATE jobs SET ${sets} WHERE id = @__id`).run({ ...nullify(fields), __now: now, __id: id });
  }

  byStatus(...statuses: JobStatus[]): JobRow[] {
    return this.db.prepare(`SELECT * FROM jobs WHERE status IN (${statuses.map(() => '?').join(',')}) ORDER BY seq`).all(...statuses) as JobRow[];
  }

  /** All descendants of `id` (not including it), breadth first. */
  descendants(id: string): JobRow[] {
    return this.db
      .prepare(
        `WITH RECURSIVE d(id) AS (SELECT id FROM jobs WHERE parent_id = ? UNION ALL SELECT j.id FROM jobs j JOIN d ON j.parent_id = d.id)
         SELECT jobs.* FROM jobs JOIN d ON jobs.id = d.id ORDER BY jobs.depth, jobs.seq`,
      )
      .all(id) as JobRow[];
  }

  /** Is `id` inside the subtree rooted at `root` (or equal to it)? */
  inSubtree(root: string, id: string): boolean {
    const row = this.db
      .prepare(`WITH RECURSIVE up(id, parent_id) AS (SELECT id, parent_id FROM jobs WHERE id = ? UNION ALL SELECT j.id, j.parent_id FROM jobs j JOIN up ON j.id = up.parent_id) SELECT 1 AS hit FROM up WHERE id = ?`)
      .get(id, root);
    return row !== undefined;
  }

  depsOf(jobId: string): { id: string; status: JobStatus }[] {
    return this.db.prepare('SELECT jobs.id, jobs.status FROM job_deps JOIN jobs ON jobs.id = job_deps.dep_id WHERE job_deps.job_id = ?').all(jobId) as { id: string; status: JobStatus }[];
  }

  depsOfIds(ids: string[]): { id: string; status: JobStatus }[] {
    if (ids.length === 0) return [];
    return this.db.prepare(`SELECT id, status FROM jobs WHERE id IN (${ids.map(() => '?').join(',')})`).all(...ids) as { id: string; status: JobStatus }[];
  }

  /** `project`: only that project's jobs; `hideArchived`: leave out jobs of archived projects (src/projects). */
  /** mixed period: until the rest of step 6b (cli/status, logsAll, messages, projects/broadcast); list_agents reads listJobs (src/store/sql/jobs.ts). */
  list(f: { status?: JobStatus; label?: string; parentId?: string | null; subtreeOf?: string; afterSeq?: number; limit: number; project?: string; hideArchived?: boolean }): JobRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.project !== undefined) { where.push('project = ?'); args.push(f.project); }
    if (f.hideArchived) where.push('(project IS NULL OR project NOT IN (SELECT name FROM projects WHERE archived_at IS NOT NULL))');
    if (f.status) { where.push('status = ?'); args.push(f.status); }
    if (f.label) { where.push('EXISTS (SELECT 1 FROM json_each(labels_json) WHERE value = ?)'); args.push(f.label); }
    if (f.parentId !== undefined) {
      if (f.parentId === null) where.push('parent_id IS NULL');
      else { where.push('parent_id = ?'); args.push(f.parentId); }
    }
    if (f.subtreeOf) {
      where.push(`id IN (WITH RECURSIVE d(id) AS (SELECT id FROM jobs WHERE parent_id = ? UNION ALL SELECT j.id FROM jobs j JOIN d ON j.parent_id = d.id) SELECT id FROM d)`);
      args.push(f.subtreeOf);
    }
    if (f.afterSeq !== undefined) { where.push('seq > ?'); args.push(f.afterSeq); }
    const sql = `SELECT * FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq LIMIT ?`;
    return this.db.prepare(sql).all(...args, f.limit) as JobRow[];
  }

  /** Ids close to an unknown one, for "did you mean" errors: same prefix first, then the most recent. */
  nearbyIds(id: string, max = 5): string[] {
    const prefix = id.slice(0, 4);
    const similar = this.db.prepare('SELECT id FROM jobs WHERE id LIKE ? ORDER BY seq DESC LIMIT ?').all(`${prefix}%`, max) as { id: string }[];
    const recent = this.db.prepare('SELECT id FROM jobs ORDER BY seq DESC LIMIT ?').all(max) as { id: string }[];
    return [...new Set([...similar, ...recent].map((r) => r.id))].slice(0, max);
  }

  // attempts
  /** mixed period: until step 6b (the fixtures of the readers' tests). */
  insertAttempt(a: AttemptRow): void {
    this.db
      .prepare(`INSERT INTO attempts (job_id, n, kind, status, started_at, ended_at, session_id, pid, exit_code, signal, turns, cost_usd, failure_class, error, diagnosis, transcript, stderr)
        VALUES (@job_id, @n, @kind, @status, @started_at, @ended_at, @session_id, @pid, @exit_code, @signal, @turns, @cost_usd, @failure_class, @error, @diagnosis, @transcript, @stderr)`)
      .run({ stderr: null, ...a });
  }

  attempts(jobId: string): AttemptRow[] {
    return this.db.prepare('SELECT * FROM attempts WHERE job_id = ? ORDER BY n').all(jobId) as AttemptRow[];
  }

  lastAttempt(jobId: string): AttemptRow | undefined {
    return this.db.prepare('SELECT * FROM attempts WHERE job_id = ? ORDER BY n DESC LIMIT 1').get(jobId) as AttemptRow | undefined;
  }

  // events
  addEvent(jobId: string, at: number, kind: string, data?: unknown): void {
    this.db.prepare('INSERT INTO events (job_id, at, kind, data_json) VALUES (?, ?, ?, ?)').run(jobId, at, kind, data === undefined ? null : JSON.stringify(data));
  }

  events(jobId: string, limit = 200): { id: number; at: number; kind: string; data_json: string | null }[] {
    return this.db.prepare('SELECT id, at, kind, data_json FROM events WHERE job_id = ? ORDER BY id DESC LIMIT ?').all(jobId, limit).reverse() as { id: number; at: number; kind: string; data_json: string | null }[];
  }

  // messages
  addMessage(from: string, to: string, text: string, now: number, delivered: boolean): number {
    return Number(this.db.prepare('INSERT INTO messages (from_id, to_id, text, created_at, delivered_at) VALUES (?, ?, ?, ?, ?)').run(from, to, text, now, delivered ? now : null).lastInsertRowid);
  }

  undeliveredMessages(to: string): MessageRow[] {
    return this.db.prepare('SELECT * FROM messages WHERE to_id = ? AND delivered_at IS NULL ORDER BY id').all(to) as MessageRow[];
  }

  markDelivered(ids: number[], now: number): void {
    const st = this.db.prepare('UPDATE messages SET delivered_at = ? WHERE id = ?');
    for (const id of ids) st.run(now, id);
  }
}

/** better-sqlite3 refuses `undefined` bindings: store them as NULL. */
function nullify(o: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === undefined ? null : v]));
}
