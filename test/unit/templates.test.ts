// Project templates (.overseer/templates/<name>.md): front matter parsing and validation (errors
// name the file, the key and the bad value), name rules, lookup errors, applyTemplate
// precedence, and the built-in recipes of prompts/recipe-*.md.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  applyTemplate, getTemplate, loadTemplates, parseTemplate, scanTemplates, templateNameProblem,
  withGuidelines, workflowTemplates, type Template,
} from '../../src/templates/templates.js';
import { InvalidInputError, NotFoundError } from '../../src/errors.js';
import { SpawnInput } from '../../src/contract/agents.js';
import { loadRecipes } from '../../src/mcp/prompts.js';

const PROMPTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'prompts');

let root: string;
before(() => { root = mkdtempSync(join(tmpdir(), 'ovs-templates-')); });
after(() => { rmSync(root, { recursive: true, force: true }); });

let n = 0;
/** A fresh templates dir holding `files` (name → text). */
function dirWith(files: Record<string, string>): string {
  const dir = join(root, `t${n++}`);
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  return dir;
}

const FULL = `---
description: Fix a bug with a regression test
model: claude-opus-4
provider: claude
cwd: packages/api
checks: diff_not_empty, command:npm test
max_turns: 40
budget_usd: 2.5
timeout_s: 900
worktree: true
retry: analyze
---
Write a failing test first.
Keep the change minimal.
`;

/** The error `fn` throws, checked to be an InvalidInputError. */
function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof InvalidInputError, `expected InvalidInputError, got ${String(err)}`);
    return err.message;
  }
  assert.fail('expected an error');
}

describe('parseTemplate', () => {
  test('every key becomes a typed spawn default; the body becomes the guidelines', () => {
    const t = parseTemplate('bugfix', '/x/bugfix.md', FULL);
    assert.equal(t.name, 'bugfix');
    assert.equal(t.file, '/x/bugfix.md');
    assert.equal(t.description, 'Fix a bug with a regression test');
    assert.deepEqual(t.defaults, {
      provider: 'claude', model: 'claude-opus-4', cwd: 'packages/api', worktree: true,
      checks: ['diff_not_empty', 'command:npm test'], max_turns: 40, budget_usd: 2.5, timeout_s: 900, retry: 'analyze',
    });
    assert.equal(t.guidelines, 'Write a failing test first.\nKeep the change minimal.');
  });

  test('checks as a JSON array keeps commas inside a command', () => {
    const t = parseTemplate('a', 'a.md', '---\nchecks: ["command:echo a, b", "no_error_in_output"]\n---\n');
    assert.deepEqual(t.defaults.checks, ['command:echo a, b', 'no_error_in_output']);
  });

  test('worktree false, decimal budget with a leading dot, CRLF line ends', () => {
    const t = parseTemplate('a', 'a.md', '---\r\nworktree: FALSE\r\nbudget_usd: .75\r\n---\r\nBody\r\n');
    assert.deepEqual(t.defaults, { worktree: false, budget_usd: 0.75 });
    assert.equal(t.guidelines, 'Body');
  });

  test('no front matter: no defaults, the whole text is the guidelines; an empty value means unset', () => {
    assert.deepEqual(parseTemplate('a', 'a.md', 'Just guidelines.\n'), { name: 'a', file: 'a.md', description: '', defaults: {}, guidelines: 'Just guidelines.' });
    const t = parseTemplate('a', 'a.md', '---\nmodel:\ndescription: d\n---\n');
    assert.deepEqual(t.defaults, {});
    assert.equal(t.guidelines, '');
  });

  test('a name key must match the file name', () => {
    assert.equal(parseTemplate('a', 'a.md', '---\nname: a\n---\n').name, 'a');
    const msg = invalid(() => parseTemplate('a', '/d/a.md', '---\nname: b\n---\n'));
    assert.match(msg, /\/d\/a\.md/);
    assert.match(msg, /name = "b": must match the file name/);
  });
});

describe('template validation errors name the file, the key and the bad value', () => {
  const cases: [string, string, RegExp][] = [
    ['bad provider', 'provider: gpt', /provider = "gpt": .*'claude' \| 'codex'/],
    ['non-numeric max_turns', 'max_turns: ten', /max_turns = "ten": must be a whole number/],
    ['fractional max_turns', 'max_turns: 2.5', /max_turns = 2\.5: must be a whole number/],
    ['quoted max_turns', 'max_turns: "40"', /max_turns = "40": must be a whole number \(no quotes\)/],
    ['max_turns out of range (spawn_agent\'s own message)', 'max_turns: 0', /max_turns = 0: max_turns must be at least 1/],
    ['non-numeric budget', 'budget_usd: lots', /budget_usd = "lots": must be a number/],
    ['negative budget', 'budget_usd: -1', /budget_usd = -1: budget_usd must be more than 0/],
    ['timeout too long', 'timeout_s: 999999999', /timeout_s = 999999999: timeout_s must be at most 604800/],
    ['unknown check', 'checks: diff_not_empty, lint_ok', /checks = "diff_not_empty, lint_ok": unknown check "lint_ok"/],
    ['checks not a string list', 'checks: [1, 2]', /checks = \[1,2\]: must be a list of strings/],
    ['worktree quoted', 'worktree: "true"', /worktree = "true": must be true or false/],
    ['worktree not boolean', 'worktree: yes', /worktree = "yes": must be true or false/],
    ['bad retry', 'retry: twice', /retry = "twice": .*'none' \| 'same' \| 'analyze'/],
    ['unknown key', 'modle: opus', /unknown key "modle" \(value "opus"\): known keys are description, provider, model/],
  ];
  for (const [what, line, re] of cases) {
    test(what, () => {
      const dir = dirWith({ 'bad.md': `---\n${line}\n---\nbody\n` });
      const msg = invalid(() => getTemplate(dir, 'bad'));
      assert.ok(msg.includes(`${join(dir, 'bad.md')}:2: `), `names the file and the line: ${msg}`);
      assert.match(msg, re);
    });
  }

  test('all problems of a file are reported at once', () => {
    const msg = invalid(() => parseTemplate('x', 'x.md', '---\nprovider: gpt\nmax_turns: many\n---\n'));
    assert.match(msg, /provider = "gpt"/);
    assert.match(msg, /max_turns = "many"/);
  });
});

describe('front matter is YAML', () => {
  test('quotes, comments, block lists and block scalars mean what YAML says', () => {
    const t = parseTemplate('a', 'a.md', [
      '---',
      '# spawn defaults for bug fixes',
      "model: 'claude-sonnet-4-5'   # quoted: the quotes are not part of the name",
      'provider: "claude"',
      'description: >',
      '  Fix a bug,',
      '  with a test.',
      'checks:',
      '  - diff_not_empty',
      '  - "command:npm test -- --grep \'a, b\'"',
      'worktree: true',
      'max_turns: 12',
      '---',
      'Body',
    ].join('\n'));
    assert.equal(t.defaults.model, 'claude-sonnet-4-5');
    assert.equal(t.defaults.provider, 'claude');
    assert.equal(t.description, 'Fix a bug, with a test.');
    assert.deepEqual(t.defaults.checks, ['diff_not_empty', "command:npm test -- --grep 'a, b'"]);
    assert.deepEqual([t.defaults.worktree, t.defaults.max_turns], [true, 12]);
    assert.equal(t.guidelines, 'Body');
  });

  test('a YAML syntax error names the file and the line', () => {
    const msg = invalid(() => parseTemplate('a', '/d/a.md', "---\ndescription: ok\nmodel: 'unclosed\n---\nBody\n"));
    assert.match(msg, /\/d\/a\.md:3: /);
  });

  test('a duplicate key names the line of the second one', () => {
    const msg = invalid(() => parseTemplate('a', '/d/a.md', '---\nmodel: a\nmax_turns: 3\nmodel: b\n---\n'));
    assert.match(msg, /\/d\/a\.md:4: .*unique/i);
  });

  test('front matter that is not a mapping, or never closed, is refused', () => {
    assert.match(invalid(() => parseTemplate('a', '/d/a.md', '---\n- model\n---\n')), /\/d\/a\.md:2: .*"key: value".*a list/);
    assert.match(invalid(() => parseTemplate('a', '/d/a.md', '---\nmodel: x\nBody\n')), /\/d\/a\.md:1: .*never closed/);
  });

  test('empty front matter is no defaults', () => {
    assert.deepEqual(parseTemplate('a', 'a.md', '---\n---\nBody\n').defaults, {});
  });
});

describe('names and lookup', () => {
  test('name rules: [a-z0-9][a-z0-9_-]*, at most 64 characters', () => {
    for (const ok of ['bugfix', 'ui_review', 'a', '9lives', 'x-1_y']) assert.equal(templateNameProblem(ok), undefined, ok);
    for (const bad of ['', 'Bugfix', '-x', '_x', 'a b', 'a.b', '../etc', 'a/b', 'é', 'x'.repeat(65)]) {
      assert.ok(templateNameProblem(bad), `${JSON.stringify(bad)} is refused`);
    }
  });

  test('an invalid name is refused before touching the disk', () => {
    const dir = dirWith({ 'good.md': 'g' });
    const msg = invalid(() => getTemplate(dir, '../good'));
    assert.match(msg, /"\.\.\/good" is not valid/);
    assert.match(msg, /Templates in .*: good\./);
  });

  test('unknown template: NotFoundError listing the names and where they live', () => {
    const dir = dirWith({ 'bugfix.md': FULL, 'docs.md': 'Write docs.', 'notes.txt': 'not a template', 'Bad Name.md': 'x' });
    assert.throws(() => getTemplate(dir, 'refactor'), (err: unknown) => {
      assert.ok(err instanceof NotFoundError);
      assert.match(err.message, /Unknown template "refactor"/);
      assert.ok(err.message.includes(`Templates in ${dir}: bugfix, docs.`), err.message);
      return true;
    });
  });

  test('no templates at all: says where to create them', () => {
    const missing = join(root, 'does-not-exist', 'templates');
    assert.throws(() => getTemplate(missing, 'x'), (err: unknown) => {
      assert.ok(err instanceof NotFoundError);
      assert.ok(err.message.includes(`create ${join(missing, '<name>.md')}`), err.message);
      return true;
    });
    assert.deepEqual(loadTemplates(missing), []);
  });

  test('getTemplate reads the file fresh each time', () => {
    const dir = dirWith({ 'a.md': '---\nmodel: m1\n---\n' });
    assert.equal(getTemplate(dir, 'a').defaults.model, 'm1');
    writeFileSync(join(dir, 'a.md'), '---\nmodel: m2\n---\n');
    assert.equal(getTemplate(dir, 'a').defaults.model, 'm2');
  });

  test('scanTemplates: valid ones sorted, problems for invalid content and bad file names; loadTemplates throws', () => {
    const dir = dirWith({ 'zeta.md': 'z', 'alpha.md': FULL, 'broken.md': '---\nprovider: gpt\n---\n', 'Bad.md': 'b', 'x.txt': 'ignored' });
    const { templates, problems } = scanTemplates(dir);
    assert.deepEqual(templates.map((t) => t.name), ['alpha', 'zeta']);
    assert.deepEqual(problems.map((p) => p.name).sort(), ['Bad', 'broken']);
    assert.match(problems.find((p) => p.name === 'Bad')!.message, /rename the file/);
    const msg = invalid(() => loadTemplates(dir));
    assert.ok(msg.includes(join(dir, 'broken.md')));
    assert.deepEqual(loadTemplates(dirWith({ 'one.md': 'o' })).map((t) => t.name), ['one']);
  });
});

describe('applyTemplate', () => {
  const t: Template = parseTemplate('bugfix', 'bugfix.md', FULL);

  test('fills what the input leaves undefined, keeps what it gives, adds the guidelines', () => {
    const out = applyTemplate(t, { prompt: 'Fix #12', model: 'claude-haiku', max_turns: 5, worktree: false, checks: undefined });
    assert.equal(out.prompt, 'Fix #12');
    assert.equal(out.model, 'claude-haiku');
    assert.equal(out.max_turns, 5);
    assert.equal(out.worktree, false, 'an explicit false wins over the template\'s true');
    assert.deepEqual(out.checks, ['diff_not_empty', 'command:npm test']);
    assert.equal(out.budget_usd, 2.5);
    assert.equal(out.timeout_s, 900);
    assert.equal(out.retry, 'analyze');
    assert.equal(out.cwd, 'packages/api');
    assert.equal(out.provider, 'claude');
    assert.equal(out.guidelines, 'Write a failing test first.\nKeep the change minimal.');
  });

  test('an explicit empty checks list wins over the template\'s checks', () => {
    assert.deepEqual(applyTemplate(t, { checks: [] }).checks, []);
  });

  test('the result does not share arrays with the template', () => {
    const out = applyTemplate(t, {});
    out.checks!.push('no_error_in_output');
    assert.deepEqual(t.defaults.checks, ['diff_not_empty', 'command:npm test']);
  });

  test('a different explicit provider drops the template\'s model', () => {
    const codex = parseTemplate('c', 'c.md', '---\nprovider: codex\nmodel: gpt-5-codex\nmax_turns: 9\n---\n');
    const out = applyTemplate(codex, { provider: 'claude' as const });
    assert.equal(out.provider, 'claude');
    assert.equal(out.model, undefined);
    assert.equal(out.max_turns, 9);
    assert.equal(applyTemplate(codex, { provider: 'codex' as const }).model, 'gpt-5-codex');
  });

  test('the merged input passes spawn_agent\'s schema', () => {
    const { guidelines, ...spawn } = applyTemplate(t, { prompt: 'Fix #12' });
    assert.ok(guidelines.length > 0);
    const r = SpawnInput.safeParse(spawn);
    assert.ok(r.success, JSON.stringify(!r.success && r.error.issues));
  });

  test('takes a SpawnInput as is: its given fields win, the rest comes from the template', () => {
    const given: SpawnInput = { prompt: 'x', provider: 'claude', worktree: false, depends_on: [], priority: 0, checks: [], retry: 'none', labels: [] };
    const out = applyTemplate(t, given);
    assert.deepEqual([out.worktree, out.checks, out.retry, out.max_turns, out.model], [false, [], 'none', 40, 'claude-opus-4']);
    assert.deepEqual(out.labels, []);
  });

  test('withGuidelines appends a ## Guidelines section, or nothing when empty', () => {
    assert.equal(withGuidelines('Do X.\n', 'Be careful.'), 'Do X.\n\n## Guidelines\n\nBe careful.');
    assert.equal(withGuidelines('Do X.', '  \n'), 'Do X.');
  });

  test('workflowTemplates: guidelines, implementer role and checks for the workflow engine', () => {
    const dir = dirWith({ 'bugfix.md': FULL, 'plain.md': 'Only words.' });
    const wt = workflowTemplates(dir);
    assert.deepEqual(wt.resolve('bugfix'), {
      guidelines: 'Write a failing test first.\nKeep the change minimal.',
      implementer: { provider: 'claude', model: 'claude-opus-4' },
      checks: ['diff_not_empty', 'command:npm test'],
    });
    assert.deepEqual(wt.resolve('plain'), { guidelines: 'Only words.' });
    assert.throws(() => wt.resolve('nope'), NotFoundError);
  });
});

describe('recipes (prompts/recipe-*.md)', () => {
  test('the three built-in recipes, with no arguments (Claude Code would split them on whitespace)', () => {
    const recipes = loadRecipes(PROMPTS_DIR);
    assert.deepEqual(recipes.map((r) => r.name), ['fan-out', 'review-branch', 'run-workflow']);
    for (const r of recipes) {
      assert.ok(r.description.length > 20, `${r.name} has a description`);
      assert.ok(r.description.includes(`/mcp__overseer__${r.name} `), `${r.name}'s description shows how to type it`);
      assert.match(r.text, /ALL the text I wrote after the command name/, `${r.name} takes the request from the user's message`);
      assert.ok(!/\{\{\w+\}\}/.test(r.text), 'no placeholder left');
    }
  });

  test('each names the tools it drives', () => {
    const byName = new Map(loadRecipes(PROMPTS_DIR).map((r) => [r.name, r.text]));
    for (const tool of ['spawn_agent', 'wait_for_agents']) assert.ok(byName.get('fan-out')!.includes(tool), tool);
    assert.match(byName.get('review-branch')!, /worktree: true/);
    for (const tool of ['start_workflow', 'get_workflow', 'wait_for_agents']) assert.ok(byName.get('run-workflow')!.includes(tool), tool);
  });

  test('a recipe with arguments, placeholders, bad YAML or no description is refused, naming the file', () => {
    const dir = dirWith({ 'recipe-x.md': '---\ndescription: a recipe for tests\narg_a: first\n---\nUse {{a}}.\n' });
    assert.throws(() => loadRecipes(dir), /recipe-x\.md: unknown key "arg_a".*recipes take no arguments.*placeholders/);
    assert.throws(() => loadRecipes(dirWith({ 'recipe-y.md': '---\ntitle: t\n---\nDo it.\n' })), /recipe-y\.md: no description/);
    assert.throws(() => loadRecipes(dirWith({ 'recipe-z.md': "---\ndescription: 'open\n---\nDo it.\n" })), /recipe-z\.md:2: /);
  });
});
