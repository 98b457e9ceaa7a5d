// The CLI as a lead of the running hub: an MCP client over the hub's HTTP endpoint with the lead
// token (<state>/hub.json and <state>/lead.token), so `overseer msg|pause|resume|cancel|spawn|wait`
// act exactly as the lead's tools do — same validation, same rules, nothing behind the hub's back.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readHubInfo } from '../hubfiles/hubLock.js';
import { CliError, UsageError } from './errors.js';

export interface HubTools {
  call(tool: string, args: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

/** A refusal by the tool itself (bad input, unknown job, wrong state): the message is the hub's. */
export class ToolRefused extends UsageError {}

/** Run `f` with a connection to the running hub of this state directory, closed after. */
export async function withHub<T>(f: (h: HubTools) => Promise<T>): Promise<T> {
  const { loadConfig } = await import('../config.js');
  const h = await connectHub(loadConfig().home);
  try {
    return await f(h);
  } finally {
    await h.close();
  }
}

export async function connectHub(home: string): Promise<HubTools> {
  const info = readHubInfo(home);
  if (!info?.url) throw new CliError(`No Overseer hub is running for ${home}: start your lead's Claude Code (its overseer mcp starts one), or run overseer serve; OVERSEER_HOME picks another state directory.`);
  let token: string;
  try {
    token = readFileSync(join(home, 'lead.token'), 'utf8').trim();
  } catch (err) {
    throw new CliError(`Cannot read the lead token ${join(home, 'lead.token')}: ${(err as Error).message}`);
  }
  const client = new Client({ name: 'overseer-cli', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(info.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  } catch (err) {
    throw new CliError(`The hub at ${info.url} (pid ${info.pid}) did not answer: ${(err as Error).message}. Run overseer doctor.`);
  }
  return {
    async call(tool, args, timeoutMs = 60_000) {
      const r = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: timeoutMs, resetTimeoutOnProgress: true, maxTotalTimeout: timeoutMs + 60_000 });
      const text = (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
      if (r.isError) throw new ToolRefused(text.replace(/^Error:\s*/, ''));
      return JSON.parse(text) as unknown;
    },
    close: () => client.close().catch(() => undefined),
  };
}
