// Scripted fake of the OpenAI Responses API (the subset the `codex` CLI speaks), on loopback.
// Tests point a custom codex model provider (base_url = fake.url) at it; each request is answered
// by a named script. Wire shapes follow docs/cli-facts.md X7 (codex-cli 0.169.0)
// and docs/codex-notes.md.
//
// Step rule: the step index of a request is the number of model RESPONSES already in `input`,
// counted as maximal runs of consecutive model output items (assistant messages, function_call,
// custom_tool_call, reasoning, tool_search_call, …) not interrupted by a user/developer message or
// a tool output. One scripted step renders as one response, whatever number of items it has
// (text + 3 calls is still one step), so step N answers the request after N responses. The count
// runs over the whole thread: `codex exec resume` re-sends the full history, so the resumed turn
// continues the same script at the next step. A request that failed (HTTP error, response.failed,
// early close, abort) left nothing in the history, so its retry gets the same step again.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { sseFrame } from '../http/sse.js';
import { createRequestLog, createScriptBook, playStep, readJsonBody, scriptedFake, sendJson, startFakeHttp } from './fakeHttp.js';
import type { ScriptedFake, ScriptedFakeOptions, ScriptedRequest } from './fakeHttp.js';

export type CodexCall =
  /** a `function_call` to `exec_command` with arguments {"cmd": shell[, "workdir": workdir]} */
  | { shell: string; workdir?: string }
  /** a `custom_tool_call` to `apply_patch` whose `input` is the raw patch ("*** Begin Patch\n…") */
  | { patch: string }
  /** a `function_call` with `namespace: "mcp__<server>"`, `name: <tool>` and JSON `arguments` */
  | { mcp: { server: string; tool: string; args: Record<string, unknown> } }
  /** any other output item, sent as is (a call_id is added when missing) */
  | { raw: Record<string, unknown> };

export type CodexStepError =
  /** HTTP status with {"error":{"message":…}}; `type` replaces the default error type, `fields` are added to
   * the error object (a usage limit's resets_at), `headers` go with the answer (retry-after). */
  | { status: number; message: string; code?: string; type?: string; fields?: Record<string, unknown>; headers?: Record<string, string> }
  /** 200 SSE that ends with a `response.failed` event carrying this message */
  | { failed: string }
  /** 200 SSE with the step's items, then the stream ends without `response.completed` */
  | { closeEarly: true };

export interface CodexStep {
  /** an assistant message; sent after the reasoning item and before the calls */
  text?: string;
  /** a reasoning item whose summary is this text (shown by codex as a `reasoning` item) */
  reasoning?: string;
  calls?: CodexCall[];
  /** wait this long before answering; the wait ends early (outcome 'aborted') if the client goes away */
  delayMs?: number;
  error?: CodexStepError;
  /** default { input_tokens: 100, output_tokens: 10 } */
  usage?: { input_tokens: number; output_tokens: number; cached_tokens?: number; reasoning_tokens?: number };
}

export interface CodexToolOutput {
  call_id: string;
  /** the output text: a string output as is, content parts' texts joined with "\n" */
  text: string;
  /** the item type: 'function_call_output', 'custom_tool_call_output', 'tool_search_output', … */
  type: string;
  /** name of the call with this call_id in `input` ('exec_command', 'apply_patch', an MCP tool), '' if not found */
  name: string;
  /** namespace of that call ('mcp__probe'), if any */
  namespace?: string;
}

export interface CodexStepContext {
  /** the full request body */
  body: any;
  /** number of model responses already in `input`, over the whole thread (see the step rule above) */
  step: number;
  /** number of model responses after the last user prompt (0 on the first request of a turn) */
  turnStep: number;
  /** index of the current turn = number of user prompts in `input` minus 1 */
  turn: number;
  /** the prompt: text of the last user message that is not an <environment_context> */
  prompt: string;
  /** script name matched */
  script: string;
  /** tool outputs after the last model item (the results of the previous response's calls), in order */
  lastOutputs: CodexToolOutput[];
  /** all tool outputs in `input`, in order */
  allOutputs: CodexToolOutput[];
  /** texts of all user messages except <environment_context> ones (prompts, AGENTS.md, <turn_aborted>…), in order */
  userTexts: string[];
  /** texts of all developer messages, joined with "\n" */
  developer: string;
  /** <cwd> of the last <environment_context> user message */
  cwd: string | undefined;
  /** names of the top-level tools offered (`body.tools[].name`, or the type when there is no name) */
  tools: string[];
  /** MCP tools visible to the model, as 'mcp__<server>__<tool>': from namespace tools in `body.tools`
   * (uncatalogued model slugs) and from tool_search_output items in `input` (catalogued slugs) */
  mcpTools: string[];
}

export type CodexScript = CodexStep[] | ((ctx: CodexStepContext) => CodexStep | Promise<CodexStep>);

/** `route` default: the first `@script:NAME` marker (NAME = [A-Za-z0-9_.-]+) in the prompt, else in
 * earlier user messages (latest first, so `resume "next"` stays on the thread's script), else in the
 * developer text, else 'default'. */
export interface FakeOpenAIOptions extends ScriptedFakeOptions<CodexScript> {}

export interface RecordedRequest extends ScriptedRequest {
  prompt: string;
  headers: IncomingHttpHeaders;
  /** set once finished: 'sent' (response.completed sent), 'failed' (response.failed sent), 'closed'
   * (stream ended early on purpose), 'error' (an HTTP error status was sent), 'aborted' (the client
   * went away before the answer) */
  outcome?: 'sent' | 'failed' | 'closed' | 'error' | 'aborted';
}

export interface FakeOpenAI extends ScriptedFake<CodexScript, RecordedRequest> {
  /** base URL to configure as the provider's base_url; ends in /v1 (codex POSTs {url}/responses) */
  url: string;
}

/**
 * A codex model catalog (the JSON file named by the config key `model_catalog_json`) that defines
 * `slugs` (default: 'fake-model') with the fields codex 0.169.0 requires. Why: for a slug missing
 * from the catalog codex falls back to metadata that offers NO apply_patch tool (a custom_tool_call
 * apply_patch then fails with "unsupported custom tool call: apply_patch") and adds an `error` item
 * "Model metadata … not found". With this entry: apply_patch is a freeform custom tool, MCP tools are
 * sent directly as namespace tools (supports_search_tool false: no tool_search), and the base
 * instructions are one line. The file replaces the bundled catalog.
 */
export function fakeModelCatalog(slugs: string[] = ['fake-model']): { models: Record<string, unknown>[] } {
  return {
    models: slugs.map((slug, i) => ({
      slug,
      display_name: slug,
      description: 'Scripted fake model (src/fakemodel/fakeOpenAI.ts)',
      base_instructions: 'You are a scripted fake model.',
      shell_type: 'unified_exec',
      apply_patch_tool_type: 'freeform',
      supports_search_tool: false,
      supported_reasoning_levels: [],
      visibility: 'list',
      supported_in_api: true,
      priority: 100 + i,
      support_verbosity: false,
      truncation_policy: { mode: 'tokens', limit: 10000 },
      experimental_supported_tools: [],
      context_window: 272000,
    })),
  };
}

const MARKER = /@script:([A-Za-z0-9_.-]+)/;
const DEFAULT_USAGE = { input_tokens: 100, output_tokens: 10 };
const ENV_CONTEXT = '<environment_context>';

/** Item types that the model produces (everything else in `input` is from the client). */
const MODEL_ITEM_TYPES = new Set([
  'function_call',
  'custom_tool_call',
  'reasoning',
  'tool_search_call',
  'local_shell_call',
  'web_search_call',
  'image_generation_call',
  'code_interpreter_call',
  'file_search_call',
  'computer_call',
  'mcp_call',
]);

function isObj(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Text of a message `content` or a tool `output`: a string as is; text parts of an array joined with "\n". */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (isObj(content)) {
    if (typeof content.text === 'string') return content.text;
    if ('content' in content) return textOf(content.content);
    return '';
  }
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const b of content) {
    if (typeof b === 'string') parts.push(b);
    else if (isObj(b) && typeof b.text === 'string') parts.push(b.text);
  }
  return parts.join('\n');
}

function inputOf(body: any): any[] {
  return Array.isArray(body?.input) ? body.input.filter(isObj) : [];
}

function isMessage(item: any, role?: string): boolean {
  const typed = item.type === undefined || item.type === 'message';
  return typed && typeof item.role === 'string' && (role === undefined || item.role === role);
}

function isEnvContext(item: any): boolean {
  return isMessage(item, 'user') && textOf(item.content).trimStart().startsWith(ENV_CONTEXT);
}

function isModelItem(item: any): boolean {
  return isMessage(item, 'assistant') || (typeof item.type === 'string' && MODEL_ITEM_TYPES.has(item.type));
}

function isPrompt(item: any): boolean {
  return isMessage(item, 'user') && !isEnvContext(item);
}

function isToolOutput(item: any): boolean {
  return typeof item.type === 'string' && item.type.endsWith('_output');
}

/** The prompt: text of the last user message that is not an <environment_context>. */
export function promptOf(body: any): string {
  const users = inputOf(body).filter(isPrompt);
  const last = users[users.length - 1];
  return last ? textOf(last.content) : '';
}

/** Number of model responses in `items`: maximal runs of consecutive model items. */
function countResponses(items: any[]): number {
  let n = 0;
  let inRun = false;
  for (const it of items) {
    const model = isModelItem(it);
    if (model && !inRun) n++;
    inRun = model;
  }
  return n;
}

function mcpToolsOf(tools: unknown): string[] {
  const out: string[] = [];
  if (!Array.isArray(tools)) return out;
  for (const t of tools) {
    if (!isObj(t) || t.type !== 'namespace' || typeof t.name !== 'string' || !t.name.startsWith('mcp__')) continue;
    for (const f of Array.isArray(t.tools) ? t.tools : []) {
      if (isObj(f) && typeof f.name === 'string') out.push(`${t.name}__${f.name}`);
    }
  }
  return out;
}

/** Builds the CodexStepContext of a request body (exported for tests and custom routers). */
export function contextOf(body: any, script: string): CodexStepContext {
  const items = inputOf(body);
  const calls = new Map<string, { name: string; namespace?: string }>();
  for (const it of items) {
    if (isModelItem(it) && typeof it.call_id === 'string') {
      const name = typeof it.name === 'string' ? it.name : String(it.type);
      calls.set(it.call_id, typeof it.namespace === 'string' ? { name, namespace: it.namespace } : { name });
    }
  }
  const outputOf = (it: any): CodexToolOutput => {
    const call_id = typeof it.call_id === 'string' ? it.call_id : '';
    const c = calls.get(call_id);
    const o: CodexToolOutput = {
      call_id,
      text: textOf(it.output),
      type: String(it.type),
      name: c?.name ?? '',
    };
    if (c?.namespace !== undefined) o.namespace = c.namespace;
    return o;
  };
  let lastModel = -1;
  let lastPrompt = -1;
  items.forEach((it, i) => {
    if (isModelItem(it)) lastModel = i;
    if (isPrompt(it)) lastPrompt = i;
  });
  const envs = items.filter(isEnvContext);
  const lastEnv = envs[envs.length - 1];
  const cwd = lastEnv ? /<cwd>([\s\S]*?)<\/cwd>/.exec(textOf(lastEnv.content))?.[1] : undefined;
  const mcpTools = mcpToolsOf(body?.tools);
  for (const it of items) if (it.type === 'tool_search_output') mcpTools.push(...mcpToolsOf(it.tools));
  return {
    body,
    step: countResponses(items),
    turnStep: countResponses(items.slice(lastPrompt + 1)),
    turn: Math.max(0, items.filter(isPrompt).length - 1),
    prompt: promptOf(body),
    script,
    lastOutputs: items.slice(lastModel + 1).filter(isToolOutput).map(outputOf),
    allOutputs: items.filter(isToolOutput).map(outputOf),
    userTexts: items.filter(isPrompt).map((m) => textOf(m.content)),
    developer: items
      .filter((m) => isMessage(m, 'developer') || isMessage(m, 'system'))
      .map((m) => textOf(m.content))
      .join('\n'),
    cwd,
    tools: Array.isArray(body?.tools)
      ? body.tools.filter(isObj).map((t: any) => String(typeof t.name === 'string' ? t.name : t.type))
      : [],
    mcpTools: [...new Set(mcpTools)],
  };
}

function defaultRoute(ctx: CodexStepContext): string {
  const texts = [ctx.prompt, ...[...ctx.userTexts].reverse(), ctx.developer];
  for (const t of texts) {
    const m = MARKER.exec(t);
    if (m?.[1]) return m[1];
  }
  return 'default';
}

interface Rendered {
  id: string;
  model: string;
  items: Record<string, unknown>[];
  usage: Record<string, unknown>;
}

/** The output items of a step: reasoning, assistant message, then the calls. */
export function renderItems(step: CodexStep, n: number): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  if (step.reasoning !== undefined) {
    items.push({
      type: 'reasoning',
      id: `rs_fake_${n}`,
      summary: [{ type: 'summary_text', text: step.reasoning }],
      encrypted_content: null,
    });
  }
  const calls = step.calls ?? [];
  // A message is sent when the step has text, or when there is nothing else to send.
  if (step.text !== undefined || (calls.length === 0 && step.reasoning === undefined)) {
    items.push({
      type: 'message',
      id: `msg_fake_${n}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: step.text ?? '', annotations: [] }],
    });
  }
  calls.forEach((c, i) => {
    const call_id = `call_fake_${n}_${i}`;
    if ('shell' in c) {
      const args: Record<string, unknown> = { cmd: c.shell };
      if (c.workdir !== undefined) args.workdir = c.workdir;
      items.push({ type: 'function_call', id: `fc_fake_${n}_${i}`, call_id, name: 'exec_command', arguments: JSON.stringify(args), status: 'completed' });
    } else if ('patch' in c) {
      items.push({ type: 'custom_tool_call', id: `ctc_fake_${n}_${i}`, call_id, name: 'apply_patch', input: c.patch, status: 'completed' });
    } else if ('mcp' in c) {
      items.push({
        type: 'function_call',
        id: `fc_fake_${n}_${i}`,
        call_id,
        name: c.mcp.tool,
        namespace: `mcp__${c.mcp.server}`,
        arguments: JSON.stringify(c.mcp.args ?? {}),
        status: 'completed',
      });
    } else {
      items.push({ call_id, ...c.raw });
    }
  });
  return items;
}

function render(step: CodexStep, n: number, model: string): Rendered {
  const u: NonNullable<CodexStep['usage']> = step.usage ?? DEFAULT_USAGE;
  const cached = u.cached_tokens ?? 0;
  const reasoning = u.reasoning_tokens ?? 0;
  return {
    id: `resp_fake_${n}`,
    model,
    items: renderItems(step, n),
    usage: {
      input_tokens: u.input_tokens,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: u.output_tokens,
      output_tokens_details: { reasoning_tokens: reasoning },
      total_tokens: u.input_tokens + u.output_tokens,
    },
  };
}

function sse(data: { type: string } & Record<string, unknown>): string {
  return sseFrame({ event: data.type, data: JSON.stringify(data) });
}

function createdEvent(r: Rendered): string {
  return sse({ type: 'response.created', response: { id: r.id, object: 'response', model: r.model, status: 'in_progress', output: [] } });
}

function itemEvents(r: Rendered): string {
  return r.items.map((item, output_index) => sse({ type: 'response.output_item.done', output_index, item })).join('');
}

function completedEvent(r: Rendered): string {
  return sse({
    type: 'response.completed',
    response: { id: r.id, object: 'response', model: r.model, status: 'completed', output: r.items, usage: r.usage },
  });
}

function failedEvent(r: Rendered, message: string): string {
  return sse({
    type: 'response.failed',
    response: { id: r.id, object: 'response', model: r.model, status: 'failed', error: { code: 'server_error', message } },
  });
}

function errorBody(message: string, type: string, code?: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ error: { message, type, param: null, code: code ?? null, ...fields } });
}

// Provider limits are scripted as error steps; the steps tests play live in test/helpers/fakeLimits.ts.

function defaultErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const scripts = createScriptBook<CodexStepContext, CodexStep>(opts.scripts);
  const log = createRequestLog<RecordedRequest>('fake openai');
  let counter = 0;

  const handleResponses = async (req: IncomingMessage, res: ServerResponse, body: any): Promise<void> => {
    const prompt = promptOf(body);
    const ctx = contextOf(body, '');
    ctx.script = scripts.name(opts.route?.(body, prompt), () => defaultRoute(ctx));
    const rec: RecordedRequest = { at: Date.now(), script: ctx.script, step: ctx.step, prompt, body, headers: req.headers };
    const step = await playStep({ scripts, log, http }, rec, ctx, res, (msg) => errorBody(msg, 'invalid_request_error'));
    if (!step) return;

    const err = step.error;
    if (err && 'status' in err) {
      sendJson(res, err.status, errorBody(err.message, err.type ?? defaultErrorType(err.status), err.code, err.fields), err.headers);
      log.finish(rec, 'error', err.status);
      return;
    }

    const n = ++counter;
    const model = typeof body.model === 'string' ? body.model : 'fake-model';
    const r = render(step, n, model);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': `req_fake_${n}` });
    if (err && 'failed' in err) {
      res.end(createdEvent(r) + failedEvent(r, err.failed));
      log.finish(rec, 'failed', 200);
    } else if (err && 'closeEarly' in err) {
      res.end(createdEvent(r) + itemEvents(r));
      log.finish(rec, 'closed', 200);
    } else {
      res.end(createdEvent(r) + itemEvents(r) + completedEvent(r));
      log.finish(rec, 'sent', 200);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || (path !== '/v1/responses' && path !== '/responses')) {
      req.resume();
      sendJson(res, 404, errorBody(`fake openai: no route ${req.method} ${path}`, 'invalid_request_error'));
      return;
    }
    const body: any = await readJsonBody(req, res, (_status, message) => errorBody(message, 'invalid_request_error'));
    if (body === undefined) return;
    if (!isObj(body) || !Array.isArray(body.input)) {
      sendJson(res, 400, errorBody('request body must be an object with an input array', 'invalid_request_error'));
      return;
    }
    await handleResponses(req, res, body);
  };

  const http = await startFakeHttp({
    name: 'fake openai',
    host: opts.host,
    handle,
    internalError: (e) => errorBody(`fake openai internal error: ${String(e)}`, 'server_error'),
  });
  return scriptedFake({ scripts, log, http }, `${http.origin}/v1`);
}
