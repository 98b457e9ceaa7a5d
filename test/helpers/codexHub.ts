// Test hubs whose Codex children (the real codex CLI) talk to a fresh scripted fake Responses
// API, for end-to-end test files; the hubs and fakes are stopped after the file's tests.
import { after } from 'node:test';
import type { Config } from '../../src/config.js';
import type { Script } from '../../src/testing/fakeAnthropic.js';
import { startFakeOpenAI, type CodexScript, type FakeOpenAI } from '../../src/testing/fakeOpenAI.js';
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
      const dir = await makeTempDir('ovs-cx', codexTempBase());
      const catalog = writeFakeModelCatalog(dir);
      const h = await startTestHub({
        dir,
        scripts: o.scripts,
        extraEnv: { FAKE_API_KEY },
        config: { ...fakeCodexConfig(openai.url, o.catalog === false ? undefined : catalog), ...o.config },
      });
      cleanups.push(() => h.stop());
      return { h, openai };
    },
  };
}
