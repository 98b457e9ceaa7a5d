// End-to-end (real claude and codex children, fake models, real bubblewrap): a confined child
// cannot read or write the hub's state through any program it runs, nor change the rules it
// runs under (issue 9 points 1-2, issue 18 point 1). The same commands with confinement
// switched off do reach the token: the test shows what the jail is holding back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { probeBwrap } from '../../src/confine/launcher.js';
import type { ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { startTestHub } from '../helpers/hub.js';
import { codexHubs } from '../helpers/codexHub.js';
import { lastResult } from '../helpers/steps.js';

const bwrap = probeBwrap();
if (!bwrap.ok) throw new Error(`these tests need bubblewrap (.ci/run installs it): ${bwrap.reason}`);

// The test hub's state is <dir>/state and its project is <dir>: paths relative to the child's cwd.
// A command that names the state is refused by the hook before it runs (src/services/stateGuard.ts);
// this test is about what the OS holds, so its programs build each path at run time, one
// character at a time, where no reading of the command's text can see it.
const js = (p: string): string => p.split('').map((c) => `'${c}'`).join('+');
const readTo = (file: string, out: string): string => `node -e "process.stdout.write(require('fs').readFileSync(${js(file)}))" > ${out} 2>&1; true`;
/** Through /proc/<pid>/root of a process outside the jail (here the hub, which is this test
 * process) the whole filesystem is visible as that process sees it — unless the child has a pid
 * namespace and a /proc of its own. */
const viaProc = (stateAbs: string): string => readTo(`/proc/${process.pid}/root${stateAbs}/lead.token`, 'leak-proc.txt');
/** A stand-in for another Claude session's messaging socket (Claude Code's own layout). */
const PEER = `/tmp/cc-socks/ovs-peer-${process.pid}.sock`;
const ATTACKS = [
  // node, not cat: Claude Code's own Read deny rules already stop `cat state/…` (protected-state.test.ts).
  `${readTo('state/lead.token', 'leak.txt')}; node -e "console.log(require('fs').readdirSync(${js('state')}).join(' '))" > listing.txt 2>&1; true`,
  `node -e "require('fs').writeFileSync(${js('state/policy.json')}, JSON.stringify({rules: [], default: 'allow'}))" 2> w-policy.txt; true`,
  `node -e "require('fs').writeFileSync('.claude/settings.local.json', JSON.stringify({disableAllHooks: true}))" 2> w-settings.txt; true`,
  `node -e "require('fs').writeFileSync(process.env.HOME + '/.claude/settings.json', JSON.stringify({disableAllHooks: true}))" 2> w-user.txt; true`,
  // Another Claude session's messaging socket (the lead's, in the shared temp dir): a program that
  // connects could put text into that session's conversation.
  `node -e "const s=require('net').connect('${PEER}');s.on('connect',()=>{console.log('CONNECTED');s.end()});s.on('error',(e)=>console.log('ERR '+e.code))" > peer.txt 2>&1; true`,
];

describe('claude children', () => {
  for (const confine of ['auto', 'off'] as const) {
    test(`confine=${confine}: Bash reads of the token and interpreter writes to the state and to the settings`, { timeout: 180_000 }, async () => {
      const seen: ToolResultInfo[] = [];
      let stateAbs = '';
      let peerConnections = 0;
      let peer: Server | undefined;
      const h = await startTestHub({
        config: { confine },
        scripts: {
          snoop: async (ctx) => {
            if (ctx.step > 0) seen.push(lastResult(ctx));
            if (ctx.step < ATTACKS.length) return { tools: [{ name: 'Bash', input: { command: ATTACKS[ctx.step]! } }] };
            if (ctx.step === ATTACKS.length) return { tools: [{ name: 'Bash', input: { command: viaProc(stateAbs) } }] };
            if (ctx.step === ATTACKS.length + 1) return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'tried' } }] };
            return { text: 'done' };
          },
        },
      });
      try {
        mkdirSync('/tmp/cc-socks', { recursive: true, mode: 0o700 });
        rmSync(PEER, { force: true });
        peer = createServer((c) => { peerConnections++; c.end(); });
        await new Promise<void>((r) => peer!.listen(PEER, () => r()));
        stateAbs = h.home;
        const token = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
        const spawned = await h.call('spawn_agent', { prompt: '@script:snoop', title: 'Snoop' });
        const w = await h.call('wait_for_agents', { job_ids: [spawned.job_id], timeout_s: 120 });
        assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
        assert.ok(existsSync(join(h.project, 'leak.txt')), JSON.stringify(seen));
        const leak = readFileSync(join(h.project, 'leak.txt'), 'utf8');
        if (confine === 'off') {
          // Unconfined, the hole is real: the test would catch a jail that stopped working.
          assert.match(spawned.warning, /without OS confinement: switched off/);
          assert.equal(leak.trim(), token, 'unconfined, node reads the token');
          assert.equal(readFileSync(join(h.project, 'leak-proc.txt'), 'utf8').trim(), token, 'unconfined, /proc/<hub>/root reads it too');
          assert.match(readFileSync(join(h.project, 'peer.txt'), 'utf8'), /CONNECTED/, 'unconfined, another session\'s socket is reachable');
          assert.equal(peerConnections, 1);
          return;
        }
        assert.equal(spawned.warning, undefined, 'confined: no warning');
        assert.ok(!leak.includes(token), `the token leaked: ${leak}`);
        assert.match(leak, /ENOENT/);
        const viaProcLeak = readFileSync(join(h.project, 'leak-proc.txt'), 'utf8');
        assert.ok(!viaProcLeak.includes(token), `the token leaked through /proc: ${viaProcLeak}`);
        assert.match(viaProcLeak, /ENOENT/, 'the hub\'s pid does not exist in the child\'s /proc');
        assert.equal(readFileSync(join(h.project, 'listing.txt'), 'utf8').trim(), '', 'the state directory looks empty');
        assert.match(readFileSync(join(h.project, 'w-policy.txt'), 'utf8'), /EROFS|read-only/i);
        assert.equal(existsSync(join(h.home, 'policy.json')), false, 'no policy.json was written into the state');
        assert.match(readFileSync(join(h.project, 'w-settings.txt'), 'utf8'), /EROFS|read-only/i);
        assert.equal(existsSync(join(h.project, '.claude', 'settings.local.json')), false);
        assert.match(readFileSync(join(h.project, 'w-user.txt'), 'utf8'), /EROFS|read-only/i);
        assert.equal(readFileSync(join(h.dir, 'home', '.claude', 'settings.json'), 'utf8').trim(), '{}');
        assert.match(readFileSync(join(h.project, 'peer.txt'), 'utf8'), /ERR ENOENT/, 'another session\'s socket is not there for a confined child');
        assert.equal(peerConnections, 0, 'nothing connected to the other session');
        const everything = JSON.stringify(h.fake.requests.map((r) => r.body));
        assert.ok(!everything.includes(token), 'the lead token reached the model');
        assert.equal(seen.length, ATTACKS.length + 2);
      } finally {
        await h.stop();
        await new Promise<void>((r) => (peer ? peer.close(() => r()) : r()));
        rmSync(PEER, { force: true });
      }
    });
  }
});

describe('codex children', () => {
  const { codexHub } = codexHubs();
  test('a codex shell cannot read the token or write the state (its own sandbox inside the jail)', { timeout: 180_000 }, async () => {
    let stateAbs = '';
    const steps = [() => ATTACKS[0]!, () => ATTACKS[1]!, () => viaProc(stateAbs)];
    const { h } = await codexHub({
      snoop: async (ctx) => (ctx.step < steps.length ? { calls: [{ shell: steps[ctx.step]!() }] } : { text: 'tried' }),
    });
    stateAbs = h.home;
    const token = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
    const spawned = await h.call('spawn_agent', { prompt: '@script:snoop', provider: 'codex' });
    assert.equal(spawned.warning, undefined);
    const w = await h.call('wait_for_agents', { job_ids: [spawned.job_id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
    const leak = readFileSync(join(h.project, 'leak.txt'), 'utf8');
    assert.ok(!leak.includes(token), `the token leaked: ${leak}`);
    assert.equal(readFileSync(join(h.project, 'listing.txt'), 'utf8').trim(), 'codex-home', 'only its own CODEX_HOME is there');
    assert.equal(existsSync(join(h.home, 'policy.json')), false);
    const viaProcLeak = readFileSync(join(h.project, 'leak-proc.txt'), 'utf8');
    assert.ok(!viaProcLeak.includes(token), `the token leaked through /proc: ${viaProcLeak}`);
  });
});
