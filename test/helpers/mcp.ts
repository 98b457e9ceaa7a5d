// Calling hub tools through an MCP client (an agent's or the lead's) in integration tests.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export interface CallResult { isError: boolean; value: any; text: string }

/** Calls `tool` (waiting up to 120 s); the error flag, the text, and the text parsed as JSON (undefined if it is not). */
export async function callAs(c: Client, tool: string, args: Record<string, unknown>): Promise<CallResult> {
  const r = await c.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 });
  const text = (r.content as { text: string }[]).map((x) => x.text).join('');
  let value: unknown;
  try { value = JSON.parse(text); } catch { value = undefined; }
  return { isError: !!r.isError, value, text };
}

/** A successful call's value; fails the test with the error text otherwise. */
export async function ok(c: Client, tool: string, args: Record<string, unknown>): Promise<any> {
  const r = await callAs(c, tool, args);
  assert.equal(r.isError, false, `${tool} ${JSON.stringify(args).slice(0, 200)} failed: ${r.text}`);
  return r.value;
}
