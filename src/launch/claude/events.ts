// Types and a tolerant parser for the events `claude -p --output-format stream-json --verbose`
// prints, one JSON object per line (docs/cli-facts.md C4). Unknown or malformed
// fields never throw: they become undefined / empty, and the raw object is always kept. Pure.

/** One stream-json line, classified. `raw` is the parsed object as printed. */
export type ClaudeEvent =
  | { kind: 'init'; sessionId?: string; model?: string; cwd?: string; mcpServers: { name: string; status: string }[]; tools: string[]; raw: any }
  | { kind: 'assistant'; messageId?: string; text: string[]; toolUses: { id: string; name: string; input: unknown }[]; usage?: any; raw: any }
  /** type:"user" carrying tool_result blocks. */
  | { kind: 'tool_result'; results: { toolUseId: string; isError: boolean; text: string }[]; raw: any }
  /** type:"user" with plain text (interrupt markers, replayed input). */
  | { kind: 'user_text'; text: string; raw: any }
  | {
      kind: 'result';
      isError: boolean;
      subtype?: string;
      result?: string;
      errors?: string[];
      sessionId?: string;
      numTurns?: number;
      totalCostUsd?: number;
      /** Sum of model_usage_since_last_result[*].costUSD, else total_cost_usd (else 0). */
      costUsd: number;
      /** The result carried a cost at all (else costUsd is a placeholder 0). */
      costReported: boolean;
      terminalReason?: string | null;
      apiErrorStatus?: number | null;
      stopReason?: string | null;
      permissionDenials: unknown[];
      raw: any;
    }
  | { kind: 'api_retry'; attempt?: number; maxRetries?: number; errorStatus?: number | null; error?: string; raw: any }
  | { kind: 'permission_denied'; toolName?: string; message?: string; raw: any }
  /** Other system/* events (status, hook_response, informational, …). */
  | { kind: 'system'; subtype: string; raw: any }
  /** tool_progress, stream_event and unknown types. */
  | { kind: 'other'; type: string; raw: any };

/** Result of parsing one line: an event, or why the line is not one. */
export type ParseOutcome = { ok: true; event: ClaudeEvent } | { ok: false; reason: string; line: string };

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const strOrNull = (v: unknown): string | null | undefined => (v === null ? null : str(v));
const numOrNull = (v: unknown): number | null | undefined => (v === null ? null : num(v));
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const blocks = (v: unknown): Obj[] => arr(v).filter(isObj);

/** Text of tool_result / message content: a string, or blocks (text joined by "\n", others as `[type]`). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content == null ? '' : JSON.stringify(content);
  return content
    .map((b) => {
      if (typeof b === 'string') return b;
      if (!isObj(b)) return '';
      if (b.type === 'text') return str(b.text) ?? '';
      return `[${str(b.type) ?? 'unknown'}]`;
    })
    .join('\n');
}

/** Parses one stream-json line. Never throws. */
export function parseClaudeLine(line: string): ParseOutcome {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}`, line };
  }
  if (!isObj(raw)) return { ok: false, reason: `not a JSON object (${raw === null ? 'null' : Array.isArray(raw) ? 'array' : typeof raw})`, line };
  const type = raw.type;
  if (typeof type !== 'string' || type === '') return { ok: false, reason: 'missing "type"', line };
  try {
    return { ok: true, event: classify(type, raw) };
  } catch (err) {
    // Defensive only: classify reads plain parsed JSON and is not expected to throw.
    return { ok: false, reason: `unreadable event: ${(err as Error).message}`, line };
  }
}

function classify(type: string, raw: Obj): ClaudeEvent {
  switch (type) {
    case 'system':
      return system(raw);
    case 'assistant':
      return assistant(raw);
    case 'user':
      return user(raw);
    case 'result':
      return result(raw);
    default:
      return { kind: 'other', type, raw };
  }
}

function system(raw: Obj): ClaudeEvent {
  const subtype = str(raw.subtype) ?? '';
  switch (subtype) {
    case 'init':
      return {
        kind: 'init',
        sessionId: str(raw.session_id),
        model: str(raw.model),
        cwd: str(raw.cwd),
        mcpServers: blocks(raw.mcp_servers)
          .filter((s) => typeof s.name === 'string')
          .map((s) => ({ name: s.name as string, status: str(s.status) ?? 'unknown' })),
        tools: arr(raw.tools).filter((t): t is string => typeof t === 'string'),
        raw,
      };
    case 'api_retry':
      return {
        kind: 'api_retry',
        attempt: num(raw.attempt),
        maxRetries: num(raw.max_retries),
        errorStatus: numOrNull(raw.error_status),
        error: raw.error == null ? undefined : typeof raw.error === 'string' ? raw.error : JSON.stringify(raw.error),
        raw,
      };
    case 'permission_denied':
      return { kind: 'permission_denied', toolName: str(raw.tool_name), message: str(raw.message), raw };
    default:
      return { kind: 'system', subtype, raw };
  }
}

function assistant(raw: Obj): ClaudeEvent {
  const msg = isObj(raw.message) ? raw.message : {};
  const text: string[] = [];
  const toolUses: { id: string; name: string; input: unknown }[] = [];
  for (const b of blocks(msg.content)) {
    if (b.type === 'text' && typeof b.text === 'string') text.push(b.text);
    else if (b.type === 'tool_use') toolUses.push({ id: str(b.id) ?? '', name: str(b.name) ?? '', input: b.input });
  }
  if (typeof msg.content === 'string') text.push(msg.content);
  return { kind: 'assistant', messageId: str(msg.id), text, toolUses, usage: msg.usage, raw };
}

function user(raw: Obj): ClaudeEvent {
  const msg = isObj(raw.message) ? raw.message : {};
  const content = msg.content;
  const results = blocks(content)
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({ toolUseId: str(b.tool_use_id) ?? '', isError: b.is_error === true, text: contentText(b.content) }));
  if (results.length > 0) return { kind: 'tool_result', results, raw };
  return { kind: 'user_text', text: contentText(content), raw };
}

function result(raw: Obj): ClaudeEvent {
  const subtype = str(raw.subtype);
  const totalCostUsd = num(raw.total_cost_usd);
  const sinceLast = sinceLastResultCost(raw.model_usage_since_last_result);
  return {
    kind: 'result',
    // §4.2: trust is_error, not subtype; only fall back to subtype when is_error is absent.
    isError: typeof raw.is_error === 'boolean' ? raw.is_error : subtype !== 'success',
    subtype,
    result: str(raw.result),
    errors: Array.isArray(raw.errors) ? raw.errors.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))) : undefined,
    sessionId: str(raw.session_id),
    numTurns: num(raw.num_turns),
    totalCostUsd,
    costUsd: sinceLast ?? totalCostUsd ?? 0,
    costReported: sinceLast !== undefined || totalCostUsd !== undefined,
    terminalReason: strOrNull(raw.terminal_reason),
    apiErrorStatus: numOrNull(raw.api_error_status),
    stopReason: strOrNull(raw.stop_reason),
    permissionDenials: arr(raw.permission_denials),
    raw,
  };
}

/** Per-process cost (§4.2): the sum of costUSD over models; undefined when none is reported. */
function sinceLastResultCost(v: unknown): number | undefined {
  if (!isObj(v)) return undefined;
  let sum: number | undefined;
  for (const m of Object.values(v)) {
    const c = isObj(m) ? num(m.costUSD) : undefined;
    if (c !== undefined) sum = (sum ?? 0) + c;
  }
  return sum;
}
