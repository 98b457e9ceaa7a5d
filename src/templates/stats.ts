// How each template has done: runs, success rate, average cost, turns and duration, per
// template and, within it, per model. Read-only over the jobs table (the sums are one statement on
// the asynchronous layer, src/store/sql/templates.ts), so it works on a database opened read-only
// by the CLI while a hub is writing.
//
// Definitions: `runs` counts every job spawned with the template; `ended` the jobs in a
// terminal status (succeeded, failed, cancelled; an interrupted job can still be resumed, so
// it is not ended); `success_rate` = succeeded / ended. Averages are over ended jobs (a running
// job's cost and turns are still growing); the duration average is over ended jobs that
// started (a job cancelled while queued has no duration). null when nothing qualifies.
import { templateSums, type TemplateSums } from '../store/sql/templates.js';
import type { Q } from '../store/sql/tx.js';

export interface RunStats {
  runs: number;
  ended: number;
  succeeded: number;
  success_rate: number | null;
  avg_cost_usd: number | null;
  avg_turns: number | null;
  avg_duration_s: number | null;
}

export interface ModelStats extends RunStats {
  /** null: the provider's default model. */
  model: string | null;
}

export interface TemplateStats extends RunStats {
  template: string;
  by_model: ModelStats[];
}

type Sums = Omit<TemplateSums, 'template' | 'model'>;

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

function finish(s: Sums): RunStats {
  return {
    runs: s.runs,
    ended: s.ended,
    succeeded: s.succeeded,
    success_rate: s.ended > 0 ? s.succeeded / s.ended : null,
    avg_cost_usd: s.ended > 0 ? round(s.cost / s.ended, 6) : null,
    avg_turns: s.ended > 0 ? round(s.turns / s.ended, 2) : null,
    avg_duration_s: s.timed > 0 ? round(s.dur_ms / s.timed / 1000, 1) : null,
  };
}

const add = (a: Sums, b: Sums): Sums => ({
  runs: a.runs + b.runs, ended: a.ended + b.ended, succeeded: a.succeeded + b.succeeded,
  cost: a.cost + b.cost, turns: a.turns + b.turns, dur_ms: a.dur_ms + b.dur_ms, timed: a.timed + b.timed,
});

/** Stats of every template that has run at least once, by template name, each with a per-model breakdown. */
export async function templateStats(q: Q): Promise<TemplateStats[]> {
  const out = new Map<string, { sums: Sums; by_model: ModelStats[] }>();
  for (const r of await templateSums(q)) {
    const { template, model, ...sums } = r;
    const cur = out.get(template);
    if (cur) cur.sums = add(cur.sums, sums);
    else out.set(template, { sums, by_model: [] });
    out.get(template)!.by_model.push({ model, ...finish(sums) });
  }
  return [...out].map(([template, v]) => ({ template, ...finish(v.sums), by_model: v.by_model }));
}
