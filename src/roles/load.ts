// Role files: `.overseer/roles/<name>.md` in the settings directory (settingsDirOf(config)). YAML
// front matter says what the role may do; the Markdown body is its standing instructions, added to
// the agent's first prompt. Read at spawn time (a new or edited file takes effect on the next
// spawn; a running agent keeps the role it was spawned with). Every error names the file and line.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseFrontMatter } from '../templates/frontMatter.js';
import { InvalidInputError } from '../errors.js';
import { BUILTIN_ROLES, builtinRole, isBuiltin, type RoleSpec } from './role.js';

export const ROLE_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const text = z.string({ invalid_type_error: 'must be text' });
const toolList = z.array(text.min(1).max(200), { invalid_type_error: 'must be a list of tool names, e.g. [Read, Bash]' }).max(100);
const FrontMatterSchema = z.object({
  name: text.optional(),
  description: text.max(1000, 'must be at most 1000 characters').optional(),
  allowed_tools: toolList.optional(),
  denied_tools: toolList.optional(),
  writes: z.array(text.min(1).max(500), { invalid_type_error: 'must be a list of path globs relative to the work tree, e.g. ["docs/**"], or [] for none' }).max(100).optional(),
  model: text.min(1).max(200).optional(),
  provider: z.enum(['claude', 'codex'], { errorMap: () => ({ message: 'must be "claude" or "codex"' }) }).optional(),
}).strict();
const KNOWN_KEYS = Object.keys(FrontMatterSchema.shape).filter((k) => k !== 'name');

/** Parse one role file's text. Throws InvalidInputError naming the file, the line and the key. */
export function parseRoleFile(name: string, file: string, textOf: string): RoleSpec {
  const { data, lines, body } = parseFrontMatter(file, textOf);
  const at = (key: string): string => `${file}:${lines[key] ?? 1}`;
  const raw: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) if (v !== null && v !== '') raw[k] = v;
  const parsed = FrontMatterSchema.safeParse(raw);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      if (i.code === z.ZodIssueCode.unrecognized_keys) {
        for (const k of i.keys) problems.push(`${at(k)}: unknown key ${JSON.stringify(k)}: known keys are ${KNOWN_KEYS.join(', ')}`);
        continue;
      }
      const key = String(i.path[0] ?? '?');
      problems.push(`${at(key)}: ${key} = ${JSON.stringify(raw[key] ?? '')}: ${i.message}`);
    }
  } else if (parsed.data.name !== undefined && parsed.data.name !== name) {
    problems.push(`${at('name')}: name = ${JSON.stringify(parsed.data.name)}: must match the file name (${JSON.stringify(name)}) or be left out`);
  }
  if (!parsed.success || problems.length) throw new InvalidInputError(`Invalid role file ${file}:\n  ${problems.join('\n  ')}`);
  const d = parsed.data;
  return {
    name,
    ...(d.writes ? { writes: d.writes } : {}),
    ...(d.allowed_tools ? { tools: d.allowed_tools } : {}),
    ...(d.denied_tools ? { denied: d.denied_tools } : {}),
    ...(d.model ? { model: d.model } : {}),
    ...(d.provider ? { provider: d.provider } : {}),
    instructions: body.trim(),
  };
}

/** The custom roles defined in `rolesDir` (names only). */
export function customRoleNames(rolesDir: string): string[] {
  if (!existsSync(rolesDir)) return [];
  return readdirSync(rolesDir).filter((f) => f.endsWith('.md')).map((f) => f.slice(0, -3)).filter((n) => ROLE_NAME_RE.test(n) && !isBuiltin(n)).sort();
}

/**
 * The role called `name`: a built-in one (its instructions from `builtinText`, i.e.
 * prompts/role-<name>.md) or `<rolesDir>/<name>.md`. Unknown names are refused with the known ones.
 */
export function resolveRole(name: string, rolesDir: string, builtinText: (name: string) => string): RoleSpec {
  if (isBuiltin(name)) return { ...builtinRole(name), instructions: builtinText(name) };
  const known = (): string => `known roles: ${[...BUILTIN_ROLES, ...customRoleNames(rolesDir)].join(', ')}; a custom role is a file ${join(rolesDir, '<name>.md')}`;
  if (!ROLE_NAME_RE.test(name)) throw new InvalidInputError(`role ${JSON.stringify(name)} is not a valid role name (lowercase letters, digits, "-" and "_"): ${known()}`);
  const file = join(rolesDir, `${name}.md`);
  let textOf: string;
  try {
    textOf = readFileSync(file, 'utf8');
  } catch {
    throw new InvalidInputError(`unknown role ${JSON.stringify(name)}: ${known()}`);
  }
  return parseRoleFile(name, file, textOf);
}
