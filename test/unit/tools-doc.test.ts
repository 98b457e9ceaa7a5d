// docs/tools.md is generated from the tool definitions (scripts/tools-doc.ts): regenerate it in
// memory from a real Hub's tool tables and compare with the committed page, so a tool, parameter,
// default, description or annotation changed in src/tools/ without refreshing the page fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { REFRESH_COMMAND, TOOLS_DOC, listTools, renderToolsDoc } from '../../scripts/tools-doc.js';

const listed = await listTools();

test('docs/tools.md matches the tool definitions', () => {
  const expected = renderToolsDoc(listed);
  const committed = readFileSync(TOOLS_DOC, 'utf8');
  if (committed === expected) return;
  const a = committed.split('\n');
  const b = expected.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  assert.fail(`docs/tools.md is stale: run \`${REFRESH_COMMAND}\` and commit the result.\n`
    + `First difference at line ${i + 1}:\n  committed: ${a[i] ?? '(end of file)'}\n  generated: ${b[i] ?? '(end of file)'}`);
});

test('the page lists every tool of each role, with its roles and parameters', () => {
  const page = renderToolsDoc(listed);
  assert.ok(listed.lead.length > 0 && listed.agent.length > 0);
  for (const role of ['lead', 'agent'] as const) {
    for (const tool of listed[role]) {
      const section = page.slice(page.indexOf(`\n### ${tool.name}\n`));
      assert.ok(section.length > 0 && page.includes(`\n### ${tool.name}\n`), `${tool.name} has a section`);
      const head = section.split('\n').find((l) => l.startsWith('**'))!;
      assert.match(head, new RegExp(`roles: [a-z, ]*${role}`), `${tool.name}'s roles name ${role}`);
      const params = Object.keys((tool.inputSchema as { properties?: object }).properties ?? {});
      const body = section.slice(0, section.indexOf('\n### ', 1) === -1 ? undefined : section.indexOf('\n### ', 1));
      for (const p of params) assert.ok(body.includes(`| \`${p}\` |`), `${tool.name}.${p} is in its table`);
    }
  }
});
