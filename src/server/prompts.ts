// MCP prompts of the lead (slash commands in Claude Code, `/mcp__overseer__<name>`):
//  - built-in recipes from prompts/recipe-<name>.md: prompt `<name>`; front matter `description`,
//    `title` and one `arg_<name>: <description>` line per (required) argument; the body is
//    rendered with `{{arg}}` placeholders;
//  - one prompt `template-<name>` per project template (<state>/templates/<name>.md, see
//    src/templates/templates.ts), argument `task`, asking the lead to spawn an agent with it.
//
// Templates are read on every prompts/list and prompts/get, so a new or edited template shows
// up without a restart. McpServer.registerPrompt keeps a fixed list per connection, so this
// module installs the prompts/list and prompts/get handlers itself (low-level Server API):
// do not also call McpServer.registerPrompt on the same server (the SDK would refuse to replace
// these handlers). Clients such as Claude Code fetch the list once per connection, so the
// templates directory is also watched and `notifications/prompts/list_changed` is sent when
// the list changes (best effort: fs.watch; the list itself is always read fresh).
import { readdirSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, McpError,
  type GetPromptResult, type Prompt,
} from '@modelcontextprotocol/sdk/types.js';
import { parsePrompt, renderPrompt, type PromptTemplate } from '../prompts/load.js';
import { describeDefaults, getTemplate, scanTemplates, type Template } from '../templates/templates.js';
import { OverseerError } from '../errors.js';
import type { Logger } from '../log.js';

export interface PromptDeps {
  /** `<state>/templates` (config.home + '/templates'); need not exist. */
  templatesDir: string;
  /** The package's prompts/ directory (recipe-*.md). */
  promptsDir: string;
  /** Watch templatesDir and send prompts/list_changed (default true). */
  watch?: boolean;
  log?: Logger;
}

export interface RecipeArg {
  name: string;
  description: string;
}

export interface Recipe {
  /** Prompt name: the file name without `recipe-` and `.md`. */
  name: string;
  title?: string;
  description: string;
  args: RecipeArg[];
  template: PromptTemplate;
}

export const TEMPLATE_PROMPT_PREFIX = 'template-';

/** Built-in recipes of `promptsDir`. Throws if a recipe's placeholders and `arg_*` lines disagree. */
export function loadRecipes(promptsDir: string): Recipe[] {
  const files = readdirSync(promptsDir).filter((f) => /^recipe-.+\.md$/.test(f)).sort();
  return files.map((f) => {
    const file = join(promptsDir, f);
    const name = f.slice('recipe-'.length, -'.md'.length);
    const t = parsePrompt(name, readFileSync(file, 'utf8'));
    const args = Object.entries(t.meta)
      .filter(([k]) => k.startsWith('arg_'))
      .map(([k, v]) => ({ name: k.slice(4), description: v }));
    const used = new Set([...t.body.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!));
    const declared = new Set(args.map((a) => a.name));
    const undeclared = [...used].filter((u) => !declared.has(u));
    const unused = [...declared].filter((d) => !used.has(d));
    if (undeclared.length || unused.length || !t.meta.description) {
      throw new Error(`recipe ${file}: ${[
        undeclared.length ? `placeholders without an arg_<name> line: ${undeclared.join(', ')}` : '',
        unused.length ? `arg_ lines not used in the body: ${unused.join(', ')}` : '',
        t.meta.description ? '' : 'no description',
      ].filter(Boolean).join('; ')}`);
    }
    if (name.startsWith(TEMPLATE_PROMPT_PREFIX)) throw new Error(`recipe ${file}: names starting with "${TEMPLATE_PROMPT_PREFIX}" are for project templates`);
    return { name, title: t.meta.title, description: t.meta.description, args, template: { ...t, body: t.body.trim() } };
  });
}

const TEMPLATE_MESSAGE: PromptTemplate = {
  name: 'template-prompt',
  meta: {},
  body: `Spawn an Overseer agent for this task with the project template \`{{name}}\`{{about}}.

<task>
{{task}}
</task>

Call \`spawn_agent\` with \`template: "{{name}}"\`, a short \`title\`, and a \`prompt\` that states the task above completely: the agent sees only its prompt, to which the template adds its guidelines{{defaults}}. Do not override the template's settings unless the task needs it.
Then tell me the job id, call \`wait_for_agents\` on it (answer anything it returns under \`attention\` with \`respond\` or \`message_agent\`), and report its result, or its error and failure_class with what you suggest next.`,
};

function templatePrompt(t: Template): Prompt {
  const d = describeDefaults(t.defaults);
  return {
    name: `${TEMPLATE_PROMPT_PREFIX}${t.name}`,
    title: `Spawn an agent: ${t.name}`,
    description: `${t.description || `Spawn an agent with the ${t.name} template.`}${d ? ` (${d})` : ''}`,
    arguments: [{ name: 'task', description: 'What the agent should do.', required: true }],
  };
}

function recipePrompt(r: Recipe): Prompt {
  return { name: r.name, title: r.title, description: r.description, arguments: r.args.map((a) => ({ ...a, required: true })) };
}

/** The argument `name` from a prompts/get request, or an InvalidParams error that says what it is for. */
function requiredArg(prompt: string, args: Record<string, string> | undefined, a: RecipeArg): string {
  const v = args?.[a.name];
  if (v === undefined || v.trim() === '') {
    throw new McpError(ErrorCode.InvalidParams, `Prompt ${prompt} needs the argument "${a.name}": ${a.description}`);
  }
  return v;
}

function toMcpError(err: unknown): McpError {
  if (err instanceof McpError) return err;
  if (err instanceof OverseerError) return new McpError(ErrorCode.InvalidParams, err.message);
  return new McpError(ErrorCode.InternalError, err instanceof Error ? err.message : String(err));
}

/** Install the recipes and the project templates as the server's prompts. Call before connecting. */
export function registerPrompts(server: McpServer, deps: PromptDeps): void {
  const recipes = loadRecipes(deps.promptsDir);
  const watching = deps.watch !== false;

  const listTemplates = (): Template[] => {
    const { templates, problems } = scanTemplates(deps.templatesDir);
    for (const p of problems) deps.log?.warn({ file: p.file }, `template skipped: ${p.message}`);
    return templates;
  };
  const list = (): Prompt[] => [...recipes.map(recipePrompt), ...listTemplates().map(templatePrompt)];

  server.server.registerCapabilities({ prompts: { listChanged: watching } });
  server.server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: list() }));
  server.server.setRequestHandler(GetPromptRequestSchema, (req): GetPromptResult => {
    const { name, arguments: args } = req.params;
    try {
      const recipe = recipes.find((r) => r.name === name);
      if (recipe) {
        const vars = Object.fromEntries(recipe.args.map((a) => [a.name, requiredArg(name, args, a)]));
        return { description: recipe.description, messages: [{ role: 'user', content: { type: 'text', text: renderPrompt(recipe.template, vars) } }] };
      }
      if (name.startsWith(TEMPLATE_PROMPT_PREFIX)) {
        const t = getTemplate(deps.templatesDir, name.slice(TEMPLATE_PROMPT_PREFIX.length));
        const task = requiredArg(name, args, { name: 'task', description: 'what the agent should do' });
        const d = describeDefaults(t.defaults);
        const text = renderPrompt(TEMPLATE_MESSAGE, {
          name: t.name,
          about: t.description ? ` (${t.description.replace(/\.$/, '')})` : '',
          task,
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

  if (watching) {
    const sig = (): string => JSON.stringify(listTemplates().map(templatePrompt));
    const stop = watchDir(deps.templatesDir, sig, () => server.sendPromptListChanged());
    const prev = server.server.onclose;
    server.server.onclose = () => {
      stop();
      prev?.();
    };
  }
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
