// What of a transcript line goes into the search index: the rows one Claude stream-json or
// Codex `exec --json` line yields — assistant text, tool calls (the tool's name and its input as
// compact JSON, after the tool's name) and tool results — each capped. Everything else (init, results, usage, stream
// deltas, reasoning, started items, user text) yields nothing. Pure; never throws.
import { contentText } from '../launch/claude/events.js';
import { isCodexEvent } from '../launch/codex/transcript.js';
import { compactJson, isHighSurrogate, truncate } from '../launch/textCap.js';
import type { RowKind } from '../contract/search.js';

export type { RowKind };

/** One index row of a line. `toolUseId` links a Claude result to its call (names are resolved by ToolNames). */
export interface ExtractedRow {
  kind: RowKind;
  tool?: string;
  text: string;
  toolUseId?: string;
}

export interface ExtractedLine {
  /** The event's own time (Claude's `timestamp`), when it carries a plausible one. */
  at?: number;
  rows: ExtractedRow[];
}

/** The largest row: a tool input or result is cut here, longer assistant text is split into rows of this size. */
export const MAX_ROW_CHARS = 4096;
/** Assistant text beyond this many rows of one block is cut (a 32 KB message is already unusual). */
export const MAX_TEXT_ROWS = 8;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const EMPTY: ExtractedLine = { rows: [] };
/** 2000-01-01: an earlier "timestamp" is not one. */
const MIN_TIME = 946_684_800_000;

/** The index rows of one transcript line (Claude or Codex, told apart per line). */
export function extractLine(line: string, now = Date.now()): ExtractedLine {
  if (line.length === 0 || line.charCodeAt(0) !== 0x7b /* { */) return EMPTY;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return EMPTY;
  }
  if (!isObj(v)) return EMPTY;
  const rows = isCodexEvent(v) ? codexRows(v) : claudeRows(v);
  if (rows.length === 0) return EMPTY;
  const at = timeOf(v.timestamp, now);
  return at === undefined ? { rows } : { at, rows };
}

function timeOf(v: unknown, now: number): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  // A clock far off (or a garbled field) must not place a row in another era.
  return Number.isFinite(ms) && ms >= MIN_TIME && ms <= now + 86_400_000 ? ms : undefined;
}

/** Claude: assistant text and tool_use blocks, and the tool_result blocks of a user message. */
function claudeRows(e: Obj): ExtractedRow[] {
  const msg = isObj(e.message) ? e.message : undefined;
  if (!msg) return [];
  const blocks = Array.isArray(msg.content) ? msg.content.filter(isObj) : [];
  const rows: ExtractedRow[] = [];
  if (e.type === 'assistant') {
    if (typeof msg.content === 'string') pushText(rows, msg.content);
    for (const b of blocks) {
      if (b.type === 'text') pushText(rows, str(b.text) ?? '');
      else if (b.type === 'tool_use') pushCall(rows, str(b.name) ?? '?', b.input, str(b.id));
    }
  } else if (e.type === 'user') {
    for (const b of blocks) if (b.type === 'tool_result') pushResult(rows, undefined, contentText(b.content), str(b.tool_use_id));
  }
  return rows;
}

/** Codex: finished items only (a started item is repeated, complete, by its item.completed). */
function codexRows(e: Obj): ExtractedRow[] {
  if (e.type !== 'item.completed' || !isObj(e.item)) return [];
  const it = e.item;
  const rows: ExtractedRow[] = [];
  switch (it.type) {
    case 'agent_message':
      pushText(rows, str(it.text) ?? '');
      break;
    case 'command_execution':
      pushCall(rows, 'shell', str(it.command) ?? '');
      pushResult(rows, 'shell', str(it.aggregated_output) ?? '');
      break;
    case 'file_change': {
      const changes = (Array.isArray(it.changes) ? it.changes : []).filter(isObj).map((c) => `${String(c.kind ?? '?')} ${String(c.path ?? '?')}`);
      pushCall(rows, 'apply_patch', changes.join('\n'));
      break;
    }
    case 'mcp_tool_call': {
      const tool = `mcp__${String(it.server ?? '?')}__${String(it.tool ?? '?')}`;
      pushCall(rows, tool, it.arguments);
      const err = isObj(it.error) ? str(it.error.message) ?? compactJson(it.error) : undefined;
      pushResult(rows, tool, err ?? mcpResultText(it.result));
      break;
    }
    case 'web_search':
      pushCall(rows, 'web_search', str(it.query) ?? '');
      break;
    default:
      break; // reasoning, todo_list, error (warnings)
  }
  return rows;
}

/** The text blocks of an MCP result ({content:[{type:'text',text}]}), else its JSON. */
function mcpResultText(r: unknown): string {
  if (r === null || r === undefined) return '';
  if (!isObj(r)) return compactJson(r);
  const blocks = (Array.isArray(r.content) ? r.content : []).filter(isObj);
  const texts = blocks.map((b) => (typeof b.text === 'string' ? b.text : compactJson(b)));
  return texts.length ? texts.join('\n') : compactJson(r.structured_content ?? r);
}

function pushText(rows: ExtractedRow[], text: string): void {
  if (text.trim() === '') return;
  for (const part of chunks(text, MAX_ROW_CHARS, MAX_TEXT_ROWS)) rows.push({ kind: 'text', text: part });
}

/** A call's row starts with the tool's name, so the name is found too ("lock_files", "Bash"). */
function pushCall(rows: ExtractedRow[], tool: string, input: unknown, toolUseId?: string): void {
  const args = typeof input === 'string' ? input : compactJson(input);
  const text = args === '' || args === '{}' ? tool : `${tool} ${args}`;
  rows.push({ kind: 'tool_call', tool, text: truncate(text, MAX_ROW_CHARS), ...(toolUseId ? { toolUseId } : {}) });
}

function pushResult(rows: ExtractedRow[], tool: string | undefined, text: string, toolUseId?: string): void {
  if (text.trim() === '') return;
  rows.push({ kind: 'tool_result', ...(tool ? { tool } : {}), text: truncate(text, MAX_ROW_CHARS), ...(toolUseId ? { toolUseId } : {}) });
}

/**
 * `text` in pieces of at most `size` characters, cut at whitespace near the end of a piece when
 * there is some (so words stay whole), never inside a surrogate pair; at most `max` pieces, the
 * last one ending in "…" when text was left over.
 */
export function chunks(text: string, size: number, max: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > size && out.length < max - 1) {
    let cut = size;
    const ws = rest.lastIndexOf(' ', size);
    const nl = rest.lastIndexOf('\n', size);
    const at = Math.max(ws, nl);
    if (at > 0 && at > size - 200) cut = at;
    else if (isHighSurrogate(rest.charCodeAt(cut - 1))) cut--;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^\s+/, '');
  }
  if (rest.trim() !== '') out.push(truncate(rest, size));
  return out;
}

/**
 * Tool names by call id for one transcript, so a Claude tool_result row carries the name of the
 * tool_use it answers (the result's own line does not say). Bounded: calls never answered are
 * forgotten oldest first.
 */
export class ToolNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly max = 1000) {}

  /** Remember the calls of `rows` and name the results in them (in place). */
  resolve(rows: ExtractedRow[]): void {
    for (const r of rows) {
      if (!r.toolUseId) continue;
      if (r.kind === 'tool_call' && r.tool) {
        if (this.names.size >= this.max) this.names.delete(this.names.keys().next().value as string);
        this.names.set(r.toolUseId, r.tool);
      } else if (r.kind === 'tool_result' && !r.tool) {
        const name = this.names.get(r.toolUseId);
        if (name) {
          r.tool = name;
          this.names.delete(r.toolUseId);
        }
      }
    }
  }
}
