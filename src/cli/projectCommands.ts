// `overseer usage`, `projects` and `project`: the commands only; what they do (the database, the
// hub, the reports) is loaded when one runs, so `overseer --help` loads none of it.
import type { Command } from 'commander';
import { USAGE_DIMENSIONS } from '../contract/usageDimensions.js';
import { UsageError } from './errors.js';
import type { Common, ProjectOpts, UsageOpts } from './projects.js';

const impl = () => import('./projects.js');

export function registerProjects(program: Command): void {
  program.command('usage').description('what the crew cost: tokens (input, output, cache), cost, runs and jobs by model, provider, label, workflow, template, project, day or kind')
    .option('--by <dimension>', `group by ${USAGE_DIMENSIONS.join('|')} (default: provider and model)`)
    .option('--since <when>', 'only runs since then: 24h, 7d, 30m or an ISO time').option('--project <name>', 'only this project\'s runs').option('--json', 'the report as JSON')
    .action(async (o: UsageOpts) => (await impl()).runUsage(o));
  program.command('projects').description('every project: jobs by status, cost, flagged, archived, last activity')
    .option('--archived', 'only archived projects').option('--active', 'only projects not archived').option('--json', 'machine-readable output')
    .action(async (o: Common & { archived?: boolean; active?: boolean }) => {
      if (o.archived && o.active) throw new UsageError('--archived and --active: give one');
      const p = await impl();
      const ps = await p.listProjects(o.archived ? { archived: true } : o.active ? { archived: false } : {});
      p.out(o.json ? JSON.stringify({ projects: ps }, null, 2) : p.projectsTable(ps));
    });
  program.command('project <name>').description('show a project, or archive, flag or annotate it (changes go through the running hub)')
    .option('--archive', 'hide it from status, watch and list_agents (unless named) and refuse new agents in it').option('--unarchive', 'make it active again')
    .option('--flag', 'flag it').option('--unflag', 'clear its flag').option('--note <text>', 'set its note').option('--clear-note', 'remove its note').option('--json', 'machine-readable output')
    .action(async (name: string, o: ProjectOpts) => (await impl()).runProject(name, o));
}
