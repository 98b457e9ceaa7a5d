// Roles (issue 31 point 4): what the rest of the hub uses of src/roles.
import type { LaunchSpec } from '../launch/types.js';
import { parseStoredRole, readOnly } from './role.js';

export { parseStoredRole, readOnly, roleRefusal, widerThan, BUILTIN_ROLES, type RoleSpec } from './role.js';
export { roleSection, roleForSpawn, roleColumns, rolesDirOf } from './spawn.js';
export { resolveRole, parseRoleFile, customRoleNames } from './load.js';
export { roleOfJob, roleOfRow } from './jobRole.js';

/** What the CLI is told of a job's role: plan mode, a read-only tree and sandbox, the tools it never gets. */
export function launchRole(job: { role_json?: string | null }): LaunchSpec['role'] {
  const r = parseStoredRole(job.role_json);
  if (!r) return undefined;
  // Claude Code is told the built-in tools by name (its own `mcp__…` patterns differ): the hook and the policy enforce the rest.
  const builtin = (l: readonly string[] | undefined): string[] => (l ?? []).filter((t) => /^[A-Za-z]+$/.test(t));
  return {
    ...(r.plan ? { plan: true } : {}), ...(readOnly(r) ? { readOnly: true } : {}),
    ...(builtin(r.denied).length ? { disallowedTools: builtin(r.denied) } : {}),
    ...(r.tools ? { tools: builtin(r.tools) } : {}),
  };
}
