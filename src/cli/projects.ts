// `overseer usage`, `overseer projects` and `overseer project <name>`: what the crew cost
// (src/money/usageReport.ts) and the projects (src/projects). Reads go to the running hub's
// tools (usage, list_projects) when one answers, else to the state database read-only; changes
// (archive, flag, note) go through the hub's update_project only.
import { loadConfig } from '../config.js';
import { liveHub } from '../hubfiles/hubLock.js';
import { CliError, UsageError } from './errors.js';
import { choiceOption } from './args.js';
import { table } from './status.js';
import { PROJECT_NAME } from '../contract/projectNames.js';
import { USAGE_DIMENSIONS, bucketsBy, usageAnswer, usageReport, type UsageBucket, type UsageDimension, type UsageReport } from '../money/usageReport.js';
import { costText, usageText } from '../money/usageText.js';
import type { ProjectView } from '../projects/service.js';

export interface Common { json?: boolean }

export const out = (s: string): void => { process.stdout.write(s.endsWith('\n') ? s : `${s}\n`); };

function checkProjectOption(name: string | undefined, opt = '--project'): void {
  if (name !== undefined && !PROJECT_NAME.test(name)) throw new UsageError(`${opt} ${JSON.stringify(name)} is not a project name: 1..100 letters, digits, "-", "_", "." or "/"`);
}

/** `f` against the running hub's tools, or undefined when no hub answers. */
async function viaHub<T>(f: (call: (tool: string, args: Record<string, unknown>) => Promise<any>) => Promise<T>): Promise<T | undefined> {
  const { home } = loadConfig();
  if (!(await liveHub(home))) return undefined;
  const { connectHub } = await import('./hubTools.js');
  const h = await connectHub(home);
  try {
    return await f((tool, args) => h.call(tool, args));
  } finally {
    await h.close();
  }
}

async function withState<T>(f: (s: import('./state.js').State) => T | Promise<T>): Promise<T> {
  const { openState } = await import('./state.js');
  const s = await openState();
  try {
    return await f(s);
  } finally {
    await s.close();
  }
}

export interface UsageOpts extends Common { by?: string; since?: string; project?: string }

export async function runUsage(o: UsageOpts): Promise<void> {
  const by = choiceOption('by', o.by, USAGE_DIMENSIONS);
  checkProjectOption(o.project);
  const dims: UsageDimension[] = by ? [by] : ['provider', 'model'];
  const args = { ...(o.since !== undefined ? { since: o.since } : {}), ...(o.project !== undefined ? { project: o.project } : {}) };
  const fromHub = await viaHub(async (call) => {
    if (o.json) return { json: await call('usage', { ...args, ...(by ? { by } : {}) }) as unknown };
    const parts = await Promise.all(dims.map((d) => call('usage', { ...args, by: d }) as Promise<{ since: string | null; project: string | null; totals: UsageBucket; buckets: UsageBucket[] }>));
    return { text: usageText(parts[0]!, parts.map((p, i) => ({ by: dims[i]!, buckets: p.buckets }))) };
  });
  if (fromHub) return out('json' in fromHub ? JSON.stringify(fromHub.json, null, 2) : fromHub.text);
  const { parseSince } = await import('../search/query.js');
  let sinceMs: number | undefined;
  try {
    sinceMs = o.since === undefined ? undefined : parseSince(o.since, Date.now());
  } catch (err) {
    throw new UsageError(`--${(err as Error).message}`);
  }
  const r: UsageReport = await withState(async (s) => {
    try {
      return await usageReport(s.sql.db, { sinceMs, project: o.project });
    } catch (err) {
      throw new CliError(`The usage could not be read from this database (${(err as Error).message}); a running hub of this version upgrades it.`);
    }
  });
  if (o.json) return out(JSON.stringify(usageAnswer(r, by), null, 2));
  out(usageText(r, dims.map((d) => ({ by: d, buckets: bucketsBy(r, d) }))));
}

export function projectsTable(ps: readonly ProjectView[]): string {
  if (ps.length === 0) return 'No projects yet: spawn_agent { project } (or start_workflow { project }) starts one.\n';
  const st = (p: ProjectView): string => Object.entries(p.by_status).map(([k, v]) => `${v} ${k}`).join(', ') || '-';
  return `${table([
    ['PROJECT', 'STATE', 'JOBS', 'BY STATUS', 'COST', 'LAST ACTIVITY', 'NOTE'],
    ...ps.map((p) => [
      p.name, [p.archived ? 'archived' : 'active', ...(p.flagged ? ['flagged'] : [])].join(', '), String(p.jobs), st(p),
      costText({ cost_usd: p.cost_usd ?? p.cost_lower_bound_usd ?? null, cost_unknown: p.cost_usd === null }),
      p.last_activity ?? '-', (p.note ?? '').replace(/\s+/g, ' ').slice(0, 60),
    ]),
  ])}\n`;
}

export async function listProjects(filter: { archived?: boolean }): Promise<ProjectView[]> {
  const fromHub = await viaHub(async (call) => (await call('list_projects', filter)) as { projects: ProjectView[] });
  if (fromHub) return fromHub.projects;
  const { ProjectService } = await import('../projects/service.js');
  return withState(async (s) => {
    try {
      return (await new ProjectService(s.sql.db, Date.now).list(filter)).projects;
    } catch (err) {
      throw new CliError(`The projects could not be read from this database (${(err as Error).message}); a running hub of this version upgrades it.`);
    }
  });
}

export interface ProjectOpts extends Common { archive?: boolean; unarchive?: boolean; flag?: boolean; unflag?: boolean; note?: string; clearNote?: boolean }

export async function runProject(name: string, o: ProjectOpts): Promise<void> {
  checkProjectOption(name, 'project');
  if (o.archive && o.unarchive) throw new UsageError('--archive and --unarchive: give one');
  if (o.flag && o.unflag) throw new UsageError('--flag and --unflag: give one');
  if (o.note !== undefined && o.clearNote) throw new UsageError('--note and --clear-note: give one');
  const change = {
    ...(o.archive || o.unarchive ? { archived: !!o.archive } : {}),
    ...(o.flag || o.unflag ? { flagged: !!o.flag } : {}),
    ...(o.note !== undefined ? { note: o.note } : o.clearNote ? { note: null } : {}),
  };
  let p: ProjectView | undefined;
  if (Object.keys(change).length) {
    p = await viaHub(async (call) => (await call('update_project', { name, ...change })) as ProjectView);
    if (!p) throw new CliError(`No Overseer hub is running: archiving, flagging and notes go through the hub (start one with overseer serve, or open your lead's Claude Code). overseer project ${name} without options shows it from the database.`);
  } else {
    p = (await listProjects({})).find((x) => x.name === name);
    if (!p) throw new UsageError(`No project ${JSON.stringify(name)}: no job was ever started in it. See overseer projects.`);
  }
  if (o.json) return out(JSON.stringify(p, null, 2));
  out(projectsTable([p]));
}
