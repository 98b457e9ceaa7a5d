// Unit: which real paths no agent may write (the rules it runs under, the hub's state).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { protectedReason, secretReason } from '../../src/domain/protectedPaths.js';

const c = { stateDir: '/repo/.overseer', home: '/home/u', claudeConfigDir: '/cfg/claude', hubDirs: ['/state/child-homes'] };

test('protected: settings at every level, MCP/Codex config, git hooks and config, hub state', () => {
  for (const p of [
    '/repo/.overseer/policy.json', '/repo/.overseer/state.db', '/repo/.claude/settings.local.json', '/repo/sub/.claude/settings.json',
    '/repo/.claude/agents/a.md', '/home/u/.claude/settings.json', '/cfg/claude/settings.json', '/home/u/.codex/config.toml',
    '/repo/.mcp.json', '/repo/.codex/hooks.json', '/repo/.git/hooks/pre-commit', '/repo/.git/config', '/repo/.git/worktrees/w1/config.worktree',
    '/state/child-homes/j-1/settings.json',
  ]) assert.ok(protectedReason(p, c), p);
});

test('not protected: ordinary files, git objects, look-alike names', () => {
  for (const p of ['/repo/src/a.ts', '/repo/.git/index', '/repo/.git/objects/ab/cd', '/repo/claude/settings.json', '/repo/.overseer-notes/x', '/repo/docs/.mcp.json.md', '/home/u/.claudeish/x']) {
    assert.equal(protectedReason(p, c), undefined, p);
  }
});

test('the project\'s Overseer settings are protected from writes; the state root and the shared knowledge base are secret', () => {
  const s = { stateDir: '/st/projects/p-1', settingsDir: '/repo/.overseer', stateRoot: '/st', secretFiles: ['/share/overseer/kb.db', '/share/overseer/kb.db-wal'] };
  assert.match(protectedReason('/repo/.overseer/policy.json', s) ?? '', /project's Overseer settings/);
  assert.equal(secretReason('/repo/.overseer/policy.json', s), undefined, 'the settings are not secret: agents may read their policy');
  assert.match(secretReason('/st/projects/other-2/lead.token', s) ?? '', /state root \(\/st\)/);
  assert.match(secretReason('/st/projects/p-1/state.db', s) ?? '', /hub's own state .*lead's token/);
  assert.match(secretReason('/share/overseer/kb.db-wal', s) ?? '', /knowledge base every project shares/);
  assert.match(protectedReason('/share/overseer/kb.db', s) ?? '', /knowledge base/);
  for (const p of ['/share/overseer/worktrees/j-1/a.ts', '/share/overseer/kb.db.md', '/stx/a', '/repo/.overseer-x/y']) {
    assert.equal(secretReason(p, s), undefined, p);
    assert.equal(protectedReason(p, s), undefined, p);
  }
});
