// Size of the first /v1/messages request an Overseer Claude child sends, against a bare
// `claude -p` with the same prompt (real claude, fake model, Claude Code's tool search on as
// users have it). Every byte of it is paid on every turn of the child, so a child should carry
// what it uses and no more (docs/cli-facts.md C5).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startFakeAnthropic, promptOf, type FakeAnthropic, type RecordedRequest } from '../src/fakemodel/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeEnv, runClaude } from '../test/helpers/claude.js';
import { f2, out, removeDir, runAlone, tempDir, builtHub } from './common.js';

const SCRIPT = 'bench-first-request';
const TIMEOUT_MS = 120_000;
/** Tool search on (the test harness turns it off elsewhere). */
const SEARCH_ON = { ENABLE_TOOL_SEARCH: 'true' };

export interface RequestSize {
  /** bytes of the request body (JSON as received) */
  bytes: number;
  /** bytes of its `tools` array */
  toolsBytes: number;
  /** tools sent with their full definition (not deferred) */
  loaded: string[];
}

export interface FirstRequestResult {
  overseer: RequestSize;
  bare: RequestSize;
  ratio: number;
}

function sizeOf(r: RecordedRequest): RequestSize {
  const tools = (r.body.tools ?? []) as { name: string; defer_loading?: boolean }[];
  return {
    bytes: Buffer.byteLength(JSON.stringify(r.body)),
    toolsBytes: Buffer.byteLength(JSON.stringify(tools)),
    loaded: tools.filter((t) => t.defer_loading !== true).map((t) => t.name),
  };
}

const firstFor = (fake: FakeAnthropic, marker: string): Promise<RecordedRequest> =>
  fake.waitForRequest((r) => r.step === 0 && promptOf(r.body).includes(marker), TIMEOUT_MS);

export async function benchFirstRequest(): Promise<FirstRequestResult> {
  let fake: FakeAnthropic | undefined;
  let h: TestHub | undefined;
  let work: string | undefined;
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: [{ text: 'done' }] } });
    work = await tempDir('first-request');
    const bareHome = path.join(work, 'bare-home');
    const bareWork = path.join(work, 'bare-work');
    await Promise.all([mkdir(bareHome), mkdir(bareWork)]);
    const prompt = (who: string): string => `@script:${SCRIPT} Say hello (${who}).`;

    h = await startTestHub({ hubClass: await builtHub(), fake, extraEnv: SEARCH_ON });
    const { job_id } = await h.call('spawn_agent', { prompt: prompt('child'), title: 'first request' });
    const child = sizeOf(await firstFor(fake, '(child)'));
    await h.call('wait_for_agents', { job_ids: [job_id], timeout_s: TIMEOUT_MS / 1000 });

    const env = claudeEnv({ home: bareHome, baseUrl: fake.url, extra: SEARCH_ON });
    await runClaude(['-p', prompt('bare')], { cwd: bareWork, env, timeoutMs: TIMEOUT_MS });
    const bare = sizeOf(await firstFor(fake, '(bare)'));

    const r = { overseer: child, bare, ratio: child.bytes / bare.bytes };
    const line = (who: string, s: RequestSize): string =>
      `${who}: ${s.bytes} bytes (tools ${s.toolsBytes} bytes; loaded: ${s.loaded.join(', ')})\n`;
    out(line('Overseer child', child) + line('bare claude -p', bare) + `ratio child/bare: ${f2(r.ratio)}\n`);
    return r;
  } finally {
    await h?.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

runAlone(import.meta.url, benchFirstRequest);
