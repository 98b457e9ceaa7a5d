// mixed period: until step 8 — the synchronous workflow rows that callers outside the workflow
// engine still use: the notifier's listener (src/floor/notify/listen.ts: get, byStatus) and the
// fixtures of bench/floor.ts and test/integration/notify.test.ts (insert, update, setPlan). The
// workflow engine itself is on the layer (src/store/sql/workflows.ts, src/workflow/rows.ts).
import type { Db } from './db.js';
import type { MilestoneRecord } from '../domain/milestones.js';

/** A workflow's row (the layer's table type in src/store/sql/schema.ts is made from it). */
export interface WorkflowRow {
  id: string;
  seq: number;
  title: string;
  task: string;
  status: string;
  cycle: number;
  phase: string;
  cwd: string;
  repo_root: string | null;
  worktree_path: string | null;
  branch: string | null;
  base_commit: string | null;
  implementer_json: string;
  reviewer_json: string;
  max_cycles: number;
  approve_plan: number;
  plan_approved: number;
  checks_json: string;
  template: string | null;
  phase_limits_json: string | null;
  state_json: string;
  blocked_json: string | null;
  current_job: string | null;
  approval_request: string | null;
  pr_url: string | null;
  git_note: string | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
  /** the plan as fixed after assess (null: no plan yet, or a workflow from before migration 10) */
  plan_text: string | null;
  /** The project its phase jobs carry (src/projects). */
  project?: string | null;
}

export class WorkflowStore {
  /** `onChange` hears every committed change of status, phase or cycle (the hub puts it on the bus). */
  constructor(private readonly db: Db, private readonly onChange?: (w: { id: string; status: string; phase: string; cycle: number }) => void) {}

  insert(w: Omit<WorkflowRow, 'seq' | 'updated_at'>): void {
    const seq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS s FROM workflows').get() as { s: number }).s;
    const cols = Object.keys(w);
    this.db.prepare(`INSERT INTO workflows (seq, updated_at, ${cols.join(', ')}) VALUES (@seq, @created_at, ${cols.map((c) => `@${c}`).join(', ')})`).run({ ...w, seq });
  }

  get(id: string): WorkflowRow | undefined {
    return this.db.prepare('SELECT * FROM workflows WHERE id = ?').get(id) as WorkflowRow | undefined;
  }

  update(id: string, fields: Partial<WorkflowRow>, now: number): void {
    const keys = Object.keys(fields);
    const sets = [...keys.map((k) => `${k} = @${k}`), 'updated_at = @__now'].join(', ');
    const vals = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v === undefined ? null : v]));
    this.db.prepare(`UPDATE workflows SET ${sets} WHERE id = @__id`).run({ ...vals, __now: now, __id: id });
    // After the current (synchronous) transaction, if any, has committed: events only wake readers.
    if (this.onChange && ('status' in fields || 'phase' in fields || 'cycle' in fields)) {
      queueMicrotask(() => {
        let w: WorkflowRow | undefined;
        try { w = this.get(id); } catch { return; /* the database closed meanwhile */ }
        if (w) this.onChange?.({ id, status: w.status, phase: w.phase, cycle: w.cycle });
      });
    }
  }

  byStatus(...statuses: string[]): WorkflowRow[] {
    return this.db.prepare(`SELECT * FROM workflows WHERE status IN (${statuses.map(() => '?').join(',')}) ORDER BY seq`).all(...statuses) as WorkflowRow[];
  }

  /** Replace the plan text and the whole milestone record (a fixture's). */
  setPlan(id: string, plan: string, record: readonly MilestoneRecord[], now: number): void {
    this.db.prepare('UPDATE workflows SET plan_text = ?, updated_at = ? WHERE id = ?').run(plan, now, id);
    this.db.prepare('DELETE FROM workflow_milestones WHERE workflow_id = ?').run(id);
    const ins = this.db.prepare('INSERT INTO workflow_milestones (workflow_id, idx, text, done_at, done_cycle, done_job) VALUES (?, ?, ?, ?, ?, ?)');
    record.forEach((m, i) => ins.run(id, i, m.text, m.done ? now : null, m.done ? m.cycle : null, m.done ? m.job : null));
  }
}
