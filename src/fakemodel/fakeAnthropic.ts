// Scripted fake of the Anthropic Messages API (the subset the `claude` CLI uses), on loopback.
// Tests and `overseer demo` point ANTHROPIC_BASE_URL at it; each request is answered by a
// named script whose step index is the number of assistant messages in the conversation.
// Wire shapes follow docs/cli-facts.md C7 (captured from claude 2.1.330).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sseFrame } from '../http/sse.js';
import { createRequestLog, createScriptBook, playStep, readJsonBody, scriptedFake, sendJson, startFakeHttp } from './fakeHttp.js';
import type { ScriptedFake, ScriptedFakeOptions, ScriptedRequest } from './fakeHttp.js';

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

export interface Step {
  text?: string;
  tools?: ToolCall[];
  delayMs?: number;
  /** An error answer; `headers` go with it (retry-after, x-should-retry, anthropic-ratelimit-*: see rateLimited / usageLimited). */
  error?: { status: number; type?: string; message: string; headers?: Record<string, string> };
  usage?: { input_tokens: number; output_tokens: number };
}

export interface ToolResultInfo {
  tool_use_id: string;
  text: string;
  is_error: boolean;
}

export interface StepContext {
  /** the full request body */
  body: any;
  /** index = number of assistant messages in body.messages */
  step: number;
  /** the -p prompt: last text block of the first user message */
  prompt: string;
  /** script name matched */
  script: string;
  /** text of every tool_result in the LAST user message, in order (string content joined) */
  lastToolResults: ToolResultInfo[];
  /** all tool results in the conversation, in order */
  allToolResults: ToolResultInfo[];
  /** the system prompt text, joined */
  system: string;
  /** the texts of all user text blocks (not tool results) in order, including ones injected later by stream-json input.
   * A message written to stdin while a turn is running reaches the API inside a role:"system" entry
   * ("The user sent a new message while you were working:\n<text>\n\nThis is how Claude Code surfaces…");
   * its <text> is listed here too, in conversation order. */
  userTexts: string[];
}

export type Script = Step[] | ((ctx: StepContext) => Step | Promise<Step>);

/** `route` default: the first `@script:NAME` marker (NAME = [A-Za-z0-9_.-]+) found in the prompt, else in the system prompt, else 'default'. */
export interface FakeAnthropicOptions extends ScriptedFakeOptions<Script> {}

export interface RecordedRequest extends ScriptedRequest {
  /** set once the request is finished: 'sent' (a turn was rendered), 'error' (a scripted or
   * internal error status was sent), 'aborted' (the client went away before the answer) */
  outcome?: 'sent' | 'error' | 'aborted';
}

/** url: the origin (http://127.0.0.1:PORT) to set as ANTHROPIC_BASE_URL. */
export interface FakeAnthropic extends ScriptedFake<Script, RecordedRequest> {}

const MARKER = /@script:([A-Za-z0-9_.-]+)/;
const DEFAULT_USAGE = { input_tokens: 100, output_tokens: 20 };

/** Text of a message `content` (string, or array of blocks: text blocks joined with "\n"). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const b of content) {
    if (typeof b === 'string') parts.push(b);
    else if (isObj(b) && b.type === 'text' && typeof b.text === 'string') parts.push(b.text);
  }
  return parts.join('\n');
}

function isObj(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function blocksOf(content: unknown): any[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}

function messagesOf(body: any): any[] {
  return Array.isArray(body?.messages) ? body.messages.filter(isObj) : [];
}

/** The -p prompt: the last text block of the first user message. */
export function promptOf(body: any): string {
  const first = messagesOf(body).find((m) => m.role === 'user');
  if (!first) return '';
  const texts = blocksOf(first.content).filter((b) => isObj(b) && b.type === 'text' && typeof b.text === 'string');
  return texts.length ? (texts[texts.length - 1].text as string) : '';
}

/** The system prompt, string or array of text blocks, joined with "\n". */
export function systemOf(body: any): string {
  return textOf(body?.system);
}

function toolResultsOf(message: any): ToolResultInfo[] {
  const out: ToolResultInfo[] = [];
  for (const b of blocksOf(message?.content)) {
    if (!isObj(b) || b.type !== 'tool_result') continue;
    out.push({
      tool_use_id: typeof b.tool_use_id === 'string' ? b.tool_use_id : '',
      text: textOf(b.content),
      is_error: b.is_error === true,
    });
  }
  return out;
}

const MID_TURN_HEAD = 'The user sent a new message while you were working:\n';
const MID_TURN_TAIL = '\n\nThis is how Claude Code surfaces messages the user sends mid-turn';

/** The user messages that claude 2.1.330 injected mid-turn into a role:"system" entry (see docs/claude-stream-input.md). */
export function midTurnMessages(systemText: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (;;) {
    const head = systemText.indexOf(MID_TURN_HEAD, from);
    if (head < 0) return out;
    const start = head + MID_TURN_HEAD.length;
    const tail = systemText.indexOf(MID_TURN_TAIL, start);
    out.push(systemText.slice(start, tail < 0 ? undefined : tail));
    if (tail < 0) return out;
    from = tail + MID_TURN_TAIL.length;
  }
}

/** Builds the StepContext of a request body (exported for tests and custom routers). */
export function contextOf(body: any, script: string): StepContext {
  const msgs = messagesOf(body);
  const users = msgs.filter((m) => m.role === 'user');
  const last = users[users.length - 1];
  const userTexts: string[] = [];
  for (const m of msgs) {
    if (m.role === 'user') {
      for (const b of blocksOf(m.content)) {
        if (isObj(b) && b.type === 'text' && typeof b.text === 'string') userTexts.push(b.text);
      }
    } else if (m.role === 'system') {
      userTexts.push(...midTurnMessages(textOf(m.content)));
    }
  }
  return {
    body,
    step: msgs.filter((m) => m.role === 'assistant').length,
    prompt: promptOf(body),
    script,
    lastToolResults: last ? toolResultsOf(last) : [],
    allToolResults: users.flatMap(toolResultsOf),
    system: systemOf(body),
    userTexts,
  };
}

function defaultRoute(prompt: string, system: string): string {
  const m = MARKER.exec(prompt) ?? MARKER.exec(system);
  return m?.[1] ?? 'default';
}

function sse(event: string, data: unknown): string {
  return sseFrame({ event, data: JSON.stringify(data) });
}

/** Splits a string in two at a code-point boundary (so input_json_delta is really incremental). */
function splitInTwo(s: string): string[] {
  if (s.length < 8) return [s];
  let mid = Math.floor(s.length / 2);
  const c = s.charCodeAt(mid);
  if (c >= 0xdc00 && c <= 0xdfff) mid++;
  return [s.slice(0, mid), s.slice(mid)];
}

interface Rendered {
  id: string;
  model: string;
  text: string | undefined;
  tools: { id: string; name: string; input: Record<string, unknown> }[];
  stopReason: 'tool_use' | 'end_turn';
  usage: { input_tokens: number; output_tokens: number };
}

function render(step: Step, n: number, model: string): Rendered {
  const tools = (step.tools ?? []).map((t, i) => ({ id: `toolu_fake_${n}_${i}`, name: t.name, input: t.input ?? {} }));
  // A text block is sent when the step has text, or when there is nothing else to send.
  const text = step.text !== undefined && step.text !== '' ? step.text : tools.length ? undefined : (step.text ?? '');
  return {
    id: `msg_fake_${n}`,
    model,
    text,
    tools,
    stopReason: tools.length ? 'tool_use' : 'end_turn',
    usage: step.usage ?? DEFAULT_USAGE,
  };
}

function toSse(r: Rendered): string {
  let out = sse('message_start', {
    type: 'message_start',
    message: {
      id: r.id,
      type: 'message',
      role: 'assistant',
      model: r.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: r.usage.input_tokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  });
  let index = 0;
  if (r.text !== undefined) {
    out += sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    out += sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: r.text } });
    out += sse('content_block_stop', { type: 'content_block_stop', index });
    index++;
  }
  for (const t of r.tools) {
    out += sse('content_block_start', {
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: t.id, name: t.name, input: {} },
    });
    for (const part of splitInTwo(JSON.stringify(t.input))) {
      out += sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } });
    }
    out += sse('content_block_stop', { type: 'content_block_stop', index });
    index++;
  }
  out += sse('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: r.stopReason, stop_sequence: null },
    usage: { output_tokens: r.usage.output_tokens },
  });
  out += sse('message_stop', { type: 'message_stop' });
  return out;
}

function toJsonMessage(r: Rendered): unknown {
  const content: unknown[] = [];
  if (r.text !== undefined) content.push({ type: 'text', text: r.text });
  for (const t of r.tools) content.push({ type: 'tool_use', id: t.id, name: t.name, input: t.input });
  return {
    id: r.id,
    type: 'message',
    role: 'assistant',
    model: r.model,
    content,
    stop_reason: r.stopReason,
    stop_sequence: null,
    usage: { ...r.usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

function errorBody(type: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

function defaultErrorType(status: number): string {
  switch (status) {
    case 400: return 'invalid_request_error';
    case 401: return 'authentication_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 413: return 'request_too_large';
    case 429: return 'rate_limit_error';
    case 529: return 'overloaded_error';
    default: return 'api_error';
  }
}

// Provider limits are scripted as error steps; the steps tests play live in test/helpers/fakeLimits.ts.

export async function startFakeAnthropic(opts: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const scripts = createScriptBook<StepContext, Step>(opts.scripts);
  const log = createRequestLog<RecordedRequest>('fake anthropic');
  let counter = 0;

  const handleMessages = async (res: ServerResponse, body: any): Promise<void> => {
    const prompt = promptOf(body);
    const script = scripts.name(opts.route?.(body, prompt), () => defaultRoute(prompt, systemOf(body)));
    const ctx = contextOf(body, script);
    const rec: RecordedRequest = { at: Date.now(), script, step: ctx.step, body };
    const step = await playStep({ scripts, log, http }, rec, ctx, res, (msg) => errorBody('invalid_request_error', msg));
    if (!step) return;

    if (step.error) {
      const status = step.error.status;
      sendJson(res, status, errorBody(step.error.type ?? defaultErrorType(status), step.error.message), step.error.headers);
      log.finish(rec, 'error', status);
      return;
    }

    const n = ++counter;
    const model = typeof body.model === 'string' ? body.model : 'claude-fake';
    const r = render(step, n, model);
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_fake_${n}` });
      res.end(toSse(r));
    } else {
      sendJson(res, 200, JSON.stringify(toJsonMessage(r)));
    }
    log.finish(rec, 'sent', 200);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    const isMessages = path === '/v1/messages';
    const isCount = path === '/v1/messages/count_tokens';
    if (req.method !== 'POST' || (!isMessages && !isCount)) {
      req.resume();
      sendJson(res, 404, errorBody('not_found_error', `fake anthropic: no route ${req.method} ${path}`));
      return;
    }
    const body: any = await readJsonBody(req, res, (status, message) => errorBody(defaultErrorType(status), message));
    if (body === undefined) return;
    if (!isObj(body) || (isMessages && !Array.isArray(body.messages))) {
      sendJson(res, 400, errorBody('invalid_request_error', 'request body must be an object with a messages array'));
      return;
    }
    if (isCount) {
      const size = JSON.stringify([body.system ?? '', body.messages ?? [], body.tools ?? []]).length;
      sendJson(res, 200, JSON.stringify({ input_tokens: Math.max(1, Math.ceil(size / 4)) }));
      return;
    }
    await handleMessages(res, body);
  };

  const http = await startFakeHttp({
    name: 'fake anthropic',
    host: opts.host,
    handle,
    internalError: (e) => errorBody('api_error', `fake anthropic internal error: ${String(e)}`),
  });
  return scriptedFake({ scripts, log, http }, http.origin);
}
