// Health warnings of jobs (src/floor/health.ts decides them, src/floor/monitor.ts raises and
// clears them): their kinds and their row. One open row per (job, kind): raising an open warning
// again is a no-op. Every read and write is on the layer (src/store/sql/warnings.ts).

export const WARNING_KINDS = ['stalled', 'turns_high', 'budget_high', 'time_high', 'long_running', 'commands_failed'] as const;
export type WarningKind = (typeof WARNING_KINDS)[number];

export interface WarningRow {
  id: number;
  job_id: string;
  kind: WarningKind;
  detail: string;
  raised_at: number;
  cleared_at: number | null;
  lead_seen_at: number | null;
  reaction: string | null;
}
