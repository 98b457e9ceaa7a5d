// Projects (issue 12 point 6): a name on jobs that sub-agents, workflow phases, batch runs and
// debates carry, with an archive and a flag per project. The rules every creator of jobs goes
// through: JobService.create checks the name and refuses an archived project; spawn_agent
// makes a sub-agent inherit its parent's project. list_projects and update_project are the
// lead's tools over it.
import type { JobRow } from '../store/jobs.js';
import { ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import { isoTime } from '../clock.js';
import { projectNameMessage, projectNameProblem } from '../contract/projectNames.js';
import { changeProject, getProject, projectExists, projectStats, type ProjectStats } from '../store/sql/projects.js';
import type { Q } from '../store/sql/tx.js';
import type { ProjectView } from '../contract/projects.js';

export type { ProjectView };

const unarchiveHint = (name: string): string =>
  `unarchive it first (update_project { name: ${JSON.stringify(name)}, archived: false }, or overseer project ${name} --unarchive), or use another project`;

/**
 * May new jobs go into `name`? Throws InvalidInputError for a bad name and InvalidStateError
 * for an archived project. Writes nothing. spawn_agent asks it before anything is written.
 */
export async function assertProjectOpen(q: Q, name: string): Promise<void> {
  const problem = projectNameProblem(name);
  if (problem) throw new InvalidInputError(projectNameMessage(name, problem));
  refuseArchived(name, await getProject(q, name));
}

function refuseArchived(name: string, row: { archived_at: number | null } | undefined): void {
  if (row?.archived_at != null) {
    throw new InvalidStateError(`project ${JSON.stringify(name)} is archived (since ${isoTime(row.archived_at)}): no new agents start in it. Nothing was started; ${unarchiveHint(name)}.`);
  }
}

/**
 * The project of a new job: the caller's own for an agent's sub-agent (asking for another one
 * is refused), else what the lead asked for (none when it did not).
 */
export function projectForSpawn(parent: Pick<JobRow, 'id' | 'project'> | undefined, asked: string | undefined): string | null {
  if (!parent) return asked ?? null;
  const own = parent.project ?? null;
  if (asked !== undefined && asked !== own) {
    throw new ForbiddenError(`project ${JSON.stringify(asked)}: a sub-agent belongs to its parent's project (${own === null ? 'none' : JSON.stringify(own)}) and an agent cannot put it in another one. Omit project (it is inherited), or ask the lead to start the agent in ${JSON.stringify(asked)}.`);
  }
  return own;
}

const usd = (v: number): number => Math.round(v * 1e6) / 1e6;

export function projectView(s: ProjectStats): ProjectView {
  return {
    name: s.name, archived: s.archived_at !== null, archived_at: s.archived_at === null ? null : isoTime(s.archived_at),
    flagged: !!s.flagged, note: s.note, jobs: s.jobs, by_status: s.by_status,
    cost_usd: s.cost_unknown ? null : usd(s.cost_usd), ...(s.cost_unknown ? { cost_lower_bound_usd: usd(s.cost_usd) } : {}),
    last_activity: s.last_activity === null ? null : isoTime(s.last_activity), created_at: s.created_at === null ? null : isoTime(s.created_at),
  };
}

export interface UpdateProject { name: string; archived?: boolean; flagged?: boolean; note?: string | null }

export class ProjectService {
  constructor(private readonly q: Q, private readonly now: () => number) {}

  async list(o: { archived?: boolean; flagged?: boolean } = {}): Promise<{ projects: ProjectView[] }> {
    const all = (await projectStats(this.q)).filter((s) => (o.archived === undefined || (s.archived_at !== null) === o.archived) && (o.flagged === undefined || !!s.flagged === o.flagged));
    return { projects: all.map(projectView) };
  }

  async view(name: string): Promise<ProjectView> {
    const s = (await projectStats(this.q)).find((p) => p.name === name);
    if (!s) throw await this.unknown(name);
    return projectView(s);
  }

  async update(i: UpdateProject): Promise<ProjectView> {
    const problem = projectNameProblem(i.name);
    if (problem) throw new InvalidInputError(projectNameMessage(i.name, problem));
    if (i.archived === undefined && i.flagged === undefined && i.note === undefined) {
      throw new InvalidInputError('update_project changes nothing: pass archived, flagged or note (note: null clears it).');
    }
    if (!(await projectExists(this.q, i.name))) throw await this.unknown(i.name);
    await changeProject(this.q, i.name, { archived: i.archived, flagged: i.flagged, note: i.note }, this.now());
    return this.view(i.name);
  }

  private async unknown(name: string): Promise<NotFoundError> {
    const known = (await projectStats(this.q)).map((s) => s.name);
    return new NotFoundError(`No project ${JSON.stringify(name)}: no job was ever started in it.${known.length ? ` Known projects: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', …' : ''}.` : ' There are no projects yet.'} A project comes into being with spawn_agent { project } or start_workflow { project }.`);
  }
}
