// End-to-end (real claude children, the fake model, real bubblewrap): the database's credentials
// never reach a child (docs/security.md, "Database credentials"). The hub's environment carries a
// database URL, its alias and libpq's variables, and names a password file and a TLS key and
// certificate; the child runs `env` and reads each file through its Bash tool. Confined, it sees
// none of them; with confinement off the files are readable (the test shows what the jail holds
// back) while the variables are still gone (stripping them does not depend on confinement).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeBwrap } from '../../src/confine/launcher.js';
import { DATABASE_CREDENTIAL_VARS } from '../../src/launch/childEnv.js';
import { startTestHub } from '../helpers/hub.js';

const bwrap = probeBwrap();
if (!bwrap.ok) throw new Error(`these tests need bubblewrap (.ci/run installs it): ${bwrap.reason}`);

const SECRET = 'pw-7c1f0e-never-in-a-child';
const keys = mkdtempSync(join(tmpdir(), 'ovs-dbcreds-'));
after(() => rmSync(keys, { recursive: true, force: true }));
const FILES = { passfile: join(keys, 'crew.pgpass'), key: join(keys, 'client.key'), cert: join(keys, 'client.crt') };
for (const [name, f] of Object.entries(FILES)) writeFileSync(f, `${name}:${SECRET}\n`);

// The hub's own environment names the files (the jail reads it when it plans a child); the
// children's environment (the test hub's childEnv, filtered by childEnvFrom like the hub's own) carries the variables.
const hubVars = { PGPASSFILE: FILES.passfile, PGSSLKEY: FILES.key, PGSSLCERT: FILES.cert };
const childVars: Record<string, string> = Object.fromEntries(DATABASE_CREDENTIAL_VARS.map((k) => [k, `${k}-${SECRET}`]));
childVars.OVERSEER_DATABASE_URL = `postgres://crew:${SECRET}@127.0.0.1:5432/crew?sslkey=${FILES.key}&sslcert=${FILES.cert}`;

const reads = (home: string): [string, string][] => [...Object.entries(FILES), ['home-pgpass', join(home, '.pgpass')]];

describe('database credentials and a claude child', () => {
  for (const confine of ['auto', 'off'] as const) {
    test(`confine=${confine}: the child's env has no database variable${confine === 'auto' ? ' and the credential files show nothing' : '; the files are readable unconfined'}`, { timeout: 180_000 }, async () => {
      const saved = Object.fromEntries(Object.keys(hubVars).map((k) => [k, process.env[k]]));
      Object.assign(process.env, hubVars);
      let home = '';
      const h = await startTestHub({
        config: { confine },
        extraEnv: childVars,
        scripts: {
          look: async (ctx) => {
            if (ctx.step === 0) {
              const cmds = ['env > env.txt', ...reads(home).map(([name, f]) => `cat '${f}' > 'read-${name}.txt' 2>&1`)];
              return { tools: [{ name: 'Bash', input: { command: `${cmds.join('; ')}; true` } }] };
            }
            if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'looked' } }] };
            return { text: 'done' };
          },
        },
      });
      try {
        home = join(h.dir, 'home');
        mkdirSync(home, { recursive: true });
        writeFileSync(join(home, '.pgpass'), `*:*:*:*:${SECRET}\n`, { mode: 0o600 });
        const spawned = await h.call('spawn_agent', { prompt: '@script:look', title: 'Look' });
        const w = await h.call('wait_for_agents', { job_ids: [spawned.job_id], timeout_s: 120 });
        assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
        const env = readFileSync(join(h.project, 'env.txt'), 'utf8');
        assert.match(env, /^PATH=/m, 'env ran');
        assert.ok(!env.includes(SECRET), `a database credential reached the child's environment:\n${env.split('\n').filter((l) => l.includes(SECRET)).join('\n')}`);
        for (const k of DATABASE_CREDENTIAL_VARS) assert.doesNotMatch(env, new RegExp(`^${k}=`, 'm'), `${k} is in the child's environment`);
        for (const [name] of reads(home)) {
          const got = readFileSync(join(h.project, `read-${name}.txt`), 'utf8');
          // Hidden = /dev/null bound over it read-only: empty, or refused as bubblewrap's user namespace maps it.
          if (confine === 'auto') assert.ok(!got.includes(SECRET) && /^(|cat: .*Permission denied\n)$/.test(got), `${name} leaked to a confined child: ${got}`);
          else assert.match(got, new RegExp(SECRET), `unconfined, ${name} is readable: ${got}`);
        }
        const everything = JSON.stringify(h.fake.requests.map((r) => r.body));
        if (confine === 'auto') assert.ok(!everything.includes(SECRET), 'a credential reached the model');
      } finally {
        await h.stop();
        for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
      }
    });
  }
});
