// The layer rules (.dependency-cruiser.cjs, docs/architecture.md "The layers"): each rule catches
// its kind of break in a scratch tree that mirrors src/'s folders, a baseline ignores the known
// breaks but not a new one, and the real tree passes with its baseline, which lists nothing that
// is already fixed (so it can only shrink). Runs the same depcruise CLI that `npm run deps` runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const BASELINE = join(ROOT, '.dependency-cruiser-known-violations.json');
const BIN = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  type: string;
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: { name: string }[];
}
interface Run {
  code: number;
  stdout: string;
}

/** Runs depcruise in `cwd`; resolves with its exit code (the number of errors) and stdout. */
function depcruise(cwd: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err === null) return resolve({ code: 0, stdout });
        if (typeof err.code === 'number') return resolve({ code: err.code, stdout });
        reject(new Error(`depcruise did not finish (${err.message}): ${stderr}`));
      },
    );
  });
}

async function violations(cwd: string, args: string[]): Promise<Violation[]> {
  const run = await depcruise(cwd, ['src', '--config', CONFIG, '--output-type', 'json', ...args]);
  return (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

function key(v: Violation): string {
  return `${v.rule.name}: ${v.from} → ${v.to}`;
}

let tmp = '';
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'overseer-layers-'));
});
after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A scratch tree in its own folder: the repository's tsconfig plus `files` (path → text). */
function tree(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tsconfig.json'), readFileSync(join(ROOT, 'tsconfig.json')));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

test('each rule reports its kind of break, and imports down a layer pass', async () => {
  const dir = tree('each-rule', {
    'src/domain/ok.ts': "import path from 'node:path';\nexport const sep = path.sep;\n",
    'src/domain/up.ts': "import { jobs } from '../services/jobs.js';\nexport const j = jobs;\n",
    'src/domain/io.ts': "import fs from 'node:fs';\nexport const f = fs.existsSync;\n",
    'src/services/jobs.ts': "import { sep } from '../domain/ok.js';\nexport const jobs = sep;\n",
    'src/services/a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
    'src/services/b.ts': "import { a } from './a.js';\nexport const b = (): number => a() - 1;\n",
    'src/services/usesFake.ts': "import { fake } from '../fakemodel/fake.js';\nexport const u = fake;\n",
    'src/fakemodel/fake.ts': 'export const fake = 1;\n',
    'src/doctor/usesFake.ts': "import { fake } from '../fakemodel/fake.js';\nexport const d = fake;\n",
    'src/fakemodel/usesStore.ts': "import { t } from '../store/typeUp.js';\nexport const s = t;\n",
    'src/tools/tool.ts': 'export interface Tool { name: string }\n',
    'src/store/typeUp.ts': "import type { Tool } from '../tools/tool.js';\nexport const t: Tool[] = [];\n",
    'src/store/dynamicUp.ts': "export const load = () => import('../mcp/rpc.js');\n",
    'src/mcp/rpc.ts': 'export const rpc = 1;\n',
    'src/cli/main.ts': "import { fake } from '../fakemodel/fake.js';\nexport const main = fake;\n",
    'src/tui/view.ts': "import { main } from '../cli/main.js';\nexport const v = main;\n",
    'src/hubproc/x.ts': "import { h } from '../../test/helper.js';\nexport const x = h;\n",
    'test/helper.ts': 'export const h = 1;\n',
    'src/newfolder/thing.ts': "import { sep } from '../domain/ok.js';\nexport const thing = sep;\n",
    'src/launch/usesNew.ts': "import { thing } from '../newfolder/thing.js';\nexport const n = thing;\n",
    'src/contract/ok.ts': "import { sep } from '../domain/ok.js';\nexport const c = sep;\n",
    'src/contract/up.ts': "import { jobs } from '../services/jobs.js';\nexport const u = jobs;\n",
    'src/contract/io.ts': "import fs from 'node:fs';\nexport const f = fs.existsSync;\n",
    'src/store/usesContract.ts': "import { c } from '../contract/ok.js';\nexport const s = c;\n",
    'src/clock.ts': "import { c } from './contract/ok.js';\nexport const now = c;\n",
  });
  const found = await violations(dir, []);
  const plain = found.filter((v) => v.rule.name !== 'no-circular').map(key).sort();
  assert.deepEqual(plain, [
    'contract-pure-packages: src/contract/io.ts → fs',
    'domain-has-no-io: src/domain/io.ts → fs',
    'domain-imports-only-domain: src/domain/up.ts → src/services/jobs.ts',
    'every-importer-in-a-layer: src/newfolder/thing.ts → src/domain/ok.ts',
    'every-module-in-a-layer: src/launch/usesNew.ts → src/newfolder/thing.ts',
    'fakemodel-only-for-demo-and-doctor: src/services/usesFake.ts → src/fakemodel/fake.ts',
    'fakemodel-stands-alone: src/fakemodel/usesStore.ts → src/store/typeUp.ts',
    'not-up-from-contract: src/contract/up.ts → src/services/jobs.ts',
    'not-up-from-core: src/clock.ts → src/contract/ok.ts',
    'not-up-from-entry: src/tui/view.ts → src/cli/main.ts',
    'not-up-from-infrastructure: src/store/dynamicUp.ts → src/mcp/rpc.ts',
    'not-up-from-infrastructure: src/store/typeUp.ts → src/tools/tool.ts',
    'src-not-to-tests: src/hubproc/x.ts → test/helper.ts',
  ]);
  const loops = found.filter((v) => v.rule.name === 'no-circular');
  assert.ok(loops.length > 0, 'the loop a.ts ↔ b.ts is reported');
  for (const loop of loops) {
    assert.deepEqual(
      (loop.cycle ?? []).map((m) => m.name).sort(),
      ['src/services/a.ts', 'src/services/b.ts'],
      `only the loop a ↔ b: ${JSON.stringify(loop)}`,
    );
  }
  assert.ok(found.every((v) => v.rule.severity === 'error'), 'every rule is an error, so it fails the check');
});

test('a baseline ignores the breaks it lists, and a new one still fails', async () => {
  const dir = tree('baseline', {
    'src/domain/up.ts': "import { jobs } from '../services/jobs.js';\nexport const j = jobs;\n",
    'src/services/jobs.ts': 'export const jobs = 1;\n',
  });
  const known = join(dir, 'known.json');
  const write = await depcruise(dir, ['src', '--config', CONFIG, '--output-type', 'baseline', '--output-to', known]);
  assert.equal(write.code, 0);
  const clean = await depcruise(dir, ['src', '--config', CONFIG, '--ignore-known', known]);
  assert.equal(clean.code, 0, `the known break is ignored:\n${clean.stdout}`);

  mkdirSync(join(dir, 'src/store'));
  writeFileSync(join(dir, 'src/store/db.ts'), "import { jobs } from '../services/jobs.js';\nexport const d = jobs;\n");
  const broken = await depcruise(dir, ['src', '--config', CONFIG, '--ignore-known', known]);
  assert.equal(broken.code, 1, `exactly one new error:\n${broken.stdout}`);
  assert.match(broken.stdout, /error not-up-from-infrastructure: src\/store\/db\.ts → src\/services\/jobs\.ts/);
  assert.doesNotMatch(broken.stdout, /error domain-imports-only-domain/);
});

test('src passes with its baseline, and the baseline lists only breaks still there', async () => {
  const found = await violations(ROOT, ['--ignore-known', BASELINE]);
  const errors = found.filter((v) => v.rule.severity !== 'ignore').map(key);
  assert.deepEqual(errors, [], 'no break beyond the known ones (npm run deps shows them)');

  const current = new Set(found.map((v) => sameKey(v)));
  const known = JSON.parse(readFileSync(BASELINE, 'utf8')) as Violation[];
  const stale = known.filter((v) => !current.has(sameKey(v))).map(key);
  assert.deepEqual(
    stale,
    [],
    'these known violations are fixed: run `npm run deps:baseline` so the baseline shrinks and they cannot come back',
  );
});

/** How dependency-cruiser matches a violation to a known one: a loop by its modules, else by its ends. */
function sameKey(v: Violation): string {
  if (v.cycle) return `${v.rule.name}: ${v.cycle.map((m) => m.name).sort().join(' ')}`;
  return key(v);
}
