// Generates docs/tools.md, the tool reference, from the tool definitions themselves: a Hub is
// built on a scratch directory (never started: no HTTP, no children) and its tools are listed
// per role by the same ToolTable that answers MCP `tools/list` (src/mcp/tools.ts), so the page
// shows exactly what the lead and an agent are offered: name, title, description, every input
// parameter (type, default, description, from the zod schemas in src/contract/*.ts) and the
// annotations. test/unit/tools-doc.test.ts fails when the committed page differs.
//
// Refresh: npm run docs:tools   (node --import tsx scripts/tools-doc.ts [--check])
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Hub } from '../src/hub.js';
import { loadConfigFrom } from '../src/config.js';
import { ToolTable } from '../src/mcp/tools.js';
import { silentLogger } from '../src/log.js';
import { ALWAYS_LOAD_META } from '../src/tools/registry.js';

export const TOOLS_DOC = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'tools.md');
export const REFRESH_COMMAND = 'npm run docs:tools';

type Role = 'lead' | 'agent';
const ROLES: readonly Role[] = ['lead', 'agent'];

/** One entry of a tools/list result, as the hub publishes it. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

/** Where the behaviour behind each group of tools is written down (the page links there). */
const GROUPS: readonly { title: string; doc: string; tools: readonly string[] }[] = [
  { title: 'Agents', doc: 'jobs.md', tools: ['spawn_agent', 'wait_for_agents', 'get_agent', 'list_agents', 'read_agent_output', 'cancel_agent', 'pause_agent', 'resume_agent', 'message_agent', 'report_status', 'finish'] },
  { title: 'Locks', doc: 'coordination.md', tools: ['lock_files', 'release_files', 'list_locks'] },
  { title: 'Notes', doc: 'coordination.md', tools: ['write_note', 'read_note', 'list_notes', 'watch_notes', 'delete_note'] },
  { title: 'Messages, requests and permissions', doc: 'coordination.md', tools: ['send_message', 'read_messages', 'request_approval', 'ask_lead', 'list_requests', 'respond', 'check_permission'] },
  { title: 'Workflows', doc: 'workflows.md', tools: ['start_workflow', 'get_workflow', 'list_workflows', 'cancel_workflow', 'resume_workflow'] },
  { title: 'Knowledge base', doc: 'kb.md', tools: ['search_kb', 'report_learnings', 'list_kb', 'delete_kb_entry'] },
  { title: 'Searching what the agents said', doc: 'search.md', tools: ['search_output'] },
  { title: 'Worktrees and merging', doc: 'merge.md', tools: ['list_overlaps', 'merge_branch', 'merge_queue'] },
  { title: 'Schedules', doc: 'schedules.md', tools: ['list_schedules', 'cancel_schedule'] },
  { title: 'Projects and usage', doc: 'projects.md', tools: ['list_projects', 'update_project', 'usage'] },
  { title: 'Batch runs', doc: 'dispatch.md', tools: ['dispatch', 'get_run', 'list_runs', 'resume_run'] },
  { title: 'Debates', doc: 'debates.md', tools: ['start_debate', 'get_debate', 'list_debates', 'cancel_debate'] },
  { title: 'Taking over an agent', doc: 'attach.md', tools: ['attach_agent', 'detach_agent'] },
];

/** What tools/list gives each role, from a Hub built (not started) on a scratch directory. */
export async function listTools(): Promise<Record<Role, ListedTool[]>> {
  const dir = mkdtempSync(join(tmpdir(), 'overseer-tools-doc-'));
  try {
    const config = loadConfigFrom({ home: join(dir, 'state'), confine: 'off' });
    const hub = await Hub.open({ config, projectDir: dir, kbGlobalDb: join(dir, 'global-kb.db'), childEnv: {} });
    try {
      const out = {} as Record<Role, ListedTool[]>;
      for (const role of ROLES) out[role] = new ToolTable(hub.tools, role, silentLogger).listResult().tools as unknown as ListedTool[];
      return out;
    } finally {
      await hub.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The page for these listings (pure: the test renders the hub's listing and compares). */
export function renderToolsDoc(byRole: Record<Role, ListedTool[]>): string {
  const tools = new Map<string, { tool: ListedTool; roles: Role[] }>();
  for (const role of ROLES) {
    for (const tool of byRole[role]) {
      const seen = tools.get(tool.name);
      if (seen) seen.roles.push(role);
      else tools.set(tool.name, { tool, roles: [role] });
    }
  }
  const grouped = GROUPS.map((g) => ({ ...g, tools: g.tools.filter((n) => tools.has(n)) })).filter((g) => g.tools.length > 0);
  const placed = new Set(grouped.flatMap((g) => g.tools));
  const rest = [...tools.keys()].filter((n) => !placed.has(n));
  if (rest.length) grouped.push({ title: 'Other tools', doc: '', tools: rest });

  const lines: string[] = [
    `<!-- Generated by scripts/tools-doc.ts from the tool definitions; do not edit. Refresh: ${REFRESH_COMMAND} -->`,
    '# Tools',
    '',
    `The MCP tools the hub serves, as its \`tools/list\` gives them: ${byRole.lead.length} to the lead, ${byRole.agent.length} to an agent`,
    '(a child the hub started, which calls with its own bearer token). This page is generated from the tool',
    'definitions (`defineTool` in `src/tools/*.ts`, input schemas in `src/contract/*.ts`) by',
    `\`scripts/tools-doc.ts\`; \`${REFRESH_COMMAND}\` rewrites it, and a unit test fails when it is stale.`,
    '',
    'Every tool validates its input with zod: bad input gets an `isError` result naming the field, the bad',
    'value and the fix, and changes nothing. An agent acts only on its own subtree (the jobs it spawned, and',
    'theirs). What the results carry and how the tools work together is in the page linked from each group.',
    '',
    '| tool | lead | agent | title |',
    '|---|---|---|---|',
  ];
  for (const g of grouped) {
    for (const name of g.tools) {
      const { tool, roles } = tools.get(name)!;
      lines.push(`| [\`${name}\`](#${name}) | ${roles.includes('lead') ? '✔' : ''} | ${roles.includes('agent') ? '✔' : ''} | ${cell(tool.title ?? '')} |`);
    }
  }
  for (const g of grouped) {
    lines.push('', `## ${g.title}`, '');
    if (g.doc) lines.push(`How these work together: [docs/${g.doc}](${g.doc}).`, '');
    for (const name of g.tools) lines.push(...renderTool(tools.get(name)!.tool, tools.get(name)!.roles), '');
    lines.pop();
  }
  return `${lines.join('\n')}\n`;
}

function renderTool(tool: ListedTool, roles: Role[]): string[] {
  const facts = [`roles: ${roles.join(', ')}`];
  const ann = Object.entries(tool.annotations ?? {}).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  facts.push(`annotations: ${ann.length ? ann.join(', ') : 'none'}`);
  if (tool._meta?.[ALWAYS_LOAD_META]) facts.push(`\`_meta["${ALWAYS_LOAD_META}"]\`: sent in full from an agent's first request`);
  const out = [`### ${tool.name}`, '', `**${tool.title ?? tool.name}** · ${facts.join(' · ')}`, '', tool.description ?? '', ''];
  const rows = paramRows(tool.inputSchema, '');
  if (!rows.length) return [...out, 'No parameters.'];
  out.push('| parameter | type | required / default | description |', '|---|---|---|---|');
  for (const r of rows) out.push(`| \`${r.name}\` | ${cell(r.type)} | ${cell(r.req)} | ${cell(r.description)} |`);
  return out;
}

interface Row { name: string; type: string; req: string; description: string }

/** One row per property, nested objects (and objects in arrays) flattened as `a.b` / `a[].b`. */
function paramRows(schema: JsonSchema, prefix: string): Row[] {
  const rows: Row[] = [];
  const required = new Set(schema.required ?? []);
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    const name = `${prefix}${key}`;
    const req = required.has(key) ? 'required' : prop.default !== undefined ? `default \`${JSON.stringify(prop.default)}\`` : 'optional';
    rows.push({ name, type: typeOf(prop), req, description: prop.description ?? '' });
    if (prop.properties) rows.push(...paramRows(prop, `${name}.`));
    else if (prop.items?.properties) rows.push(...paramRows(prop.items, `${name}[].`));
  }
  return rows;
}

/** A short type: the JSON type or the values it takes, then its limits in brackets. */
function typeOf(s: JsonSchema): string {
  const t = typeParts(s);
  return t.notes.length ? `${t.base} (${t.notes.join(', ')})` : t.base;
}

function typeParts(s: JsonSchema): { base: string; notes: string[] } {
  if (s.anyOf) return { base: s.anyOf.map(typeOf).join(' or '), notes: [] };
  if (s.const !== undefined) return { base: JSON.stringify(s.const), notes: [] };
  if (s.enum) return { base: s.enum.map((v) => JSON.stringify(v)).join(' \\| '), notes: [] };
  const t = Array.isArray(s.type) ? s.type.join(' or ') : s.type ?? 'any';
  if (t === 'array') {
    const item = s.items ? (s.items.properties ? { base: 'object', notes: [] } : typeParts(s.items)) : { base: 'any', notes: [] };
    const base = item.base.includes(' ') ? `(${item.base})[]` : `${item.base}[]`;
    return { base, notes: [...limit(s.minItems, s.maxItems, 'items'), ...item.notes.map((n) => `each ${n}`)] };
  }
  if (t === 'object' && !s.properties && s.additionalProperties && typeof s.additionalProperties === 'object') {
    const v = s.additionalProperties;
    return Object.keys(v).length ? { base: `object of string → ${typeOf(v)}`, notes: [] } : { base: 'object', notes: [] };
  }
  if (t === 'integer' || t === 'number') return { base: t, notes: range(s) };
  if (t === 'string') return { base: t, notes: s.maxLength !== undefined ? [`≤ ${s.maxLength} chars`] : [] };
  return { base: t, notes: [] };
}

function range(s: JsonSchema): string[] {
  if (s.minimum !== undefined && s.maximum !== undefined) return [`${s.minimum}..${s.maximum}`];
  const out: string[] = [];
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) out.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`);
  if (s.exclusiveMaximum !== undefined) out.push(`< ${s.exclusiveMaximum}`);
  return out;
}

function limit(min: number | undefined, max: number | undefined, unit: string): string[] {
  if (min !== undefined && max !== undefined) return [min === max ? `${min} ${unit}` : `${min}..${max} ${unit}`];
  if (max !== undefined) return [`≤ ${max} ${unit}`];
  if (min !== undefined) return [`≥ ${min} ${unit}`];
  return [];
}

/** Text for one table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/(?<!\\)\|/g, '\\|');
}

/** The page as it should be now. */
export async function toolsDoc(): Promise<string> {
  return renderToolsDoc(await listTools());
}

async function main(): Promise<void> {
  const text = await toolsDoc();
  if (process.argv.includes('--check')) {
    const current = readFileSync(TOOLS_DOC, 'utf8');
    if (current !== text) {
      process.stderr.write(`docs/tools.md is stale: run ${REFRESH_COMMAND}\n`);
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(TOOLS_DOC, text);
  process.stdout.write(`wrote ${TOOLS_DOC}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
