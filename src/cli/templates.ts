// `overseer templates [--json]`: the project's templates (.overseer/templates/*.md) with how they
// have done so far (src/templates/stats.ts), read from the state database opened read-only
// (SQLite's file or PostgreSQL's, src/store/sql/readOnly.ts; works whether or not a hub runs).
// Invalid template files are listed with the valid ones, and make the command exit with 1 so a
// broken template cannot go unnoticed (e.g. in CI).
import { join } from 'node:path';
import { loadConfig, settingsDirOf } from '../config.js';
import { describeDefaults, scanTemplates, type Template, type TemplateProblem } from '../templates/templates.js';
import { openStateReadOnly } from '../store/sql/readOnly.js';
import { templateStats, type RunStats, type TemplateStats } from '../templates/stats.js';
import { table } from './status.js';

export interface TemplatesReport {
  dir: string;
  templates: (Pick<Template, 'name' | 'description' | 'file' | 'defaults'> & { stats: TemplateStats | null })[];
  /** Template files that could not be loaded. */
  invalid: TemplateProblem[];
  /** Stats of templates that jobs used but whose file is gone. */
  without_file: TemplateStats[];
}

/** Templates of `<settings>/templates` with their stats from the state database (`databaseUrl`'s,
 * else `<home>/state.db`; none if there is no database yet). */
export async function templatesReport(home: string, settingsDir = home, databaseUrl?: string): Promise<TemplatesReport> {
  const dir = join(settingsDir, 'templates');
  const { templates, problems } = scanTemplates(dir);
  let stats: TemplateStats[] = [];
  const s = await openStateReadOnly({ home, databaseUrl });
  if (s) {
    try {
      stats = await templateStats(s.sql.db);
    } finally {
      await s.close();
    }
  }
  const byName = new Map(stats.map((s) => [s.template, s]));
  const names = new Set([...templates.map((t) => t.name), ...problems.map((p) => p.name)]);
  return {
    dir,
    templates: templates.map((t) => ({ name: t.name, description: t.description, file: t.file, defaults: t.defaults, stats: byName.get(t.name) ?? null })),
    invalid: problems,
    without_file: stats.filter((s) => !names.has(s.template)),
  };
}

const pct = (x: number | null): string => (x === null ? '-' : `${Math.round(x * 100)}%`);
const money = (x: number | null): string => (x === null ? '-' : `$${x.toFixed(4)}`);
const num = (x: number | null): string => (x === null ? '-' : String(x));
const secs = (x: number | null): string => (x === null ? '-' : x < 120 ? `${Math.round(x)}s` : `${Math.round(x / 60)}m`);
const statCells = (s: RunStats | null): string[] => (s ? [String(s.runs), pct(s.success_rate), money(s.avg_cost_usd), num(s.avg_turns), secs(s.avg_duration_s)] : ['0', '-', '-', '-', '-']);

/** The report as a table: one row per template, then one indented row per model it ran with. */
export function formatTemplates(r: TemplatesReport): string {
  const lines: string[] = [];
  if (r.templates.length === 0 && r.invalid.length === 0) {
    lines.push(`No templates in ${r.dir}.`, `Create ${join(r.dir, '<name>.md')}: front matter with spawn defaults (description, model, provider, cwd, checks, max_turns, budget_usd, timeout_s, worktree, retry), body with guidelines.`);
  } else if (r.templates.length > 0) {
    const rows: string[][] = [['TEMPLATE', 'MODEL', 'RUNS', 'SUCCESS', 'AVG COST', 'AVG TURNS', 'AVG TIME', 'DESCRIPTION']];
    for (const t of r.templates) {
      const desc = t.description || describeDefaults(t.defaults);
      rows.push([t.name, t.defaults.model ?? '(default)', ...statCells(t.stats), desc.replace(/\s+/g, ' ').slice(0, 60)]);
      if (t.stats && (t.stats.by_model.length > 1 || (t.stats.by_model[0] && t.stats.by_model[0].model !== (t.defaults.model ?? null)))) {
        for (const m of t.stats.by_model) rows.push(['', `  ${m.model ?? '(default)'}`, ...statCells(m), '']);
      }
    }
    lines.push(...table(rows).split('\n').map((l) => l.trimEnd()));
  }
  for (const s of r.without_file) lines.push(`(template ${s.template} has no file any more: ${s.runs} run(s), success ${pct(s.success_rate)})`);
  for (const p of r.invalid) lines.push(`invalid: ${p.message}`);
  return `${lines.join('\n')}\n`;
}

/** Prints the report; the exit code is 1 when a template file is invalid, else 0. */
export async function runTemplates(
  opts: { json?: boolean },
  io: { home?: string; write?: (s: string) => void; exitCode?: (code: number) => void } = {},
): Promise<void> {
  const config = io.home ? undefined : loadConfig();
  const home = io.home ?? config!.home;
  const write = io.write ?? ((s: string) => void process.stdout.write(s));
  const exitCode = io.exitCode ?? ((code: number) => { process.exitCode = code; });
  const r = await templatesReport(home, config ? settingsDirOf(config) : home, config?.databaseUrl);
  write(opts.json ? `${JSON.stringify(r, null, 2)}\n` : formatTemplates(r));
  exitCode(r.invalid.length > 0 ? 1 : 0);
}
