// Unit: which real paths no agent may write (the rules it runs under, the hub's state).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { protectedReason } from '../../src/domain/protectedPaths.js';

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
