// Generates dist/server/lead-answers.json: what the hub of this build answers the lead to
// `initialize` and to the lists a client fetches before its first model request (tools/list,
// prompts/list, resources/list, resources/templates/list). `overseer mcp` answers those from
// this file at once, before it has reached or started the hub (Claude Code holds its first
// model request until every stdio server has answered them: docs/decisions.md, "The bridge
// answers the start-up requests itself"), so a session with Overseer starts as fast as one
// without.
//
// The answers are the hub's own: a Hub of the build in dist/ is made (never started: no HTTP,
// no children) on a scratch directory, and a lead session on it is asked over an in-memory
// pair, the way tools-doc.ts lists the tools. A fresh hub: no jobs, notes or project templates,
// so resources/list is empty and prompts/list holds the built-in recipes alone (the bridge adds
// the project's templates itself). test/integration/bridge-answers.test.ts fails when a real
// hub answers differently. Run by `npm run build`, after tsc.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Hub as HubClass } from '../src/hub.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const LEAD_ANSWERS = join(ROOT, 'dist', 'server', 'lead-answers.json');
/** The lists a client fetches at start-up, answered from the file. */
export const LISTS = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'] as const;

export interface LeadAnswers {
  generatedBy: string;
  /** The package version the answers are of. */
  version: string;
  /** Protocol versions the hub accepts, the one it answers when the client's is unknown first. */
  protocolVersions: string[];
  /** The initialize result without protocolVersion (negotiated per client). */
  initialize: Record<string, unknown>;
  lists: Record<(typeof LISTS)[number], Record<string, unknown>>;
}

type Message = { id?: unknown; result?: Record<string, unknown>; error?: unknown };

async function dist<T>(file: string): Promise<T> {
  return (await import(pathToFileURL(join(ROOT, 'dist', file)).href)) as T;
}

/** Ask a scratch hub of the build in dist/ what it answers the lead. */
export async function leadAnswers(): Promise<LeadAnswers> {
  const { Hub } = await dist<{ Hub: typeof HubClass }>('hub.js');
  const { loadConfigFrom } = await dist<typeof import('../src/config.js')>('config.js');
  const { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION } = await dist<typeof import('../src/mcp/rpc.js')>('mcp/rpc.js');
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const dir = mkdtempSync(join(tmpdir(), 'overseer-lead-answers-'));
  try {
    const config = loadConfigFrom({ home: join(dir, 'state'), confine: 'off' });
    const hub = await Hub.open({ config, projectDir: dir, kbGlobalDb: join(dir, 'global-kb.db'), childEnv: {} });
    try {
      const [ours, theirs] = InMemoryTransport.createLinkedPair();
      const answers = new Map<unknown, Message>();
      const waiting = new Map<unknown, (m: Message) => void>();
      ours.onmessage = (m) => {
        const msg = m as Message;
        waiting.get(msg.id)?.(msg);
        answers.set(msg.id, msg);
      };
      await ours.start();
      const conn = hub.server({ role: 'lead' });
      await conn.connect(theirs);
      let next = 0;
      const ask = async (method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> => {
        const id = ++next;
        const answer = new Promise<Message>((r) => waiting.set(id, r));
        await ours.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
        const m = await answer;
        if (!m.result) throw new Error(`the hub answered ${method} with ${JSON.stringify(m.error)}`);
        return m.result;
      };
      const { protocolVersion, ...initialize } = await ask('initialize', { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'lead-answers', version: '1' } });
      if (protocolVersion !== LATEST_PROTOCOL_VERSION) throw new Error(`the hub negotiated ${String(protocolVersion)} for ${LATEST_PROTOCOL_VERSION}`);
      await ours.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const lists = {} as LeadAnswers['lists'];
      for (const method of LISTS) lists[method] = await ask(method);
      await conn.close();
      const version = (initialize.serverInfo as { version: string }).version;
      return {
        generatedBy: 'scripts/lead-answers.ts (npm run build)',
        version,
        protocolVersions: [LATEST_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v !== LATEST_PROTOCOL_VERSION)],
        initialize,
        lists,
      };
    } finally {
      await hub.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const text = `${JSON.stringify(await leadAnswers())}\n`;
  writeFileSync(LEAD_ANSWERS, text);
  const { version } = JSON.parse(readFileSync(LEAD_ANSWERS, 'utf8')) as LeadAnswers;
  process.stdout.write(`wrote ${LEAD_ANSWERS} (${version}, ${text.length} bytes)\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
