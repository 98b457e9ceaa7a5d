// Figures from a claude --debug-file, for the start-up experiments (docs/performance-claude-start.md).

/** From a --debug-file: the MCP connect time the CLI reports, and its own start → first turn. */
export function debugFigures(log: string): { connectMs: number; turnMs: number } {
  const c = /Successfully connected \(transport: http\) in (\d+)ms/.exec(log);
  const t = /\[startupWorkGate\] open \(turn_started\) after (\d+)ms/.exec(log);
  return { connectMs: c ? Number(c[1]) : NaN, turnMs: t ? Number(t[1]) : NaN };
}

