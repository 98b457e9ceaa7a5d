// The person's side of the requests API (src/approvals/http.ts): finds the running hub through
// <state>/hub.json and authenticates with <state>/lead.token. Used by `overseer respond` and
// `overseer requests`; never touches the database behind the hub's back.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHubInfo } from '../hubfiles/hubLock.js';

/** No hub answers for this state directory (runtime failure, exit 1). */
export class HubUnavailableError extends Error {}

export interface ApiReply {
  status: number;
  body: any;
}

export interface RequestsClient {
  get(path: string): Promise<ApiReply>;
  post(path: string, body: unknown): Promise<ApiReply>;
}

export function requestsClient(home: string): RequestsClient {
  const info = readHubInfo(home);
  const none = `No Overseer hub is running for ${home}: requests are answered through the running hub (start your lead's Claude Code, or \`overseer serve\`; OVERSEER_HOME picks another state directory).`;
  if (!info?.url) throw new HubUnavailableError(none);
  let token: string;
  try {
    token = readFileSync(join(home, 'lead.token'), 'utf8').trim();
  } catch (err) {
    throw new HubUnavailableError(`Cannot read the lead token ${join(home, 'lead.token')}: ${(err as Error).message}`);
  }
  const base = new URL(info.url).origin;
  const call = async (method: string, path: string, body?: unknown): Promise<ApiReply> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new HubUnavailableError(`${none} (${base} did not answer: ${(err as Error).cause ? String((err as Error & { cause: Error }).cause.message) : (err as Error).message})`);
    }
    const text = await res.text();
    try {
      return { status: res.status, body: JSON.parse(text) };
    } catch {
      return { status: res.status, body: { error: { code: 'bad_reply', message: text.slice(0, 500) } } };
    }
  };
  return { get: (p) => call('GET', p), post: (p, b) => call('POST', p, b) };
}
