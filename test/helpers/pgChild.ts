// A child process for test/integration/postgres-setup.test.ts: takes this process's PostgreSQL
// through the helper, prints where it lives as one JSON line, then ends the way argv[2] says
// ('exit': returns normally; 'throw': an uncaught exception; 'wait': until a signal arrives).
import pg from 'pg';
import { postgres } from './postgres.js';

const how = process.argv[2] ?? 'exit';
const { admin } = await postgres();
const c = new pg.Client({ connectionString: admin });
await c.connect();
const dataDir = (await c.query<{ data_directory: string }>('SHOW data_directory')).rows[0]?.data_directory;
await c.end();
process.stdout.write(`${JSON.stringify({ admin, port: Number(new URL(admin).port), dataDir })}\n`);
if (how === 'throw') setImmediate(() => { throw new Error('uncaught on purpose'); });
if (how === 'wait') setInterval(() => undefined, 60_000); // kept alive until the test signals it
