// Test hubs for end-to-end test files whose real claude children are driven by scripts of the
// fake Anthropic API, stopped after the file's tests.
import { after } from 'node:test';
import type { Script } from '../../src/fakemodel/fakeAnthropic.js';
import type { Config } from '../../src/config.js';
import { startTestHub, type TestHub } from './hub.js';

/**
 * Test hubs for one test file (call at its top level): `hubWith(scripts)` starts a hub with those
 * scripts and registers its stop in `cleanups`; everything in `cleanups` runs after the file's
 * tests, last registered first.
 */
export function scriptedHubs(): { cleanups: (() => Promise<void>)[]; hubWith: (scripts: Record<string, Script>, config?: Partial<Config>) => Promise<TestHub> } {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });
  return {
    cleanups,
    async hubWith(scripts, config) {
      const h = await startTestHub({ scripts, ...(config ? { config } : {}) });
      cleanups.push(() => h.stop());
      return h;
    },
  };
}
