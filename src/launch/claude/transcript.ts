// Human-readable and capped-JSON views of an agent transcript, for `read_agent_output` and
// `overseer logs`: Claude stream-json lines here, Codex `--json` lines by codex/transcript.ts
// (told apart per line). Every output is bounded: per field by maxFieldChars, in whole by
// maxChars, keeping the most recent part. Pure.
import { parseClaudeLine, type ClaudeEvent } from './events.js';
import { isCodexEvent, renderCodexEvent } from '../codex/transcript.js';
import { compactJson, isLowSurrogate, truncate } from '../textCap.js';

export { truncate };

/** Size caps of rendered output. */
export interface RenderOptions {
  /** Cap of the whole output. Default 20000. */
  maxChars?: number;
  /** Cap of each text, tool input or tool result. Default 2000. */
  maxFieldChars?: number;
  /** Prefix each line with the event's time (HH:MM:SS UTC) when the event carries one. */
  timestamps?: boolean;
}

const DEFAULT_MAX_CHARS = 20000;
const DEFAULT_MAX_FIELD = 2000;
const UNPARSED_PREVIEW = 200;
/** system/* subtypes that are noise in a transcript. */
const QUIET_SYSTEM = new Set(['status', 'ui_invalidate', 'hook_started']);

const fmtCost = (usd: number): string => `$${usd.toFixed(4)}`;

/** One readable line (or a few) per event; '' for events not worth showing (stream_event etc.). */
export function renderEvent(e: ClaudeEvent, opts: RenderOptions = {}): string {
  const f = opts.maxFieldChars ?? DEFAULT_MAX_FIELD;
  const raw = e.raw as Record<string, unknown>;
  switch (e.kind) {
    case 'init': {
      const mcp = e.mcpServers.map((s) => `${s.name}=${s.status}`).join(', ');
      return `init: model ${e.model ?? '?'}${mcp ? `, mcp ${mcp}` : ''}`;
    }
    case 'assistant':
      return [
        ...e.text.filter((t) => t.trim() !== '').map((t) => `assistant: ${truncate(t, f)}`),
        ...e.toolUses.map((u) => `tool_use ${u.name} ${truncate(compactJson(u.input), f)}`.trimEnd()),
      ].join('\n');
    case 'tool_result':
      return e.results.map((r) => `tool_result ${r.isError ? 'ERROR' : 'ok'}: ${truncate(r.text, f)}`).join('\n');
    case 'user_text':
      return e.text.trim() === '' ? '' : `user: ${truncate(e.text, f)}`;
    case 'result': {
      const label = e.isError
        ? `ERROR ${e.subtype && e.subtype !== 'success' ? e.subtype : (e.terminalReason ?? e.subtype ?? 'unknown')}` +
          (e.apiErrorStatus != null ? ` status ${e.apiErrorStatus}` : '')
        : (e.subtype ?? 'success');
      // No turn count here: Claude's num_turns counts API calls (one more than ran at
      // --max-turns) per prompt; Overseer's `turns` (status, get_agent) is the one definition.
      const body = e.result ?? (e.errors ?? []).join('; ');
      return `result: ${label} (${fmtCost(e.costUsd)})${body ? ` ${truncate(body, f)}` : ''}`;
    }
    case 'api_retry': {
      const status = e.errorStatus != null ? `status ${e.errorStatus}` : 'no status';
      return `api_retry ${e.attempt ?? '?'}/${e.maxRetries ?? '?'}: ${status}${e.error ? ` ${truncate(e.error, f)}` : ''}`;
    }
    case 'permission_denied':
      return `permission_denied ${e.toolName ?? '?'}${e.message ? `: ${truncate(e.message, f)}` : ''}`;
    case 'system': {
      if (QUIET_SYSTEM.has(e.subtype)) return '';
      if (e.subtype === 'hook_response') {
        const out = typeof raw.output === 'string' ? raw.output.trim() : '';
        return `hook ${String(raw.hook_name ?? '?')} ${String(raw.outcome ?? '?')}${out ? `: ${truncate(out, f)}` : ''}`;
      }
      if (e.subtype === 'informational' && typeof raw.content === 'string') return `info: ${truncate(raw.content, f)}`;
      return `system/${e.subtype || '?'}`;
    }
    case 'other':
      if (e.type === 'tool_progress') return `tool_progress ${String(raw.tool_name ?? '?')} ${String(raw.elapsed_time_seconds ?? '?')}s`;
      return '';
  }
}

/** Keeps the end of `text` within `max` chars, prefixed by "… (N earlier characters omitted)". */
function keepEnd(text: string, max: number): string {
  if (text.length <= max) return text;
  let omitted = text.length - max;
  for (let i = 0; i < 4; i++) {
    const prefix = `… (${omitted} earlier characters omitted)\n`;
    if (prefix.length >= max) break;
    const next = text.length - (max - prefix.length);
    if (next === omitted) {
      const start = isLowSurrogate(text.charCodeAt(omitted)) ? omitted + 1 : omitted;
      return prefix + text.slice(start);
    }
    omitted = next;
  }
  return text.slice(text.length - max);
}

const lastN = <T>(xs: T[], n: number): T[] => (n >= 1 ? xs.slice(-Math.floor(n)) : []);

/** "HH:MM:SS " of an ISO `timestamp` field, or as many spaces when the event has none. */
function stamp(v: unknown): string {
  const t = typeof v === 'object' && v !== null ? (v as Record<string, unknown>).timestamp : undefined;
  const ms = typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? ' '.repeat(9) : `${new Date(ms).toISOString().slice(11, 19)} `;
}

/** One transcript line (Claude or Codex) as readable text; '' when not worth showing. */
export function renderLine(line: string, opts: RenderOptions = {}): string {
  if (line.trim() === '') return '';
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    obj = undefined;
  }
  let text: string;
  if (isCodexEvent(obj)) text = renderCodexEvent(obj, opts.maxFieldChars ?? DEFAULT_MAX_FIELD);
  else {
    const p = parseClaudeLine(line);
    text = p.ok ? renderEvent(p.event, opts) : `[unparsed] ${truncate(line, UNPARSED_PREVIEW)}`;
  }
  if (!text || !opts.timestamps) return text;
  const pre = stamp(obj);
  return text.split('\n').map((l, i) => (i === 0 ? pre : ' '.repeat(pre.length)) + l).join('\n');
}

/** Renders the last `tail` lines (JSONL) of a transcript; the result never exceeds maxChars. */
export function renderTranscript(lines: string[], tail: number, opts: RenderOptions = {}): string {
  const out: string[] = [];
  for (const line of lastN(lines, tail)) {
    const text = renderLine(line, opts);
    if (text) out.push(text);
  }
  return keepEnd(out.join('\n'), opts.maxChars ?? DEFAULT_MAX_CHARS);
}

/** Copies `v` with every string longer than `max` truncated, at any depth. */
function truncateDeep(v: unknown, max: number, depth = 0): unknown {
  if (typeof v === 'string') return truncate(v, max);
  if (typeof v !== 'object' || v === null) return v;
  if (depth > 64) return '[too deep]';
  if (Array.isArray(v)) return v.map((x) => truncateDeep(x, max, depth + 1));
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) o[k] = truncateDeep(x, max, depth + 1);
  return o;
}

/** The last `tail` lines as parsed objects, strings capped, serialized size under maxChars (oldest dropped first). */
export function tailJson(lines: string[], tail: number, opts: RenderOptions = {}): unknown[] {
  const maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
  const maxField = opts.maxFieldChars ?? DEFAULT_MAX_FIELD;
  const entries: { value: unknown; size: number }[] = [];
  for (const line of lastN(lines, tail)) {
    if (line.trim() === '') continue;
    const p = parseClaudeLine(line);
    let value: unknown = p.ok ? truncateDeep(p.event.raw, maxField) : { type: 'unparsed', line: truncate(line, UNPARSED_PREVIEW) };
    let size = JSON.stringify(value).length;
    if (size + 2 > maxChars) {
      // One entry alone too big (many fields): keep a stub rather than lose the newest event.
      value = { type: p.ok ? p.event.raw.type : 'unparsed', omitted: `entry too large (${size} characters)` };
      size = JSON.stringify(value).length;
    }
    entries.push({ value, size });
  }
  // Serialized array = "[" + entries joined by "," + "]".
  let total = 2 + entries.reduce((n, e) => n + e.size, 0) + Math.max(0, entries.length - 1);
  let drop = 0;
  while (drop < entries.length && total > maxChars) {
    total -= entries[drop]!.size + (entries.length - drop > 1 ? 1 : 0);
    drop++;
  }
  return entries.slice(drop).map((e) => e.value);
}
