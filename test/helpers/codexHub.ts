// Test hubs whose Codex children (the real codex CLI) talk to a fresh scripted fake Responses
// API, for end-to-end test files; the hubs and fakes are stopped after the file's tests.
import { after } from 'node:test';
import type { Config } from '../../src/config.js';
import type { Script } from '../../src/fakemodel/fakeAnthropic.js';
import { startFakeOpenAI, type CodexScript, type FakeOpenAI } from '../../src/fakemodel/fakeOpenAI.js';
import { codexTempBase, FAKE_API_KEY, makeTempDir } from './codex.js';
import { fakeCodexConfig, writeFakeModelCatalog } from './codexConfig.js';
import { startTestHub, type TestHub } from './hub.js';

export interface CodexHubOptions {
  /** Overrides of the hub configuration (applied last). */
  config?: Partial<Config>;
  /** false: no model catalog (fake-model is then an uncatalogued slug). */
  catalog?: boolean;
  /** Scripts of the fake Anthropic API, for claude children of the same hub. */
  scripts?: Record<string, Script>;
  /** Where the test's directory (state, HOME, project) is made (default: /var/tmp, see codexTempBase). */
  base?: string;
  /** The hub's state directory (default: <dir>/state); `dir` is the test's directory. */
  home?: (dir: string) => string;
  /** Variables for the children's environment, after FAKE_API_KEY. */
  extraEnv?: (dir: string) => Record<string, string>;
}

export type CodexHub = (codex: Record<string, CodexScript>, o?: CodexHubOptions) => Promise<{ h: TestHub; openai: FakeOpenAI }>;

/**
 * Codex test hubs for one test file (call at its top level): `codexHub(codex, o)` starts a fake
 * Responses API with the `codex` scripts and a hub whose Codex children use it (the catalog
 * defines fake-model), registering both stops in `cleanups`; everything in `cleanups` runs after
 * the file's tests, last registered first.
 */
export function codexHubs(): { cleanups: (() => Promise<void>)[]; codexHub: CodexHub } {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });
  return {
    cleanups,
    async codexHub(codex, o = {}) {
      const openai = await startFakeOpenAI({ scripts: codex });
      cleanups.push(() => openai.close());
      const dir = await makeTempDir('ovs-cx', o.base ?? codexTempBase());
      const catalog = writeFakeModelCatalog(dir);
      const h = await startTestHub({
        dir,
        scripts: o.scripts,
        extraEnv: { FAKE_API_KEY, ...o.extraEnv?.(dir) },
        config: { ...fakeCodexConfig(openai.url, o.catalog === false ? undefined : catalog), ...(o.home ? { home: o.home(dir) } : {}), ...o.config },
      });
      cleanups.push(() => h.stop());
      return { h, openai };
    },
  };
}
