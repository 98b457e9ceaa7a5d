// Measures what the test set-up's PostgreSQL costs (docs/decisions.md, "PostgreSQL for the tests"):
// a cluster started until the first query is answered, cold (initdb, the machine's template removed
// first) and warm (a copy of the template), and a fresh database per test; median of N, alternated.
//   node --import tsx scripts/pg-start-bench.ts [runs]        (OVERSEER_TEST_PG_BIN picks the binaries)
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pgBinDir, startCluster } from '../test/helpers/pgCluster.js';

const runs = Number(process.argv[2] ?? 5);
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] ?? NaN; };
const ms = (x: number): string => `${x.toFixed(0)} ms`;
const dropTemplates = (): void => {
  for (const f of readdirSync(tmpdir())) if (f.startsWith('overseer-pgtemplate-')) rmSync(join(tmpdir(), f), { recursive: true, force: true });
};

const cold: number[] = [];
const warm: number[] = [];
const stop: number[] = [];
const plain: number[] = [];
const copy: number[] = [];
const owned: number[] = [];
for (let i = 0; i < runs; i++) {
  dropTemplates();
  let t0 = performance.now();
  const c1 = await startCluster();
  cold.push(performance.now() - t0);
  c1.stop();
  t0 = performance.now();
  const c = await startCluster();
  warm.push(performance.now() - t0);
  const client = new pg.Client({ connectionString: c.admin });
  await client.connect();
  for (let j = 0; j < 5; j++) {
    const t1 = performance.now();
    await client.query(`CREATE DATABASE d${j} TEMPLATE template0`);
    plain.push(performance.now() - t1);
    const t4 = performance.now();
    await client.query(`CREATE DATABASE f${j} TEMPLATE template0 STRATEGY FILE_COPY`);
    copy.push(performance.now() - t4);
    const t2 = performance.now();
    await client.query(`CREATE ROLE r${j} LOGIN PASSWORD 'x'`);
    await client.query(`CREATE DATABASE o${j} OWNER r${j} TEMPLATE template0`);
    await client.query(`DROP DATABASE o${j} WITH (FORCE)`);
    await client.query(`DROP ROLE r${j}`);
    owned.push(performance.now() - t2);
  }
  await client.end();
  const t3 = performance.now();
  c.stop();
  stop.push(performance.now() - t3);
}
console.log(`binaries: ${pgBinDir()}; runs: ${runs}`);
console.log(`cold (initdb + start) to first answered query: median ${ms(median(cold))} (all: ${cold.map(ms).join(', ')})`);
console.log(`warm (template copy + start) to first answered query: median ${ms(median(warm))} (all: ${warm.map(ms).join(', ')})`);
console.log(`stop + remove: median ${ms(median(stop))}`);
console.log(`CREATE DATABASE ... TEMPLATE template0: median ${ms(median(plain))} (n=${plain.length})`);
console.log(`... STRATEGY FILE_COPY: median ${ms(median(copy))} (n=${copy.length})`);
console.log(`fresh database with its own role, create + drop: median ${ms(median(owned))} (n=${owned.length})`);
