// The leaf stores' hot statements (issue 29 step 3) before and after their move onto the
// asynchronous layer, on SQLite, same run, same file: a message stored (per message_agent /
// send_message: the insert and its event) and a health warning raised when one is already open
// (per job and kind on every monitor tick: the common case, a no-op). "before" runs the statements
// the synchronous store ran (prepared once, as better-sqlite3 caches them); "after" the layer's
// functions through Kysely over the same connection. Median and p99 of N calls each, µs.
// Run alone: node --import tsx bench/leaf-stores.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDb } from '../src/store/db.js';
import { sqlOver } from '../src/store/sql/open.js';
import { addMessage } from '../src/store/sql/messages.js';
import { appendEvent } from '../src/store/sql/events.js';
import { raiseWarning } from '../src/store/sql/warnings.js';
import { out, runAlone, stats, type Stats } from './common.js';

const N = 5000;

export interface LeafStoresResult { calls: number; message: { before: Stats; after: Stats }; warningOpen: { before: Stats; after: Stats } }

async function sample(n: number, fn: () => unknown): Promise<Stats> {
  const us: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    us.push((performance.now() - t) * 1000);
  }
  return stats(us);
}

export async function benchLeafStores(): Promise<LeafStoresResult> {
  const dir = mkdtempSync(join(tmpdir(), 'overseer-bench-leaf-'));
  const db = openDb(join(dir, 'state.db'));
  const q = sqlOver(db).db;
  try {
    db.prepare("INSERT INTO jobs (id, seq, depth, title, prompt, provider, cwd, status, created_at, updated_at) VALUES ('j-1', 1, 1, 't', 'p', 'claude', '/w', 'running', 0, 0)").run();
    const msg = db.prepare('INSERT INTO messages (from_id, to_id, text, created_at, delivered_at) VALUES (?, ?, ?, ?, ?)');
    const ev = db.prepare('INSERT INTO events (job_id, at, kind, data_json) VALUES (?, ?, ?, ?)');
    const openOne = db.prepare('SELECT id FROM job_warnings WHERE job_id = ? AND kind = ? AND cleared_at IS NULL');
    await raiseWarning(q, 'j-1', 'stalled', 'no output', 0);
    // Warm both paths (statement caches, JIT) before measuring.
    for (let i = 0; i < 500; i++) {
      Number(msg.run('lead', 'j-1', 'hello', i, i).lastInsertRowid);
      await addMessage(q, { from: 'lead', to: 'j-1', text: 'hello', now: i, delivered: true });
      openOne.get('j-1', 'stalled');
      await raiseWarning(q, 'j-1', 'stalled', 'no output', i);
    }
    const data = JSON.stringify({ from: 'lead', delivered: true });
    const message = {
      before: await sample(N, () => { Number(msg.run('lead', 'j-1', 'hello', 1, 1).lastInsertRowid); ev.run('j-1', 1, 'message', data); }),
      after: await sample(N, async () => { await addMessage(q, { from: 'lead', to: 'j-1', text: 'hello', now: 1, delivered: true }); await appendEvent(q, 'j-1', 1, 'message', { from: 'lead', delivered: true }); }),
    };
    const warningOpen = {
      before: await sample(N, () => openOne.get('j-1', 'stalled')),
      after: await sample(N, () => raiseWarning(q, 'j-1', 'stalled', 'no output', 1)),
    };
    return { calls: N, message, warningOpen };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function line(label: string, s: Stats): string {
  return `${label}: median ${s.p50.toFixed(1)} µs, p99 ${s.p99.toFixed(1)} µs`;
}

runAlone(import.meta.url, async () => {
  const r = await benchLeafStores();
  out(`${r.calls} calls each, SQLite\n`);
  out(`${line('message stored, before (sync)', r.message.before)}\n`);
  out(`${line('message stored, after (layer)', r.message.after)}\n`);
  out(`${line('warning already open, before (sync)', r.warningOpen.before)}\n`);
  out(`${line('warning already open, after (layer)', r.warningOpen.after)}\n`);
  return r;
});
