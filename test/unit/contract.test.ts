// The contract layer (src/contract, docs/architecture.md "The layers"): every tool the hub serves
// takes its input schema from there, so the tool, the service's input type and the HTTP API share
// one definition. A tool that declares its schema inline (in src/tools or a service) fails here.
// The tools come from a real Hub built (not started) on a scratch directory, as docs/tools.md's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Hub } from '../../src/hub.js';
import { loadConfigFrom } from '../../src/config.js';

const CONTRACT = fileURLToPath(new URL('../../src/contract/', import.meta.url));

/** Every value exported by a module of src/contract, with where it comes from. */
async function contractExports(): Promise<Map<unknown, string>> {
  const out = new Map<unknown, string>();
  for (const f of readdirSync(CONTRACT).filter((n) => n.endsWith('.ts'))) {
    const mod = (await import(pathToFileURL(join(CONTRACT, f)).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) out.set(value, `${f} ${name}`);
  }
  return out;
}

test('every tool takes its input schema from src/contract', async () => {
  const exported = await contractExports();
  const dir = mkdtempSync(join(tmpdir(), 'overseer-contract-'));
  try {
    const config = loadConfigFrom({ home: join(dir, 'state'), confine: 'off' });
    const hub = await Hub.open({ config, projectDir: dir, kbGlobalDb: join(dir, 'global-kb.db'), childEnv: {} });
    try {
      assert.ok(hub.tools.length > 50, `the hub serves its tools (${hub.tools.length})`);
      const inline = hub.tools.filter((t) => !exported.has(t.input)).map((t) => t.name);
      assert.deepEqual(inline, [], 'these tools declare their input schema outside src/contract: move it there and import it');
      // One schema per tool: two tools sharing one would change together without anyone noticing.
      const seen = new Map<unknown, string>();
      for (const t of hub.tools) {
        const other = seen.get(t.input);
        assert.ok(other === undefined || other === t.name, `${t.name} and ${other} share the schema ${exported.get(t.input)}`);
        seen.set(t.input, t.name);
      }
    } finally {
      await hub.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
