// Hub configuration for Codex children against the scripted fake Responses API (shared by the
// Codex end-to-end tests and the Codex benchmark; no node:test here, benchmarks import it).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../src/config.js';
import { fakeModelCatalog } from '../../src/fakemodel/fakeOpenAI.js';
import { codexBin, FAKE_MODEL } from './codex.js';

/** Writes <dir>/models.json, a model catalog that defines FAKE_MODEL; returns its path. */
export function writeFakeModelCatalog(dir: string): string {
  const catalog = join(dir, 'models.json');
  writeFileSync(catalog, JSON.stringify(fakeModelCatalog([FAKE_MODEL])));
  return catalog;
}

/**
 * Hub configuration sending Codex children to the fake Responses API at `url` (key from
 * FAKE_API_KEY in the children's environment, no retries) with FAKE_MODEL, and the catalog at
 * `catalog` if given.
 */
export function fakeCodexConfig(url: string, catalog?: string): Partial<Config> {
  return {
    codexProvider: { base_url: url, env_key: 'FAKE_API_KEY', request_max_retries: 0, stream_max_retries: 0 },
    codexModel: FAKE_MODEL,
    ...(catalog === undefined ? {} : { codexModelCatalog: catalog }),
    codexBin: codexBin(),
  };
}
