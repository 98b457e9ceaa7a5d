// A workflow's row, as a type only: every reader and writer of the rows is on the layer
// (src/store/sql/workflows.ts; the engine wraps them in src/workflow/rows.ts).

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
