// `npm run test:pg`: the integration tests again, with every test hub's state in a fresh PostgreSQL
// database (OVERSEER_TEST_DATABASE=postgres, test/helpers/hub.ts). Only the files that start a test
// hub (`startTestHub`) run: the variable changes nothing else, and the layer's own tests
// (sql-*.test.ts and the others) run on both databases in the main run already — a second run of them
// would be the same run again, ~10 minutes for nothing (figures: docs/decisions.md, "Running on
// PostgreSQL: what differed").
// `--core`: only the files of CORE (what `npm test` runs, to keep CI under 30 minutes on 2 cores: the
// whole set takes ~10 minutes there); `npm run test:pg` alone runs them all.
// E2E: end-to-end files about what a hub does with its state across a restart or a crash (they read the
// state through the layer, test/helpers/state.ts): in the whole set, not in --core. They run the built
// CLI (dist/: npm run build first), as in the main run.
// Test files named on the command line run alone, on PostgreSQL; other extra arguments are passed
// to node --test (e.g. a --test-name-pattern).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const dir = 'test/integration';
/** The hub-level files that drive what the store decides: locks, notes, requests, waits, runs, scripts, workflows, merges, the floor, the HTTP path. */
const CORE = ['locks', 'locks-repo', 'notes', 'requests', 'wait-tool', 'runs-engine', 'script-runs', 'script-budget', 'workflow-engine', 'merge', 'http-native', 'floor-api', 'run-attention', 'permissions'];
const E2E = ['budgets', 'hub-crash'].map((f) => join('test/e2e', `${f}.test.ts`));
const core = process.argv.includes('--core');
const extra = process.argv.slice(2).filter((a) => a !== '--core');
// Named test files run alone (`npm run test:pg -- test/integration/x.test.ts`); other arguments go to node --test.
const named = extra.filter((a) => a.endsWith('.test.ts'));
const passed = extra.filter((a) => !a.endsWith('.test.ts'));
const files = readdirSync(dir).filter((f) => f.endsWith('.test.ts')).sort().map((f) => join(dir, f))
  .filter((f) => readFileSync(f, 'utf8').includes('startTestHub'))
  .filter((f) => !core || CORE.some((c) => f === join(dir, `${c}.test.ts`)));
if (core && files.length !== CORE.length) {
  console.error(`test:pg --core: ${CORE.length - files.length} of its files are missing or start no test hub: ${CORE.join(', ')}`);
  process.exit(1);
}
const lost = E2E.filter((f) => !existsSync(f) || !readFileSync(f, 'utf8').includes('startTestHub'));
if (lost.length) {
  console.error(`test:pg: ${lost.join(', ')} missing or start no test hub: fix the E2E list in scripts/test-pg.ts`);
  process.exit(1);
}
if (!core) files.push(...E2E);
if (named.length) files.splice(0, files.length, ...named);
if (files.length === 0) {
  console.error(`test:pg: no file in ${dir} starts a test hub (startTestHub): nothing would run on PostgreSQL`);
  process.exit(1);
}
const args = ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', '--test-timeout=300000', ...passed, ...files];
const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, OVERSEER_TEST_DATABASE: 'postgres' } });
process.exit(r.status ?? 1);
