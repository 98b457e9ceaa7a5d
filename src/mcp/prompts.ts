// MCP prompts of the lead (slash commands in Claude Code, `/mcp__overseer__<name>`):
//  - built-in recipes from prompts/recipe-<name>.md: prompt `<name>`; YAML front matter
//    `description` and `title`; the body is the message;
//  - one prompt `template-<name>` per project template (.overseer/templates/<name>.md, see
//    src/templates/templates.ts), asking the lead to spawn an agent with it.
//
// No prompt declares an argument. Claude Code splits a slash command's text on whitespace and
// hands out one word per declared argument (`/…fan-out write tests; update README` filled
// `tasks` with "write"), but it always puts the whole text in the user's message as
// `<command-args>…</command-args>`. So each message tells the model to take the request from
// there, whole; other clients that send no such text get "use what I asked for before".
//
// Templates are read on every prompts/list and prompts/get, so a new or edited template shows
// up without a restart. The handlers go on the lead's method table (src/mcp, built once per
// hub). Clients such as Claude Code fetch the list once per connection, so the templates
// directory is also watched (once per hub) and `notifications/prompts/list_changed` is sent to
// every lead session when the list changes (best effort: fs.watch; the list itself is always
// read fresh).
import { readdirSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Methods } from './methods.js';
import { ErrorCode, RpcError as McpError } from './rpc.js';
import { renderPrompt, type PromptTemplate } from '../prompts/load.js';
import { parseFrontMatter } from '../templates/frontMatter.js';
import { describeDefaults, getTemplate, scanTemplates, type Template } from '../templates/templates.js';
import { OverseerError } from '../errors.js';
import type { Logger } from '../log.js';

export interface PromptDeps {
  /** The settings directory's `templates/` (`.overseer/templates`, settingsDirOf(config)); need not exist. */
  templatesDir: string;
  /** The package's prompts/ directory (recipe-*.md). */
  promptsDir: string;
  /** Watch templatesDir and send prompts/list_changed (default true). */
  watch?: boolean;
  log?: Logger;
}

export interface Recipe {
  /** Prompt name: the file name without `recipe-` and `.md`. */
  name: string;
  title?: string;
  description: string;
  /** The message the prompt returns. */
  text: string;
}

interface Prompt { name: string; title?: string; description: string; arguments: [] }
interface GetPromptResult { description: string; messages: { role: 'user'; content: { type: 'text'; text: string } }[] }

export const TEMPLATE_PROMPT_PREFIX = 'template-';
const RECIPE_KEYS = ['name', 'title', 'description'];

/** Built-in recipes of `promptsDir`. Throws, naming the file, on a recipe that is not as above. */
export function loadRecipes(promptsDir: string): Recipe[] {
  const files = readdirSync(promptsDir).filter((f) => /^recipe-.+\.md$/.test(f)).sort();
  return files.map((f) => {
    const file = join(promptsDir, f);
    const name = f.slice('recipe-'.length, -'.md'.length);
    const { data, body } = parseFrontMatter(file, readFileSync(file, 'utf8'));
    const problems = [
      ...Object.keys(data).filter((k) => !RECIPE_KEYS.includes(k)).map((k) => `unknown key ${JSON.stringify(k)} (known: ${RECIPE_KEYS.join(', ')}; recipes take no arguments, they read the text after the command)`),
      typeof data.description === 'string' && data.description.trim() ? '' : 'no description',
      data.title === undefined || typeof data.title === 'string' ? '' : 'title must be text',
      /\{\{\w+\}\}/.test(body) ? 'placeholders ({{…}}) are not filled: recipes take no arguments' : '',
      name.startsWith(TEMPLATE_PROMPT_PREFIX) ? `names starting with "${TEMPLATE_PROMPT_PREFIX}" are for project templates` : '',
    ].filter(Boolean);
    if (problems.length) throw new Error(`recipe ${file}: ${problems.join('; ')}`);
    return { name, title: data.title as string | undefined, description: String(data.description).trim(), text: body.trim() };
  });
}

const TEMPLATE_MESSAGE: PromptTemplate = {
  name: 'template-prompt',
  meta: {},
  body: `Spawn an Overseer agent with the project template \`{{name}}\`{{about}} for the task I gave with this command. The task is ALL the text I wrote after the command name (Claude Code shows it as \`<command-args>\`), word for word, with every clause, punctuation and line; if I wrote nothing after it, it is what I asked for just before; if that is unclear too, ask me for the task and stop.

Call \`spawn_agent\` with \`template: "{{name}}"\`, a short \`title\`, and a \`prompt\` that states the whole task completely: the agent sees only its prompt, to which the template adds its guidelines{{defaults}}. Do not override the template's settings unless the task needs it.
Then tell me the job id, call \`wait_for_agents\` on it (answer anything it returns under \`attention\` with \`respond\` or \`message_agent\`), and report its result, or its error and failure_class with what you suggest next.`,
};

function templatePrompt(t: Template): Prompt {
  const d = describeDefaults(t.defaults);
  return {
    name: `${TEMPLATE_PROMPT_PREFIX}${t.name}`,
    title: `Spawn an agent: ${t.name}`,
    description: `${t.description || `Spawn an agent with the ${t.name} template.`}${d ? ` (${d})` : ''}`,
    arguments: [],
  };
}

function recipePrompt(r: Recipe): Prompt {
  return { name: r.name, title: r.title, description: r.description, arguments: [] };
}

function toMcpError(err: unknown): McpError {
  if (err instanceof McpError) return err;
  if (err instanceof OverseerError) return new McpError(ErrorCode.InvalidParams, err.message);
  return new McpError(ErrorCode.InternalError, err instanceof Error ? err.message : String(err));
}

/** Built-in recipes by prompts directory: package files, read and parsed once per process rather than for every lead session. */
const recipesByDir = new Map<string, readonly Recipe[]>();

function recipesOf(promptsDir: string): readonly Recipe[] {
  let r = recipesByDir.get(promptsDir);
  if (!r) recipesByDir.set(promptsDir, (r = loadRecipes(promptsDir)));
  return r;
}

/** Install the recipes and the project templates as the prompts of `methods` (the lead's table).
 * `changed` is called when the templates directory's list changes (watching); the returned
 * function stops the watching. */
export function registerPrompts(methods: Methods, deps: PromptDeps, changed: () => void = () => undefined): () => void {
  const recipes = recipesOf(deps.promptsDir);
  const watching = deps.watch !== false;

  const listTemplates = (): Template[] => {
    const { templates, problems } = scanTemplates(deps.templatesDir);
    for (const p of problems) deps.log?.warn({ file: p.file }, `template skipped: ${p.message}`);
    return templates;
  };
  const list = (): Prompt[] => [...recipes.map(recipePrompt), ...listTemplates().map(templatePrompt)];

  methods.capabilities.prompts = { listChanged: watching };
  methods.requests.set('prompts/list', () => ({ prompts: list() }));
  methods.requests.set('prompts/get', (params): GetPromptResult => {
    const name = params.name;
    if (typeof name !== 'string') throw new McpError(ErrorCode.InvalidParams, 'Invalid prompts/get request: params.name must be a string');
    try {
      const recipe = recipes.find((r) => r.name === name);
      if (recipe) {
        return { description: recipe.description, messages: [{ role: 'user', content: { type: 'text', text: recipe.text } }] };
      }
      if (name.startsWith(TEMPLATE_PROMPT_PREFIX)) {
        const t = getTemplate(deps.templatesDir, name.slice(TEMPLATE_PROMPT_PREFIX.length));
        const d = describeDefaults(t.defaults);
        const text = renderPrompt(TEMPLATE_MESSAGE, {
          name: t.name,
          about: t.description ? ` (${t.description.replace(/\.$/, '')})` : '',
          defaults: d ? ` and defaults (${d})` : ' and defaults',
        });
        return { description: templatePrompt(t).description, messages: [{ role: 'user', content: { type: 'text', text } }] };
      }
      const known = list().map((p) => p.name);
      throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${JSON.stringify(name)}. Prompts: ${known.join(', ')}.`);
    } catch (err) {
      throw toMcpError(err);
    }
  });

  if (!watching) return () => undefined;
  const sig = (): string => JSON.stringify(listTemplates().map(templatePrompt));
  return watchDir(deps.templatesDir, sig, changed);
}

/**
 * Calls `changed` when `signature()` differs after a file system event in `dir` (or, while
 * `dir` does not exist, after its creation in the parent). Returns a stop function. Watchers
 * are not persistent (they never keep the process alive) and errors only end the watching.
 */
function watchDir(dir: string, signature: () => string, changed: () => void): () => void {
  let last = '';
  let w: FSWatcher | undefined;
  let onDir = false;
  let stopped = false;
  const attach = (): void => {
    w?.close();
    w = undefined;
    try {
      w = watch(dir, { persistent: false }, () => onEvent());
      onDir = true;
    } catch {
      try {
        w = watch(dirname(dir), { persistent: false }, (_e, f) => {
          if (f == null || String(f) === basename(dir)) onEvent();
        });
        onDir = false;
      } catch {
        w = undefined; // no parent either: no live updates, the list is still read fresh
      }
    }
    w?.on('error', () => {
      w?.close();
      w = undefined;
    });
  };
  const onEvent = (): void => {
    if (stopped) return;
    let s: string;
    try {
      s = signature();
    } catch {
      return;
    }
    if (dirExists(dir) !== onDir) attach(); // created, or deleted: move the watch
    if (s !== last) {
      last = s;
      changed();
    }
  };
  // Watch first, then take the baseline: a change in between is seen, not lost.
  attach();
  last = signature();
  return () => {
    stopped = true;
    w?.close();
    w = undefined;
  };
}

function dirExists(dir: string): boolean {
  try {
    readdirSync(dir);
    return true;
  } catch {
    return false;
  }
}
