// Moving a state left inside the repository by an older version (<project>/.overseer) to the
// state root, with real files and real claims (src/hubproc/legacy.ts).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectStateDir, resolveStateDir } from '../../src/config.js';
import { moveLegacyState } from '../../src/hubproc/legacy.js';
import { tryClaim } from '../../src/hubfiles/claim.js';

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'overseer-legacy-')));
after(() => rmSync(tmp, { recursive: true, force: true }));

function legacyProject(name: string) {
  const repo = join(tmp, name);
  mkdirSync(join(repo, '.overseer', 'templates'), { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  const old = join(repo, '.overseer');
  writeFileSync(join(old, 'state.db'), 'db');
  writeFileSync(join(old, 'lead.token'), 'secret');
  mkdirSync(join(old, 'agents', 'j-1'), { recursive: true });
  writeFileSync(join(old, 'agents', 'j-1', 'attempt-1.jsonl'), '{}\n');
  writeFileSync(join(old, 'policy.json'), '{"rules":[],"default":"ask"}');
  writeFileSync(join(old, 'config.json'), '{}');
  writeFileSync(join(old, 'templates', 'fix.md'), '# fix');
  return { repo, old, env: { XDG_STATE_HOME: join(tmp, `xdg-${name}`) } };
}

test('the runtime state moves out; the person\'s settings stay; the next resolution finds the new place', () => {
  const p = legacyProject('move');
  assert.equal(resolveStateDir(p.env, p.repo), p.old, 'before the move the old place is used');
  const r = moveLegacyState(p.env, p.repo);
  assert.equal(r.moved, true);
  const to = projectStateDir(p.repo, p.env);
  assert.equal(readFileSync(join(to, 'lead.token'), 'utf8'), 'secret');
  assert.equal(readFileSync(join(to, 'state.db'), 'utf8'), 'db');
  assert.ok(existsSync(join(to, 'agents', 'j-1', 'attempt-1.jsonl')));
  assert.equal(existsSync(join(p.old, 'lead.token')), false, 'the token is gone from the repository');
  assert.equal(existsSync(join(p.old, 'state.db')), false);
  for (const f of ['policy.json', 'config.json', join('templates', 'fix.md')]) assert.ok(existsSync(join(p.old, f)), `${f} stays`);
  assert.equal(resolveStateDir(p.env, p.repo), to);
  assert.deepEqual(moveLegacyState(p.env, p.repo), { moved: false, reason: 'not_legacy' }, 'a second run does nothing');
});

test('a hub still running on the old place keeps it: nothing moves', () => {
  const p = legacyProject('busy');
  const claim = tryClaim(p.old);
  assert.ok(claim);
  try {
    assert.deepEqual(moveLegacyState(p.env, p.repo), { moved: false, reason: 'hub_running' });
    assert.ok(existsSync(join(p.old, 'lead.token')));
    assert.equal(resolveStateDir(p.env, p.repo), p.old);
  } finally {
    claim.release();
  }
});

test('OVERSEER_HOME set: nothing moves', () => {
  const p = legacyProject('explicit');
  assert.deepEqual(moveLegacyState({ ...p.env, OVERSEER_HOME: p.old }, p.repo), { moved: false, reason: 'explicit_home' });
  assert.ok(existsSync(join(p.old, 'state.db')));
});
