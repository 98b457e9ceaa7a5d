// Dispatch files (src/runs/file.ts): every kind of problem reported with its line (and column),
// in TOML and in YAML, all of them in one pass; the checked-in examples validate.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDispatch, findCycles, formatProblems, type Problem } from '../../src/runs/file.js';
import { PromptLibrary, renderPrompt } from '../../src/prompts/load.js';

let dir: string;
let templatesDir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'ovs-runs-'));
  mkdirSync(join(dir, 'sub'));
  templatesDir = join(dir, 'templates');
  mkdirSync(templatesDir);
  writeFileSync(join(templatesDir, 'reviewer.md'), '---\nmodel: sonnet\n---\nReview carefully.\n');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const toml = (text: string) => checkDispatch(text, 'toml', { baseDir: dir, templatesDir });
const yaml = (text: string) => checkDispatch(text, 'yaml', { baseDir: dir, templatesDir });
/** The problem whose message matches, with its line (and column). */
function at(ps: Problem[], re: RegExp): Problem {
  const p = ps.find((x) => re.test(x.message));
  assert.ok(p, `no problem matching ${re} in:\n${formatProblems('f', ps)}`);
  return p;
}

describe('TOML dispatch files', () => {
  const bad = [
    'title = "demo"',            // 1
    'concurrency = 0',           // 2
    'colour = "red"',            // 3
    '',                          // 4
    '[[task]]',                  // 5
    'id = "a"',                  // 6
    'prompt = "do a"',           // 7
    'budget = -1',               // 8
    '',                          // 9
    '[[task]]',                  // 10
    'id = "b"',                  // 11
    'prompt = "do b"',           // 12
    'depends_on = ["a", "zz"]',  // 13
    'retry = "often"',           // 14
    '',                          // 15
    '[[task]]',                  // 16
    'id = "a"',                  // 17
    'prompt = """',              // 18
    'id = "not a key"',          // 19 (inside a multi-line string)
    '"""',                       // 20
    'cwd = "nowhere"',           // 21
    'frob = 1',                  // 22
    '',                          // 23
    '[[task]]',                  // 24
    'id = "c"',                  // 25
    'prompt = "c"',              // 26
    'depends_on = ["d"]',        // 27
    'template = "nope"',         // 28
    '',                          // 29
    '[[task]]',                  // 30
    'id = "d"',                  // 31
    'depends_on = ["c"]',        // 32
    'prompt = "d"',              // 33
    '',                          // 34
    '[[task]]',                  // 35
    'id = "e"',                  // 36
    'branch = "feature/x"',      // 37
  ].join('\n');

  test('every problem of the file at once, each on its line', () => {
    const r = toml(bad);
    assert.equal(r.spec, undefined);
    const ps = r.problems;
    assert.equal(at(ps, /concurrency must be at least 1/).line, 2);
    assert.equal(at(ps, /unknown key "colour" at the top level/).line, 3);
    assert.equal(at(ps, /task "a": budget_usd: budget_usd must be more than 0/).line, 8, 'the alias budget is checked as budget_usd on its own line');
    assert.equal(at(ps, /task "b" depends on "zz", which is no task id/).line, 13);
    assert.equal(at(ps, /task "b": retry: Invalid enum value/).line, 14);
    assert.equal(at(ps, /duplicate task id "a": task\[0\] has it too/).line, 17);
    assert.equal(at(ps, /cwd "nowhere" does not exist/).line, 21);
    assert.equal(at(ps, /task "a": unknown key "frob"/).line, 22);
    assert.equal(at(ps, /dependency cycle: c → d → c/).line, 27);
    assert.equal(at(ps, /Unknown template "nope"/).line, 28);
    assert.equal(at(ps, /task "e": prompt: prompt is required/).line, 35, 'a missing field is reported at its entry');
    assert.equal(at(ps, /task "e": branch is only used with worktree = true/).line, 37);
    assert.ok(!ps.some((p) => p.line === 19), 'a key-like line inside a multi-line string is no key');
    const lines = ps.map((p) => p.line!);
    assert.deepEqual(lines, [...lines].sort((a, b) => a - b), 'sorted by line');
    assert.match(formatProblems('tasks.toml', ps), /^tasks\.toml:2:1: concurrency: concurrency must be at least 1$/m);
  });

  test('a syntax error names its line and column', () => {
    const r = toml('title = "x"\n[[task]]\nid = "a"\nprompt = \n');
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]!.message, /^TOML syntax error: /);
    assert.equal(r.problems[0]!.line, 4);
    assert.ok(r.problems[0]!.column! > 0);
    const dup = toml('[[task]]\nid = "a"\nid = "b"\nprompt = "x"\n');
    assert.equal(dup.problems[0]!.line, 3, 'a key given twice is a syntax error on the second');
  });

  test('a good file: defaults merged under each task, budget alias, cwd resolved, spawn_agent fields kept', () => {
    const r = toml([
      'title = "ok"', 'concurrency = 2', 'budget = 3', 'timeout_s = 60', 'cwd = "sub"',
      '[defaults]', 'model = "sonnet"', 'labels = ["x"]',
      '[[task]]', 'id = "a"', 'prompt = "A"', 'template = "reviewer"', 'priority = 3', 'checks = ["diff_not_empty"]',
      '[[task]]', 'id = "b"', 'prompt = "B"', 'depends_on = ["a"]', 'model = "opus"', `cwd = "${dir}"`, 'worktree = true', 'branch = "feature/b"',
      '[task.context]', 'api = "the schema"',
    ].join('\n'));
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.spec!.rules, { title: 'ok', concurrency: 2, budget_usd: 3, timeout_s: 60, cwd: join(dir, 'sub') });
    const [a, b] = r.spec!.tasks;
    assert.equal(a!.model, 'sonnet');
    assert.deepEqual(a!.labels, ['x']);
    assert.equal(a!.cwd, join(dir, 'sub'), 'the run\'s cwd');
    assert.equal(a!.priority, 3);
    assert.equal(b!.model, 'opus', 'the task\'s own value wins');
    assert.deepEqual(b!.depends_on, ['a']);
    assert.equal(b!.cwd, dir);
    assert.deepEqual(b!.context, { api: 'the schema' });
  });

  test('cwd: none anywhere leaves the project default; a missing defaults.cwd is one problem on its line', () => {
    const r = toml('[[task]]\nid = "a"\nprompt = "A"\n');
    assert.equal(r.spec!.tasks[0]!.cwd, undefined, 'spawn_agent\'s default (the project) applies');
    const bad = toml('[defaults]\ncwd = "gone"\n[[task]]\nid = "a"\nprompt = "A"\n[[task]]\nid = "b"\nprompt = "B"\n');
    assert.deepEqual(bad.problems.map((p) => [p.line, /cwd "gone" does not exist/.test(p.message)]), [[2, true]]);
  });

  test('schedule fields are checked like spawn_agent checks them: a time in the past, a cron that never fires, every_s with cron', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const r = checkDispatch([
      '[[task]]', 'id = "past"', 'prompt = "p"', 'at = "2029-01-01T00:00:00Z"',
      '[[task]]', 'id = "never"', 'prompt = "p"', 'cron = "0 0 30 2 *"',
      '[[task]]', 'id = "both"', 'prompt = "p"', 'cron = "0 9 * * *"', 'every_s = 3600',
      '[[task]]', 'id = "fine"', 'prompt = "p"', 'cron = "0 9 * * 1-5"', 'max_runs = 3', 'project = "web"', 'model = "auto"',
    ].join('\n'), 'toml', { baseDir: dir, templatesDir, now });
    assert.deepEqual(r.problems.map((p) => p.line), [4, 8, 12], JSON.stringify(r.problems));
    assert.match(r.problems[0]!.message, /task "past": at 2029-01-01T00:00:00Z is in the past/);
    assert.match(r.problems[1]!.message, /task "never": .*cron/);
    assert.match(r.problems[2]!.message, /task "both": every_s and cron were both given/);
  });

  test('the checked-in examples validate', () => {
    const base = join(process.cwd(), 'docs', 'examples');
    for (const [f, fmt] of [['dispatch.toml', 'toml'], ['dispatch.yaml', 'yaml']] as const) {
      const r = checkDispatch(readFileSync(join(base, f), 'utf8'), fmt, { baseDir: base, templatesDir });
      assert.deepEqual(r.problems, [], `${f}: ${formatProblems(f, r.problems)}`);
      assert.ok(r.spec!.tasks.length >= 2);
    }
  });
});

describe('YAML dispatch files', () => {
  test('every problem with line and column', () => {
    const r = yaml([
      'title: demo',               // 1
      'concurrency: 1.5',          // 2
      'tasks:',                    // 3
      '  - id: a',                 // 4
      '    prompt: do a',          // 5
      '  - id: b',                 // 6
      '    prompt: do b',          // 7
      '    depends_on: [a, zz]',   // 8
      '    retry: often',          // 9
      '  - id: c',                 // 10
      '    frob: 1',               // 11
      '    depends_on: [c]',       // 12
      '  - id: a',                 // 13
      '    prompt: again',         // 14
      '    template: missing',     // 15
    ].join('\n'));
    const ps = r.problems;
    assert.equal(r.spec, undefined);
    assert.deepEqual([at(ps, /concurrency must be a whole number/).line, at(ps, /concurrency must be a whole number/).column], [2, 1]);
    assert.deepEqual([at(ps, /depends on "zz"/).line, at(ps, /depends on "zz"/).column], [8, 21]);
    assert.equal(at(ps, /task "b": retry/).line, 9);
    assert.equal(at(ps, /task "c": prompt: prompt is required/).line, 10);
    assert.deepEqual([at(ps, /unknown key "frob"/).line, at(ps, /unknown key "frob"/).column], [11, 5]);
    assert.equal(at(ps, /task "c" depends on itself/).line, 12);
    assert.equal(at(ps, /duplicate task id "a"/).line, 13);
    assert.equal(at(ps, /Unknown template "missing"/).line, 15);
  });

  test('syntax errors and duplicate keys name their line', () => {
    const r = yaml('title: x\ntitle: y\ntasks:\n  - id: a\n    prompt: [unclosed\n');
    assert.ok(r.problems.length >= 1);
    assert.ok(r.problems.every((p) => /^YAML syntax error: /.test(p.message)));
    assert.equal(at(r.problems, /unique/).line, 2);
  });

  test('no tasks, a non-table file', () => {
    assert.match(yaml('title: x\n').problems[0]!.message, /no tasks: add at least one/);
    assert.match(yaml('- 1\n- 2\n').problems[0]!.message, /must be a table of run rules/);
    assert.match(toml('tasks = 3\n').problems[0]!.message, /tasks must be a list of task entries/);
  });
});

describe('findCycles', () => {
  test('names each cycle along its path; a DAG has none', () => {
    assert.deepEqual(findCycles([{ id: 'a', depends_on: [] }, { id: 'b', depends_on: ['a'] }, { id: 'c', depends_on: ['a', 'b'] }]), []);
    assert.deepEqual(findCycles([{ id: 'a', depends_on: ['c'] }, { id: 'b', depends_on: ['a'] }, { id: 'c', depends_on: ['b'] }, { id: 'x', depends_on: [] }]), [['a', 'c', 'b']]);
  });
});

describe('the run prompts (prompts/run-*.md)', () => {
  const lib = new PromptLibrary(join(process.cwd(), 'prompts'));
  test('run-resume takes exactly the failed job\'s status and error; run-hub-restart takes none', () => {
    const text = renderPrompt(lib.get('run-resume'), { status: 'failed', error: 'tests failed' });
    assert.match(text, /did not succeed \(it ended failed: tests failed\)/);
    assert.deepEqual([...lib.get('run-resume').body.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort(), ['error', 'status']);
    assert.equal(/\{\{/.test(lib.get('run-hub-restart').body), false);
    for (const n of ['run-resume', 'run-hub-restart']) assert.equal(lib.get(n).meta.name, n);
  });
});
