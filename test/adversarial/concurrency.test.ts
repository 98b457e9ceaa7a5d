// Adversarial: concurrency over real HTTP. 64 clients increment one note with compare-and-set
// (the count must be exact: no lost update, no double apply); 32 agents race lock_files on
// overlapping sets taken in two steps in different orders (never two holders of one path at any
// moment; every request is granted or refused as a deadlock — no timeout, so no lost wake-up).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startAdvHub, callTool, ok, type AdvHub, type Agent } from './harness.js';
import { Checks, printTally } from './tally.js';
import { sql } from 'kysely';
import { row, rows } from '../helpers/state.js';

/** A small seeded PRNG (mulberry32) so a failing interleaving's choices can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('adversarial: concurrency', { timeout: 120_000 }, () => {
  let a: AdvHub;
  before(async () => { a = await startAdvHub({ config: { maxAgents: 40, maxSessionsPerToken: 128 } }); });
  after(async () => {
    await a?.stop();
    printTally('concurrency');
  });

  test('64 HTTP clients × CAS increments on one note: the count is exact', async () => {
    const CLIENTS = 64;
    const EACH = 1;
    await a.h.call('write_note', { key: 'counter', value: '0', expected_version: 0 });
    const clients: Client[] = await Promise.all(Array.from({ length: CLIENTS }, () => a.client(a.h.hub.leadToken)));
    let acked = 0;
    const odd: string[] = [];
    await Promise.all(clients.map(async (c) => {
      for (let done = 0; done < EACH;) {
        const cur = await ok<{ value: string; version: number }>(c, 'read_note', { key: 'counter' });
        const w = await callTool(c, 'write_note', { key: 'counter', value: String(Number(cur.value) + 1), expected_version: cur.version });
        if (!w.isError) { acked++; done++; } else if (!/version/i.test(w.text)) odd.push(w.text);
      }
    }));
    const c = new Checks('concurrency');
    const final = await a.h.call('read_note', { key: 'counter' });
    c.check('64 CAS increments: value equals acknowledged writes', Number(final.value) === CLIENTS * EACH && acked === CLIENTS * EACH, `value ${final.value}, acked ${acked}`);
    c.check('CAS increments: version = writes + 1', final.version === CLIENTS * EACH + 1, `version ${final.version}`);
    c.check('CAS conflicts are reported as version conflicts', odd.length === 0, odd[0]);
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });

  test('32 agents race lock_files on overlapping sets in different orders', async () => {
    const AGENTS = 32;
    const ROUNDS = 3;
    const FILES = Array.from({ length: 8 }, (_, i) => `race/f${i}.txt`);
    const seed = 0x5eed;
    const rnd = prng(seed);
    const agents: Agent[] = [];
    for (let i = 0; i < AGENTS; i++) agents.push(await a.agent(`racer ${i}`));
    const holders = new Map<string, string>();
    const violations: string[] = [];
    const outcomes = { granted: 0, deadlock: 0, other: [] as string[] };
    // The in-memory check at once (before another grant can interleave), then the rows, which stay
    // this agent's until its own release_files.
    const grab = async (me: string, paths: string[]): Promise<void> => {
      for (const p of paths) {
        const h = holders.get(p);
        if (h && h !== me) violations.push(`${p} granted to ${me} while ${h} held it`);
        holders.set(p, me);
      }
      const held = paths.length ? await rows(a.h.hub, sql<{ path: string; holder: string }>`SELECT path, holder FROM locks WHERE path IN (${sql.join(paths)})`) : [];
      for (const r of held) if (r.holder !== me) violations.push(`db: ${r.path} held by ${r.holder}, granted to ${me}`);
      if (held.length !== paths.length) violations.push(`db: ${me} was granted ${paths.length} paths, ${held.length} rows`);
    };
    const drop = (me: string): void => { for (const [p, h] of [...holders]) if (h === me) holders.delete(p); };
    const plans = agents.map(() => Array.from({ length: ROUNDS }, () => {
      const shuffled = [...FILES].sort(() => rnd() - 0.5);
      return [shuffled.slice(0, 2), shuffled.slice(2, 4)];
    }));
    await Promise.all(agents.map(async (ag, i) => {
      for (const [first, second] of plans[i]!) {
        for (const set of [first!, second!]) {
          const r = await callTool(ag.client, 'lock_files', { files: set, timeout_s: 30 });
          if (!r.isError) {
            outcomes.granted++;
            await grab(ag.id, (JSON.parse(r.text) as { acquired: string[] }).acquired);
          } else if (/^.*deadlock/.test(r.text)) {
            outcomes.deadlock++;
            break;
          } else { outcomes.other.push(r.text); break; }
        }
        drop(ag.id);
        await ok(ag.client, 'release_files', {});
      }
    }));
    const c = new Checks('concurrency');
    c.check(`lock race (seed ${seed}): never two holders of one path`, violations.length === 0, violations.slice(0, 3).join('; '));
    c.check('lock race: every request granted or refused as deadlock (no timeout, no lost wake-up)', outcomes.other.length === 0, outcomes.other[0]);
    c.check('lock race: no lock or wait left behind', Number((await row(a.h.hub, sql<{ n: number | string }>`SELECT count(*) AS n FROM lock_waits`))!.n) === 0 && Number((await row(a.h.hub, sql<{ n: number | string }>`SELECT count(*) AS n FROM locks WHERE path LIKE '%/race/%'`))!.n) === 0);
    assert.ok(outcomes.granted >= AGENTS * ROUNDS, `only ${outcomes.granted} grants`);
    process.stderr.write(`lock race: ${outcomes.granted} granted, ${outcomes.deadlock} refused as deadlock\n`);
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });
});
