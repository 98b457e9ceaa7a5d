// What became of a Codex child's shell commands, read from its rollout file: for a command whose
// sandbox could not start, Codex's `--json` stream has no item at all (docs/codex-notes.md), but
// the rollout keeps the call (`function_call`, e.g. `exec_command`) and the text the model got
// back (`function_call_output`). Pure.

/** The function-call names of Codex's shell tools (unified exec, the classic shell tools). */
export const SHELL_TOOLS: ReadonlySet<string> = new Set(['exec_command', 'shell', 'shell_command', 'container.exec', 'local_shell']);

/**
 * First lines of a command's output that mean the command itself never ran: the sandbox or the
 * launcher around it failed first. Each names where the text comes from.
 */
const START_FAILURES: readonly RegExp[] = [
  /^bwrap: /, // bubblewrap could not build the sandbox or exec what runs in it (e.g. `execvp codex-linux-sandbox`)
  /^codex-linux-sandbox(:|$)/, // Codex's sandbox helper refused to set up
  /^thread '[^']*' panicked at .*(linux-sandbox|sandbox restrictions)/, // the helper's seccomp/landlock stage panicked
  /^Failed to execvp /, // the helper could not exec the command
  /^(execution error|sandbox error|failed to spawn (command|process)): /, // Codex could not start the process
];

export interface CommandOutcome {
  /** The command ran (its own output, whatever its exit code), or is still running. */
  started: boolean;
  exitCode: number | null;
  /** Why it did not start: the first line of what came back. */
  reason?: string;
}

/** The exit code and the command's own output in a shell tool's result text. */
function parts(text: string): { exitCode: number | null; running: boolean; body: string } {
  let t = text;
  let exitCode: number | null = null;
  try {
    // The classic `shell` tool answers JSON: {"output": "...", "metadata": {"exit_code": 1, ...}}.
    const j = JSON.parse(text) as { output?: unknown; metadata?: { exit_code?: unknown } };
    if (j && typeof j === 'object' && typeof j.output === 'string') {
      t = j.output;
      if (typeof j.metadata?.exit_code === 'number') exitCode = j.metadata.exit_code;
    }
  } catch {
    // plain text (unified exec, shell_command)
  }
  const code = /^(?:Process exited with code|Exit code:) (-?\d+)$/m.exec(t);
  if (code) exitCode = Number(code[1]);
  const running = exitCode === null && /^Process running with session ID /m.test(t);
  const at = t.indexOf('Output:\n');
  return { exitCode, running, body: at >= 0 ? t.slice(at + 'Output:\n'.length) : t };
}

/** A command a PreToolUse hook (Overseer's lock hook) refused: Codex never tried to start it, so it
 * counts neither as run nor as failed to start. */
export const refusedByHook = (text: string): boolean => text.startsWith('Command blocked by PreToolUse hook');

/** Did the command behind this result text run? */
export function commandOutcome(text: string): CommandOutcome {
  const { exitCode, running, body } = parts(text);
  if (running || exitCode === 0) return { started: true, exitCode };
  const first = body.split('\n').map((l) => l.trim()).find((l) => l) ?? '';
  if (START_FAILURES.some((re) => re.test(first))) return { started: false, exitCode, reason: first.slice(0, 300) };
  return { started: true, exitCode };
}
