// Benchmark of transcript search (issue 11 point 4): a state database holding 10,000
// transcripts' worth of generated agent events (Claude stream-json and, one in five, Codex
// JSONL: text, tool calls of the usual tools, results from a line to 4 KB), written through the
// real indexer as the supervisor would feed it. Then search_output (the service, and once over
// MCP) for common and rare terms, phrases and prefixes, with and without job / label / subtree
// / since filters, against baselines measured in the same run: the raw FTS5 match with no join,
// filter or snippet, bm25 order instead of newest first, and a LIKE scan. Also what the indexer
// costs per transcript line, beside what the supervisor's own parser costs per line, and the
// trigram tokenizer measured on a tenth of the corpus. Goal: search_output p50 ≤ 20 ms.
// Run: node --import tsx bench/search.ts   (BENCH_SEARCH_TRANSCRIPTS=1000 for a quick run)
import { statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { openDb, type Db } from '../src/store/db.js';
import { insertJob as insertJobRow } from '../src/store/sql/jobs.js';
import { transact, type Q } from '../src/store/sql/tx.js';
import { TranscriptIndexer } from '../src/search/indexer.js';
import { TranscriptSearch, type SearchOptions } from '../src/search/service.js';
import { transcriptIndex } from '../src/search/sqlIndex.js';
import { sqlOver } from '../src/store/sql/open.js';
import { ftsExpression } from '../src/search/query.js';
import { extractLine } from '../src/search/extract.js';
import { ClaudeLauncher } from '../src/launch/claude/launcher.js';
import { newCodexParser } from '../src/launch/codex/events.js';
import { searchTools } from '../src/tools/search.js';
import { NativeMcpServer } from '../src/mcp/server.js';
import { silentLogger } from '../src/log.js';
import type { Caller } from '../src/services/context.js';
import { f1, f2, out, prng, removeDir, stats, tempDir, type Stats } from './common.js';

const TRANSCRIPTS = Number(process.env.BENCH_SEARCH_TRANSCRIPTS ?? 10_000);
const RUNS = 60;
const DAY = 86_400_000;

export interface QueryFigure { name: string; query: string; filter: string; stats: Stats; results: number; total: number }

export interface SearchBenchResult {
  transcripts: number;
  lines: number;
  rows: number;
  dbBytes: number;
  ftsBytes: number;
  contentBytes: number;
  buildSeconds: number;
  /** In the supervisor's call: parse, extract, buffer. */
  lineUsPerLine: number;
  /** The batched writes, per line and per row. */
  writeUsPerLine: number;
  writeUsPerRow: number;
  parserUsPerLine: number;
  queries: QueryFigure[];
  /** All the search_output (service) samples together. */
  overall: Stats;
  mcp: Stats;
  rawFts: Stats;
  bm25: Stats;
  like: Stats;
  trigram: { transcripts: number; rows: number; unicodeBytes: number; trigramBytes: number; unicode: Stats; trigram: Stats; substring: Stats };
}


const WORDS = ('the a to of and in is it that for this with on be as not we i will now test tests file files error errors function ' +
  'run running check fix fixed add added update change changes build type value return import export const let class interface ' +
  'module config option options path line lines case cases expected actual result results output input data state job agent ' +
  'should need looks like see seems passing failing failed pass fail first next then also before after because only all some ' +
  'parser lexer token tokens schema query index table column row migration migrations database server client request response ' +
  'timeout retry cache lock locks worker queue event events handler route api endpoint auth login session user users cookie ' +
  'component render props style layout page button form field validation message messages log logs warning debug trace stack ' +
  'compile compiler typescript javascript node npm package version dependency dependencies install script scripts lint format').split(' ');
const PHRASES = ['connection refused', 'cannot read properties of undefined', 'no such file or directory', 'expected 3 to equal 4',
  'timeout of 5000ms exceeded', 'module not found', 'permission denied', 'unexpected token', 'out of memory', 'address already in use'];
const DIRS = ['src', 'lib', 'test', 'app', 'pkg', 'server', 'client', 'utils', 'db', 'api'];
const FILES = ['index', 'parser', 'lexer', 'schema', 'routes', 'auth', 'session', 'cache', 'queue', 'worker', 'config', 'migrate', 'logger', 'render', 'button', 'form'];
const TOOLS = ['Bash', 'Read', 'Edit', 'Write', 'Grep', 'Glob', 'mcp__overseer__report_status', 'mcp__overseer__lock_files', 'TodoWrite'];

/** Zipf-like pick: low indexes far more often. */
function zipf(r: () => number, xs: readonly string[]): string {
  return xs[Math.floor(xs.length * r() ** 2.2)]!;
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function sentence(r: () => number, extra: string[] = []): string {
  const n = 6 + Math.floor(r() * 14);
  const words = Array.from({ length: n }, () => zipf(r, WORDS));
  if (extra.length && r() < 0.5) words.splice(Math.floor(r() * words.length), 0, pick(r, extra));
  if (r() < 0.1) words.push(pick(r, PHRASES));
  const s = words.join(' ');
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
}

const filePath = (r: () => number): string => `${pick(r, DIRS)}/${pick(r, FILES)}${r() < 0.3 ? `_${Math.floor(r() * 50)}` : ''}.ts`;

function toolInput(r: () => number, tool: string, ids: string[]): Record<string, unknown> {
  switch (tool) {
    case 'Bash': return { command: pick(r, ['npm test', 'npx tsc --noEmit', `grep -rn ${pick(r, ids)} src`, 'git status', `node scripts/${pick(r, FILES)}.js`, 'npm run lint -- --fix']) };
    case 'Read': return { file_path: `/work/repo/${filePath(r)}` };
    case 'Edit': return { file_path: `/work/repo/${filePath(r)}`, old_string: sentence(r, ids), new_string: sentence(r, ids) };
    case 'Write': return { file_path: `/work/repo/${filePath(r)}`, content: Array.from({ length: 3 + Math.floor(r() * 30) }, () => `export const ${pick(r, ids)} = ${JSON.stringify(sentence(r))};`).join('\n') };
    case 'Grep': return { pattern: pick(r, ids), path: pick(r, DIRS) };
    case 'Glob': return { pattern: `${pick(r, DIRS)}/**/*.ts` };
    case 'mcp__overseer__report_status': return { message: sentence(r), progress: Math.round(r() * 10) / 10 };
    case 'mcp__overseer__lock_files': return { files: [filePath(r), filePath(r)], reason: sentence(r) };
    default: return { todos: [{ content: sentence(r), status: 'pending' }] };
  }
}

/** A tool's output: half a line or two, four in ten a screenful, one in ten several KB (capped by the indexer). */
function toolOutput(r: () => number, ids: string[]): string {
  const p = r();
  const lines = p < 0.5 ? 1 + Math.floor(r() * 2) : p < 0.9 ? 5 + Math.floor(r() * 25) : 60 + Math.floor(r() * 80);
  return Array.from({ length: lines }, () => (r() < 0.3 ? `${filePath(r)}:${Math.floor(r() * 400)}: ${sentence(r, ids)}` : sentence(r, ids))).join('\n');
}

export interface Transcript { jobId: string; lines: string[]; codex: boolean }

/** One transcript: 10..50 turns of text, tool calls and results; a rare word only it has. */
export function transcript(r: () => number, i: number, startMs: number, pool: string[]): Transcript {
  const jobId = `j-${i.toString(16).padStart(8, '0')}`;
  const ids = [pick(r, pool), pick(r, pool), pick(r, pool), `ticket${i}zq`];
  const codex = i % 5 === 4;
  const turns = 10 + Math.floor(r() * 41);
  let t = startMs;
  const ts = (): string => new Date((t += 500 + Math.floor(r() * 4000))).toISOString();
  const lines: string[] = [];
  if (codex) {
    lines.push(JSON.stringify({ type: 'thread.started', thread_id: `th-${i}` }), JSON.stringify({ type: 'turn.started' }));
    for (let k = 0; k < turns; k++) {
      if (r() < 0.6) lines.push(JSON.stringify({ type: 'item.completed', item: { id: `m${k}`, type: 'agent_message', text: Array.from({ length: 1 + Math.floor(r() * 3) }, () => sentence(r, ids)).join(' ') } }));
      const cmd = `/bin/bash -lc '${pick(r, ['npm test', `rg ${pick(r, ids)}`, 'git diff', `cat ${filePath(r)}`])}'`;
      lines.push(JSON.stringify({ type: 'item.started', item: { id: `c${k}`, type: 'command_execution', command: cmd, aggregated_output: '', status: 'in_progress' } }));
      lines.push(JSON.stringify({ type: 'item.completed', item: { id: `c${k}`, type: 'command_execution', command: cmd, aggregated_output: toolOutput(r, ids), exit_code: r() < 0.8 ? 0 : 1, status: 'completed' } }));
    }
    lines.push(JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 1000 * turns, output_tokens: 100 * turns } }));
  } else {
    lines.push(JSON.stringify({ type: 'system', subtype: 'init', session_id: `s-${i}`, tools: TOOLS, mcp_servers: [{ name: 'overseer', status: 'connected' }], model: 'claude-sonnet' }));
    for (let k = 0; k < turns; k++) {
      const content: unknown[] = [];
      if (r() < 0.6) content.push({ type: 'text', text: Array.from({ length: 1 + Math.floor(r() * 3) }, () => sentence(r, ids)).join(' ') });
      const calls = r() < 0.2 ? 2 : 1;
      const uses = Array.from({ length: calls }, (_, c) => ({ type: 'tool_use', id: `toolu_${i}_${k}_${c}`, name: zipf(r, TOOLS), input: {} as Record<string, unknown> }));
      for (const u of uses) u.input = toolInput(r, u.name, ids);
      content.push(...uses);
      lines.push(JSON.stringify({ type: 'assistant', message: { id: `msg_${i}_${k}`, role: 'assistant', model: 'claude-sonnet', content, usage: { input_tokens: 100, output_tokens: 50 } }, session_id: `s-${i}`, timestamp: ts() }));
      lines.push(JSON.stringify({ type: 'user', message: { role: 'user', content: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: toolOutput(r, ids) })) }, session_id: `s-${i}`, timestamp: ts() }));
    }
    lines.push(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: sentence(r), total_cost_usd: 0.05, session_id: `s-${i}` }));
  }
  return { jobId, lines, codex };
}

function insertJob(q: Q, id: string, at: number, o: { parent?: string | null; labels?: string[] } = {}): Promise<void> {
  return insertJobRow(q, {
    id, parent_id: o.parent ?? null, depth: o.parent ? 2 : 1, title: `Task ${id}`, prompt: 'p', provider: 'claude', model: null, cwd: '/work/repo', work_dir: null, repo_root: null,
    worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null,
    checks_json: '[]', retry: 'none', labels_json: JSON.stringify(o.labels ?? []), depends_on_json: '[]', status: 'succeeded', session_id: `s-${id}`, token_hash: null,
    workflow_id: null, phase: null, cycle: null, json_schema: null,
  }, at);
}

const time = (fn: () => unknown): number => {
  const s = performance.now();
  fn();
  return performance.now() - s;
};

/** `runs` samples of `fn(i)`, after a few warm-up calls. */
function sample(runs: number, fn: (i: number) => unknown): Stats {
  for (let i = 0; i < 3; i++) fn(i);
  return stats(Array.from({ length: runs }, (_, i) => time(() => fn(i))));
}

function tableBytes(db: Db, like: string): number {
  return (db.prepare('SELECT COALESCE(SUM(pgsize), 0) AS b FROM dbstat WHERE name LIKE ?').get(like) as { b: number }).b;
}

const mb = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MB`;

export async function benchSearch(): Promise<SearchBenchResult> {
  const dir = await tempDir('search');
  const file = path.join(dir, 'state.db');
  const db = openDb(file);
  try {
    const layer = sqlOver(db);
    const r = prng(11);
    const pool = Array.from({ length: 5000 }, (_, k) => (k % 2 ? `${pick(r, FILES)}${pick(r, ['Handler', 'Store', 'Client', 'Util', 'Spec', 'Model'])}${k}` : `${pick(r, WORDS)}_${pick(r, FILES)}_${k}`));
    const end = Date.parse('2026-11-22T12:00:00Z');
    const start = end - 30 * DAY;
    const step = (30 * DAY) / TRANSCRIPTS;
    // Jobs: 0 is an agent with ten children (the subtree), team-b labels 20 jobs (FTS5 job tokens),
    // team-a 100 (the join path).
    await transact(layer.db, async (trx) => {
      for (let i = 0; i < TRANSCRIPTS; i++) {
        const id = `j-${i.toString(16).padStart(8, '0')}`;
        const labels = i % 100 === 7 ? ['team-a'] : i % 500 === 9 ? ['team-b'] : [];
        await insertJob(trx, id, Math.floor(start + i * step), { parent: i > 0 && i <= 10 ? 'j-00000000' : null, labels });
      }
    });

    let now = start;
    const index = transcriptIndex('sqlite');
    const indexer = new TranscriptIndexer(layer.db, index, { now: () => now, log: silentLogger });
    const claudeParser = new ClaudeLauncher({}).newParser();
    let lineUs = 0;
    let parserUs = 0;
    let flushMs = 0;
    let lines = 0;
    const t0 = performance.now();
    const samplePaths: Transcript[] = [];
    for (let i = 0; i < TRANSCRIPTS; i++) {
      const tr = transcript(r, i, start + i * step, pool);
      if (i < TRANSCRIPTS / 10) samplePaths.push(tr);
      const parser = tr.codex ? newCodexParser() : claudeParser;
      for (const [k, line] of tr.lines.entries()) {
        // The hub's clock as the lines arrive (a Codex line has no time of its own: it gets this).
        now = start + i * step + k * 2250;
        let s = performance.now();
        parser.line(line);
        parserUs += performance.now() - s;
        s = performance.now();
        indexer.line(tr.jobId, 1, line);
        lineUs += performance.now() - s;
        lines++;
      }
      const s = performance.now();
      await indexer.attemptEnded(tr.jobId, 1);
      flushMs += performance.now() - s;
      if (i % 1000 === 999) out(`   built ${i + 1} transcripts (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
    }
    // This loop never yields, so the buffer is written by attemptEnded (flushMs), never by a timer.
    const buildSeconds = (performance.now() - t0) / 1000;
    await indexer.close();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('ANALYZE');
    const rows = (db.prepare('SELECT count(*) AS n FROM transcript_rows').get() as { n: number }).n;
    const dbBytes = statSync(file).size;
    const ftsBytes = tableBytes(db, 'transcript_fts%');
    const contentBytes = tableBytes(db, 'transcript_rows');
    const lineUsPerLine = (lineUs * 1000) / lines;
    const writeUsPerLine = (flushMs * 1000) / lines;
    const writeUsPerRow = (flushMs * 1000) / rows;
    const parserUsPerLine = (parserUs * 1000) / lines;
    out(`corpus: ${TRANSCRIPTS} transcripts, ${lines} lines → ${rows} rows; state.db ${mb(dbBytes)} (rows ${mb(contentBytes)}, FTS5 index ${mb(ftsBytes)}); built in ${f1(buildSeconds)} s\n` +
      `indexer per transcript line: ${f1(lineUsPerLine)} µs in the supervisor's call (parse, extract, buffer) + ${f1(writeUsPerLine)} µs of batched writes later (${f1(writeUsPerRow)} µs per row); the supervisor's own parser: ${f1(parserUsPerLine)} µs per line\n`);

    const search = new TranscriptSearch(layer.db, index, { now: () => end });
    const lead: Caller = { role: 'lead' };
    const q = prng(5);
    const jobAt = (i: number): string => `j-${i.toString(16).padStart(8, '0')}`;
    const common = ['error', 'test', 'file', 'function', 'should', 'change', 'value', 'update', 'config', 'run'];
    const rare = Array.from({ length: 50 }, () => `ticket${Math.floor(q() * TRANSCRIPTS)}zq`);
    const cases: { name: string; filter: string; make: (i: number) => SearchOptions; caller?: Caller }[] = [
      { name: 'common word', filter: '—', make: (i) => ({ query: common[i % common.length]! }) },
      { name: 'two common words', filter: '—', make: (i) => ({ query: `${common[i % common.length]} ${common[(i + 3) % common.length]}` }) },
      { name: 'phrase', filter: '—', make: (i) => ({ query: `"${PHRASES[i % PHRASES.length]}"` }) },
      { name: 'rare word', filter: '—', make: (i) => ({ query: rare[i % rare.length]! }) },
      { name: 'prefix', filter: '—', make: (i) => ({ query: `${['migrat', 'compil', 'depend', 'valid', 'sess'][i % 5]}*` }) },
      { name: 'no match', filter: '—', make: (i) => ({ query: `zzqx${i}` }) },
      { name: 'common word', filter: 'job_id', make: (i) => ({ query: common[i % common.length]!, job_id: jobAt(Math.floor(q() * TRANSCRIPTS)) }) },
      { name: 'rare word', filter: 'job_id', make: (i) => ({ query: rare[i % rare.length]!, job_id: jobAt(Math.floor(q() * TRANSCRIPTS)) }) },
      { name: 'common word', filter: 'label (20 jobs)', make: (i) => ({ query: common[i % common.length]!, label: 'team-b' }) },
      { name: 'common word', filter: 'label (100 jobs, join)', make: (i) => ({ query: common[i % common.length]!, label: 'team-a' }) },
      { name: 'rare word', filter: 'label (100 jobs, join)', make: (i) => ({ query: rare[i % rare.length]!, label: 'team-a' }) },
      { name: 'common word', filter: 'agent subtree (11 jobs)', make: (i) => ({ query: common[i % common.length]! }), caller: { role: 'agent', jobId: 'j-00000000' } },
      { name: 'common word', filter: 'since 2h', make: (i) => ({ query: common[i % common.length]!, since: '2h' }) },
      { name: 'two common words', filter: 'limit 100', make: (i) => ({ query: `${common[i % common.length]} ${common[(i + 3) % common.length]}`, limit: 100 }) },
    ];
    const queries: QueryFigure[] = [];
    const all: number[] = [];
    for (const c of cases) {
      let last = { results: 0, total: 0 };
      const samples: number[] = [];
      for (let i = 0; i < 3; i++) await search.search(c.make(i), c.caller ?? lead);
      for (let i = 0; i < RUNS; i++) {
        const o = c.make(i);
        const s = performance.now();
        const res = await search.search(o, c.caller ?? lead);
        samples.push(performance.now() - s);
        last = { results: res.results.length, total: res.total_hint };
      }
      all.push(...samples);
      const st = stats(samples);
      queries.push({ name: c.name, query: JSON.stringify(c.make(0).query), filter: c.filter, stats: st, ...last });
      out(`search_output ${c.name.padEnd(17)} ${c.filter.padEnd(24)} p50 ${f2(st.p50)} ms  p99 ${f2(st.p99)} ms  (e.g. ${JSON.stringify(c.make(0).query)}: ${last.results} results, total_hint ${last.total})\n`);
    }
    const overall = stats(all);

    // Baselines, same corpus: the bare FTS5 match (no join, filter or snippet), bm25 order, LIKE.
    const rawFts = sample(RUNS, (i) => db.prepare('SELECT rowid FROM transcript_fts WHERE transcript_fts MATCH ? ORDER BY rowid DESC LIMIT 20').all(`body : (${ftsExpression(common[i % common.length]!)})`));
    const bm25 = sample(10, (i) => db.prepare('SELECT rowid FROM transcript_fts WHERE transcript_fts MATCH ? ORDER BY rank LIMIT 20').all(`body : (${ftsExpression(common[i % common.length]!)})`));
    const like = sample(5, (i) => db.prepare("SELECT id FROM transcript_rows WHERE body LIKE ? ORDER BY id DESC LIMIT 20").all(`%${rare[i % rare.length]}%`));
    out(`baseline raw FTS5 match, common word, no join/filter/snippet: p50 ${f2(rawFts.p50)} ms, p99 ${f2(rawFts.p99)} ms\n` +
      `baseline bm25 order (ORDER BY rank), common word: p50 ${f1(bm25.p50)} ms (n=${bm25.n})\n` +
      `baseline LIKE '%word%' scan, rare word: p50 ${f1(like.p50)} ms (n=${like.n})\n`);

    // Over MCP (in-memory client): what the lead's call costs on top of the search.
    const server = new NativeMcpServer({ tools: searchTools(search), version: 'bench', log: silentLogger }).connection(lead);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(b);
    const mcpSamples: number[] = [];
    for (let i = 0; i < RUNS + 3; i++) {
      const s = performance.now();
      await client.callTool({ name: 'search_output', arguments: { query: common[i % common.length]! } });
      if (i >= 3) mcpSamples.push(performance.now() - s);
    }
    const mcp = stats(mcpSamples);
    await client.close();
    out(`search_output over MCP (in-memory client), common word: p50 ${f2(mcp.p50)} ms, p99 ${f2(mcp.p99)} ms\n`);

    const trigram = trigramTrial(dir, samplePaths, common);
    out(`trigram vs unicode61 on ${trigram.transcripts} transcripts (${trigram.rows} rows): index ${mb(trigram.trigramBytes)} vs ${mb(trigram.unicodeBytes)}; common word p50 ${f2(trigram.trigram.p50)} vs ${f2(trigram.unicode.p50)} ms; substring (trigram only) p50 ${f2(trigram.substring.p50)} ms\n`);
    out(`search_output, all ${overall.n} queries above: p50 ${f2(overall.p50)} ms, p99 ${f2(overall.p99)} ms   [goal p50 ≤ 20 ms]\n`);
    return {
      transcripts: TRANSCRIPTS, lines, rows, dbBytes, ftsBytes, contentBytes, buildSeconds, lineUsPerLine, writeUsPerLine, writeUsPerRow, parserUsPerLine,
      queries, overall, mcp, rawFts, bm25, like, trigram,
    };
  } finally {
    db.close();
    if (process.env.BENCH_SEARCH_KEEP) out(`kept ${file}\n`);
    else await removeDir(dir);
  }
}

/** The same rows under unicode61 and under trigram (substring search), in a database of their own. */
function trigramTrial(dir: string, sample: Transcript[], common: string[]): SearchBenchResult['trigram'] {
  const db = new Database(path.join(dir, 'trigram.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.exec(`CREATE TABLE r (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
      CREATE VIRTUAL TABLE u USING fts5(body, content = 'r', content_rowid = 'id', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE g USING fts5(body, content = 'r', content_rowid = 'id', columnsize = 0, tokenize = 'trigram');`);
    const ins = db.prepare('INSERT INTO r (body) VALUES (?)');
    let rows = 0;
    db.transaction(() => {
      for (const t of sample) {
        for (const line of t.lines) {
          // The same extraction the index uses.
          for (const row of extractLine(line).rows) { ins.run(row.text); rows++; }
        }
      }
    })();
    db.exec("INSERT INTO u(u) VALUES ('rebuild'); INSERT INTO g(g) VALUES ('rebuild');");
    const bytes = (name: string): number => (db.prepare('SELECT COALESCE(SUM(pgsize), 0) AS b FROM dbstat WHERE name LIKE ?').get(`${name}_%`) as { b: number }).b;
    const q = (table: string, m: string): unknown[] => db.prepare(`SELECT rowid, snippet(${table}, 0, '«', '»', '…', 16) FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid DESC LIMIT 20`).all(m);
    const unicode = sample30((i) => q('u', `"${common[i % common.length]}"`));
    const tri = sample30((i) => q('g', `"${common[i % common.length]}"`));
    const substring = sample30((i) => q('g', `"${['onnection refus', 'such file or dir', 'arser_', 'andler1', 'xpected 3'][i % 5]}"`));
    return { transcripts: sample.length, rows, unicodeBytes: bytes('u'), trigramBytes: bytes('g'), unicode, trigram: tri, substring };
  } finally {
    db.close();
  }
}

const sample30 = (fn: (i: number) => unknown): Stats => sample(30, fn);

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchSearch().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
