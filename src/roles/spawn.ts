// The role of a new job, decided before anything is written: resolved (built-in or
// .overseer/roles/<name>.md), checked against the spawning agent's own role (never wider), and
// turned into the job's columns. Without `role`, a sub-agent gets its parent's role (a reviewer's
// helpers review too) and the lead's agents are implementers, as before roles.
import { join } from 'node:path';
import { ForbiddenError } from '../errors.js';
import { DEFAULT_ROLE, isBuiltin, parseStoredRole, readOnly, widerThan, type RoleSpec } from './role.js';
import { resolveRole } from './load.js';

export interface RoleSources {
  /** The settings directory (settingsDirOf(config)): custom roles are `<dir>/roles/<name>.md`. */
  settingsDir: string;
  /** prompts/*.md (src/prompts/load.ts). */
  prompts: { render(name: string, vars: Record<string, string | number>): string };
}

export const rolesDirOf = (settingsDir: string): string => join(settingsDir, 'roles');

/** The role a spawn asks for (or its default), refused when unknown, invalid or wider than the parent's. */
export function roleForSpawn(src: RoleSources, asked: string | undefined, parent: { id: string; role?: string | null; role_json?: string | null } | undefined): RoleSpec {
  const parentRole = parseStoredRole(parent?.role_json);
  const name = asked ?? parentRole?.name ?? DEFAULT_ROLE;
  const role = asked === undefined && parentRole ? parentRole : resolveRole(name, rolesDirOf(src.settingsDir), (n) => builtinText(src, n));
  const why = widerThan(role, parentRole);
  if (why) throw new ForbiddenError(`${parent!.id}: ${why}`);
  return role;
}

function builtinText(src: RoleSources, name: string): string {
  return name === DEFAULT_ROLE ? '' : src.prompts.render(`role-${name}`, {});
}

/** The job's columns: role (its name) and role_json (null for a plain implementer). */
export function roleColumns(role: RoleSpec): { role: string; role_json: string | null } {
  const plain = role.name === DEFAULT_ROLE && !role.instructions;
  return { role: role.name, role_json: plain ? null : JSON.stringify(role) };
}

/** The role's section of the agent's first prompt ('' when it has none). */
export function roleSection(src: Pick<RoleSources, 'prompts'>, role: RoleSpec | undefined): string {
  if (!role) return '';
  if (isBuiltin(role.name)) return role.instructions;
  const limits = [
    role.writes === undefined ? '' : readOnly(role) ? 'You may not write anything: every write is refused and your work tree is read-only.' : `You may write only ${role.writes.join(', ')} (paths in your work tree); other writes are refused.`,
    role.tools ? `You may use only these tools (besides Overseer's): ${role.tools.join(', ')}.` : '',
    role.denied?.length ? `You may not use: ${role.denied.join(', ')}.` : '',
  ].filter(Boolean).join(' ');
  return src.prompts.render('role-custom', { name: role.name, limits: limits ? `${limits}\n\n` : '', instructions: role.instructions });
}
