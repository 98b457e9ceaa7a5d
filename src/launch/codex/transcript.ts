// Human-readable lines for a Codex `exec --json` transcript (docs/cli-facts.md X2), the
// counterpart of the Claude renderer for `read_agent_output` and `overseer logs`. One event
// object in, '' for events not worth a line (turn.started). Pure; every field capped.
import { compactJson, truncate } from '../textCap.js';

type Obj = Record<string, unknown>;

const CODEX_TYPES = new Set(['thread.started', 'turn.started', 'turn.completed', 'turn.failed', 'item.started', 'item.updated', 'item.completed', 'error']);

/** Whether a parsed transcript line is a Codex event (Claude's are assistant/user/system/result/…). */
export function isCodexEvent(v: unknown): v is Obj {
  return !!v && typeof v === 'object' && !Array.isArray(v) && CODEX_TYPES.has(String((v as Obj).type));
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** The text blocks of an MCP result ({content:[{type:'text',text}]}), else its JSON. */
function mcpResultText(r: unknown): string {
  if (!isObj(r)) return compactJson(r);
  const blocks = Array.isArray(r.content) ? r.content : [];
  const texts = blocks.filter(isObj).map((b) => (typeof b.text === 'string' ? b.text : compactJson(b)));
  return texts.length ? texts.join('\n') : compactJson(r.structured_content ?? r);
}

function renderItem(it: Obj, started: boolean, f: number): string {
  const type = str(it.type) ?? '?';
  switch (type) {
    case 'agent_message':
      return started ? '' : `assistant: ${truncate(str(it.text) ?? '', f)}`;
    case 'reasoning':
      return started ? '' : `reasoning: ${truncate(str(it.text) ?? '', f)}`;
    case 'command_execution': {
      const cmd = truncate(str(it.command) ?? '?', f);
      if (started) return `exec (running) ${cmd}`;
      const out = (str(it.aggregated_output) ?? '').trimEnd();
      const code = typeof it.exit_code === 'number' ? `exit ${it.exit_code}` : String(it.status ?? 'done');
      return `exec (${code}) ${cmd}${out ? `\n${truncate(out, f)}` : ''}`;
    }
    case 'file_change': {
      if (started) return '';
      const changes = (Array.isArray(it.changes) ? it.changes : []).filter(isObj).map((c) => `${String(c.kind ?? '?')} ${String(c.path ?? '?')}`);
      return `file_change ${String(it.status ?? '')}: ${truncate(changes.join(', ') || '(none)', f)}`;
    }
    case 'mcp_tool_call': {
      const name = `mcp__${String(it.server ?? '?')}__${String(it.tool ?? '?')}`;
      const call = `tool_use ${name} ${truncate(compactJson(it.arguments), f)}`.trimEnd();
      if (started) return call;
      const err = isObj(it.error) ? str(it.error.message) ?? compactJson(it.error) : undefined;
      const res = err !== undefined || it.status === 'failed' ? `tool_result ERROR: ${truncate(err ?? 'failed', f)}` : `tool_result ok: ${truncate(mcpResultText(it.result), f)}`;
      return `${call}\n${res}`;
    }
    case 'error':
      return `warning: ${truncate(str(it.message) ?? '', f)}`;
    case 'web_search':
      return started ? '' : `web_search ${truncate(str(it.query) ?? '', f)}`;
    case 'todo_list': {
      if (started) return '';
      const items = (Array.isArray(it.items) ? it.items : []).filter(isObj).map((t) => `${t.completed ? '[x]' : '[ ]'} ${String(t.text ?? '')}`);
      return `todo: ${truncate(items.join('; '), f)}`;
    }
    default:
      return started ? '' : `item ${type}`;
  }
}

/** One readable line (or a few) per Codex event; '' for events not worth showing. */
export function renderCodexEvent(e: Obj, maxFieldChars = 2000): string {
  const f = maxFieldChars;
  switch (e.type) {
    case 'thread.started':
      return `init: codex thread ${String(e.thread_id ?? '?')}`;
    case 'item.started':
    case 'item.completed':
      return isObj(e.item) ? renderItem(e.item, e.type === 'item.started', f) : '';
    case 'turn.completed': {
      const u = isObj(e.usage) ? e.usage : {};
      return `result: success (thread tokens: ${Number(u.input_tokens ?? 0)} in, ${Number(u.output_tokens ?? 0)} out)`;
    }
    case 'turn.failed': {
      const msg = isObj(e.error) ? str(e.error.message) : str(e.message);
      return `result: ERROR ${truncate(msg ?? 'the turn failed', f)}`;
    }
    case 'error':
      return `error: ${truncate(str(e.message) ?? '', f)}`;
    default:
      return ''; // turn.started, item.updated
  }
}
