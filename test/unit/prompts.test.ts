// Prompt templates: front matter parsing, {{var}} rendering, and the real prompts/*.md files
// rendered with exactly the variables src/services/runner.ts passes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePrompt, renderPrompt, PromptLibrary } from '../../src/prompts/load.js';

const PROMPTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'prompts');

/** The variables runner.ts passes to each prompt (keep in sync with src/services/runner.ts). */
const RUNNER_VARS: Record<string, Record<string, string | number>> = {
  // SendBackService.message() (src/branches/sendBack.ts): a failed check, or a conflict left in the worktree
  'send-back-checks': { branch: 'overseer/j-1', target: 'main', round: 1, max: 2, target_note: 'Overseer merged main into your branch first.', failures: '- npm test:\n```\nFAIL\n```' },
  'send-back-conflict': { branch: 'overseer/j-1', target: 'main', round: 1, max: 2, files: '- src/a.ts' },
  // Runner.preamble()
  'child-preamble': {
    job_id: 'j-7f3a9c01',
    title: 'Fix the flaky login test',
    parent_line: 'You were spawned by agent `j-parent01`.',
    work_dir: '/repo/.overseer/worktrees/j-7f3a9c01',
    branch_line: ' (git branch `overseer/j-7f3a9c01-fix-the-flaky-login-test`)',
    depth_left: 1,
  },
  // Runner.firstMessage() on a retry
  retry: {
    attempt: 1,
    failure_class: 'max_turns',
    error: 'Reached maximum number of turns (20)',
    diagnosis: 'Diagnosis of that attempt:\nIt looped on the same failing test.\n',
  },
  // Runner.firstMessage() of a job with a role (src/roles/spawn.ts roleSection)
  'role-reviewer': {},
  'role-planner': {},
  brief: { text: 'Use pnpm.', set_by: 'the lead' },
  'brief-changed': { text: 'Use pnpm.', set_by: 'the person running the crew' },
  'brief-cleared': { set_by: 'the lead' },
  'role-custom': { name: 'docs-writer', limits: 'You may write only docs/** (paths in your work tree); other writes are refused.\n\n', instructions: 'Write clear docs.' },
  // Runner.firstMessage() of the attempt after one lost with its worker (src/services/workerLost.ts workerLostSeed)
  'worker-lost': { attempt: 1, worker: 'gpu-box', host: 'gpu-box.example', heartbeat: '2026-11-29T12:00:00.000Z', omitted: 'all of it', transcript: '- said: Reading the parser.' },
  // Runner.endAttempt() of an attempt that ended on a provider limit (src/limits): its resume message
  'limit-resume': { provider: 'claude', what: 'a rate limit' },
  // Runner.firstMessage() of a job with dependencies (src/prompts/dependencies.ts)
  'dependency-results': {
    base: 'Your worktree\'s branch starts from overseer/a-1 (the branch of j-a1): their commits are already in your tree.\n',
    results: '### Parser (j-a1, succeeded)\nBranch: overseer/a-1\nResult:\nAdded the parser.',
  },
  // The conflict guard's message to each of two agents (src/branches/overlapGuard.ts)
  'overlap-message': {
    other: 'j-b2',
    other_title: 'Refactor the parser',
    other_branch: 'overseer/refactor-the-parser-b2',
    files: 'src/parser.ts and src/lexer.ts',
    locks: 'Your locks do not conflict (each of you works in its own worktree), so nothing stops either of you.',
  },
  // Runner.diagnose()
  'retry-analysis': {
    prompt: 'Make the login test pass reliably.',
    failure_class: 'crashed',
    error: 'the process ended (signal SIGKILL) without a result',
    transcript: '[assistant] running npm test\n[tool] 1 failing',
  },
  // ModelChooser.choose() (src/models/choice.ts)
  'model-classify': {
    title: 'Add a --verbose flag',
    task: 'Add a --verbose flag to the CLI that prints each step.',
  },
};

function placeholders(body: string): Set<string> {
  return new Set([...body.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!));
}

describe('parsePrompt', () => {
  test('splits front matter into meta and body', () => {
    const t = parsePrompt('x', '---\nname: x\ndescription: says: hello\n---\nBody {{a}}\nline 2\n');
    assert.equal(t.name, 'x');
    assert.deepEqual(t.meta, { name: 'x', description: 'says: hello' });
    assert.equal(t.body, 'Body {{a}}\nline 2\n');
  });

  test('trims keys and values; ignores lines without a key', () => {
    const t = parsePrompt('x', '---\n  key  :   value  \njust text\n: no key\n---\nB');
    assert.deepEqual(t.meta, { key: 'value' });
    assert.equal(t.body, 'B');
  });

  test('no front matter → empty meta, whole text is the body', () => {
    const text = 'Just a body\nwith --- inside\n';
    const t = parsePrompt('plain', text);
    assert.deepEqual(t.meta, {});
    assert.equal(t.body, text);
  });

  test('front matter only in the middle of the text is not front matter', () => {
    const text = 'intro\n---\nname: x\n---\nrest';
    assert.deepEqual(parsePrompt('x', text), { name: 'x', meta: {}, body: text });
  });

  test('front matter with an empty body', () => {
    const t = parsePrompt('x', '---\nname: x\n---\n');
    assert.deepEqual(t.meta, { name: 'x' });
    assert.equal(t.body, '');
  });
});

describe('renderPrompt', () => {
  const t = parsePrompt('greet', '---\nname: greet\n---\nHello {{name}}, you have {{n}} jobs. Bye {{name}}.');

  test('fills every placeholder, repeated ones too, numbers as text', () => {
    assert.equal(renderPrompt(t, { name: 'Ada', n: 3 }), 'Hello Ada, you have 3 jobs. Bye Ada.');
  });

  test('extra variables are ignored', () => {
    assert.equal(renderPrompt(t, { name: 'A', n: 0, unused: 'x' }), 'Hello A, you have 0 jobs. Bye A.');
  });

  test('a missing variable throws naming the prompt and the placeholder', () => {
    assert.throws(() => renderPrompt(t, { name: 'A' }), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, /greet/);
      assert.match(err.message, /\{\{n\}\}/);
      return true;
    });
  });

  test('an empty string is a value, not a missing one', () => {
    assert.equal(renderPrompt(t, { name: '', n: '' }), 'Hello , you have  jobs. Bye .');
  });

  test('values are inserted literally: no re-expansion, no $-patterns', () => {
    const out = renderPrompt(t, { name: '{{n}} $& $1 $$', n: 1 });
    assert.equal(out, 'Hello {{n}} $& $1 $$, you have 1 jobs. Bye {{n}} $& $1 $$.');
  });

  test('text that is not a {{word}} placeholder is left alone', () => {
    const u = parsePrompt('u', 'a {{ spaced }} b {single} c {{}}');
    assert.equal(renderPrompt(u, {}), 'a {{ spaced }} b {single} c {{}}');
  });
});

describe('the prompts/ directory', () => {
  // debate-*.md are rendered by src/debate/texts.ts (test/unit/debate-texts.test.ts); run-*.md by the run engine; takeover-*.md by src/takeover (test/e2e/attach-tmux.test.ts).
  const files = readdirSync(PROMPTS_DIR).filter((f) => f.endsWith('.md') && !f.startsWith('recipe-') && !f.startsWith('workflow-') && !f.startsWith('run-') && !f.startsWith('debate-') && !f.startsWith('takeover-') && f !== 'triage.md').sort();

  test('holds exactly the prompts the runner renders', () => {
    assert.deepEqual(files.map((f) => f.replace(/\.md$/, '')).sort(), Object.keys(RUNNER_VARS).sort());
  });

  for (const f of files) {
    const name = f.replace(/\.md$/, '');
    test(`${f}: has front matter naming it and a description`, () => {
      const t = parsePrompt(name, readFileSync(join(PROMPTS_DIR, f), 'utf8'));
      assert.equal(t.meta.name, name);
      assert.ok((t.meta.description ?? '').length > 10, 'a description');
      assert.ok(!t.body.startsWith('---'), 'front matter was stripped');
    });

    test(`${f}: its placeholders are exactly the variables runner.ts passes`, () => {
      const t = parsePrompt(name, readFileSync(join(PROMPTS_DIR, f), 'utf8'));
      const vars = RUNNER_VARS[name];
      assert.ok(vars, `no runner variables known for ${name}`);
      assert.deepEqual([...placeholders(t.body)].sort(), Object.keys(vars).sort());
    });
  }
});

describe('PromptLibrary on the real prompts', () => {
  const lib = new PromptLibrary(PROMPTS_DIR);

  test('get caches the parsed template', () => {
    const a = lib.get('child-preamble');
    assert.equal(lib.get('child-preamble'), a);
    assert.equal(a.meta.name, 'child-preamble');
  });

  test('child-preamble renders with the runner variables, fully filled and trimmed', () => {
    const vars = RUNNER_VARS['child-preamble']!;
    const out = lib.render('child-preamble', vars);
    assert.ok(!/\{\{\w+\}\}/.test(out), 'no placeholder left');
    assert.equal(out, out.trim());
    assert.ok(out.startsWith('# You are an Overseer agent'));
    assert.ok(!out.includes('description:'), 'front matter is not part of the prompt');
    for (const v of Object.values(vars)) assert.ok(out.includes(String(v)), `contains ${String(v)}`);
    assert.match(out, /nest 1 more level/);
    assert.match(out, /mcp__overseer__/);
  });

  test('child-preamble for a lead-spawned job without a branch', () => {
    const out = lib.render('child-preamble', {
      ...RUNNER_VARS['child-preamble']!, parent_line: 'You were spawned by the lead.', branch_line: '', depth_left: 0,
    });
    assert.match(out, /Your working directory is `[^`]+`\. Work only inside it\./);
    assert.match(out, /spawned by the lead/);
  });

  test('retry renders with the runner variables', () => {
    const out = lib.render('retry', RUNNER_VARS.retry!);
    assert.ok(!/\{\{\w+\}\}/.test(out));
    assert.match(out, /Attempt 1 of this task failed \(max_turns: Reached maximum number of turns \(20\)\)/);
    assert.match(out, /It looped on the same failing test/);
  });

  test('retry-analysis renders with the runner variables', () => {
    const out = lib.render('retry-analysis', RUNNER_VARS['retry-analysis']!);
    assert.ok(!/\{\{\w+\}\}/.test(out));
    assert.match(out, /<task>\nMake the login test pass reliably\.\n<\/task>/);
    assert.match(out, /Failure: crashed — the process ended/);
    assert.match(out, /<transcript>\n\[assistant\] running npm test/);
  });

  test('rendering without a needed variable throws', () => {
    const { job_id: _omit, ...rest } = RUNNER_VARS['child-preamble']!;
    assert.throws(() => lib.render('child-preamble', rest), /job_id/);
  });

  test('an unknown prompt name throws (file not found)', () => {
    assert.throws(() => lib.get('no-such-prompt'), /ENOENT/);
  });
});

describe('every prompt file', () => {
  for (const f of readdirSync(PROMPTS_DIR).filter((x) => x.endsWith('.md'))) {
    test(`${f}: front matter with its name and a description`, () => {
      const t = parsePrompt(f.replace(/\.md$/, ''), readFileSync(join(PROMPTS_DIR, f), 'utf8'));
      assert.equal(t.meta.name, f.replace(/\.md$/, ''));
      assert.ok((t.meta.description ?? '').length > 10);
    });
  }
});
