// The check a script passes before anything of it runs (src/scripts/check.ts): it parses, calls no
// function the sandbox lacks, and writes no agent() option that does not exist or a literal value
// the option refuses — each refusal with its line and column. A script that only uses what it
// declares, JavaScript's built-ins and the API passes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkScript } from '../../src/scripts/check.js';

describe('checkScript', () => {
  test('refuses what the sandbox lacks, naming the line and column', async () => {
    const cases: [string, number, number, RegExp][] = [
      ["const r = await agent('x')\nconst d = await fetch('http://x')", 2, 17, /^fetch\(\) is not a function a script has/],
      ["log('a')\n  require('fs').readFileSync('/etc/passwd')", 2, 3, /^require\(\)/],
      ["setTimeout(() => 1, 10)", 1, 1, /^setTimeout\(\)/],
      ["hub.call('wf.next')", 1, 1, /^hub\.…\(\)/],
      ["await agent('x', { modle: 'opus' })", 1, 20, /agent\(\) has no option "modle": the options are provider, model/],
      ["await agent('x', {\n  timeout_s: -3 })", 2, 14, /option timeout_s/],
      ["await agent('x', { provider: 'gemini' })", 1, 30, /option provider/],
      ["await agent('', {})", 1, 13, /prompt must be a non-empty string/],
    ];
    for (const [source, line, column, message] of cases) {
      const p = await checkScript(source);
      assert.ok(p, `passed: ${source}`);
      assert.deepEqual([p.line, p.column], [line, column], `${source}: ${p.message}`);
      assert.match(p.message, message);
    }
  });

  test('passes what a script may do', async () => {
    for (const source of [
      "export const meta = { name: 'x' }\nconst r = await pipeline(args.items, (x) => agent(String(x), { label: 'a', timeout_s: 60, provider: 'codex', checks: ['command:npm test'] }))\nreturn r",
      "function f(a, { b = 1, ...rest } = {}) { return [a, b, rest] }\nconst { x, y: [z] = [] } = args ?? {}\nclass C { m() { return f(z) } }\nreturn new C().m().concat(Object.keys(JSON.parse('{}')), Math.max(1, 2), [1].map(String))",
      "try { await agent('x') } catch (e) { log(e.message); phase('b'); return budget.remaining() }",
      "const o = { modle: 'computed' }\nawait agent('x', o)",
      "const agent = (p) => p\nreturn agent('y', { anything: 1 })",
      "await Promise.all([parallel([() => agent('a')]), workflow('other', { n: 1 }), approve('ok?')])\nreturn new Date(2020, 1, 1).toISOString()",
    ]) assert.equal(await checkScript(source), null, source);
  });

  test('a bundled script may call hub.call', async () => {
    assert.equal(await checkScript("await hub.call('wf.next', 1)", { privileged: true }), null);
  });
});
