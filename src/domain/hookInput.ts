// The shape check of a POST /hook body before the lock service sees it: anything that is not
// an object, or whose tool_name / cwd / tool_input has the wrong type, is refused (denied) with
// a reason instead of reaching code that assumes the shape (it used to answer 500).
/** The fields of Claude Code's PreToolUse input the hub reads (services/hook.ts HookInput). */
export interface CheckedHookInput {
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  cwd?: string;
  /** The tool call this decision is for (Claude Code and Codex send it). */
  tool_use_id?: string;
}

export type HookInputCheck = { ok: true; input: CheckedHookInput } | { ok: false; reason: string };

export function checkHookInput(body: unknown): HookInputCheck {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reason: 'the hook input is not a JSON object' };
  const b = body as Record<string, unknown>;
  for (const k of ['tool_name', 'cwd', 'tool_use_id'] as const) {
    if (b[k] !== undefined && typeof b[k] !== 'string') return { ok: false, reason: `the hook input's ${k} is not a string` };
  }
  if (b.tool_input !== undefined && (typeof b.tool_input !== 'object' || b.tool_input === null || Array.isArray(b.tool_input))) {
    return { ok: false, reason: 'the hook input\'s tool_input is not an object' };
  }
  return { ok: true, input: b as CheckedHookInput };
}
