// Micro-benchmark of two parts of a tool call that the crew's load profile ranked (issue 14,
// docs/performance-native-mcp.md "Per call, a third pass"); not in the goals table, which
// measures whole calls over HTTP (bench/http-load.ts):
//   (a) a note write on the hub's own database (openDb: its pragmas and schema): better-sqlite3's
//       db.transaction(fn) made per write, against one transaction function kept per connection
//       (what src/store/db.ts tx() does now); and the read the tools do outside a transaction;
//   (b) a read_note answer as the HTTP body: the value stringified, parsed back for
//       structuredContent and the whole message stringified again (before), against okResult's
//       JSON made once and written by messageJson (now).
// Run: node --import tsx bench/per-call-parts.ts
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { okResult } from '../src/tools/result.js';
import { messageJson } from '../src/mcp/rpc.js';
import { openDb } from '../src/store/db.js';
import { out, removeDir, runAlone, tempDir } from './common.js';

const N = 20_000;

function time(label: string, f: (i: number) => unknown): number {
  for (let i = 0; i < N / 10; i++) f(i); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < N; i++) f(i);
  const us = ((performance.now() - t0) * 1000) / N;
  out(`${label}: ${us.toFixed(2)} µs\n`);
  return us;
}

export async function benchPerCallParts(): Promise<Record<string, number>> {
  const dir = await tempDir('overseer-bench-parts-');
  try {
    const db = openDb(path.join(dir, 'state.db'));
    const get = db.prepare('SELECT * FROM notes WHERE key = ?');
    const put = db.prepare('INSERT INTO notes (key, value, version, author, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, version = excluded.version, author = excluded.author, updated_at = excluded.updated_at');
    for (let i = 0; i < 64; i++) put.run(`bench/load/c${i}`, `value of client ${i}`, 1, 'lead', Date.now());
    type Row = { key: string; version: number };
    const write = (i: number): void => {
      const cur = get.get(`bench/load/c${i % 64}`) as Row;
      put.run(cur.key, `value ${i}`, cur.version + 1, 'j-1', Date.now());
    };
    const once = db.transaction((f: () => void) => f());
    const r: Record<string, number> = {};
    r.writeNewTx = time('note write, db.transaction(fn) per write (before)', (i) => db.transaction(() => write(i)).immediate());
    r.writeOneTx = time('note write, one transaction function per connection (now)', (i) => once.immediate(() => write(i)));
    r.read = time('note read outside a transaction', (i) => get.get(`bench/load/c${i % 64}`));
    db.close();

    const view = (i: number) => ({ key: `bench/load/c${i % 64}`, value: `value of client ${i % 64}`, version: i, author: 'j-abc123', updated_at: '2026-11-25T13:00:00.000Z', total_chars: 18, offset: 0, next_offset: null });
    r.answerBefore = time('read_note answer as an HTTP body, parsed back and stringified again (before)', (i) => {
      const text = JSON.stringify(view(i), null, 1);
      return JSON.stringify({ jsonrpc: '2.0', id: i, result: { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as unknown } });
    });
    r.answerNow = time('read_note answer as an HTTP body, okResult + messageJson (now)', (i) => messageJson({ jsonrpc: '2.0', id: i, result: okResult(view(i)) as unknown as Record<string, unknown> }));
    return r;
  } finally {
    await removeDir(dir);
  }
}

runAlone(import.meta.url, benchPerCallParts);
