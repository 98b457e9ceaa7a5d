// Project templates: `.overseer/templates/<name>.md` (the settings directory, settingsDirOf(config)).
// YAML front matter (between `---` lines, see frontMatter.ts) holds spawn defaults; the Markdown body is
// added to the agent's prompt under `## Guidelines`. Files are read on every call, so a new or
// edited template takes effect without a restart. Validation reuses spawn_agent's own zod
// fields, so a template accepts exactly what spawn_agent accepts, and every error names the
// file, the key and the bad value.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseFrontMatter } from './frontMatter.js';
import { SpawnInput } from '../contract/agents.js';
import { InvalidInputError, NotFoundError } from '../errors.js';

/** Template names: what `spawn_agent`'s `template` takes and the file name without `.md`. */
export const TEMPLATE_NAME_RE = /^[a-z0-9][a-z0-9_-]*$/;
export const MAX_TEMPLATE_NAME = 64;

/** The spawn_agent fields a template can default, in the order they are shown. */
export const TEMPLATE_KEYS = ['provider', 'model', 'cwd', 'worktree', 'checks', 'max_turns', 'budget_usd', 'timeout_s', 'retry'] as const;
export type TemplateKey = (typeof TEMPLATE_KEYS)[number];

/** Spawn defaults a template carries (all optional). */
export interface TemplateDefaults {
  provider?: 'claude' | 'codex';
  model?: string;
  cwd?: string;
  worktree?: boolean;
  checks?: string[];
  max_turns?: number;
  budget_usd?: number;
  timeout_s?: number;
  retry?: 'none' | 'same' | 'analyze';
}

export interface Template {
  name: string;
  /** Absolute path of the template file. */
  file: string;
  description: string;
  defaults: TemplateDefaults;
  /** The Markdown body, trimmed ('' when the file has none). */
  guidelines: string;
}

/** A template file that could not be loaded, for listings that show the good ones anyway. */
export interface TemplateProblem {
  name: string;
  file: string;
  message: string;
}

// ---- front matter schema ------------------------------------------------------------------

const S = SpawnInput.shape;

/** `checks`: a YAML list of strings, or (as before YAML) one comma-separated string. */
const checksValue = z.union([
  z.array(z.string({ invalid_type_error: 'must be a list of strings' }), { invalid_type_error: 'must be a list of strings' }).transform((a) => a.map((x) => x.trim())),
  z.string().transform((s) => s.split(',').map((x) => x.trim()).filter((x) => x !== '')),
], { errorMap: () => ({ message: 'must be a list of strings (e.g. [diff_not_empty, "command:npm test"]) or a comma-separated string' }) });

const wholeNumber = z.number({ invalid_type_error: 'must be a whole number (no quotes)' }).int('must be a whole number');
const number = z.number({ invalid_type_error: 'must be a number (no quotes)' });
const text = z.string({ invalid_type_error: 'must be text' });

const FrontMatterSchema = z.object({
  name: text.optional(),
  description: text.max(1000, 'description must be at most 1000 characters').optional(),
  provider: text.pipe(S.provider.unwrap()).optional(),
  model: text.pipe(S.model.unwrap()).optional(),
  cwd: text.pipe(S.cwd.unwrap()).optional(),
  worktree: z.boolean({ invalid_type_error: 'must be true or false' }).pipe(S.worktree.unwrap()).optional(),
  checks: checksValue.pipe(S.checks.unwrap()).optional(),
  max_turns: wholeNumber.pipe(S.max_turns.unwrap()).optional(),
  budget_usd: number.pipe(S.budget_usd.unwrap()).optional(),
  timeout_s: wholeNumber.pipe(S.timeout_s.unwrap()).optional(),
  retry: text.pipe(S.retry.unwrap()).optional(),
}).strict();

const KNOWN_KEYS = Object.keys(FrontMatterSchema.shape).filter((k) => k !== 'name');

// ---- names and files ------------------------------------------------------------------------

/** Why `name` is not a valid template name, or undefined when it is. */
export function templateNameProblem(name: string): string | undefined {
  if (name.length > MAX_TEMPLATE_NAME) return `template name ${JSON.stringify(name)} is longer than ${MAX_TEMPLATE_NAME} characters`;
  if (!TEMPLATE_NAME_RE.test(name)) {
    return `template name ${JSON.stringify(name)} is not valid: use lower-case letters, digits, "-" and "_", starting with a letter or digit (e.g. "bugfix" or "ui_review")`;
  }
  return undefined;
}

/** Parse one template's text. Throws InvalidInputError naming the file, the line, the key and the value. */
export function parseTemplate(name: string, file: string, text: string): Template {
  const { data, lines, body } = parseFrontMatter(file, text);
  // An empty value (`model:`, YAML null) means "not set", so a key can be blanked without deleting it.
  const raw: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) if (v !== null && v !== '') raw[k] = v;
  const at = (key: string): string => `${file}:${lines[key] ?? 1}`;
  const parsed = FrontMatterSchema.safeParse(raw);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      if (i.code === z.ZodIssueCode.unrecognized_keys) {
        for (const k of i.keys) problems.push(`${at(k)}: unknown key ${JSON.stringify(k)} (value ${JSON.stringify(raw[k])}): known keys are ${KNOWN_KEYS.join(', ')}`);
        continue;
      }
      const key = String(i.path[0] ?? '?');
      problems.push(`${at(key)}: ${key} = ${JSON.stringify(raw[key] ?? '')}: ${i.message}`);
    }
  } else if (parsed.data.name !== undefined && parsed.data.name !== name) {
    problems.push(`${at('name')}: name = ${JSON.stringify(parsed.data.name)}: must match the file name (${JSON.stringify(name)}) or be left out`);
  }
  if (!parsed.success || problems.length > 0) {
    throw new InvalidInputError(`Invalid template ${file}:\n  ${problems.join('\n  ')}`);
  }
  const { name: _name, description, ...rest } = parsed.data;
  const defaults: TemplateDefaults = {};
  for (const k of TEMPLATE_KEYS) if (rest[k] !== undefined) (defaults as Record<string, unknown>)[k] = rest[k];
  return { name, file, description: description?.trim() ?? '', defaults, guidelines: body.trim() };
}

function templateFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.md')).sort();
}

/** Every template of `dir`, the valid ones and the problems of the others; a missing dir has none. */
export function scanTemplates(dir: string): { templates: Template[]; problems: TemplateProblem[] } {
  const templates: Template[] = [];
  const problems: TemplateProblem[] = [];
  for (const f of templateFiles(dir)) {
    const name = f.slice(0, -3);
    const file = join(dir, f);
    const bad = templateNameProblem(name);
    if (bad) {
      problems.push({ name, file, message: `${file}: ${bad}; rename the file` });
      continue;
    }
    try {
      templates.push(parseTemplate(name, file, readFileSync(file, 'utf8')));
    } catch (err) {
      problems.push({ name, file, message: err instanceof Error ? err.message : String(err) });
    }
  }
  return { templates, problems };
}

/** All templates of `dir`, sorted by name. Throws InvalidInputError if any file is invalid. */
export function loadTemplates(dir: string): Template[] {
  const { templates, problems } = scanTemplates(dir);
  if (problems.length > 0) throw new InvalidInputError(problems.map((p) => p.message).join('\n'));
  return templates;
}

/** One template by name: NotFoundError listing the available names and where they live. */
export function getTemplate(dir: string, name: string): Template {
  const bad = templateNameProblem(name);
  if (bad) throw new InvalidInputError(`${bad}. ${available(dir)}`);
  const file = join(dir, `${name}.md`);
  if (!existsSync(file)) throw new NotFoundError(`Unknown template ${JSON.stringify(name)}. ${available(dir)}`);
  return parseTemplate(name, file, readFileSync(file, 'utf8'));
}

function available(dir: string): string {
  const names = templateFiles(dir).map((f) => f.slice(0, -3)).filter((n) => !templateNameProblem(n));
  return names.length > 0
    ? `Templates in ${dir}: ${names.join(', ')}.`
    : `No templates are defined: create ${join(dir, '<name>.md')} (front matter with spawn defaults, body with guidelines), or omit template.`;
}

// ---- applying a template --------------------------------------------------------------------

/** A spawn input: its template-settable fields (`undefined` = "not given") and anything else, passed through. */
export type TemplateInput = { [K in TemplateKey]?: TemplateDefaults[K] | undefined } & { [key: string]: unknown };

/**
 * Merge a template's defaults under an explicit spawn input: a field the input gives (not
 * undefined) wins, otherwise the template's value is used. A template's `model` is skipped
 * when the input picks a different provider than the template (a Codex model name means
 * nothing to Claude). Returns the merged input plus the template's `guidelines`.
 */
export function applyTemplate<I extends TemplateInput>(t: Template, input: I): I & TemplateDefaults & { guidelines: string } {
  const out: Record<string, unknown> = { ...input };
  const otherProvider = input.provider !== undefined && t.defaults.provider !== undefined && input.provider !== t.defaults.provider;
  for (const k of TEMPLATE_KEYS) {
    const v = t.defaults[k];
    if (v === undefined || out[k] !== undefined) continue;
    if (k === 'model' && otherProvider) continue;
    out[k] = Array.isArray(v) ? [...v] : v;
  }
  out.guidelines = t.guidelines;
  return out as unknown as I & TemplateDefaults & { guidelines: string };
}

/** The prompt with the template's guidelines appended as a `## Guidelines` section. */
export function withGuidelines(prompt: string, guidelines: string): string {
  const g = guidelines.trim();
  return g === '' ? prompt : `${prompt.trimEnd()}\n\n## Guidelines\n\n${g}`;
}

/** A one-line human summary of a template's defaults, e.g. "model opus, worktree, checks diff_not_empty". */
export function describeDefaults(d: TemplateDefaults): string {
  const parts: string[] = [];
  for (const k of TEMPLATE_KEYS) {
    const v = d[k];
    if (v === undefined) continue;
    if (k === 'worktree') parts.push(v ? 'worktree' : 'no worktree');
    else if (k === 'checks') parts.push(`checks ${(v as string[]).join(', ') || '(none)'}`);
    else parts.push(`${k} ${String(v)}`);
  }
  return parts.join('; ');
}

/** What the workflow engine takes from a template (WorkflowService.templates): guidelines, implementer role, checks. */
export interface WorkflowTemplateView {
  guidelines: string;
  implementer?: { provider?: 'claude' | 'codex'; model?: string };
  checks?: string[];
}

/** Templates of `dir` for workflows: `resolve(name)` reads the file on every call (errors as getTemplate). */
export function workflowTemplates(dir: string): { resolve(name: string): WorkflowTemplateView } {
  return {
    resolve(name) {
      const { guidelines, defaults: d } = getTemplate(dir, name);
      const v: WorkflowTemplateView = { guidelines };
      if (d.provider !== undefined || d.model !== undefined) {
        v.implementer = {};
        if (d.provider !== undefined) v.implementer.provider = d.provider;
        if (d.model !== undefined) v.implementer.model = d.model;
      }
      if (d.checks !== undefined) v.checks = [...d.checks];
      return v;
    },
  };
}
