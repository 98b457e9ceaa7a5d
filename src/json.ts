// Plain JSON value helpers shared by the MCP wire code (src/mcp/rpc.ts) and the tool result
// mapping (src/tools/result.ts), which sit in different layers.

/** A JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
