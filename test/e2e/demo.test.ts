// End-to-end: `overseer demo`, the README's main command. A real lead claude talks to
// `overseer mcp` over stdio and fans out to three real child claudes; we check the exit code,
// the files, and the jobs the hub recorded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DEMO_FILES } from '../../src/fakemodel/demoScripts.js';

test('overseer demo: a lead claude over stdio fans out to three claude children that write files', async () => {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('ANTHROPIC_') || k === 'CLAUDECODE') delete env[k];
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    execFile(process.execPath, ['dist/cli/main.js', 'demo', '--keep'], { env, timeout: 180_000 }, (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }));
  });
  const kept = /Kept (\S+) /.exec(stdout)?.[1];
  try {
    assert.equal(code, 0, stdout);
    assert.match(stdout, /Demo succeeded/);
    assert.ok(kept, 'the demo names the directory it kept');
    for (const f of DEMO_FILES) assert.equal(readFileSync(join(kept!, 'repo', f.file), 'utf8'), f.content);
    const db = new Database(join(kept!, 'state', 'state.db'), { readonly: true });
    const jobs = db.prepare('SELECT id, status, parent_id, result FROM jobs ORDER BY seq').all() as { id: string; status: string; parent_id: string | null; result: string }[];
    db.close();
    assert.equal(jobs.length, 3);
    for (const j of jobs) {
      assert.equal(j.status, 'succeeded');
      assert.equal(j.parent_id, null, 'spawned by the lead');
      assert.match(j.result, /^wrote /);
      assert.ok(existsSync(join(kept!, 'state', 'agents', j.id, 'attempt-1.jsonl')));
    }
    assert.match(stdout, /lead │ tool_use mcp__overseer__wait_for_agents/);
  } finally {
    if (kept) rmSync(kept, { recursive: true, force: true });
  }
});
