// Roles (issue 31 point 4, src/roles): the role file parser, the "wider" rule and what a role
// refuses. Pure functions on real files in a temp directory.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { builtinRole, globWithin, readOnly, roleRefusal, widerThan, type RoleSpec } from '../../src/roles/role.js';
import { customRoleNames, parseRoleFile, resolveRole } from '../../src/roles/load.js';
import { roleColumns, roleForSpawn } from '../../src/roles/spawn.js';
import { InvalidInputError, ForbiddenError } from '../../src/errors.js';
import { checkDispatch } from '../../src/runs/file.js';

const spec = (r: Omit<RoleSpec, 'instructions'>): RoleSpec => ({ ...r, instructions: '' });
const implementer = spec(builtinRole('implementer'));
const reviewer = spec(builtinRole('reviewer'));
const planner = spec(builtinRole('planner'));
const docs = spec({ name: 'docs', writes: ['docs/**'] });

describe('role files', () => {
  test('front matter: tools allowed and denied, write globs, model, provider; the body is the instructions', () => {
    const r = parseRoleFile('docs', '/p/.overseer/roles/docs.md', [
      '---', 'description: writes the docs', 'allowed_tools: [Read, Edit, Write, Bash]', 'denied_tools: [WebFetch]',
      'writes: ["docs/**", README.md]', 'model: sonnet', 'provider: claude', '---', '', 'Keep the docs short.', '',
    ].join('\n'));
    assert.deepEqual(r, { name: 'docs', writes: ['docs/**', 'README.md'], tools: ['Read', 'Edit', 'Write', 'Bash'], denied: ['WebFetch'], model: 'sonnet', provider: 'claude', instructions: 'Keep the docs short.' });
  });

  test('invalid front matter names the file and the line of each bad key', () => {
    const file = '/p/.overseer/roles/bad.md';
    const text = ['---', 'description: x', 'writes: docs/**', 'provider: gpt', 'colour: blue', '---', 'body'].join('\n');
    assert.throws(() => parseRoleFile('bad', file, text), (e: Error) => {
      assert.ok(e instanceof InvalidInputError);
      assert.match(e.message, /Invalid role file \/p\/\.overseer\/roles\/bad\.md/);
      assert.match(e.message, /bad\.md:3: writes = "docs\/\*\*": must be a list of path globs/);
      assert.match(e.message, /bad\.md:4: provider = "gpt": must be "claude" or "codex"/);
      assert.match(e.message, /bad\.md:5: unknown key "colour": known keys are description, allowed_tools, denied_tools, writes, model, provider/);
      return true;
    });
    assert.throws(() => parseRoleFile('x', '/r/x.md', '---\nwrites: [a\n---\n'), /\/r\/x\.md:\d+: /);
    assert.throws(() => parseRoleFile('x', '/r/x.md', '---\nname: y\n---\n'), /x\.md:2: name = "y": must match the file name/);
  });

  test('resolveRole: built-ins, custom files, and unknown names listed with where custom roles live', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'roles-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const roles = join(dir, 'roles');
    mkdirSync(roles);
    writeFileSync(join(roles, 'docs.md'), '---\nwrites: ["docs/**"]\n---\nDocs only.\n');
    writeFileSync(join(roles, 'notes.txt'), 'not a role');
    assert.deepEqual(customRoleNames(roles), ['docs']);
    assert.deepEqual(resolveRole('reviewer', roles, (n) => `text of ${n}`), { name: 'reviewer', writes: [], instructions: 'text of reviewer' });
    assert.deepEqual(resolveRole('planner', roles, () => ''), { name: 'planner', writes: [], plan: true, instructions: '' });
    assert.deepEqual(resolveRole('docs', roles, () => ''), { name: 'docs', writes: ['docs/**'], instructions: 'Docs only.' });
    assert.throws(() => resolveRole('auditor', roles, () => ''), (e: Error) => {
      assert.ok(e instanceof InvalidInputError);
      assert.equal(e.message, `unknown role "auditor": known roles: implementer, reviewer, planner, docs; a custom role is a file ${join(roles, '<name>.md')}`);
      return true;
    });
    assert.throws(() => resolveRole('../etc', roles, () => ''), /not a valid role name/);
  });
});

describe('the "wider" rule', () => {
  test('the lead may give any role; reviewer and planner are the narrowest and interchangeable', () => {
    for (const r of [implementer, reviewer, planner, docs]) assert.equal(widerThan(r, undefined), undefined);
    assert.equal(widerThan(reviewer, planner), undefined);
    assert.equal(widerThan(planner, reviewer), undefined);
    assert.equal(widerThan(reviewer, reviewer), undefined);
    for (const r of [reviewer, planner, docs, implementer]) assert.equal(widerThan(r, implementer), undefined);
  });

  test('an implementer or a writing custom role under a reviewer is refused, saying why', () => {
    assert.match(widerThan(implementer, reviewer)!, /role "implementer" is wider than your own role "reviewer": it may write anywhere, you nowhere/);
    assert.match(widerThan(docs, reviewer)!, /it may write docs\/\*\*, which you may not \(you are read-only\)/);
    assert.equal(widerThan(spec({ name: 'ro', writes: [] }), reviewer), undefined, 'a read-only custom role is as narrow');
  });

  test('custom roles: write globs within the parent\'s, tools within its allowed, its denied kept', () => {
    assert.equal(widerThan(spec({ name: 'api-docs', writes: ['docs/api/**'] }), docs), undefined);
    assert.equal(widerThan(spec({ name: 'one', writes: ['docs/a.md'] }), docs), undefined);
    assert.match(widerThan(spec({ name: 'src', writes: ['src/**'] }), docs)!, /may write src\/\*\*, which you may not \(you: docs\/\*\*\)/);
    assert.match(widerThan(implementer, docs)!, /may write anywhere, you only docs\/\*\*/);
    const limited = spec({ name: 'lim', tools: ['Read', 'Bash'], denied: ['WebFetch'] });
    assert.equal(widerThan(spec({ name: 'c', tools: ['Read'] }), limited), undefined);
    assert.match(widerThan(spec({ name: 'c', tools: ['Read', 'Edit'] }), limited)!, /may use Edit, which you may not/);
    assert.match(widerThan(spec({ name: 'c' }), limited)!, /may use any tool, you only Read, Bash/);
    const denies = spec({ name: 'nofetch', denied: ['WebFetch', 'mcp__github__*'] });
    assert.equal(widerThan(spec({ name: 'c', denied: ['WebFetch', 'mcp__github__*', 'Task'] }), denies), undefined);
    assert.match(widerThan(spec({ name: 'c', denied: ['WebFetch'] }), denies)!, /you may not use mcp__github__\*, and it does not deny it/);
    assert.equal(widerThan(spec({ name: 'c', tools: ['Read'] }), denies), undefined, 'an allowed list without the denied tools keeps them out');
  });

  test('globWithin is conservative', () => {
    assert.equal(globWithin('docs/**', 'docs/**'), true);
    assert.equal(globWithin('docs/x/**', 'docs/**'), true);
    assert.equal(globWithin('docs/a.md', 'docs/*.md'), true);
    assert.equal(globWithin('*.md', 'docs/**'), false);
    assert.equal(globWithin('docs/**', 'docs/*.md'), false);
    assert.equal(globWithin('anything/**', '**'), true);
  });

  test('roleForSpawn: a sub-agent defaults to its parent\'s role; a wider one is refused; unknown ones too', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'roles-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const src = { settingsDir: dir, prompts: { render: (n: string) => `[${n}]` } };
    const lead = roleForSpawn(src, undefined, undefined);
    assert.equal(lead.name, 'implementer');
    assert.deepEqual(roleColumns(lead), { role: 'implementer', role_json: null });
    const rev = roleForSpawn(src, 'reviewer', undefined);
    assert.equal(rev.instructions, '[role-reviewer]');
    const cols = roleColumns(rev);
    const parent = { id: 'j-parent', ...cols };
    assert.equal(roleForSpawn(src, undefined, parent).name, 'reviewer', 'inherits');
    assert.equal(roleForSpawn(src, 'planner', parent).name, 'planner');
    assert.throws(() => roleForSpawn(src, 'implementer', parent), (e: Error) => e instanceof ForbiddenError && /j-parent: role "implementer" is wider than your own role "reviewer"/.test(e.message));
  });
});

describe('what a role refuses', () => {
  const tree = '/w/tree';
  const none = { paths: [], unknown: false, tree };
  test('a reviewer: file tools, Bash writes, unknown writes and git writes; reads and read-only commands pass', () => {
    assert.equal(readOnly(reviewer), true);
    assert.equal(readOnly(implementer), false);
    for (const tool of ['Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'apply_patch']) assert.match(roleRefusal(reviewer, tool, none)!, /your role "reviewer" is read-only/);
    assert.match(roleRefusal(reviewer, 'Bash', { paths: [`${tree}/f`], unknown: false, tree })!, /read-only.*Bash → \/w\/tree\/f/);
    assert.match(roleRefusal(reviewer, 'Bash', { paths: [], unknown: true, tree })!, /read-only/);
    assert.match(roleRefusal(reviewer, 'Bash', { ...none, command: 'git commit -am x' })!, /read-only/);
    assert.match(roleRefusal(reviewer, 'Bash', { paths: ['/tmp/x'], unknown: false, tree })!, /read-only/, 'outside the tree too');
    assert.equal(roleRefusal(reviewer, 'Read', none), undefined);
    assert.equal(roleRefusal(reviewer, 'Bash', { ...none, command: 'git log --oneline' }), undefined);
    assert.equal(roleRefusal(reviewer, 'Bash', { paths: ['/dev/null'], unknown: false, tree, command: 'git log 2>/dev/null' }), undefined);
    assert.equal(roleRefusal(reviewer, 'mcp__overseer__finish', none), undefined, 'Overseer\'s own tools always');
    assert.equal(roleRefusal(undefined, 'Write', none), undefined);
    assert.equal(roleRefusal(implementer, 'Write', { paths: [`${tree}/a`], unknown: false, tree }), undefined);
  });

  test('a custom role: its write globs (inside the tree), its tools', () => {
    assert.equal(roleRefusal(docs, 'Write', { paths: [`${tree}/docs/a.md`], unknown: false, tree }), undefined);
    assert.match(roleRefusal(docs, 'Write', { paths: [`${tree}/src/a.ts`], unknown: false, tree })!, /may write only docs\/\*\* \(inside \/w\/tree\), not \/w\/tree\/src\/a\.ts/);
    assert.match(roleRefusal(docs, 'Write', { paths: ['/elsewhere/docs/a.md'], unknown: false, tree })!, /not \/elsewhere/);
    assert.match(roleRefusal(docs, 'Bash', { paths: [], unknown: true, tree })!, /cannot be told/);
    const lim = spec({ name: 'lim', tools: ['Read', 'mcp__ctx__*'], denied: ['Bash'] });
    assert.equal(roleRefusal(lim, 'mcp__ctx__search', none), undefined);
    assert.match(roleRefusal(lim, 'Bash', none)!, /your role "lim" may not use Bash/);
    assert.match(roleRefusal(lim, 'WebFetch', none)!, /may use only Read, mcp__ctx__\* \(and Overseer's tools\), not WebFetch/);
  });
});

test('a dispatch file: role is a task field; an unknown role or a bad role file is a problem with its line, and nothing starts', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'roles-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'roles'));
  writeFileSync(join(dir, 'roles', 'bad.md'), '---\nwrites: 3\n---\n');
  const text = ['[[task]]', 'id = "a"', 'prompt = "review"', 'role = "reviewer"', '', '[[task]]', 'id = "b"', 'prompt = "x"', 'role = "auditor"', '', '[[task]]', 'id = "c"', 'prompt = "y"', 'role = "bad"', ''].join('\n');
  const r = checkDispatch(text, 'toml', { baseDir: dir, templatesDir: join(dir, 'templates') });
  assert.equal(r.spec, undefined);
  assert.deepEqual(r.problems.map((p) => [p.line, p.path]), [[9, 'task[1].role'], [14, 'task[2].role']]);
  assert.match(r.problems[0]!.message, /task "b": unknown role "auditor": known roles: implementer, reviewer, planner, bad/);
  assert.match(r.problems[1]!.message, /task "c": Invalid role file .*bad\.md:\n\s+.*bad\.md:2: writes = 3/);
  const ok = checkDispatch(text.split('\n').slice(0, 5).join('\n'), 'toml', { baseDir: dir, templatesDir: join(dir, 'templates') });
  assert.deepEqual(ok.problems, []);
  assert.equal(ok.spec?.tasks[0]?.role, 'reviewer');
});
