// The contract of one tool call around the tool itself: what the hub may do when a call starts
// and ends. src/mcp/tools.ts opens a scope per call (Hub.onCall in src/hub.ts), and features such
// as the lead's digest (src/floor/digest.ts) implement it without knowing the tool layer.

/** What the hub does around one tool call (src/hub.ts): `end` when it ends (`delivered`: the
 * result went back, the caller did not cancel), `decorate` to add to a successful result (a
 * promise when it reads the store: the call's answer waits for it). */
export interface CallScope {
  decorate?(value: unknown, tool: string): unknown;
  end(delivered: boolean): void;
}
