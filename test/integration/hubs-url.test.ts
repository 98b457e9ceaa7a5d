// The hubs registry knows where each hub listens: a hub registers before its HTTP listener is bound
// (its start reconciles first) and fills `hubs.url` once the listener has its port. `overseer
// status` on PostgreSQL shows one line per live hub (id, host, pid, url, heartbeat age); a hub that
// stopped leaves the list. On SQLite (one hub per state directory) status shows no hub line.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startTestHub, testDatabaseUrl, type TestHub } from '../helpers/hub.js';
import { freshDatabase } from '../helpers/postgres.js';
import { buildCli, overseer } from '../helpers/cli.js';
import { row } from '../helpers/state.js';

const hubs: TestHub[] = [];
before(buildCli);
after(async () => { for (const h of hubs.reverse()) await h.stop(); });

const listening = (h: TestHub): string => (JSON.parse(readFileSync(join(h.home, 'hub.json'), 'utf8')) as { url: string }).url;
const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('hubs.url and the hubs in overseer status', () => {
  test('a started hub\'s row carries the URL it listens on (this run\'s database)', async () => {
    const h = await startTestHub();
    hubs.push(h);
    const r = await row(h.hub, sql<{ url: string | null; pid: number; host: string }>`SELECT url, pid, host FROM hubs WHERE id = ${h.hub.hubId}`);
    assert.ok(listening(h).startsWith('http://127.0.0.1:'), listening(h));
    assert.deepEqual(r, { url: listening(h), pid: process.pid, host: hostname() });
    // On SQLite status names no hub (hub.json does); on PostgreSQL it lists this one.
    const url = testDatabaseUrl(h.home);
    const st = await overseer(h.project, ['status'], { OVERSEER_HOME: h.home, OVERSEER_LOG_LEVEL: 'silent', ...(url ? { OVERSEER_DATABASE_URL: url } : {}) });
    assert.equal(st.code, 0, st.stderr);
    if (url) assert.match(st.stdout, new RegExp(`^hub ${h.hub.hubId} on ${esc(hostname())} pid ${process.pid} ${esc(listening(h))} · heartbeat \\d+\\.\\ds ago$`, 'm'));
    else assert.doesNotMatch(st.stdout, /^hub h-/m);
  });

  test('PostgreSQL: two hubs on one database are two lines of overseer status; a stopped hub leaves it', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const a = await startTestHub({ config: { databaseUrl: d.url } });
    const b = await startTestHub({ config: { databaseUrl: d.url } });
    hubs.push(a, b);
    const env = { OVERSEER_HOME: a.home, OVERSEER_DATABASE_URL: d.url, OVERSEER_LOG_LEVEL: 'silent' };
    const line = (h: TestHub): RegExp => new RegExp(`^hub ${h.hub.hubId} on ${esc(hostname())} pid ${process.pid} ${esc(listening(h))} · heartbeat \\d+\\.\\ds ago$`, 'm');
    const both = await overseer(a.project, ['status'], env);
    assert.equal(both.code, 0, both.stderr);
    assert.match(both.stdout, /^No jobs yet\.$/m);
    assert.match(both.stdout, line(a));
    assert.match(both.stdout, line(b));
    assert.notEqual(listening(a), listening(b));

    await a.stop();
    hubs.splice(hubs.indexOf(a), 1);
    const one = await overseer(b.project, ['status'], { ...env, OVERSEER_HOME: b.home });
    assert.equal(one.code, 0, one.stderr);
    assert.doesNotMatch(one.stdout, new RegExp(`hub ${a.hub.hubId}`), 'a stopped hub is not listed');
    assert.match(one.stdout, line(b));
  });
});
