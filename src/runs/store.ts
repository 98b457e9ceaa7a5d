// The runs and run_tasks tables (migration 20): a run of a dispatch file and, per task, its
// state in the run and the job(s) it had.
import type { Db } from '../store/db.js';
import type { RunRules, TaskSpec } from './file.js';

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'stopped' | 'timed_out' | 'cancelled';
/** pending: no job yet; started: job_id is its job; skipped: a dependency did not succeed; error: its job could not be created. */
export type TaskState = 'pending' | 'started' | 'skipped' | 'error';

export interface RunRow {
  id: string;
  title: string;
  file: string | null;
  content: string;
  format: string;
  rules_json: string;
  status: RunStatus;
  note: string | null;
  deadline_at: number | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface RunTaskRow {
  run_id: string;
  task_id: string;
  n: number;
  spec_json: string;
  state: TaskState;
  job_id: string | null;
  job_ids_json: string;
  error: string | null;
}

export class RunStore {
  constructor(private readonly db: Db) {}

  insert(run: Omit<RunRow, 'updated_at' | 'ended_at' | 'note'>, tasks: TaskSpec[]): void {
    this.db.prepare(`INSERT INTO runs (id, title, file, content, format, rules_json, status, note, deadline_at, created_at, updated_at, ended_at)
      VALUES (@id, @title, @file, @content, @format, @rules_json, @status, NULL, @deadline_at, @created_at, @created_at, NULL)`).run(run);
    const ins = this.db.prepare(`INSERT INTO run_tasks (run_id, task_id, n, spec_json, state, job_id, job_ids_json, error) VALUES (?, ?, ?, ?, 'pending', NULL, '[]', NULL)`);
    tasks.forEach((t, n) => ins.run(run.id, t.id, n, JSON.stringify(t)));
  }

  get(id: string): RunRow | undefined {
    return this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
  }

  list(limit: number): RunRow[] {
    return this.db.prepare('SELECT * FROM runs ORDER BY created_at DESC, rowid DESC LIMIT ?').all(limit) as RunRow[];
  }

  running(): RunRow[] {
    return this.db.prepare("SELECT * FROM runs WHERE status = 'running' AND kind = 'dispatch'").all() as RunRow[];
  }

  /** Ids of runs that start with `prefix` (for CLI prefixes and "did you mean"). */
  ids(prefix = ''): string[] {
    return (this.db.prepare("SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\' ORDER BY created_at DESC LIMIT 20").all(`${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`) as { id: string }[]).map((r) => r.id);
  }

  tasks(runId: string): RunTaskRow[] {
    return this.db.prepare('SELECT * FROM run_tasks WHERE run_id = ? ORDER BY n').all(runId) as RunTaskRow[];
  }

  /** The running run a job belongs to, if any. */
  runOfJob(jobId: string): string | undefined {
    const r = this.db.prepare("SELECT t.run_id FROM run_tasks t JOIN runs r ON r.id = t.run_id WHERE t.job_id = ? AND r.status = 'running'").get(jobId) as { run_id: string } | undefined;
    return r?.run_id;
  }

  update(id: string, f: Partial<Pick<RunRow, 'status' | 'note' | 'deadline_at' | 'ended_at'>>, now: number): void {
    const keys = Object.keys(f);
    if (!keys.length) return;
    this.db.prepare(`UPDATE runs SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @now WHERE id = @id`).run({ ...f, id, now });
  }

  setTask(runId: string, taskId: string, f: Partial<Pick<RunTaskRow, 'state' | 'job_id' | 'job_ids_json' | 'error'>>): void {
    const keys = Object.keys(f);
    if (!keys.length) return;
    this.db.prepare(`UPDATE run_tasks SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE run_id = @runId AND task_id = @taskId`).run({ ...f, runId, taskId });
  }
}

export function rulesOf(r: RunRow): RunRules {
  return JSON.parse(r.rules_json) as RunRules;
}
