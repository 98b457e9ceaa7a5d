// Unit: the dashboard's Re-run spawns an ended job's spec again (src/web/api/spawn.ts rerunSpec):
// its prompt and the options it ran with; a template's guidelines, added to the stored prompt, are
// named again as the template instead of copied twice; the spec passes spawn_agent's schema.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rerunSpec } from '../../src/web/api/spawn.js';
import type { JobRow } from '../../src/store/jobs.js';

const row = (o: Partial<JobRow>): JobRow => ({
  id: 'j-1', title: 'Fix it', prompt: 'fix the bug', provider: 'claude', model: 'sonnet', cwd: '/repo', worktree: 1, branch: 'overseer/fix-j-1', priority: 3,
  max_turns: 9, budget_usd: 0.5, timeout_s: 120, context_json: '{"api":"schema"}', template: null, checks_json: '["diff_not_empty"]', retry: 'same',
  labels_json: '["a"]', depends_on_json: '["j-0"]', project: 'web', role: 'reviewer', status: 'succeeded', ...o,
} as JobRow);

test('re-run: the same prompt and options, a new branch name', () => {
  assert.deepEqual(rerunSpec(row({})), {
    prompt: 'fix the bug', title: 'Fix it', provider: 'claude', model: 'sonnet', cwd: '/repo', worktree: true, priority: 3, max_turns: 9, budget_usd: 0.5, timeout_s: 120,
    context: { api: 'schema' }, checks: ['diff_not_empty'], retry: 'same', labels: ['a'], depends_on: ['j-0'], project: 'web', role: 'reviewer',
  });
  const plain = rerunSpec(row({ model: null, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, project: null, role: null, worktree: 0 }));
  assert.equal('model' in plain || 'max_turns' in plain || 'context' in plain || 'project' in plain || 'role' in plain, false);
  assert.equal(plain.worktree, false);
});

test('re-run of a templated job names the template again instead of copying its guidelines', () => {
  const s = rerunSpec(row({ template: 'careful', prompt: 'fix the bug\n\n## Guidelines\n\nWrite the tests first.' }));
  assert.equal(s.prompt, 'fix the bug');
  assert.equal(s.template, 'careful');
});
