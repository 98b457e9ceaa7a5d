// The libraries the hub loads at first use (src/lazy.ts, docs/performance-hub-memory.md): a hub
// on a git repository starts (marking its directories excluded through git) and answers a
// lead's tool call without smol-toml or execa (yaml: the lead's session parses the built-in
// recipes' front matter); the first TOML dispatch file loads smol-toml, and both parsers report
// syntax errors as before. git runs through node:child_process (src/git/exec.ts), never execa.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { initRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/claude.js';
import { lazyLoaded } from '../../src/lazy.js';
import { gitOut } from '../../src/git/exec.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop().catch(() => undefined); });

test('a hub serves calls without its lazy libraries and loads each on first use', async () => {
  const dir = await makeTempDir('ovs-lazy');
  const project = await initRepo(join(dir, 'repo'));
  const h = await startTestHub({ dir, project });
  hubs.push(h);

  const listed = await h.call('list_agents', {});
  assert.deepEqual(listed.agents, []);
  assert.ok(!lazyLoaded().has('execa') && !lazyLoaded().has('smol-toml'), `an idle hub that answered a call loaded ${[...lazyLoaded()].join(', ')}`);
  // The start still excluded Overseer's directories in the repository (through git, without execa).
  const exclude = readFileSync(join(project, '.git', 'info', 'exclude'), 'utf8');
  assert.match(exclude, /^\.overseer\/$/m);

  const yaml = await h.callRaw('dispatch', { format: 'yaml', content: 'tasks:\n  - id: a\n    prompt: [unclosed\n' });
  assert.equal(yaml.isError, true);
  assert.match(yaml.text, /<content>:\d+:\d+: YAML syntax error/);
  assert.ok(lazyLoaded().has('yaml'));
  assert.ok(!lazyLoaded().has('smol-toml'), 'a YAML file loads no TOML parser');

  const toml = await h.callRaw('dispatch', { format: 'toml', content: '[[task]]\nid = "a"\nprompt = \n' });
  assert.equal(toml.isError, true);
  assert.match(toml.text, /TOML syntax error/);
  assert.match(toml.text, /<content>:3:10: TOML syntax error: invalid value/);
  assert.ok(lazyLoaded().has('smol-toml'), 'the first TOML file loads smol-toml');
  assert.deepEqual((await h.call('list_runs', {})).runs, [], 'a refused file starts no run');

  assert.equal(await gitOut(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: project }), 'main');
  assert.ok(!lazyLoaded().has('execa'), 'git runs without execa');
});
