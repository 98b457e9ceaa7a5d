// Dispatch files (docs/dispatch.md): a TOML or YAML file of run-level rules and `[[task]]`
// entries. `checkDispatch` parses and validates the whole file and returns every problem with
// its line (and column where known) — syntax, unknown keys, bad values, duplicate ids, unknown
// or cyclic depends_on, missing cwd directories, unknown templates — or the run's spec when
// there is none. Pure except for the file-system facts it checks (directories, templates).
import { planSchedule, type ScheduleFields } from './scheduleTiming.js';
import { existsSync, statSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import type * as Toml from 'smol-toml';
import type * as Yaml from 'yaml';
import { lazyRequire } from '../lazy.js';
import { SpawnInput } from '../contract/agents.js';
import { getTemplate } from '../templates/templates.js';
import { resolveRole } from '../roles/index.js';

/** The parsers, loaded by the first dispatch file of their format (src/lazy.ts). */
const toml = lazyRequire<typeof Toml>('smol-toml');
const yaml = lazyRequire<typeof Yaml>('yaml');

export type DispatchFormat = 'toml' | 'yaml';

export interface Problem {
  line?: number;
  column?: number;
  /** Where in the file, e.g. task[2].depends_on[0]. */
  path?: string;
  message: string;
}

/** One task as spawn_agent takes it, with its id in the file and depends_on by task id. */
export type TaskSpec = Omit<SpawnInput, 'depends_on'> & { id: string; depends_on: string[] } & Record<string, unknown>;

export interface RunRules {
  title?: string;
  concurrency?: number;
  budget_usd?: number;
  timeout_s?: number;
  cwd?: string;
}

export interface DispatchSpec {
  rules: RunRules;
  /** In file order, each with its cwd resolved to an absolute directory. */
  tasks: TaskSpec[];
}

/** The object schema inside spawn_agent's input (a refined schema wraps it). */
function objectOf(s: z.ZodTypeAny): z.AnyZodObject {
  let x: z.ZodTypeAny = s;
  while (x instanceof z.ZodEffects) x = x.innerType() as z.ZodTypeAny;
  return x as z.AnyZodObject;
}

const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** spawn_agent's own fields (whatever they are now) without its depends_on by job id. */
const spawnFields = objectOf(SpawnInput).omit({ depends_on: true });
export const TaskSchema = spawnFields.extend({
  id: z.string().regex(TASK_ID, 'id must be 1..100 letters, digits, ".", "_" or "-", starting with a letter or digit, e.g. "build-api"')
    .describe('Unique name of the task in this file; other tasks name it in depends_on.'),
  depends_on: z.array(z.string().min(1)).max(100, 'depends_on takes at most 100 task ids').default([])
    .describe('Ids of tasks in this file that must succeed before this one starts.'),
}).strict();
const DefaultsSchema = spawnFields.partial().strict();

export const RulesSchema = z.object({
  title: z.string().trim().min(1).max(200).optional().describe('Name of the run (default: the file name).'),
  concurrency: z.number().int('concurrency must be a whole number').min(1, 'concurrency must be at least 1').max(1000, 'concurrency must be at most 1000').optional()
    .describe('Most tasks of this run with a live job at once (default: no limit of its own; the hub\'s OVERSEER_MAX_AGENTS still holds).'),
  budget_usd: z.number().positive('budget_usd must be more than 0').max(100_000, 'budget_usd must be at most 100000').optional()
    .describe('Most the whole run may spend, in US dollars; no new task starts once it would go over.'),
  timeout_s: z.number().int().min(1, 'timeout_s must be at least 1').max(7 * 24 * 3600, 'timeout_s must be at most 604800 (a week)').optional()
    .describe('Wall-clock limit of the whole run; what is still live then is cancelled.'),
  cwd: z.string().min(1).max(4096).optional().describe('Directory of every task that names none (relative: to the file\'s directory).'),
}).strict();

const TOP_KEYS = new Set(['title', 'concurrency', 'budget_usd', 'budget', 'timeout_s', 'cwd', 'defaults', 'task', 'tasks']);

export function formatOf(file: string): DispatchFormat | undefined {
  const e = extname(file).toLowerCase();
  return e === '.toml' ? 'toml' : e === '.yaml' || e === '.yml' ? 'yaml' : undefined;
}

type Path = (string | number)[];
type Locate = (path: Path) => { line?: number; column?: number };

export function pathText(path: Path): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

// ---- parsing with positions -----------------------------------------------------------

function parseTomlText(text: string): { data?: unknown; problems: Problem[]; locate: Locate } {
  const locate = tomlLocator(text);
  const { parse: parseToml, TomlError } = toml();
  try {
    return { data: parseToml(text), problems: [], locate };
  } catch (err) {
    if (err instanceof TomlError) {
      const first = err.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      return { problems: [{ line: err.line, column: err.column, message: `TOML syntax error: ${first}` }], locate };
    }
    throw err;
  }
}

/**
 * Lines of keys in a TOML text: `[[task]]` counts array entries, `[a.b]` opens tables, `key =`
 * names a key of the current table. Multi-line strings are skipped. Good enough for messages:
 * a path not found falls back to its nearest ancestor.
 */
function tomlLocator(text: string): Locate {
  const at = new Map<string, { line: number; column: number }>();
  const counts = new Map<string, number>();
  let table: Path = [];
  let inString: string | undefined;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (inString) {
      if (raw.includes(inString)) inString = undefined;
      return;
    }
    const s = raw.trim();
    let m = /^\[\[\s*([^\]]+?)\s*\]\]/.exec(s);
    if (m) {
      const base = splitKey(m[1]!);
      const k = pathText(base);
      const n = counts.get(k) ?? 0;
      counts.set(k, n + 1);
      table = [...base, n];
      at.set(pathText(table), { line, column: raw.indexOf('[') + 1 });
      return;
    }
    m = /^\[\s*([^\]]+?)\s*\]/.exec(s);
    if (m) {
      const base = splitKey(m[1]!);
      // [task.context] after [[task]]: a table of the latest task entry.
      const arr = counts.get(base[0] as string);
      table = arr !== undefined && base.length > 1 ? [base[0]!, arr - 1, ...base.slice(1)] : base;
      at.set(pathText(table), { line, column: raw.indexOf('[') + 1 });
      return;
    }
    m = /^((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=\s*(.*)$/.exec(s);
    if (m) {
      const p = [...table, ...splitKey(m[1]!)];
      if (!at.has(pathText(p))) at.set(pathText(p), { line, column: raw.length - raw.trimStart().length + 1 });
      const rest = m[2]!;
      for (const q of ['"""', "'''"]) {
        const open = rest.indexOf(q);
        if (open >= 0 && rest.indexOf(q, open + 3) < 0) inString = q;
      }
    }
  });
  return (path) => {
    for (let n = path.length; n > 0; n--) {
      const hit = at.get(pathText(path.slice(0, n)));
      if (hit) return hit;
    }
    return {};
  };
}

function splitKey(k: string): string[] {
  return (k.match(/"[^"]*"|'[^']*'|[^.\s]+/g) ?? []).map((p) => p.replace(/^["']|["']$/g, ''));
}

function parseYamlText(text: string): { data?: unknown; problems: Problem[]; locate: Locate } {
  const { LineCounter, parseDocument } = yaml();
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true, prettyErrors: false });
  const locate = yamlLocator(doc, lc);
  const problems = doc.errors.map((e) => {
    const pos = lc.linePos(e.pos[0]);
    return { line: pos.line, column: pos.col, message: `YAML syntax error: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}` };
  });
  if (problems.length) return { problems, locate };
  return { data: doc.toJS(), problems: [], locate };
}

function yamlLocator(doc: Yaml.Document, lc: Yaml.LineCounter): Locate {
  const { isMap, isScalar } = yaml();
  return (path) => {
    for (let n = path.length; n > 0; n--) {
      const p = path.slice(0, n);
      const parent = p.length > 1 ? doc.getIn(p.slice(0, -1), true) : doc.contents;
      const last = p.at(-1)!;
      let offset: number | undefined;
      if (isMap(parent)) {
        const pair = parent.items.find((it) => isScalar(it.key) && String(it.key.value) === String(last));
        const key = pair?.key as { range?: [number, number, number] } | undefined;
        offset = key?.range?.[0];
      } else {
        const node = doc.getIn(p, true) as { range?: [number, number, number] } | undefined;
        offset = node?.range?.[0];
      }
      if (offset !== undefined) {
        const pos = lc.linePos(offset);
        return { line: pos.line, column: pos.col };
      }
    }
    return {};
  };
}

// ---- validation -------------------------------------------------------------------------

export interface CheckOptions {
  /** Relative cwd values resolve against it (the file's directory, or the project). */
  baseDir: string;
  templatesDir: string;
  /** "Now" for schedule fields (at, until in the past; default: the clock). */
  now?: number;
}

/** Parse and validate a dispatch file's text: the spec, or every problem found (sorted by line). */
export function checkDispatch(text: string, format: DispatchFormat, o: CheckOptions): { spec?: DispatchSpec; problems: Problem[] } {
  const parsed = format === 'toml' ? parseTomlText(text) : parseYamlText(text);
  if (parsed.problems.length) return { problems: parsed.problems };
  const { locate } = parsed;
  const problems: Problem[] = [];
  // A value given under an alias (budget) is reported where it was written.
  const renames = new Map<string, Path>();
  const add = (path: Path, message: string): void => {
    let p = path;
    for (let n = path.length; n > 0; n--) {
      const old = renames.get(pathText(path.slice(0, n)));
      if (old) { p = [...old, ...path.slice(n)]; break; }
    }
    problems.push({ ...locate(p), path: pathText(p), message });
  };
  const alias = (obj: Record<string, unknown>, from: string, to: string, at: Path): void => {
    if (!(from in obj)) return;
    if (to in obj) add([...at, from], `give ${to} or its alias ${from}, not both`);
    else { obj[to] = obj[from]; renames.set(pathText([...at, to]), [...at, from]); }
    delete obj[from];
  };
  const data = parsed.data;
  if (data === null || data === undefined || typeof data !== 'object' || Array.isArray(data)) {
    return { problems: [{ line: 1, message: 'the file must be a table of run rules with task entries ([[task]] in TOML, tasks: in YAML)' }] };
  }
  const top = { ...(data as Record<string, unknown>) };
  for (const k of Object.keys(top)) {
    if (!TOP_KEYS.has(k)) add([k], `unknown key ${JSON.stringify(k)} at the top level: known keys are title, concurrency, budget_usd, timeout_s, cwd, defaults and task`);
  }
  alias(top, 'budget', 'budget_usd', []);
  let taskKey: 'task' | 'tasks' = 'task';
  if ('tasks' in top) {
    if ('task' in top) add(['tasks'], 'use either task or tasks for the task entries, not both');
    else taskKey = 'tasks';
  }
  const rulesIn = Object.fromEntries(Object.entries(top).filter(([k]) => ['title', 'concurrency', 'budget_usd', 'timeout_s', 'cwd'].includes(k)));
  const rules = RulesSchema.safeParse(rulesIn);
  if (!rules.success) addZod(rules.error, [], add);
  // No cwd anywhere: the job's default, the project directory (as spawn_agent).
  const runCwd = typeof rulesIn.cwd === 'string' ? resolveDir(rulesIn.cwd, o.baseDir) : undefined;
  if (typeof rulesIn.cwd === 'string') checkDir(rulesIn.cwd, runCwd!, ['cwd'], add);

  let defaults: Record<string, unknown> = {};
  if (top.defaults !== undefined) {
    if (!isRecord(top.defaults)) add(['defaults'], 'defaults must be a table of task fields, e.g. model = "sonnet"');
    else {
      defaults = { ...top.defaults };
      alias(defaults, 'budget', 'budget_usd', ['defaults']);
      for (const k of ['id', 'depends_on']) {
        if (k in defaults) { add(['defaults', k], `${k} cannot have a default: give it on each task`); delete defaults[k]; }
      }
      const d = DefaultsSchema.safeParse(defaults);
      if (!d.success) { addZod(d.error, ['defaults'], add); defaults = {}; }
      else if (typeof defaults.cwd === 'string') checkDir(defaults.cwd, resolveDir(defaults.cwd, o.baseDir), ['defaults', 'cwd'], add);
    }
  }

  const rawTasks = top[taskKey];
  if (!Array.isArray(rawTasks) || rawTasks.length === 0) {
    add(rawTasks === undefined ? [] : [taskKey], rawTasks === undefined
      ? 'no tasks: add at least one [[task]] entry (TOML) or a tasks: list (YAML) with an id and a prompt'
      : `${taskKey} must be a list of task entries with an id and a prompt`);
    return { problems: sortProblems(problems) };
  }
  const tasks: TaskSpec[] = [];
  const ids = new Map<string, number>();
  const graph: { id: string; depends_on: string[]; index: number }[] = [];
  rawTasks.forEach((raw, i) => {
    const at: Path = [taskKey, i];
    if (!isRecord(raw)) { add(at, 'a task entry must be a table with an id and a prompt'); return; }
    const own = { ...raw };
    alias(own, 'budget', 'budget_usd', at);
    const merged = { ...defaults, ...own };
    // Everything is checked even when the schema fails, so one run of validate shows it all.
    const r = TaskSchema.safeParse(merged);
    let ok = r.success;
    const id = r.success ? (r.data as TaskSpec).id : typeof merged.id === 'string' ? merged.id : undefined;
    if (!r.success) addZod(r.error, at, add, id);
    else {
      // Cross-field rules of spawn_agent itself (a refined schema), on everything but depends_on.
      const { id: _id, depends_on: _d, ...spawn } = r.data as TaskSpec;
      const whole = SpawnInput.safeParse({ ...spawn, depends_on: [] });
      if (!whole.success) { addZod(whole.error, at, add, id); ok = false; }
    }
    const who = `task ${JSON.stringify(id ?? `#${i + 1}`)}`;
    if (id !== undefined) {
      const prev = ids.get(id);
      if (prev !== undefined) add([...at, 'id'], `duplicate task id ${JSON.stringify(id)}: ${taskKey}[${prev}] has it too; ids must be unique in the file`);
      else ids.set(id, i);
    }
    const cwd = typeof merged.cwd === 'string' ? merged.cwd : undefined;
    const dir = cwd !== undefined ? resolveDir(cwd, o.baseDir) : runCwd;
    if (cwd !== undefined && dir !== undefined && 'cwd' in own) checkDir(cwd, dir, [...at, 'cwd'], add);
    if (merged.branch !== undefined && merged.worktree !== true) add([...at, 'branch'], `${who}: branch is only used with worktree = true; set worktree = true or remove branch`);
    if (typeof merged.template === 'string') {
      try { getTemplate(o.templatesDir, merged.template); } catch (err) { add([...at, 'template'], `${who}: ${(err as Error).message}`); }
    }
    // A role (src/roles): known, and its file valid, before anything runs (roles sit beside templates in the settings directory).
    if (typeof merged.role === 'string') {
      try { resolveRole(merged.role, join(dirname(o.templatesDir), 'roles'), () => ''); } catch (err) { add([...at, 'role'], `${who}: ${(err as Error).message}`); }
    }
    // Schedules (at, every_s, cron, max_runs, until): the same checks spawn_agent makes, before anything runs.
    try {
      planSchedule(merged as ScheduleFields, o.now ?? Date.now());
    } catch (err) {
      const key = (['at', 'cron', 'every_s', 'until', 'max_runs'] as const).find((k) => merged[k] !== undefined) ?? 'at';
      add([...at, key], `${who}: ${(err as Error).message}`);
    }
    if (rules.success && rules.data.budget_usd !== undefined && typeof merged.budget_usd === 'number' && merged.budget_usd > rules.data.budget_usd) {
      add([...at, 'budget_usd'], `${who}: budget_usd ${merged.budget_usd} is more than the run's budget_usd ${rules.data.budget_usd}`);
    }
    const deps = Array.isArray(merged.depends_on) ? merged.depends_on.filter((d): d is string => typeof d === 'string') : [];
    if (id !== undefined) graph.push({ id, depends_on: deps, index: i });
    if (ok && r.success) tasks.push({ ...(r.data as TaskSpec), ...(dir !== undefined ? { cwd: dir } : {}) });
  });
  // depends_on: known ids, no self-reference, no cycle.
  for (const t of graph) {
    t.depends_on.forEach((d, k) => {
      if (d === t.id) add([taskKey, t.index, 'depends_on', k], `task ${JSON.stringify(t.id)} depends on itself`);
      else if (!ids.has(d)) add([taskKey, t.index, 'depends_on', k], `task ${JSON.stringify(t.id)} depends on ${JSON.stringify(d)}, which is no task id in this file${ids.size ? ` (ids: ${[...ids.keys()].slice(0, 20).join(', ')})` : ''}`);
    });
  }
  for (const cycle of findCycles(graph)) {
    const first = graph.find((t) => t.id === cycle[0])!;
    add([taskKey, first.index, 'depends_on'], `dependency cycle: ${[...cycle, cycle[0]].join(' → ')}; no task of it could ever start`);
  }
  if (problems.length) return { problems: sortProblems(problems) };
  const ruleData = rules.success ? rules.data : {};
  return {
    spec: {
      rules: { ...ruleData, ...(ruleData.cwd ? { cwd: runCwd } : {}) },
      tasks,
    },
    problems: [],
  };
}

/** Every problem as `file:line:column: message`, one a line. */
export function formatProblems(file: string, problems: readonly Problem[]): string {
  return problems.map((p) => `${file}${p.line ? `:${p.line}${p.column ? `:${p.column}` : ''}` : ''}: ${p.message}`).join('\n');
}

function addZod(err: z.ZodError, at: Path, add: (p: Path, m: string) => void, id?: string): void {
  const who = id ? `task ${JSON.stringify(id)}: ` : '';
  for (const issue of err.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) add([...at, ...issue.path, k], `${who}unknown key ${JSON.stringify(k)}${at.length ? '' : ' at the top level'}; see docs/dispatch.md for the keys a task takes`);
      continue;
    }
    const field = issue.path.length ? `${pathText(issue.path)}: ` : '';
    const msg = issue.code === 'invalid_type' && issue.received === 'undefined' ? `${issue.path.at(-1) ?? 'value'} is required` : issue.message;
    add([...at, ...issue.path], `${who}${field}${msg}`);
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function resolveDir(p: string, base: string): string {
  return isAbsolute(p) ? resolve(p) : resolve(base, p);
}

function checkDir(asked: string, dir: string, at: Path, add: (p: Path, m: string) => void): void {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) add(at, `cwd ${JSON.stringify(asked)} does not exist or is not a directory (resolved to ${dir})`);
}

/** Each dependency cycle once, as the ids along it. */
export function findCycles(tasks: readonly { id: string; depends_on: string[] }[]): string[][] {
  const deps = new Map(tasks.map((t) => [t.id, t.depends_on.filter((d) => d !== t.id)]));
  const state = new Map<string, 1 | 2>();
  const cycles: string[][] = [];
  const stack: string[] = [];
  const visit = (id: string): void => {
    state.set(id, 1);
    stack.push(id);
    for (const d of deps.get(id) ?? []) {
      if (!deps.has(d)) continue;
      const s = state.get(d);
      if (s === 1) cycles.push(stack.slice(stack.indexOf(d)));
      else if (s === undefined) visit(d);
    }
    stack.pop();
    state.set(id, 2);
  };
  for (const t of tasks) if (!state.has(t.id)) visit(t.id);
  return cycles;
}

function sortProblems(ps: Problem[]): Problem[] {
  return ps.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}
