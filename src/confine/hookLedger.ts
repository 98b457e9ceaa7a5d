// The backstop against a hook switched off by a route nobody knows yet: every tool call of a
// child that the lock hook is meant to see must have had a hook decision for its tool_use_id
// before its result comes back. The hook service notes each id it decides on; the supervisor
// reports each tool result; a result of a guarded tool whose id the hook never saw means the
// tool ran unchecked (issue 18 point 3). Claude children only: Codex's event stream does not
// carry the hook's call ids (docs/security.md).

/** Tools a child's hook matcher covers (src/launch/claude/launcher.ts CHILD_HOOK_MATCHER). */
export const GUARDED_TOOLS = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Bash', 'Read', 'Grep', 'Glob', 'LS']);

/** Results that say the tool never ran (refused by a permission rule before any hook). */
const NEVER_RAN = /has been denied|denied by your permission settings|blocked by|hook error/i;

export interface ToolOutcome {
  toolUseId: string;
  name?: string;
  isError: boolean;
  text: string;
}

export class HookLedger {
  private readonly seen = new Map<string, Set<string>>();

  /** The hook decided on this call of this job. */
  note(jobId: string, toolUseId: string): void {
    let s = this.seen.get(jobId);
    if (!s) this.seen.set(jobId, (s = new Set()));
    if (s.size > 50_000) s.clear(); // bounded: a result arrives within moments of its decision
    s.add(toolUseId);
  }

  /** The results among these of guarded tools that ran with no hook decision. */
  unguarded(jobId: string, results: readonly ToolOutcome[]): ToolOutcome[] {
    const s = this.seen.get(jobId);
    return results.filter((r) => r.name !== undefined && GUARDED_TOOLS.has(r.name) && r.toolUseId !== '' && !s?.has(r.toolUseId) && !(r.isError && NEVER_RAN.test(r.text)));
  }

  forget(jobId: string): void {
    this.seen.delete(jobId);
  }
}
