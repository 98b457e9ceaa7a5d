import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { openSql } from '../src/store/sql/open.js';
import { transcriptIndex } from '../src/search/sqlIndex.js';
import { freshDatabase } from './helpers/postgres.js';
const words = 'alpha beta gamma delta server connection refused timeout migration index search store build deploy test runner'.split(' ');
const N = 50_000;
for (const dialect of ['sqlite', 'postgres'] as const) {
  let seed = 7; const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const fresh = dialect === 'postgres' ? await freshDatabase() : undefined;
  const s = await openSql({ home: mkdtempSync(join(tmpdir(), 'b-')), databaseUrl: fresh?.url });
  const idx = transcriptIndex(s.dialect);
  const T0 = Date.parse('2026-11-01T00:00:00Z');
  let t = performance.now();
  for (let b = 0; b < N; b += 500) {
    const rows = Array.from({ length: 500 }, (_, i) => ({ jobId: `j-${(b + i) % 200}`, attempt: 1, line: b + i, at: T0 + (b + i) * 50, kind: 'text' as const,
      text: Array.from({ length: 40 }, () => words[Math.floor(rnd() * words.length)]).join(' ') + ((b + i) % 5000 === 0 ? ' platypus' : '') + ((b + i) % 97 === 0 ? ' wombat' : '') }));
    await s.db.transaction().execute((trx) => idx.insert(trx, rows));
  }
  const ins = performance.now() - t;
  if (dialect === 'postgres') await sql`ANALYZE transcript_rows`.execute(s.db);
  const time = async (q: string, o = {}) => { const ms: number[] = []; let r; for (let k = 0; k < 9; k++) { const t0 = performance.now(); r = await idx.search(s.db, { query: q, limit: 20, cap: 1000, budgetMs: 3, snippetTokens: 16, ...o }); ms.push(performance.now() - t0); } ms.sort((a, b) => a - b); return `${q}${Object.keys(o).length ? ' ' + JSON.stringify(o).slice(0, 30) : ''}: median ${ms[4]!.toFixed(1)} ms (hits ${r!.hits.length}, total ${r!.total.n}${r!.total.complete ? '' : '+'})`; };
  console.log(dialect, `insert ${N} rows in batches of 500: ${(ins / 1000).toFixed(1)} s`);
  for (const q of ['server', '"connection refused"', 'wombat', 'platypus', 'migrat*', 'zzzzz', 'server -timeout']) console.log('  ', await time(q));
  console.log('  ', await time('server', { jobIds: ['j-3'] }));
  await s.close(); await fresh?.drop();
}
process.exit(0);
