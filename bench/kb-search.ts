// Benchmark of knowledge base search on 10,000 synthetic entries (project store 8,000, global
// 2,000, so scope "all" merges two files): search_kb latency over 200 queries, the memory
// section of a spawn (12-term OR query + rendering), and report_learnings' triage per
// learning (duplicate lookup included). Goal: search p50 ≤ 5 ms.
// Run: node --import tsx bench/kb-search.ts
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { KnowledgeBase } from '../src/kb/service.js';
import { memorySection } from '../src/kb/memory.js';
import { kbEntries, openKbFile } from '../src/kb/sqlEntries.js';
import { f1, f2, out, prng, removeDir, stats, tempDir, type Stats } from './common.js';

const ENTRIES = 10_000;
const GLOBAL_SHARE = 0.2;
const QUERIES = 200;

export interface KbSearchResult {
  entries: number;
  queries: number;
  search: Stats;
  searchProject: Stats;
  memory: Stats;
  report: Stats;
  insertSeconds: number;
}


const TOPICS = ['build', 'tests', 'ci', 'docker', 'database', 'migrations', 'auth', 'login', 'cache', 'deploy', 'api', 'frontend', 'webpack', 'vite', 'typescript', 'eslint', 'git', 'worktree', 'locks', 'sqlite', 'postgres', 'redis', 'queue', 'retry', 'timeout', 'logging', 'metrics', 'tracing', 'kubernetes', 'helm', 'terraform', 'aws', 's3', 'lambda', 'node', 'python', 'rust', 'go', 'java', 'gradle'];
const VERBS = ['fails', 'hangs', 'needs', 'breaks', 'requires', 'skips', 'caches', 'rebuilds', 'retries', 'times out', 'leaks', 'ignores', 'overrides', 'locks', 'duplicates'];
const NOUNS = ['environment variable', 'lockfile', 'config file', 'fixture', 'snapshot', 'connection pool', 'session cookie', 'build cache', 'test runner', 'schema', 'index', 'worker', 'container', 'volume', 'secret store', 'feature flag', 'cron job', 'webhook', 'proxy', 'certificate'];
const FIXES = ['set it explicitly in the workflow', 'pin the version in package.json', 'clear the cache after upgrades', 'run the migration before seeding', 'use a fresh temp directory per test', 'raise the timeout to 30 seconds', 'restart the service after changing it', 'add the missing index', 'mock the clock in tests', 'run it with --runInBand'];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** Words unique-ish to each entry so the vocabulary grows like a real KB's. */
function rareWord(r: () => number): string {
  const syll = ['ka', 'lo', 'mi', 'ze', 'tu', 'ra', 'po', 'ne', 'vi', 'sa', 'qu', 'dor', 'fen', 'gil', 'hob'];
  return Array.from({ length: 2 + Math.floor(r() * 3) }, () => pick(r, syll)).join('');
}

function entry(r: () => number, i: number): { title: string; content: string; tags: string[] } {
  const t1 = pick(r, TOPICS);
  const t2 = pick(r, TOPICS);
  const noun = pick(r, NOUNS);
  const title = `${t1} ${pick(r, VERBS)} without the ${noun} (${rareWord(r)} ${i})`;
  const sentences = Array.from({ length: 2 + Math.floor(r() * 4) }, () =>
    `When the ${t2} ${noun} ${pick(r, VERBS)}, ${pick(r, FIXES)}; seen with ${rareWord(r)} and ${pick(r, TOPICS)}.`);
  return { title, content: sentences.join(' '), tags: [t1, t2] };
}

export async function benchKbSearch(): Promise<KbSearchResult> {
  const dir = await tempDir('kb');
  const kb = new KnowledgeBase({ source: { dialect: 'sqlite', projectDb: path.join(dir, 'state', 'kb.db'), globalDb: path.join(dir, 'xdg', 'overseer', 'kb.db') }, projectDir: dir });
  try {
    const r = prng(42);
    const t0 = performance.now();
    const files = { project: path.join(dir, 'state', 'kb.db'), global: path.join(dir, 'xdg', 'overseer', 'kb.db') };
    const counts: string[] = [];
    for (const scope of ['project', 'global'] as const) {
      // The entries written as the service writes them (KbEntries on the layer), in one transaction per file.
      const db = openKbFile(files[scope]);
      const entries = kbEntries({ dialect: 'sqlite', scope });
      const n = scope === 'global' ? Math.round(ENTRIES * GLOBAL_SHARE) : ENTRIES - Math.round(ENTRIES * GLOBAL_SHARE);
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < n; i++) await entries.insert(trx, { ...entry(r, i), source_job: `j-${(i % 997).toString(16).padStart(6, '0')}` });
      });
      counts.push(`${await entries.count(db)} ${scope}`);
      await db.destroy();
    }
    const insertSeconds = (performance.now() - t0) / 1000;

    const q = prng(7);
    const queries = Array.from({ length: QUERIES }, (_, i) => {
      const words = [pick(q, TOPICS), pick(q, VERBS).split(' ')[0]!, pick(q, NOUNS).split(' ')[0]!];
      return words.slice(0, 2 + (i % 2)).join(' ');
    });
    // Warm up statements and page cache.
    for (const query of queries.slice(0, 20)) await kb.search(query, 'all', 10);

    const time = (fn: () => void): number => {
      const s = performance.now();
      fn();
      return performance.now() - s;
    };
    const timeAsync = async (fn: () => Promise<unknown>): Promise<number> => {
      const s = performance.now();
      await fn();
      return performance.now() - s;
    };
    const searchTimes: number[] = [];
    for (const query of queries) searchTimes.push(await timeAsync(() => kb.search(query, 'all', 10)));
    const projectTimes: number[] = [];
    for (const query of queries) projectTimes.push(await timeAsync(() => kb.search(query, 'project', 10)));
    const search = stats(searchTimes);
    const searchProject = stats(projectTimes);

    const prompts = Array.from({ length: 50 }, (_, i) =>
      `Fix the ${pick(q, TOPICS)} ${pick(q, NOUNS)} problem: the ${pick(q, TOPICS)} step ${pick(q, VERBS)} in CI since yesterday. ` +
      `Look at the ${pick(q, NOUNS)} and the ${pick(q, TOPICS)} setup, keep the ${pick(q, NOUNS)} as it is, and add a regression test (#${i}).`);
    let sectionChars = 0;
    const memoryTimes: number[] = [];
    for (const p of prompts) memoryTimes.push(await timeAsync(async () => { sectionChars += (await memorySection(kb, p)).length; }));
    const memory = stats(memoryTimes);

    const reportTimes: number[] = [];
    for (let i = 0; i < 100; i++) {
      const l = entry(q, 100_000 + i);
      const s = performance.now();
      await kb.report([{ ...l, scope: 'project' }], { jobId: 'j-bench' });
      reportTimes.push(performance.now() - s);
    }
    const report = stats(reportTimes);

    out(
      `corpus: ${ENTRIES} entries (${counts.join(' + ')}), built in ${f2(insertSeconds)} s\n` +
      `search_kb scope all (${QUERIES} queries): p50 ${f2(search.p50)} ms, p99 ${f2(search.p99)} ms, max ${f2(search.max)} ms   [goal p50 ≤ 5 ms]\n` +
      `search_kb scope project: p50 ${f2(searchProject.p50)} ms, p99 ${f2(searchProject.p99)} ms\n` +
      `memory section (${prompts.length} prompts, 12 terms): p50 ${f2(memory.p50)} ms, p99 ${f2(memory.p99)} ms, mean section ${f1(sectionChars / prompts.length)} chars\n` +
      `report_learnings triage per learning (dup lookup + insert/merge): p50 ${f2(report.p50)} ms, p99 ${f2(report.p99)} ms\n`,
    );
    return { entries: ENTRIES, queries: QUERIES, search, searchProject, memory, report, insertSeconds };
  } finally {
    await kb.close();
    await removeDir(dir);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchKbSearch().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
